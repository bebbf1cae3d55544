"""The descent guard: the integrator never leaves the gradient flow. Saved losses never rise by more than the rounding
bound δ, the t0 row is θ0, a late saddle escape is integrated whatever t1 is, a stiff start proceeds, and rtol outside
what float64 can honour is refused."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import gflow
from conftest import assert_never_rises
from gflow import initializers, teachers
from gflow.objectives import AbstractSumOfSquares
from gflow.problems import ssm_poisoning as sp

key = jax.random.key


def _linear(structure):
    def make(k, scale):
        return initializers.gaussian(k, 4, scale=scale, structure=structure)
    return make


def _sample_loss():
    teacher = gflow.models.elman_cayci_eryilmaz(key(0), 4, alpha=0.5)
    return gflow.objectives.SampleLoss.from_teacher(key(2), teacher, 6, 4, sampler=gflow.objectives.unit_ball_sequences)


MODELS = {
    "general": (_linear("general"), lambda: gflow.PopulationLoss(teachers.balanced(key(0), 3), 8)),
    "symmetric": (_linear("symmetric"), lambda: gflow.PopulationLoss(teachers.balanced(key(0), 3), 8)),
    "diagonal": (_linear("diagonal"), lambda: gflow.PopulationLoss(teachers.balanced(key(0), 3), 8)),
    "elman": (lambda k, scale: gflow.models.elman_cayci_eryilmaz(k, 4, alpha=scale), _sample_loss),
    "gru": (lambda k, scale: gflow.models.gru(k, 2, scale=scale), _sample_loss),
}
INITS = {"tiny": 1e-4, "unit": 0.5, "huge": 1.5}
# A fixed draw of (model, init, rtol, batched) from the space the issue names, seeded so that CI runs the same
# cases: every model and every init appears, rtol log-uniform in [1e-10, 1e-4]. (hypothesis would draw new shapes
# per example, and each shape compiles a new program for seconds; a fixed draw keeps the cost known.)
_rng = np.random.default_rng(24)
CASES = [(m, i, float(10.0 ** _rng.uniform(-10, -4)), bool(_rng.integers(2)))
         for m in MODELS for i in INITS]


@pytest.mark.slow
@pytest.mark.parametrize("model_name,init,rtol,batched", CASES)
def test_saved_loss_never_rises(model_name, init, rtol, batched):
    make, make_loss = MODELS[model_name]
    loss = make_loss()
    model0 = make(key(7), INITS[init])
    solver = "tsit5" if model_name == "gru" else "auto"  # the GRU runs through a stock solver, as users run it
    kw = dict(rtol=rtol, save_at=30, progress=False, max_steps=4000, solver=solver)
    if batched:
        models = [model0, make(key(8), INITS[init])]
        trajs = gflow.solve_flows([loss, loss], models, 1e3, **kw)
        for m, traj in zip(models, trajs):
            assert_never_rises(loss, traj, m)
    else:
        traj = gflow.solve_flow(loss, model0, 1e3, **kw)
        assert_never_rises(loss, traj, model0)
        assert traj.status != "diverged", traj.message


class Diagonal(eqx.Module):
    """A diagonal SSM's trained transition a (B = C = 1 fixed), Slutzky et al.'s setup."""

    a: jax.Array


class OneLag(AbstractSumOfSquares):
    """Mean squared error (no ½) of the impulse response at one lag: r = Σ_i a_i^lag − target."""

    lag: int = eqx.field(static=True)
    target: float = 1.0

    def residuals(self, model):
        return jnp.atleast_1d(jnp.sum(model.a ** self.lag) - self.target)

    def residual_targets(self):
        return jnp.atleast_1d(jnp.asarray(self.target))


def escape_problem(d=10, lag=6, sd=1e-3, gap=1.5e-8):
    """Slutzky et al.'s baseline experiment (d = 10, L = 7: lag L − 1 = 6 supervised, teacher response 1 there):
    A0 = sorted sd·U(0, 1)^d with the top two entries ``gap`` apart; the escape comes at t ≈ 4e10."""
    a = np.sort(sd * np.random.default_rng(0).uniform(size=d))
    a[-1] = a[-2] + gap
    return OneLag(lag), Diagonal(jnp.asarray(a))


def scipy_reference(a0, lag, ts, rtol=1e-12):
    """The same flow by scipy's Radau with its exact Jacobian, restarted at every save time (so each saved value is
    a step end of the referee too)."""
    def f(t, a):
        r = np.sum(a ** lag) - 1.0
        return -2.0 * r * lag * a ** (lag - 1)

    def jac(t, a):
        r = np.sum(a ** lag) - 1.0
        g = lag * a ** (lag - 1)
        return -2.0 * (np.outer(g, g) + np.diag(r * lag * (lag - 1) * a ** (lag - 2)))

    out, a = [np.asarray(a0)], np.asarray(a0)
    for t0, t1 in zip(ts[:-1], ts[1:]):
        a = solve_ivp(f, (t0, t1), a, method="Radau", jac=jac, rtol=rtol, atol=1e-14 * np.max(np.abs(a0))).y[:, -1]
        out.append(a)
    return np.array(out)


@pytest.fixture(scope="module")
def escape():
    loss, model0 = escape_problem()
    ts = np.concatenate([[0.0], np.geomspace(1e6, 1e11, 41)])
    return loss, model0, ts, scipy_reference(np.asarray(model0.a), loss.lag, ts)


@pytest.mark.slow
@pytest.mark.parametrize("solver", ["auto", "rodas5p"])
def test_escape_agrees_with_scipy_between_and_after(escape, solver):
    """Before the fix the saved loss after the escape sat at 1e-12 … 5e-9 (true ~1e-31) and A was off by 1.2e-5."""
    loss, model0, ts, ref = escape
    traj = gflow.solve_flow(loss, model0, ts[-1], rtol=1e-8, save_at=ts, solver=solver, progress=False)
    assert traj.status == "completed", traj.message
    a = np.array([np.asarray(traj.model_at(i).a) for i in range(len(ts))])
    assert np.max(np.abs(a - ref)) <= 1e-6 * np.max(np.abs(ref))
    ref_loss = (np.sum(ref ** loss.lag, axis=1) - 1.0) ** 2
    escaped = ref_loss < 1e-6
    assert escaped.sum() >= 5  # the escape happened inside the window
    # after the escape L is at its rounding floor (≈ 1e-31): gflow's saved L must be there too
    assert np.all(traj.loss[escaped] <= 1e-20), traj.loss[escaped]
    assert_never_rises(loss, traj, model0)


def test_late_escape_is_integrated_whatever_t1_is(escape):
    """The same escape started at t0 = 9.6e11, so that it happens at t ≈ 1e12 (float64 spacing 1.2e-4): before the
    fix every rtol returned "diverged" (a step floor of 0.1 wider than the escape)."""
    loss, model0, ts, ref = escape
    shift = 9.6e11
    traj = gflow.solve_flow(loss, model0, shift + 1e11, t0=shift, rtol=1e-8, save_at=shift + ts, progress=False)
    assert traj.status == "completed", traj.message
    np.testing.assert_array_equal(traj.ts, shift + ts)  # the requested times, also after a restart in local time
    np.testing.assert_allclose(np.asarray(traj.final.a), ref[-1], rtol=0, atol=1e-6 * np.max(np.abs(ref)))
    assert traj.loss[-1] <= 1e-20
    assert_never_rises(loss, traj, model0)


@pytest.mark.slow
def test_an_escape_beyond_float64_time_resolution_restarts_in_local_time():
    """d = 20, lag 8: the escape at t ≈ 1.4e12 needs steps of a few ulps of t; the solve continues in a fresh local
    time (stats["time_restarts"]), reports the requested save times, and ends at L = 0 (before: "diverged")."""
    a = np.sort(4.7e-3 * np.random.default_rng(0).uniform(size=20))
    loss, model0 = OneLag(8), Diagonal(jnp.asarray(a))
    ts = gflow.flow.log_save_times(0.0, 1e13, 60)
    # ROS34PW2 (the default above DENSE_MAX_PARAMETERS parameters) steps at t's resolution here; the dense Rodas5P,
    # the default at this size, crosses the escape in longer steps
    traj = gflow.solve_flow(loss, model0, 1e13, rtol=1e-8, save_at=ts, solver="rosenbrock", progress=False)
    assert traj.status == "completed", traj.message
    assert traj.stats["time_restarts"] >= 1
    np.testing.assert_array_equal(traj.ts, ts)
    assert traj.loss[0] == pytest.approx(float(loss(model0))) and traj.loss[-1] <= 1e-25
    assert_never_rises(loss, traj, model0)


def _slutzky_length_9(seed: int, special: bool = False):
    """Slutzky et al.'s L = 9 flow (gflow.problems.ssm_poisoning): d = 20, escape at t ≈ 1e12, past
    float64's resolution."""
    setting = sp.SETTINGS[9]
    loss = sp.loss_of(9, "special" if special else "baseline", sp.teacher_of(setting.d))
    return loss, sp.student(sp.initial_a(setting, seed))


