"""Slots that refill (gflow.solve_flows(..., slots=S)): ``solve_flows(..., slots=S)`` agrees with the lock-step
path to rounding, gives every flow the same bits whatever its slot, neighbours and position, stops flows as the
lock-step path does, and splits over devices with the same bits per device."""

import json
import os
import shutil
import subprocess
import sys
import textwrap

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gflow
from gflow import initializers, teachers
from gflow.stacking import take

T1, SAVES, N, SLOTS = 1e4, 20, 6, 2
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def heterogeneous_batch(n=N):
    """n small flows (balanced teacher d̂ = 3, student d = 4, k = 3 … 5 padded to 5) from init scales 10^-0.5 …
    10^-4, so their step counts differ several-fold."""
    teacher = teachers.balanced(jax.random.key(0), 3)
    losses = eqx.filter_vmap(lambda k: gflow.PopulationLoss(teacher, k, k_max=5))(jnp.asarray(3 + np.arange(n) % 3))
    scales = jnp.asarray(np.logspace(-0.5, -4, n))
    keys = jax.random.split(jax.random.key(0), n)
    return losses, eqx.filter_vmap(lambda key, s: initializers.gaussian(key, 4, scale=s))(keys, scales)


def solve(losses, models, **kwargs):
    return gflow.solve_flows(losses, models, T1, save_at=SAVES, progress=False, **kwargs)


@pytest.fixture(scope="module")
def flows():
    return heterogeneous_batch()


@pytest.fixture(scope="module")
def lock_step(flows):
    return solve(*flows)


@pytest.fixture(scope="module")
def refilled(flows):
    return solve(*flows, slots=SLOTS)


def test_refill_agrees_with_lock_step(lock_step, refilled):
    assert refilled.statuses == lock_step.statuses == ["completed"] * N
    assert np.ptp(lock_step.steps) > 0.5 * np.max(lock_step.steps)  # the step counts do differ: slots do refill
    np.testing.assert_allclose(refilled.ts, lock_step.ts, rtol=1e-12)
    scale = np.maximum(1.0, np.nanmax(np.abs(lock_step.params), axis=(1, 2)))
    assert np.nanmax(np.abs(refilled.params - lock_step.params) / scale[:, None, None]) < 1e-9
    resolved = lock_step.loss > 1e-12
    assert np.max(np.abs(refilled.loss - lock_step.loss)[resolved] / lock_step.loss[resolved]) < 1e-8
    np.testing.assert_allclose(refilled.steps, lock_step.steps, rtol=0.01)
    assert [refilled[i].config["slots"] for i in range(N)] == [SLOTS] * N


def _same_bits(a, b) -> bool:
    return all(np.array_equal(x, y, equal_nan=True) for x, y in (
        (a.ts, b.ts), (a.params, b.params), (a.loss, b.loss), (a.steps, b.steps), (a.status_codes, b.status_codes)))


def test_a_flow_gets_the_same_bits_in_any_slot_and_company(flows, refilled):
    order = np.array([4, 0, 5, 2, 1, 3])
    permuted = solve(take(flows[0], order), take(flows[1], order), slots=SLOTS)
    assert _same_bits(permuted, _rows(refilled, order))
    some = np.array([5, 1, 3])  # fewer flows, other neighbours, other positions: the same program per slot
    assert _same_bits(solve(take(flows[0], some), take(flows[1], some), slots=SLOTS), _rows(refilled, some))


def _rows(batch, rows):
    class Rows:
        ts, params, loss = batch.ts[rows], batch.params[rows], batch.loss[rows]
        steps, status_codes = batch.steps[rows], batch.status_codes[rows]

    return Rows


def test_more_slots_than_flows(flows, lock_step):
    three = np.arange(3)
    batch = solve(take(flows[0], three), take(flows[1], three), slots=8)
    assert batch.statuses == ["completed"] * 3
    np.testing.assert_allclose(batch.loss[:, -1], lock_step.loss[:3, -1], rtol=1e-6, atol=1e-25)


