"""solve_flow: statuses, saved times, determinism, the ODE it integrates, options."""

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gflow
from conftest import assert_never_rises
from gflow import analysis as an, initializers, teachers

T1 = 10.0
N_SAVE = 25  # the same number of save times everywhere: the compiled solve is reused (see conftest.py)


class Scalar(eqx.Module):
    theta: jax.Array


class NegativeQuartic(gflow.objectives.AbstractSumOfSquares):
    """L(θ) = −θ⁴, so dθ/dt = −L'(θ) = 4θ³ and θ(t) = θ0 / √(1 − 8 θ0² t) blows up at t* = 1/(8 θ0²)."""

    def residuals(self, model):
        return model.theta**2

    def __call__(self, model):
        r = self.residuals(model)
        return -jnp.sum(r * r)


class ShiftedQuadratic(gflow.objectives.AbstractSumOfSquares):
    """L(θ) = ‖θ − 1‖² − 2: a perfectly tame gradient flow whose loss value happens to be negative."""

    def residuals(self, model):
        return model.theta - 1.0

    def __call__(self, model):
        r = self.residuals(model)
        return jnp.sum(r * r) - 2.0


class StiffQuadratic(gflow.objectives.AbstractSumOfSquares):
    """L(θ) = (10 θ)²: dθ/dt = −200 θ, stiff for an explicit method with loose tolerances."""

    def residuals(self, model):
        return 10.0 * model.theta

    def __call__(self, model):
        r = self.residuals(model)
        return jnp.sum(r * r)


@pytest.fixture(scope="module")
def start(general_start):
    return general_start


@pytest.fixture(scope="module")
def completed(reference_flow):
    return reference_flow


def test_completed_status_and_saved_times(completed, small_loss, start):
    traj = completed
    assert traj.status == "completed"
    assert traj.message == ""
    assert len(traj.ts) == 25
    assert traj.ts[0] == 0.0
    assert traj.ts[-1] == T1
    assert np.all(np.diff(traj.ts) > 0)
    assert traj.loss.shape == traj.ts.shape == traj.diagnostics["rho_bal"].shape
    assert traj.params.shape == (25, 4 * 4 + 4 + 4)
    assert traj.loss[0] == pytest.approx(float(small_loss(start)), rel=1e-14)
    assert traj.loss[-1] < 1e-2 * traj.loss[0]  # it actually learned


def test_loss_is_nonincreasing_along_the_flow(completed):
    assert np.all(np.diff(completed.loss) <= 1e-12 * completed.loss[0])


def test_final_model_is_the_last_saved_state(completed, small_loss):
    traj = completed
    final_theta, _, _ = gflow.flatten(traj.final)
    np.testing.assert_array_equal(np.asarray(final_theta), traj.params[-1])
    assert float(small_loss(traj.final)) == pytest.approx(traj.loss[-1], rel=1e-13)
    np.testing.assert_array_equal(np.asarray(traj.model_at(0).A), np.asarray(traj.model_at(0).A))
    np.testing.assert_allclose(np.asarray(an.balance_ratio(traj.model_at(3))), traj.diagnostics["rho_bal"][3],
                               rtol=1e-14)


def test_stats_and_config(completed):
    traj = completed
    assert traj.stats["steps"] >= traj.stats["accepted_steps"] > 0
    assert traj.stats["steps"] == traj.stats["accepted_steps"] + traj.stats["rejected_steps"]
    assert traj.stats["gradient_evaluations"] > traj.stats["steps"]
    cfg = traj.config
    assert cfg["convention"] == "L" and traj.convention == "L"
    assert cfg["k"] == 5 and cfg["weighting"] == "uniform" and cfg["structure"] == "general"
    assert cfg["rtol"] == 1e-8 and cfg["t1"] == T1 and cfg["n_params"] == 24
    assert 0 < cfg["atol"] <= cfg["rtol"]
    assert "completed" in repr(traj)


def test_same_seed_gives_bit_identical_trajectories(small_loss):
    runs = [gflow.solve_flow(small_loss, initializers.gaussian(jax.random.key(7), 4, scale=0.3), T1, save_at=N_SAVE)
            for _ in range(2)]
    np.testing.assert_array_equal(runs[0].ts, runs[1].ts)
    np.testing.assert_array_equal(runs[0].params, runs[1].params)
    np.testing.assert_array_equal(runs[0].loss, runs[1].loss)
    other = gflow.solve_flow(small_loss, initializers.gaussian(jax.random.key(8), 4, scale=0.3), T1, save_at=N_SAVE)
    assert not np.array_equal(other.params, runs[0].params)