def test_a_batch_restarts_its_flows_together_and_each_flow_alone_decides_its_bits():
    """The flows of a batch that underflow t's resolution are continued in one vmapped program of the batch's size
    (one by one before: 4 096 such flows took longer than 290 s on a GPU); a flow's bits do not depend on which other
    flows restart, and agree with its solve_flow to rounding."""
    (l0, m0), (l1, m1), (l2, m2) = _slutzky_length_9(342), _slutzky_length_9(343), _slutzky_length_9(342, special=True)
    # the solver that steps at t's resolution; a given grid (a count's default grid starts at the batch's fastest flow)
    kw = dict(rtol=1e-8, save_at=gflow.flow.log_save_times(0.0, 1e13, 12), solver="rosenbrock", progress=False)
    both = gflow.solve_flows([l0, l1], [m0, m1], 1e13, **kw)
    one = gflow.solve_flows([l0, l2], [m0, m2], 1e13, **kw)
    assert list(both.time_restarts) == [1, 1] and list(one.time_restarts) == [1, 0]
    assert set(both.statuses) == set(one.statuses) == {"completed"}
    np.testing.assert_array_equal(both.final_params[0], one.final_params[0])
    np.testing.assert_array_equal(both.loss[0], one.loss[0])
    alone = gflow.solve_flow(l1, m1, 1e13, **kw)
    assert alone.stats["time_restarts"] == 1
    np.testing.assert_allclose(both.final_params[1], np.asarray(alone.final.A), rtol=1e-6)
    np.testing.assert_array_equal(both.ts[0][both.saved[0]], alone.ts[alone.ts == alone.ts])


