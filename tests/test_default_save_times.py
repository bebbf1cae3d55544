"""A flow's default save times start at its own first time scale (1/|λ|max of ∇²L(θ0)), so that the default
trajectory shows the learning phase for any t1: the start before the loss drops, and the drop itself at the
density of a log-spaced grid. The old rule (the first save at 1e-6 t1) is the negative control: at t1 = 1e8 its
first save comes after the whole drop."""

from __future__ import annotations

import equinox as eqx
import jax
import numpy as np
import pytest

import gflow
from gflow import initializers, teachers
from gflow.run import first_save_offset, flow_time_scale


def shows_the_learning_phase(traj) -> tuple[bool, str]:
    """Whether a log-log plot of the saved losses shows the learning phase: at least 10 saved times (after t0)
    before the loss has fallen by 10 % of its drop, and the half-drop time bracketed by two saved times within a
    factor 1.25 (a log-spaced grid of at least 10 points per decade where the drop happens)."""
    ts, loss = traj.ts, traj.loss
    fallen = (loss[0] - loss) / (loss[0] - loss[-1])
    before = int(np.sum((fallen < 0.1) & (ts > ts[0])))
    half = int(np.argmax(fallen >= 0.5))
    ratio = ts[half] / ts[half - 1] if half > 1 else np.inf  # ts[0] = t0 = 0 brackets nothing on a log axis
    return before >= 10 and ratio <= 1.25, f"{before} saves before the drop, half-drop bracketed within ×{ratio:.3g}"


@pytest.fixture(scope="module")
def fast_loss():
    """A balanced teacher with w0 = 10 (B and C scaled by √10): |λ|max = 20 at a small start, so the flow learns
    by t ≈ 1 and t1 = 1 already holds its learning phase."""
    teacher = teachers.balanced(jax.random.key(0), 2)
    teacher = eqx.tree_at(lambda m: (m.B, m.C), teacher, (teacher.B * np.sqrt(10), teacher.C * np.sqrt(10)))
    return gflow.PopulationLoss(teacher, 5)


@pytest.mark.parametrize("scale", [1e-1, 1e-6])  # a quick start, and a late saddle escape after a long plateau
def test_the_default_grid_shows_the_learning_phase_for_t1_from_1_to_1e12(fast_loss, scale):
    model0 = initializers.gaussian(jax.random.key(1), 4, scale=scale)
    assert flow_time_scale(fast_loss, model0) == pytest.approx(1 / 20, rel=0.15 if scale > 1e-3 else 1e-3)
    for t1 in (1.0, 1e4, 1e8, 1e12):
        traj = gflow.solve_flow(fast_loss, model0, t1, progress=False)
        ok, why = shows_the_learning_phase(traj)
        assert ok and traj.status == "completed", f"t1 = {t1:g}: {why}"
        assert traj.ts[1] == first_save_offset(flow_time_scale(fast_loss, model0), 0.0, t1)
    old = gflow.solve_flow(fast_loss, model0, 1e8, save_at=gflow.flow.log_save_times(0.0, 1e8, 200), progress=False)
    assert old.ts[1] == 100.0 and not shows_the_learning_phase(old)[0]  # negative control: the 1e-6 t1 rule


def _planned_grid(solve, *args, **kwargs) -> np.ndarray:
    """The save times a solve used (every flow of a batch shares them)."""
    out = solve(*args, progress=False, **kwargs)
    return np.asarray(out.ts[0])[np.asarray(out.saved[0])] if np.ndim(out.ts) == 2 else np.asarray(out.ts)


def test_a_batch_shares_the_grid_of_its_fastest_flow(fast_loss):
    slow = gflow.PopulationLoss(teachers.balanced(jax.random.key(0), 2), 5)  # w0 = 1: ten times slower
    model0 = initializers.gaussian(jax.random.key(1), 4, scale=1e-3)
    batch = _planned_grid(gflow.solve_flows, [slow, fast_loss, slow], [model0] * 3, 1e8, save_at=50)
    assert batch[1] == first_save_offset(flow_time_scale(fast_loss, model0), 0.0, 1e8) == 1e-4
    assert _planned_grid(gflow.solve_flow, slow, model0, 1e8, save_at=50)[1] == 1e-3
    assert len(batch) == 50 and batch[-1] == 1e8
    explicit = np.geomspace(1e-5, 1e8, 7)
    np.testing.assert_array_equal(_planned_grid(gflow.solve_flow, slow, model0, 1e8, save_at=explicit),
                                  explicit)


def test_first_save_offset_rounds_down_and_stays_within_t0_t1():
    assert first_save_offset(0.5, 0.0, 1e8) == 1e-3  # τ/100 = 0.005, rounded down to a power of ten
    assert first_save_offset(0.5, 0.0, 1.0) == 1e-3
    assert first_save_offset(50.0, 0.0, 1.0) == 1e-2  # at most 1e-2 (t1 − t0)
    assert first_save_offset(1e-30, 0.0, 1e3) == 1e-12  # at least 1e-15 (t1 − t0)
    assert first_save_offset(1e-30, 1e6, 1e6 + 1.0) == pytest.approx(1e-6)  # and distinct from t0 in float64
    for unknown in (None, np.inf, 0.0, np.nan):
        assert first_save_offset(unknown, 0.0, 1e8) == 100.0  # the fixed rule where τ is not known
    explicit = np.array([0.0, 0.5, 1.0])  # explicit times are taken as given
    np.testing.assert_array_equal(gflow.run.save_times(explicit, 0.0, 1.0, first=1e-3), explicit)


@pytest.mark.slow
def test_the_readme_flow_at_t1_1e8():
    """README's first example at t1 = 1e8: the loss falls from 5.2 to ~1e-5 between t ≈ 2.5 and 3; the default
    grid starts at 0.001 and shows it, where the old rule's first save (t = 100) came after it."""
    teacher = teachers.balanced(jax.random.key(0), 5)
    loss = gflow.PopulationLoss(teacher, k=20)
    model0 = initializers.gaussian(jax.random.key(1), 25, scale=1e-3)
    traj = gflow.solve_flow(loss, model0, 1e8, progress=False)
    ok, why = shows_the_learning_phase(traj)
    assert ok, why
    assert traj.ts[1] == 1e-3 and flow_time_scale(loss, model0) == pytest.approx(0.5, rel=1e-3)
    old = traj.ts.copy()
    old[1:] = gflow.flow.log_save_times(0.0, 1e8, 200)[1:]
    assert old[1] == 100.0 and np.interp(old[1], traj.ts, traj.loss) < 1e-2 * traj.loss[0]  # after the drop