@pytest.mark.slow
def test_refill_stops_flows_as_lock_step_does(flows):
    # some flows reach L <= 1e-10 (stopped), the slow ones run out of steps, flow 2 ends at L ≈ 2e-6 (completed)
    kwargs = dict(stop_loss=1e-10, max_steps=3000, solver="rosenbrock")  # ROS34PW2 runs some out of steps
    a, b = solve(*flows, **kwargs), solve(*flows, slots=SLOTS, **kwargs)
    assert a.statuses == b.statuses and {"stopped_at_loss", "max_steps", "completed"} <= set(b.statuses)
    stopped = np.flatnonzero(np.array(b.statuses) == "stopped_at_loss")
    assert stopped.size and all(b[i].loss[-1] <= 1e-10 and b[i].ts[-1] < T1 for i in stopped)
    assert np.all(b.steps[np.array(b.statuses) == "max_steps"] == 3000)


def test_bad_slots_are_refused(flows):
    with pytest.raises(gflow.GflowInputError, match="slots"):
        solve(*flows, slots=0)


@pytest.mark.slow
def test_refill_splits_over_devices_with_the_same_bits(tmp_path, refilled):
    """Two host devices, 2 slots each: every flow's bits equal a one-device run with 2 slots."""
    code = textwrap.dedent(f"""
        import json, sys
        sys.path.insert(0, {os.path.join(ROOT, "tests")!r})
        import jax, numpy as np, gflow
        from test_refill import heterogeneous_batch, solve
        assert len(jax.devices()) == 2
        batch = solve(*heterogeneous_batch(), slots=4)
        np.save({str(tmp_path / "params.npy")!r}, batch.params)
        print(json.dumps({{"slots": batch[0].config["slots"], "statuses": batch.statuses}}))
    """)
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2", JAX_PLATFORMS="cpu",
               GFLOW_COMPILATION_CACHE="0")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, check=True)
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["slots"] == 4 and report["statuses"] == refilled.statuses
    np.testing.assert_array_equal(np.load(tmp_path / "params.npy"), refilled.params)


def _build(seed, scale):
    """A sweep's flow: the test batch's teacher, student d = 4 from init scale ``scale``."""
    teacher = teachers.balanced(jax.random.key(0), 3)
    return gflow.PopulationLoss(teacher, 5), initializers.gaussian(jax.random.key(seed), 4, scale=scale)


@pytest.mark.slow
def test_a_sweep_with_refilling_slots_resumes_with_the_same_bits(tmp_path):
    """A sweep whose batches run through 2 refilling slots: interrupted (two runs deleted), the same call recomputes
    just those two, with the bits the uninterrupted sweep gave them."""
    from conftest import assert_same_bits

    grid = {"seed": [0, 1, 2], "scale": [0.3, 1e-3]}

    def sweep(out):
        return gflow.run_sweep(grid, _build, str(out), t1=T1, save_at=SAVES, batch_size=6, slots=2, progress=False)

    first = sweep(tmp_path / "a")
    assert {r.status for r in first} == {"completed"} and np.ptp([r.stats["steps"] for r in first]) > 100
    for run in first[1:3]:
        shutil.rmtree(run.path)
    again = sweep(tmp_path / "a")
    assert [r.computed for r in again] == [False, True, True, False, False, False]
    assert_same_bits(again, first)


def test_repeated_save_times_are_laid_out_as_lock_step_does(flows):
    """A save grid with repeated times (run on its distinct times, then laid out again) gives lock-step's rows."""
    grid = np.array([0.0, 1.0, 1.0, 10.0, 100.0, 100.0, 100.0, T1])
    some = np.array([0, 4])
    losses, models = take(flows[0], some), take(flows[1], some)
    a = gflow.solve_flows(losses, models, T1, save_at=grid, progress=False)
    b = gflow.solve_flows(losses, models, T1, save_at=grid, progress=False, slots=SLOTS)
    np.testing.assert_array_equal(a.ts, b.ts)
    np.testing.assert_array_equal(a.saved, b.saved)
    np.testing.assert_allclose(b.params, a.params, rtol=0, atol=1e-9)
    stopped = gflow.solve_flows(losses, models, T1, save_at=grid, progress=False, slots=SLOTS, stop_loss=1e-3)
    lock = gflow.solve_flows(losses, models, T1, save_at=grid, progress=False, stop_loss=1e-3)
    np.testing.assert_array_equal(stopped.ts, lock.ts)  # the final row right after the last save made


