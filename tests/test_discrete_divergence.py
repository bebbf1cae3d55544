"""A diverged discrete run ends at the state before the offending step, for every method, one by one and batched:
its final loss is finite, is the last recorded loss, and no recorded loss (nor the plotted curve) lies beyond the
divergence level."""

import jax
import matplotlib
import numpy as np
import pytest

import gflow
import gflow.plot
from gflow import flatten, initializers
from gflow.stacking import stack

matplotlib.use("Agg")

STEPS = 8
EVERY = np.arange(STEPS + 1)  # every step saved: the offending step's state is saved before it is found out
D = gflow.discrete


@pytest.fixture(scope="module")
def problem(balanced_teacher):
    loss = gflow.PopulationLoss(balanced_teacher, 5)
    data = gflow.objectives.EmpiricalLoss.from_teacher(jax.random.key(3), balanced_teacher, 60, 5)
    start = initializers.gaussian(jax.random.key(1), 4, scale=0.3)
    return loss, data, start


def _method(name, problem):
    """(run(model0, lr, steps, save_at), run_batch(models0, lrs, steps, save_at), diverging lr, full loss)."""
    loss, data, start = problem
    box = D.box_projection(start, "B", 0.1)
    keys = jax.random.split(jax.random.key(2), 2)  # the batch's member i samples with keys[i]
    return {
        "gd": (lambda m, lr, s, at: D.run_gd(loss, m, lr=lr, steps=s, save_at=at, progress=False),
               lambda ms, lrs, s, at: D.run_gd_batch(loss, ms, lr=lrs, steps=s, save_at=at, progress=False),
               0.5, loss),
        "sgd": (lambda m, lr, s, at: D.run_sgd(data, m, lr=lr, steps=s, batch_size=10, key=keys[1], save_at=at,
                                               progress=False),
                lambda ms, lrs, s, at: D.run_sgd_batch(data, ms, lr=lrs, steps=s, batch_size=10,
                                                       key=keys, save_at=at, progress=False),
                1.0, data.full_loss),
        "adam": (lambda m, lr, s, at: D.run_adam(loss, m, lr=lr, steps=s, save_at=at, progress=False),
                 lambda ms, lrs, s, at: D.run_adam_batch(loss, ms, lr=lrs, steps=s, save_at=at, progress=False),
                 3.0, loss),
        "projected_gd": (
            lambda m, lr, s, at: D.run_projected_gd(loss, m, lr=lr, steps=s, projection=box, save_at=at,
                                                    progress=False),
            lambda ms, lrs, s, at: D.run_projected_gd_batch(loss, ms, lr=lrs, steps=s, projection=[box, box],
                                                            save_at=at, progress=False),
            0.5, loss),
        "normalized_gd": (
            lambda m, lr, s, at: D.run_normalized_gd(loss, m, lr=lr, steps=s, save_at=at, progress=False),
            lambda ms, lrs, s, at: D.run_normalized_gd_batch(loss, ms, lr=lrs, steps=s, save_at=at, progress=False),
            1.0, loss),
    }[name]


def _limit(full_loss, start) -> float:
    return 1e6 * max(abs(float(full_loss(start))), 1.0)  # the default diverge_factor's level


def assert_kept_before_the_offending_step(traj, full_loss, limit):
    n = traj.stats["steps"]
    assert traj.status == "diverged"
    assert f"diverged at step {n + 1}:" in traj.message and f"before that step (step {n}," in traj.message
    assert traj.diagnostics["step"][-1] == n and np.all(np.diff(traj.diagnostics["step"]) > 0)
    assert np.all(np.isfinite(traj.loss)) and np.max(np.abs(traj.loss)) <= limit
    np.testing.assert_array_equal(np.asarray(flatten(traj.final)[0]), traj.params[-1])
    final_loss = float(full_loss(traj.final))
    assert np.isfinite(final_loss) and final_loss == pytest.approx(traj.loss[-1], rel=1e-12)
    assert traj.stats["gradient_evaluations"] > n  # the undone step's and the check's evaluations are counted


@pytest.mark.parametrize("name", ["gd", "sgd", "adam", "projected_gd", "normalized_gd"])
def test_a_diverged_run_ends_before_the_offending_step(problem, name):
    run, _, lr, full_loss = _method(name, problem)
    start = problem[2]
    limit = _limit(full_loss, start)
    traj = run(start, lr, STEPS, EVERY)
    assert_kept_before_the_offending_step(traj, full_loss, limit)
    n = traj.stats["steps"]
    # the same run stopped at step n + 1, the offending step, as its last: the loop never takes a step from θ_{n+1},
    # so its loss is checked at the end, with the same outcome
    last = run(start, lr, n + 1, np.arange(n + 2))
    assert_kept_before_the_offending_step(last, full_loss, limit)
    assert last.stats["steps"] == n
    np.testing.assert_array_equal(last.params, traj.params)
    np.testing.assert_array_equal(last.loss, traj.loss)
    # and the state kept is the one an n-step run ends at, which completes
    if n > 0:
        short = run(start, lr, n, np.arange(n + 1))
        assert short.status == "completed"
        np.testing.assert_array_equal(short.params[-1], traj.params[-1])


@pytest.mark.parametrize("name", ["gd", "sgd", "adam", "projected_gd", "normalized_gd"])
def test_a_diverged_member_of_a_batch_ends_before_the_offending_step(problem, name):
    run, run_batch, lr, full_loss = _method(name, problem)
    start = problem[2]
    limit = _limit(full_loss, start)
    lrs = np.array([0.01, lr])
    batch = run_batch(stack([start, start]), lrs, STEPS, EVERY)
    assert batch.statuses == ["completed", "diverged"]
    row = batch.loss[1][batch.saved[1]]
    assert np.all(np.isfinite(row)) and np.max(np.abs(row)) <= limit  # the batch's arrays hold no offending value
    np.testing.assert_array_equal(batch.final_params[1], batch.params[1][batch.saved[1]][-1])
    member = batch[1]
    assert_kept_before_the_offending_step(member, full_loss, limit)
    one = run(start, lr, STEPS, EVERY)
    np.testing.assert_allclose(member.params, one.params, rtol=1e-12, atol=1e-15)
    assert member.message == one.message and member.stats["steps"] == one.stats["steps"]
    assert int(batch.steps[1]) == one.stats["steps"]
    # the offending step as the batch's last step: checked at the end, the same state kept
    n = one.stats["steps"]
    last = run_batch(stack([start, start]), lrs, n + 1, np.arange(n + 2))
    assert last.statuses[1] == "diverged"
    assert_kept_before_the_offending_step(last[1], full_loss, limit)
    np.testing.assert_allclose(last[1].params, one.params, rtol=1e-12, atol=1e-15)


def test_the_loss_plot_of_a_diverged_run_stays_below_the_level(problem):
    import matplotlib.pyplot as plt

    run, _, lr, full_loss = _method("gd", problem)
    traj = run(problem[2], lr, STEPS, EVERY)
    ax = gflow.plot.plot_loss(traj, log_x=False)
    top = max(np.max(line.get_ydata()) for line in ax.get_lines())
    assert top <= _limit(full_loss, problem[2])
    plt.close(ax.figure)

