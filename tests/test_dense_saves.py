"""Saved values from the solver's dense output: as accurate as the steps, checked for descent, and a solve whose
saves rose repeated with every step landing on the save times."""

import dataclasses
import inspect

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gflow
from conftest import assert_never_rises
from gflow import flatten, initializers, teachers
from gflow.flow import GradientFlowTerm, ROS34PW2, StageInterpolation


def key(i):
    return jax.random.key(i)


def _stages(tab, z):
    """The classical stages k_i of one step of ``tab`` on y' = λy, y0 = 1, z = hλ (Hairer & Wanner IV.7.4)."""
    alpha, gammas = np.asarray(tab.alpha), np.asarray(tab.gammas)
    k = []
    for i in range(len(tab.b)):
        rhs = z * (1 + sum(alpha[i, j] * k[j] for j in range(i))) + z * sum(gammas[i, j] * k[j] for j in range(i))
        k.append(rhs / (1 - tab.gamma * z))
    return np.asarray(k)


def _dense_value(tab, z, s):
    """y(s) of the stage interpolation on y' = λy (W acts on u = Γk)."""
    gamma = np.asarray(tab.gammas) + tab.gamma * np.eye(len(tab.b))
    u = gamma @ _stages(tab, z)
    weights = tab.dense_weights()
    return 1.0 + sum(s ** (q + 1) * weights[q] @ u for q in range(weights.shape[0]))


def test_stage_interpolation_ends_on_the_step_and_is_of_order_three():
    """s = 1 gives the step's y1 (b), and the error at mid-step falls like h⁴ (local order 3 + 1); the line between
    the step's ends (the fallback for a tableau without dense coefficients) falls like h² only."""
    z = -0.05
    y1 = 1.0 + np.asarray(ROS34PW2.b) @ _stages(ROS34PW2, z)
    assert _dense_value(ROS34PW2, z, 1.0) == pytest.approx(y1, rel=1e-14)
    errors = [abs(_dense_value(ROS34PW2, z, 0.5) - np.exp(0.5 * z)) for z in (-0.1, -0.05)]
    assert np.log2(errors[0] / errors[1]) > 3.7
    line = dataclasses.replace(ROS34PW2, dense=None)
    line_errors = [abs(_dense_value(line, z, 0.5) - np.exp(0.5 * z)) for z in (-0.1, -0.05)]
    assert np.log2(line_errors[0] / line_errors[1]) < 2.3


def test_stage_interpolation_stays_bounded_in_stiff_directions():
    """Where hλ → −∞ the value inside the step never exceeds the deviation at the step's start, and overshoots past
    zero by at most 0.72 of it (the cubic Hermite interpolant, with end slope h·f = hλ, goes off by ~hλ/8 there: the
    reason it was replaced)."""
    for z in (-1e2, -1e4, -1e8):
        values = np.array([_dense_value(ROS34PW2, z, s) for s in np.linspace(0, 1, 41)])
        assert values.max() <= 1.0 + 1e-12 and values.min() > -0.75
    s, z = 0.5, -1e4
    hermite = (1 - s) + s * 0.0 + s * (1 - s) * ((1 - s) * (z - (-1.0)) + s * (-1.0 - 0.0))
    assert abs(hermite) > 100


def test_stage_interpolation_returns_the_ends_bit_for_bit():
    y0, y1, q = jnp.array([1.0, 2.0]), jnp.array([0.3, -0.7]), jnp.array([[0.1, 0.2], [0.3, 0.4], [-1.1, -3.3]])
    interp = StageInterpolation(t0=jnp.array(2.0), t1=jnp.array(5.0), y0=y0, y1=y1, q=q)
    np.testing.assert_array_equal(interp.evaluate(jnp.array(2.0)), y0)
    np.testing.assert_array_equal(interp.evaluate(jnp.array(5.0)), y1)


class Quadratic(gflow.objectives.AbstractSumOfSquares):
    """L = ‖w θ‖²."""

    w: jax.Array

    def residuals(self, model):
        return self.w * model.a


class A(eqx.Module):
    a: jax.Array


def test_saved_rises_counts_rises_beyond_rounding_and_skips_rows_past_the_end():
    loss = Quadratic(jnp.array([1.0, 3.0]))
    model0 = A(jnp.array([1.0, 1.0]))
    theta0, static, unravel = flatten(model0)
    term = GradientFlowTerm(loss, static, unravel)
    falling = jnp.array([[1.0, 1.0], [0.5, 0.5], [jnp.inf, jnp.inf], [0.25, 0.25]])
    assert int(gflow.flow.saved_rises(term, falling, theta0, 2)) == 0
    rising = falling.at[3].set(jnp.array([0.6, 0.6]))  # against the last finite row (0.5), across the inf row
    assert int(gflow.flow.saved_rises(term, rising, theta0, 2)) == 1
    equal = falling.at[1].set(falling[0])  # no rise: equal values are within the rounding bound
    assert int(gflow.flow.saved_rises(term, equal, theta0, 2)) == 0
    # the saved losses come from the same pass: L at every finite row, NaN past the end, whether checked or not
    for check in (True, False):
        losses, rises = gflow.flow.saved_losses(term, rising, theta0, 2, check_descent=check)
        expected = [float(loss(A(row))) if np.all(np.isfinite(row)) else np.nan for row in np.asarray(rising)]
        np.testing.assert_array_equal(np.asarray(losses), expected)
        assert int(rises) == (1 if check else 0)


class _Out:
    def __init__(self, rises):
        self.saved_rises = np.asarray(rises)