def test_explicit_save_times_are_honoured(small_loss, start, completed):
    ts = np.linspace(0.0, T1, N_SAVE)
    traj = gflow.solve_flow(small_loss, start, T1, save_at=ts)
    np.testing.assert_array_equal(traj.ts, ts)
    # the same state at t1 whatever the save grid, to solver accuracy
    np.testing.assert_allclose(traj.params[-1], completed.params[-1], rtol=1e-5, atol=1e-7)


def test_log_save_times():
    ts = gflow.flow.log_save_times(0.0, 100.0, 8)
    assert ts[0] == 0.0 and ts[-1] == 100.0 and len(ts) == 8
    np.testing.assert_allclose(ts[1], 1e-4)  # default first = 1e-6 (t1 - t0)
    np.testing.assert_allclose(np.diff(np.log(ts[1:])), np.log(10.0))
    ts = gflow.flow.log_save_times(0.0, 1.0, 3, first=0.01)
    np.testing.assert_allclose(ts, [0.0, 0.01, 1.0])


def test_integer_save_at_with_nonzero_t0(small_loss, start):
    traj = gflow.solve_flow(small_loss, start, 3.6, t0=0.7, save_at=N_SAVE)
    assert traj.status == "completed"
    assert traj.ts[0] == 0.7 and traj.ts[-1] == pytest.approx(3.6, abs=1e-15)


def test_max_steps():
    """max_steps reached: status "max_steps", the states reached so far are kept and are correct."""
    ts = np.linspace(0.0, 0.05, 11)
    traj = gflow.solve_flow(StiffQuadratic(), Scalar(jnp.array([1.0])), 0.05, save_at=ts, rtol=1e-10,
                            solver="tsit5", max_steps=30)
    assert traj.status == "max_steps"
    assert "max_steps" in traj.message
    assert traj.stats["steps"] == 30
    assert len(traj.ts) >= 3 and 0.0 < traj.ts[-1] < 0.05
    assert np.all(np.diff(traj.ts) > 0)
    np.testing.assert_allclose(traj.params[:, 0], np.exp(-200.0 * traj.ts), rtol=1e-8)  # θ0 e^{−200 t}
    np.testing.assert_array_equal(np.asarray(traj.final.theta), traj.params[-1])


@pytest.fixture(scope="module")
def stopped(small_loss, start):
    return gflow.solve_flow(small_loss, start, T1, save_at=N_SAVE, stop_loss=1e-2)


@pytest.mark.slow
def test_stop_loss_stops_the_integration_early(stopped):
    traj = stopped
    assert traj.ts[-1] < T1
    assert np.all(np.diff(traj.ts) > 0)
    assert traj.loss[-1] <= 1e-2
    # the solve stops at the first step end with L ≤ 1e-2; saves inside that last step (dense output) may already be
    # below it, so the saves above the threshold are a prefix, followed by a short tail below it
    above = traj.loss > 1e-2
    assert above[0] and np.all(above[: np.argmin(above)]) and not np.any(above[np.argmin(above):])
    assert traj.status in gflow.results.STATUSES


def test_stop_loss_status(stopped):
    assert stopped.status == "stopped_at_loss", stopped.message
    assert "L ≤" in stopped.message


# ----------------------------------------------------------------------------------------------------------
# custom losses and a flow that blows up


def test_loose_explicit_solve_stays_a_gradient_flow():
    """An explicit solver with the loosest tolerances gflow accepts is unstable on a stiff flow (before the descent
    guard, with rtol = atol = 1e2, L exploded and the run was reported "diverged"): the descent guard rejects every step
    that would raise L, so the run completes with a loss that never rises, and says how many steps it rejected."""
    with pytest.raises(gflow.GflowInputError, match="rtol"):
        gflow.solve_flow(StiffQuadratic(), Scalar(jnp.array([1.0])), 100.0, rtol=1e2, atol=1e2, solver="tsit5")
    traj = gflow.solve_flow(StiffQuadratic(), Scalar(jnp.array([1.0])), 100.0, save_at=11, rtol=0.09, atol=0.09,
                            solver="tsit5", error_control="parameters")
    assert traj.status == "completed", traj.message
    assert traj.stats["rejected_ascent"] > 0
    assert_never_rises(StiffQuadratic(), traj, Scalar(jnp.array([1.0])))
    assert traj.loss[-1] < 1e-6 * traj.loss[0]
    assert np.all(np.diff(traj.loss)[:5] < 0)  # above the rounding floor it strictly falls
    assert np.all(np.isfinite(np.asarray(traj.final.theta)))