def test_save_times_one_step_cannot_hold_are_refused(flows):
    crowded = T1 - np.spacing(T1) * np.array([3.0, 2.0, 1.0, 0.0])
    with pytest.raises(gflow.GflowInputError, match="100 ulps"):
        gflow.solve_flows(*flows, T1, slots=SLOTS, progress=False, save_at=np.concatenate([[0.0, 1.0], crowded]))


@pytest.mark.parametrize("kind", ["kvaerno5", "dtmin", "frozen"])
def test_refill_agrees_with_lock_step_beyond_the_default_setup(kind):
    """What the review of the refill loop found (2026-11-26): an implicit stock solver needs the controller's
    tolerances in its root finder, a PIDController's dtmin flag must be carried per slot, and each flow keeps the
    static part of its model (Frozen layers differ between these Elman students)."""
    import diffrax

    if kind == "frozen":
        teacher = gflow.models.elman_allen_zhu_li(jax.random.key(100), 6, activation="tanh")
        loss = gflow.objectives.SampleLoss.from_teacher(jax.random.key(7), teacher, 8, 5)
        losses = [loss] * 3
        models = [gflow.models.elman_allen_zhu_li(jax.random.key(s), 6, activation="tanh") for s in range(3)]
        kwargs, t1 = dict(save_at=6, max_steps=500), 1.0
    else:
        losses, models = heterogeneous_batch(3)
        t1 = 100.0
        kwargs = dict(save_at=6, solver="kvaerno5") if kind == "kvaerno5" else dict(
            save_at=6, max_steps=3000, stepsize_controller=diffrax.PIDController(rtol=1e-8, atol=1e-10, dtmin=0.01))
    a = gflow.solve_flows(losses, models, t1, progress=False, **kwargs)
    b = gflow.solve_flows(losses, models, t1, progress=False, slots=2, **kwargs)
    assert a.statuses == b.statuses
    np.testing.assert_allclose(b.loss[:, 0], a.loss[:, 0], rtol=1e-12)  # each flow's own loss at its own start
    np.testing.assert_allclose(b.params[:, -1], a.params[:, -1], rtol=0, atol=1e-9)
    np.testing.assert_allclose(b.steps, a.steps, rtol=0.02)


@pytest.mark.parametrize("slots", [None, 2])
def test_diagnostics_see_each_flows_own_frozen_arrays(slots):
    """Diagnostics rebuild each flow's model on its own static part (a Frozen target that differs per flow), in
    lock-step and refilling batches; before 2026-11-26 every flow's were read on flow 0's."""
    from gflow.models import Frozen

    class Model(eqx.Module):
        w: jax.Array
        target: Frozen

    class Loss(eqx.Module):
        k: jax.Array

        def __call__(self, m):
            return jnp.sum((m.w - m.target.value) ** 2) * self.k

    models = [Model(jnp.zeros(2), Frozen(jnp.asarray([1.0, 2.0]) * (i + 1))) for i in range(3)]
    batch = gflow.solve_flows([Loss(jnp.asarray(1.0))] * 3, models, 1.0, save_at=3, progress=False, solver="tsit5",
                              slots=slots, diagnostics={"target0": lambda m: m.target.value[0]})
    np.testing.assert_array_equal(batch.diagnostics["target0"][:, 0], [1.0, 2.0, 3.0])
    np.testing.assert_allclose(batch.loss[:, 0], [5.0, 20.0, 45.0])