def test_a_solve_whose_saves_rose_is_repeated_with_steps_on_the_save_times():
    problem = gflow.flow.FlowProblem(solver=None, controller=None, t0=0.0, t1=1.0, ts=np.zeros(3), rtol=1e-8,
                                     stop_loss=-np.inf, max_steps=10, watch_loss=False, resolve_loss=True)
    calls = []

    def solve(p):
        calls.append(p.save_on_steps)
        return _Out([0, 2] if not p.save_on_steps else [0, 0])

    out = gflow.flow.with_saves_checked(solve, problem)
    assert calls == [False, True] and not out.saved_rises.any()
    calls.clear()
    gflow.flow.with_saves_checked(lambda p: calls.append(p.save_on_steps) or _Out([0, 0]), problem)
    assert calls == [False]  # saves that descend: one solve


@pytest.mark.parametrize("solver", ["rosenbrock", "rodas5p", "rodas5p-dense"])
def test_dense_saves_agree_with_stopped_solves_and_descend(solver):
    """A value saved inside a step agrees with the final state of the same flow stopped at that time (which lands
    there) to the solve's accuracy, and the saved losses never rise."""
    loss = gflow.PopulationLoss(teachers.balanced(key(0), 3), 5)
    model0 = initializers.gaussian(key(1), 3, scale=1e-2)
    ts = gflow.flow.log_save_times(0.0, 1e4, 40)
    traj = gflow.solve_flow(loss, model0, 1e4, save_at=ts, rtol=1e-8, solver=solver, progress=False)
    for j in (12, 25, 33):
        stopped = gflow.solve_flow(loss, model0, ts[j], rtol=1e-10, solver=solver, progress=False)
        exact = np.asarray(flatten(stopped.final)[0])
        assert np.linalg.norm(traj.params[j] - exact) <= 1e-5 * np.linalg.norm(exact)
    finite = np.isfinite(traj.loss)
    eps = gflow.flow.loss_rounding_along(loss, model0, traj.params[finite])
    assert not np.any(np.diff(traj.loss[finite]) > eps[:-1] + eps[1:])


def test_dense_saves_take_fewer_steps_than_saves_on_steps():
    """200 saves over a flow of ~100 natural steps: stepping onto each would more than double the steps."""
    loss = gflow.PopulationLoss(teachers.balanced(key(0), 3), 5)
    model0 = initializers.gaussian(key(1), 3, scale=1e-2)
    few = gflow.solve_flow(loss, model0, 1e4, save_at=gflow.flow.log_save_times(0.0, 1e4, 2), solver="rosenbrock",
                           progress=False)
    many = gflow.solve_flow(loss, model0, 1e4, save_at=gflow.flow.log_save_times(0.0, 1e4, 200),
                            solver="rosenbrock", progress=False)
    assert many.stats["steps"] <= few.stats["steps"] + 2


@pytest.mark.parametrize("slots", [None, 2])
def test_batch_saves_from_the_dense_output_descend_and_cost_few_steps(slots):
    """A batch (lock-step and refilling) saves from the dense output too: 200 saves add a few steps to each flow's
    own (a step covers at most BATCH_SAVES_PER_STEP save times), where stepping onto each save time would take at
    least 200 (the flow of seed 2 takes about 95); every flow's saved losses descend, and each flow agrees with its own
    solve_flow."""
    loss = gflow.PopulationLoss(teachers.balanced(key(0), 2), 6)
    models = [initializers.gaussian(key(i), 4, scale=0.5) for i in (1, 2, 3)]
    ts = gflow.flow.log_save_times(0.0, 1e4, 200)
    kw = dict(rtol=1e-5, error_control="parameters", solver="rosenbrock", progress=False)
    batch = gflow.solve_flows([loss] * 3, models, 1e4, save_at=ts, slots=slots, **kw)
    steps = np.asarray(batch.stats["steps"])
    assert steps.min() < len(ts) // 2, steps
    for i, model0 in enumerate(models):
        few = gflow.solve_flow(loss, model0, 1e4, save_at=gflow.flow.log_save_times(0.0, 1e4, 2), **kw)
        assert few.stats["steps"] <= steps[i] <= few.stats["steps"] + 10, (steps[i], few.stats["steps"])
        assert_never_rises(loss, batch[i], model0)
        one = gflow.solve_flow(loss, model0, 1e4, save_at=ts, **kw)  # other steps (no cap): rtol-sized differences,
        np.testing.assert_allclose(batch[i].params, one.params, rtol=1e-2, atol=1e-4)  # grown through the saddle


def _outputs(rises, fill):
    n = len(rises)
    fields = {f: np.full((n, 2), fill, dtype=float) for f in inspect.signature(gflow.flow.IntegratorOutput).parameters}
    fields["saved_rises"] = np.asarray(rises)
    fields["time_restarts"] = None
    return gflow.flow.IntegratorOutput(**fields)


def test_batch_rows_whose_saves_rose_are_solved_again_alone():
    """Only the flows whose dense-output saves rose are solved again, and only their rows change."""
    asked = []

    def again(rows):
        asked.append(rows.tolist())
        return _outputs([0] * len(rows), 7.0)

    out = gflow.flow.with_batch_saves_checked(_outputs([0, 3, 0, 1], 1.0), again)
    assert asked == [[1, 3]]
    np.testing.assert_array_equal(out.ys[:, 0], [1.0, 7.0, 1.0, 7.0])
    np.testing.assert_array_equal(out.saved_rises, [0, 0, 0, 0])
    assert out.time_restarts is None
    asked.clear()
    same = _outputs([0, 0], 1.0)
    assert gflow.flow.with_batch_saves_checked(same, again) is same and asked == []