def test_blowup_never_crashes():
    """Whatever it reports, a blowing-up flow returns a Trajectory with a finite final model."""
    traj = gflow.solve_flow(NegativeQuartic(), Scalar(jnp.array([0.5])), 1.0, save_at=11, max_steps=20_000,
                            solver="tsit5")
    assert traj.status in gflow.results.STATUSES
    assert traj.ts[-1] < 1.0  # it cannot have integrated through the blow-up at t* = 0.5
    assert np.all(np.isfinite(np.asarray(traj.final.theta)))
    finite = np.isfinite(traj.loss)
    assert finite[0]
    assert np.all(finite[:-1])  # only the last (the blow-up) may be reported as non-finite
    assert traj.config["loss"] == "NegativeQuartic"


def test_blowup_is_reported_as_diverged_near_the_blowup_time():
    theta0, t_star = 0.5, 1.0 / (8 * 0.5**2)  # t* = 0.5
    traj = gflow.solve_flow(NegativeQuartic(), Scalar(jnp.array([theta0])), 1.0, save_at=np.linspace(0, 1, 11),
                            max_steps=20_000, solver="tsit5")
    assert traj.status == "diverged"
    assert 0.9 * t_star < traj.ts[-1] <= 1.001 * t_star  # it integrated up to the blow-up (numerically)
    assert abs(float(traj.final.theta[0])) > 10.0
    before = traj.ts < 0.9 * t_star
    # saved times fall between steps: Tsit5's dense output is 4th order, so 1e-5 rather than rtol
    np.testing.assert_allclose(traj.params[before, 0], theta0 / np.sqrt(1 - 8 * theta0**2 * traj.ts[before]),
                               rtol=1e-5)


@pytest.mark.slow
def test_negative_loss_values_do_not_trigger_a_stop():
    traj = gflow.solve_flow(ShiftedQuadratic(), Scalar(jnp.array([3.0])), 5.0, save_at=6, solver="tsit5")
    assert traj.status == "completed", traj.message
    assert traj.ts[-1] == 5.0
    np.testing.assert_allclose(float(traj.final.theta[0]), 1.0 + 2.0 * np.exp(-10.0), rtol=1e-7)  # θ = 1 + 2e^{-2t}


# ----------------------------------------------------------------------------------------------------------
# the ODE itself: a closed-form solution


@pytest.mark.slow
def test_matches_closed_form_logistic_solution():
    """k = 1, memoryless w, balanced scalar B = C = u: L = (u² − w)², so du/dt = −2(u² − w)u and v = u² obeys
    dv/dt = −4(v − w)v, i.e. v(t) = w / (1 + (w/v0 − 1) e^{−4 w t}). (Convention "half" halves the field;
    see test_gradients.py, so there the rate is 2 w.)
    """
    convention, rate = "L", 4.0
    w, u0 = 2.0, 0.1
    loss = gflow.PopulationLoss(teachers.memoryless(w), 1, convention=convention)
    model0 = gflow.LinearRNN(jnp.array([0.3]), jnp.array([u0]), jnp.array([u0]), structure="diagonal")
    ts = np.linspace(0.0, 2.0, 9)
    traj = gflow.solve_flow(loss, model0, 2.0, save_at=ts, rtol=1e-10, solver="tsit5")
    assert traj.status == "completed"
    v0 = u0**2
    v = w / (1 + (w / v0 - 1) * np.exp(-rate * w * ts))
    h0 = traj.params[:, 1] * traj.params[:, 2]  # θ = (A, B, C) flattened: h_0 = C B
    np.testing.assert_allclose(h0, v, rtol=1e-7)
    assert float(traj.final.impulse_response(1)[0]) == pytest.approx(h0[-1], rel=1e-14)
    # A does not enter a k = 1 loss, so it never moves
    np.testing.assert_allclose(traj.params[:, 0], 0.3, rtol=0, atol=1e-15)


# ----------------------------------------------------------------------------------------------------------
# options