@pytest.mark.slow
def test_fig3a_type_flow_no_longer_rises():
    """A fig3a-type flow (general student, init 1e-5, balanced teacher, t1 = 1e10, rtol 1e-8) whose saved loss rose
    under the engine before the descent guard (bench/_descent.py rebuilds it): it rises there, and not here."""
    import _descent

    loss = gflow.PopulationLoss(teachers.balanced(key(0), 3), 8)
    model0 = initializers.gaussian(key(1000), 12, scale=1e-5)
    ts = gflow.flow.log_save_times(0.0, 1e10, 150)
    before = _descent._run("before the descent guard", loss, model0, 1e10, ts, 1e-8, 1e-8 * 1e-5, "auto")[0]
    assert _descent.flagged_rises(before) > 0  # the regression this test guards against is real
    traj = gflow.solve_flow(loss, model0, 1e10, rtol=1e-8, save_at=ts, progress=False)
    assert traj.status == "completed" and traj.loss[-1] < 1e-16
    assert_never_rises(loss, traj, model0)


@pytest.mark.slow
def test_stiff_start_keeps_theta0_row_and_never_diverges():
    """A start with L(θ0) ~ 1e13 (scale 1.5, k = 20): before the fix the t = 0 row was NaN and the status
    "diverged" at t = 1e-13. Now the row is θ0 and L(θ0), and the run completes or names its limit."""
    loss = gflow.PopulationLoss(teachers.balanced(key(0), 5), 20)
    model0 = initializers.gaussian(key(1), 6, scale=1.5)
    loss0 = float(loss(model0))
    assert loss0 > 1e8
    traj = gflow.solve_flow(loss, model0, 1e4, save_at=20, max_steps=2000, progress=False)
    assert traj.ts[0] == 0.0 and traj.loss[0] == pytest.approx(loss0, rel=1e-14)
    np.testing.assert_array_equal(traj.params[0], np.asarray(gflow.flatten(model0)[0]))
    assert traj.status in ("completed", "max_steps", "step_size_underflow"), traj.message
    if traj.status != "completed":
        assert "at t=" in traj.message
    assert traj.loss[-1] < loss0
    assert_never_rises(loss, traj, model0)


