"""The Gauss–Newton Rosenbrock-W solver: order, conservation, agreement, events, SaveAt, batching."""

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg

import gflow
from gflow import analysis, flatten, initializers, teachers
from gflow.flow import GradientFlowTerm


class Params(eqx.Module):
    theta: jax.Array


class LinearLeastSquares(gflow.objectives.AbstractSumOfSquares):
    """L = ‖Mθ − b‖²: the flow θ' = −2Mᵀ(Mθ − b) is linear and its Gauss–Newton Jacobian is exact."""

    M: jax.Array
    b: jax.Array

    def residuals(self, p):
        return self.M @ p.theta - self.b

    def __call__(self, p):
        r = self.residuals(p)
        return jnp.sum(r * r)


class CurvedLeastSquares(gflow.objectives.AbstractSumOfSquares):
    """Nonlinear residuals, so −2JᵀJ is only an approximation of the flow's Jacobian (the W-method case)."""

    def residuals(self, p):
        x, y = p.theta
        return jnp.stack([x * x - 1.0, x * y - 0.5, jnp.sin(y) - 0.2 * x])

    def __call__(self, p):
        r = self.residuals(p)
        return jnp.sum(r * r)


def _fixed_step_error(loss, p0, t1, dt, exact):
    theta0, static, unravel = flatten(p0)
    term = GradientFlowTerm(loss, static, unravel)
    sol = diffrax.diffeqsolve(term, gflow.flow.GaussNewtonRosenbrock(jacobian_every=1), 0.0, t1, dt, theta0,
                              stepsize_controller=diffrax.ConstantStepSize(), max_steps=100_000)
    return float(jnp.max(jnp.abs(sol.ys[-1] - exact)))


def _order(errors, dts):
    return np.polyfit(np.log(dts), np.log(errors), 1)[0]


@pytest.mark.slow
def test_order_three_on_linear_problem():
    key = jax.random.key(0)
    M = jax.random.normal(key, (4, 3))
    b = jnp.array([1.0, -0.5, 0.25, 2.0])
    loss = LinearLeastSquares(M, b)
    theta0 = jnp.array([0.3, -0.2, 0.1])
    t1 = 1.0
    theta_star = np.linalg.lstsq(np.asarray(M), np.asarray(b), rcond=None)[0]
    H = 2 * np.asarray(M).T @ np.asarray(M)
    exact = theta_star + scipy.linalg.expm(-H * t1) @ (np.asarray(theta0) - theta_star)
    dts = np.array([0.1, 0.05, 0.025, 0.0125])
    errors = [_fixed_step_error(loss, Params(theta0), t1, dt, exact) for dt in dts]
    assert 2.7 < _order(errors, dts) < 3.6, errors


@pytest.mark.slow
def test_order_three_with_approximate_jacobian():
    loss = CurvedLeastSquares()
    p0 = Params(jnp.array([0.4, 1.2]))
    ref = gflow.solve_flow(loss, p0, 1.0, rtol=1e-13, atol=1e-15, solver="dopri8", save_at=2)
    exact = flatten(ref.final)[0]
    dts = np.array([0.1, 0.05, 0.025, 0.0125])
    errors = [_fixed_step_error(loss, p0, 1.0, dt, exact) for dt in dts]
    assert 2.7 < _order(errors, dts) < 3.8, errors


@pytest.mark.slow
def test_conserves_Q_for_general_A():
    teacher = teachers.balanced(jax.random.key(0), 3)
    loss = gflow.PopulationLoss(teacher, 8)
    model0 = initializers.gaussian(jax.random.key(1), 6, scale=0.2)
    diags = {"Q": analysis.balance_matrix, "scale": analysis.balance_matrix_scale}
    drifts = []
    for rtol in (1e-7, 1e-9):
        traj = gflow.solve_flow(loss, model0, 200.0, rtol=rtol, solver="rosenbrock", diagnostics=diags)
        assert traj.status == "completed"
        drifts.append(analysis.relative_drift(traj.diagnostics["Q"], traj.diagnostics["scale"]))
    assert drifts[0] <= 10 * 1e-7
    assert drifts[1] < drifts[0]


@pytest.mark.slow
def test_agrees_with_tsit5_on_nonstiff_flow():
    teacher = teachers.delay(3)
    loss = gflow.PopulationLoss(teacher, 6)
    model0 = initializers.gaussian(jax.random.key(2), 5, scale=0.3)
    ts = np.linspace(0.0, 3.0, 31)
    a = gflow.solve_flow(loss, model0, 3.0, rtol=1e-10, solver="rosenbrock", save_at=ts)
    b = gflow.solve_flow(loss, model0, 3.0, rtol=1e-11, solver="tsit5", save_at=ts)
    # Dense output (cubic Hermite) at every saved time, not only at step ends.
    np.testing.assert_allclose(a.params, b.params, atol=1e-7)
    np.testing.assert_allclose(a.loss, b.loss, rtol=1e-6, atol=1e-12)