@pytest.mark.slow
def test_solvers_by_name_instance_and_registry_agree(small_loss, start, completed):
    """A registered name, a stock name and a diffrax instance all integrate the same flow."""
    gflow.flow.register_solver("test-dopri5", diffrax.Dopri5)
    a = gflow.solve_flow(small_loss, start, T1, save_at=N_SAVE, solver="test-dopri5")
    b = gflow.solve_flow(small_loss, start, T1, save_at=N_SAVE, solver=diffrax.Dopri5())
    assert a.config["solver"] == "test-dopri5" and b.config["solver"] == "Dopri5"
    assert completed.config["solver"] == gflow.flow.default_solver(n_params=completed.config["n_params"])  # "auto"
    assert a.status == b.status == "completed"
    np.testing.assert_array_equal(a.params, b.params)  # the registered factory and the instance: same solver
    np.testing.assert_allclose(a.params[-1], completed.params[-1], rtol=1e-5, atol=1e-7)
    assert "test-dopri5" in gflow.flow.SOLVER_REGISTRY and "dopri5" in gflow.flow.STOCK_SOLVERS


def test_diagnostics_as_list_and_callable(small_loss, start):
    traj = gflow.solve_flow(small_loss, start, T1, save_at=N_SAVE,
                            diagnostics=[an.balance_ratio, an.norm_difference])
    assert set(traj.diagnostics) == {"balance_ratio", "norm_difference"}
    assert traj.diagnostics["norm_difference"].shape == (N_SAVE,)
    traj = gflow.solve_flow(small_loss, start, T1, save_at=N_SAVE, diagnostics=an.balance_ratio)
    assert set(traj.diagnostics) == {"balance_ratio"}
    np.testing.assert_allclose(traj.diagnostics["balance_ratio"][0], float(an.balance_ratio(start)), rtol=1e-14)


def test_user_config_is_recorded(small_loss, start):
    traj = gflow.solve_flow(small_loss, start, T1, save_at=N_SAVE, config={"study": "unit-test", "k": 99})
    assert traj.config["study"] == "unit-test"
    assert traj.config["k"] == 99  # user entries override the defaults


def test_progress_meter_prints(capfd):
    traj = gflow.solve_flow(StiffQuadratic(), Scalar(jnp.array([1.0])), 1.0, save_at=11, solver="tsit5",
                            progress=True)
    assert traj.status == "completed"
    out = capfd.readouterr().out
    assert "[flow" in out and "log-time" in out


def test_a_large_flow_goes_as_a_batch_of_one_and_agrees_with_the_small_flow_it_contains():
    """From AS_BATCH_MIN_PARAMETERS parameters on, solve_flow integrates its flow as a vmapped batch of one. A student
    padded with units whose A, B, C are exactly zero has the flow of the unpadded student (those units' gradients
    are zero forever), so the large flow, integrated that way, must agree with the small one, integrated the plain
    way, to the solver's accuracy (the step sizes differ: the error norm sees the zeros)."""
    teacher = gflow.LinearRNN(np.array([0.6, -0.3]), np.array([1.0, 0.5]), np.array([0.8, 1.0]), structure="diagonal")
    loss = gflow.PopulationLoss(teacher, 6)
    small = gflow.LinearRNN(np.array([0.1, 0.05]), np.array([0.3, 0.2]), np.array([0.2, 0.1]), structure="diagonal")
    d = -(-gflow.flow.AS_BATCH_MIN_PARAMETERS // 3) + 1
    pad = lambda x: np.concatenate([x, np.zeros(d - 2)])  # noqa: E731
    large = gflow.LinearRNN(pad(small.A), pad(small.B), pad(small.C), structure="diagonal")
    assert gflow.flatten(large)[0].size >= gflow.flow.AS_BATCH_MIN_PARAMETERS
    ts = np.array([0.0, 1.0, 10.0, 100.0])
    a = gflow.solve_flow(loss, small, 100.0, save_at=ts, rtol=1e-10, progress=False)
    b = gflow.solve_flow(loss, large, 100.0, save_at=ts, rtol=1e-10, progress=False)
    assert a.status == b.status == "completed"
    assert np.allclose(b.loss, a.loss, rtol=1e-6, atol=1e-12)
    assert np.allclose(np.asarray(b.final.A)[:2], np.asarray(a.final.A), rtol=1e-6, atol=1e-12)
    assert np.all(np.asarray(b.final.A)[2:] == 0.0) and np.all(np.asarray(b.final.B)[2:] == 0.0)
    assert b.loss[-1] < 0.5 * b.loss[0]  # it trained