@pytest.mark.parametrize("rtol", [2.0, 1.0, 0.1, 1e-15, 1e-20])
def test_rtol_outside_float64_range_is_refused(rtol):
    loss = gflow.PopulationLoss(teachers.balanced(key(0), 3), 5)
    with pytest.raises(gflow.GflowInputError, match=r"\[1e-14, 0.1\)"):
        gflow.solve_flow(loss, initializers.gaussian(key(1), 3, scale=0.1), 10.0, rtol=rtol)


@pytest.mark.slow
def test_max_steps_names_the_time_reached():
    loss = gflow.PopulationLoss(teachers.balanced(key(0), 3), 5)
    traj = gflow.solve_flow(loss, initializers.gaussian(key(1), 3, scale=1e-3), 1e6, max_steps=5, progress=False)
    assert traj.status == "max_steps" and "at t=" in traj.message and "max_steps=5" in traj.message


@pytest.mark.slow
def test_error_control_choices():
    loss = gflow.PopulationLoss(teachers.balanced(key(0), 3), 5)
    model0 = initializers.gaussian(key(1), 3, scale=1e-2)
    assert gflow.solve_flow(loss, model0, 10.0, save_at=5, progress=False).config["error_control"] == "loss"
    traj = gflow.solve_flow(loss, model0, 10.0, save_at=5, progress=False, error_control="parameters")
    assert traj.config["error_control"] == "parameters"
    with pytest.raises(gflow.GflowInputError, match="error_control"):
        gflow.solve_flow(loss, model0, 10.0, error_control="residuals")
    with pytest.raises(gflow.GflowInputError, match="does not provide"):
        gflow.solve_flow(lambda m: jnp.sum(m.A ** 2), model0, 10.0, solver="tsit5", error_control="loss")


@pytest.mark.slow
def test_batch_saves_come_from_the_dense_output():
    """In a batch (solve_flows), a value saved at a time between the solver's natural steps comes from the dense
    output, as in solve_flow: it agrees with the final state of the same batch stopped at that time (which lands
    there) to the solve's accuracy, but is not that state bit for bit (the step did not end there), and the saved
    losses descend."""
    loss = gflow.PopulationLoss(teachers.balanced(key(0), 3), 5)
    starts = [initializers.gaussian(key(1), 3, scale=1e-2), initializers.gaussian(key(2), 3, scale=1e-2)]
    ts = gflow.flow.log_save_times(0.0, 1e4, 40)
    batch = gflow.solve_flows([loss, loss], starts, 1e4, save_at=ts, progress=False)
    j = 30
    stopped = gflow.solve_flows([loss, loss], starts, ts[j], save_at=ts[: j + 1], progress=False)
    np.testing.assert_allclose(batch.params[0][j], stopped.final_params[0], rtol=1e-8, atol=1e-9)
    assert not np.array_equal(batch.params[0][j], stopped.final_params[0])
    for i, model0 in enumerate(starts):
        assert_never_rises(loss, batch[i], model0)