@pytest.mark.slow
def test_event_stops_at_loss_threshold():
    teacher = teachers.balanced(jax.random.key(0), 3)
    loss = gflow.PopulationLoss(teacher, 8)
    model0 = initializers.balanced(jax.random.key(3), 6, scale=0.1)
    traj = gflow.solve_flow(loss, model0, 1e5, solver="rosenbrock", stop_loss=1e-3)
    assert traj.status == "stopped_at_loss"
    assert traj.loss[-1] <= 1e-3
    assert traj.ts[-1] < 1e5
    assert np.all(np.diff(traj.ts) > 0)


@pytest.mark.slow
def test_cg_matches_woodbury():
    teacher = teachers.balanced(jax.random.key(0), 3)
    loss = gflow.PopulationLoss(teacher, 8)
    model0 = initializers.balanced(jax.random.key(4), 6, scale=0.1)
    a = gflow.solve_flow(loss, model0, 50.0, rtol=1e-9, solver="rosenbrock")
    b = gflow.solve_flow(loss, model0, 50.0, rtol=1e-9, solver="rosenbrock-cg")
    np.testing.assert_allclose(a.final.impulse_response(30), b.final.impulse_response(30), atol=1e-7)


@pytest.mark.slow
def test_batched_flows_match_single_flows():
    teacher = teachers.balanced(jax.random.key(0), 3)
    ks = [6, 8]
    losses = [gflow.PopulationLoss(teacher, k).padded_to(8) for k in ks]
    models = [initializers.balanced(jax.random.key(10 + i), 6, scale=0.05) for i in range(2)]
    batch = gflow.solve_flows(losses, models, 100.0, rtol=1e-9, atol=1e-11)
    for k, m, tb in zip(ks, models, batch):
        single = gflow.solve_flow(gflow.PopulationLoss(teacher, k), m, 100.0, rtol=1e-9, atol=1e-11)
        assert tb.status == single.status == "completed"
        np.testing.assert_allclose(tb.final.impulse_response(20), single.final.impulse_response(20), atol=1e-6)


def test_padded_loss_equals_original():
    teacher = teachers.balanced(jax.random.key(0), 3)
    model = initializers.gaussian(jax.random.key(5), 6, scale=0.3)
    loss = gflow.PopulationLoss(teacher, 5, weighting="accumulating")
    assert float(loss.padded_to(9)(model)) == pytest.approx(float(loss(model)), rel=1e-14)
    with pytest.raises(gflow.GflowInputError, match="k_max"):
        loss.padded_to(3)


def test_solver_rejects_terms_without_residuals():
    term = diffrax.ODETerm(lambda t, y, args: -y)
    with pytest.raises(TypeError, match="residuals"):
        diffrax.diffeqsolve(term, gflow.flow.GaussNewtonRosenbrock(), 0.0, 1.0, 0.1, jnp.ones(2))


def test_jacobian_lag_auto_rule():
    """jacobian_every='auto': every step for a matrix-free J (linear SISO), every 4 steps for a materialized J above
    lag_min_entries entries (a nonlinear SampleLoss); an explicit integer wins; anything else is refused."""
    from gflow import flatten
    from gflow.flow import GradientFlowTerm

    def flow_of(loss, model):
        theta, static, unravel = flatten(model)
        return GradientFlowTerm(loss, static, unravel), theta

    linear = flow_of(gflow.PopulationLoss(gflow.teachers.delay(3), 8),
                     gflow.initializers.gaussian(jax.random.key(0), 6, scale=0.1))
    teacher = gflow.models.elman_panigrahi_goyal(jax.random.key(1), 4, activation="tanh")
    elman = flow_of(gflow.objectives.SampleLoss.from_teacher(jax.random.key(2), teacher, 8, 4, steps="last"),
                    gflow.models.elman_panigrahi_goyal(jax.random.key(3), 6, activation="tanh"))
    small = gflow.flow.GaussNewtonRosenbrock(lag_min_entries=10)
    assert small._refresh_every(*linear) == 1
    assert small._refresh_every(*elman) == 4
    assert gflow.flow.GaussNewtonRosenbrock()._refresh_every(*elman) == 1  # 8 × 66 entries: below 2²²
    assert gflow.flow.GaussNewtonRosenbrock(jacobian_every=3)._refresh_every(*linear) == 3
    with pytest.raises(gflow.GflowInputError, match="jacobian_every"):
        gflow.flow.GaussNewtonRosenbrock(jacobian_every=0)