class Stiff(AbstractSumOfSquares):
    """L(θ) = ‖w θ‖² (w = 10): stiff for an explicit method with loose tolerances."""

    w: jax.Array

    def residuals(self, model):
        return self.w * model.a


def test_batched_flows_reject_ascents_each():
    """Under solve_flows each flow keeps its own guard and its own count of steps rejected for an ascent."""
    models = [Diagonal(jnp.array([1.0])), Diagonal(jnp.array([-0.5]))]
    stiff = Stiff(jnp.array(10.0))
    trajs = gflow.solve_flows([stiff, stiff], models, 100.0, save_at=11, rtol=0.09, atol=0.09, solver="tsit5",
                              error_control="parameters", progress=False)
    for model0, traj in zip(models, trajs):
        assert traj.status == "completed" and traj.stats["rejected_ascent"] > 0
        assert_never_rises(stiff, traj, model0)
    assert trajs.rejected_ascent.shape == (2,)


# The guard fused into gflow's solvers: r(θ_{n+1}) from the FSAL gradient's pass, J e from the J the step holds.

@eqx.filter_jit
def _guarded_solve(loss, model0, solver, t1, rtol, resolve_loss, term_cls=gflow.flow.GradientFlowTerm):
    """diffeqsolve under the descent guard with ``solver`` as given (fused or not): (θ(t1), L(t1), steps, rejected,
    rejected for an ascent, result)."""
    import diffrax

    theta0, static, unravel = gflow.flatten(model0)
    term = term_cls(loss, static, unravel)
    controller = gflow.flow.DescentController(diffrax.PIDController(rtol=rtol, atol=rtol * 1e-2), term, resolve_loss)
    sol = diffrax.diffeqsolve(term, solver.for_rtol(rtol), 0.0, t1, None, theta0, stepsize_controller=controller,
                              saveat=diffrax.SaveAt(t1=True, controller_state=True), max_steps=20_000, throw=False,
                              adjoint=diffrax.ForwardMode())
    return (sol.ys[-1], term.loss_value(sol.ys[-1]), sol.stats["num_steps"], sol.stats["num_rejected_steps"],
            gflow.flow.rejected_ascent(sol.controller_state), sol.result)


FUSED_SOLVERS = {"rosenbrock": gflow.flow.GaussNewtonRosenbrock(), "rodas5p": gflow.flow.RodasGradientFlow(),
                 "rosenbrock-cg": gflow.flow.GaussNewtonRosenbrock(linear_solver="cg")}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(FUSED_SOLVERS))
def test_fused_guard_takes_the_steps_of_the_reevaluating_guard(name):
    """The solver that hands the guard r(θ_{n+1}) and J e (``fuse_guard``, as gflow's solves run it) and the one that
    lets the guard evaluate them at θ_{n+1} accept and reject the same steps: with the θ-only control the guard sees
    the same L(θ_{n+1}) (same formula, same r), so the runs agree to rounding; with the residual-space control J e
    is taken at θ_n instead of θ_{n+1}, and the step counts stay within a few steps."""
    loss = gflow.PopulationLoss(teachers.balanced(key(0), 3), 8)
    import diffrax

    model0 = initializers.gaussian(key(7), 4, scale=1e-2)
    solver = FUSED_SOLVERS[name]
    assert not solver.fuse_guard and solver.with_fused_guard().fuse_guard
    for resolve_loss in (False, True):
        apart = _guarded_solve(loss, model0, solver, 1e4, 1e-8, resolve_loss)
        fused = _guarded_solve(loss, model0, solver.with_fused_guard(), 1e4, 1e-8, resolve_loss)
        assert apart[5] == fused[5] == diffrax.RESULTS.successful
        assert int(apart[4]) == int(fused[4]) == 0
        if not resolve_loss:
            assert (int(fused[2]), int(fused[3])) == (int(apart[2]), int(apart[3]))
            np.testing.assert_allclose(np.asarray(fused[0]), np.asarray(apart[0]), rtol=1e-12, atol=1e-15)
        else:
            assert abs(int(fused[2]) - int(apart[2])) <= max(3, 0.01 * int(apart[2]))
            assert int(fused[2]) <= int(apart[2]) + 3
            np.testing.assert_allclose(float(fused[1]), float(apart[1]), rtol=1e-5)


class _Ascent(gflow.flow.GradientFlowTerm):
    """A planted ascent: the term's field is +∇L, and so is the field of its fused evaluation (r stays honest)."""

    def vf(self, t, y, args):
        return -super().vf(t, y, args)

    def residuals_and_vf(self, y):
        r, f = super().residuals_and_vf(y)
        return r, -f


@pytest.mark.slow
@pytest.mark.parametrize("name", ["rosenbrock", "rodas5p"])
def test_fused_guard_still_rejects_a_planted_ascent(name):
    """Negative control: along dθ/dt = +∇L every step of a solver raises L. Through the fused path the guard still
    sees the rise (it judges L(θ_{n+1}) from the r the step computed there) and rejects those steps, exactly as the
    re-evaluating guard does; what it accepts raises L by no more than the rounding bound per step."""
    loss = gflow.PopulationLoss(teachers.balanced(key(0), 3), 8)
    model0 = initializers.gaussian(key(7), 4, scale=0.3)
    loss0 = float(loss(model0))
    solver = FUSED_SOLVERS[name]
    runs = [_guarded_solve(loss, model0, s, 1.0, 1e-6, True, _Ascent) for s in (solver, solver.with_fused_guard())]
    for theta, loss1, steps, rejected, ascents, _ in runs:
        assert int(ascents) > 0 and int(rejected) >= int(ascents)
        accepted = int(steps) - int(rejected)
        bound = float(gflow.flow.loss_rounding(loss, model0)) + float(gflow.flow.loss_rounding_along(
            loss, model0, np.asarray(theta)[None])[0])
        assert float(loss1) - loss0 <= 2 * accepted * bound + 1e-300
    assert int(runs[0][4]) == int(runs[1][4])  # the same ascents rejected


def test_fused_step_error_judges_a_step_as_the_guard_does_apart():
    """One step handed to the controller both ways, the fused error packed with J(θ_{n+1}) e and r(θ_{n+1}): the same
    decision and next step; and an ascent planted in the candidate is rejected and counted through the fused path."""
    import diffrax

    from gflow.flow import pack_step_error

    loss = gflow.PopulationLoss(teachers.balanced(key(0), 3), 8)
    theta0, static, unravel = gflow.flatten(initializers.gaussian(key(7), 4, scale=0.3))
    term = gflow.flow.GradientFlowTerm(loss, static, unravel)
    controller = gflow.flow.DescentController(diffrax.PIDController(rtol=1e-6, atol=1e-8), term, True)
    t1, state = controller.init(term, 0.0, 1.0, theta0, None, None, None, 3)
    gradient = -term.vf(0.0, theta0, None)
    error = 1e-9 * jnp.cos(jnp.arange(theta0.size))
    for sign, ascent in ((-1.0, False), (1.0, True)):  # a small step down, then the same step up
        y1 = theta0 + sign * 1e-3 * gradient
        packed = pack_step_error(error, jax.jvp(term.residuals, (y1,), (error,))[1], term.residuals(y1))
        apart = controller.adapt_step_size(0.0, 1e-3, theta0, y1, None, error, 3, state)
        fused = controller.adapt_step_size(0.0, 1e-3, theta0, y1, None, packed, 3, state)
        assert bool(apart[0]) == bool(fused[0]) == (not ascent)
        assert int(gflow.flow.rejected_ascent(fused[4])) == int(ascent)
        np.testing.assert_allclose(float(fused[2]), float(apart[2]), rtol=1e-12)


@pytest.mark.parametrize("model_seed, scale", [(7, 1e-2), (8, 0.5)])
def test_rosenbrock_hands_the_guard_the_jacobian_image_of_its_error(model_seed, scale):
    """ROS34PW2 takes J e from its stages' Woodbury images (J u = z, the m-vector of the solve) instead of a J
    product; it must equal J e computed from the error it returns, with the J the step holds (J(θ_n)), to rounding
    relative to the stages (e is a small combination of them)."""
    import diffrax

    loss = gflow.PopulationLoss(teachers.balanced(key(0), 3), 8)
    theta0, static, unravel = gflow.flatten(initializers.gaussian(key(model_seed), 4, scale=scale))
    term = gflow.flow.GradientFlowTerm(loss, static, unravel)
    solver = gflow.flow.GaussNewtonRosenbrock().with_fused_guard()
    state = solver.init(term, 0.0, 1.0, theta0, None)
    for h in (1e-3, 0.1, 1.0):
        y1, packed, _, _, result = solver.step(term, jnp.float64(0.0), jnp.float64(h), theta0, None, state,
                                               jnp.array(False))
        assert result == diffrax.RESULTS.successful
        n, m = theta0.size, term.residuals(theta0).size
        assert packed.shape == (n + 2 * m,)
        error, image = packed[:n], packed[n:n + m]
        direct = term.residual_jacobian_operator(theta0).mv(error)
        scale_of_image = float(jnp.max(jnp.abs(term.residual_jacobian_operator(theta0).mv(y1 - theta0))))
        assert float(jnp.max(jnp.abs(image - direct))) <= 1e-12 * scale_of_image
        assert float(jnp.max(jnp.abs(direct))) > 1e-9 * scale_of_image  # the error is not trivially zero
        np.testing.assert_allclose(np.asarray(packed[n + m:]), np.asarray(term.residuals(y1)), rtol=1e-12,
                                   atol=1e-15)


@pytest.mark.slow
def test_a_flow_whose_dense_output_saves_rise_is_redone_on_steps():
    """With a dense output whose saves rise on the fig3a-type flow (the cubic Hermite interpolant of the engine
    before the descent guard), solve_flow's saved losses still never rise: the flow is solved again with steps onto
    the save times, and its saves then agree with a batch's (which steps onto them from the start) to the solve's
    accuracy (a vmapped step rounds differently)."""
    import _descent

    gflow.flow.register_solver("ros34pw2-hermite-test", _descent.HermiteRosenbrock)
    loss = gflow.PopulationLoss(teachers.balanced(key(0), 3), 8)
    model0 = initializers.gaussian(key(1000), 12, scale=1e-5)
    kw = dict(rtol=1e-8, save_at=gflow.flow.log_save_times(0.0, 1e10, 150), solver="ros34pw2-hermite-test",
              progress=False)
    before = _descent._run("before the descent guard", loss, model0, 1e10, kw["save_at"], 1e-8, 1e-13,
                           "rosenbrock")[0]
    assert _descent.flagged_rises(before) > 0  # this dense output does rise on this flow
    traj = gflow.solve_flow(loss, model0, 1e10, **kw)
    assert_never_rises(loss, traj, model0)
    batch = gflow.solve_flows([loss], [model0], 1e10, **kw)
    np.testing.assert_allclose(traj.params, batch.params[0][batch.saved[0]], rtol=1e-4, atol=1e-8)
