"""Gradient flow dθ/dt = −∇L(θ), integrated by diffrax with adaptive, error-controlled steps (float64).

One entry point, :func:`solve_flow`; the solver, the tolerances, the saving grid, the stopping rules and the
diagnostics are its orthogonal arguments (in diffrax's style).
"""

from __future__ import annotations

import time
from typing import Any, Callable, Mapping, Sequence

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ._checks import GflowInputError, positive_float, positive_int
from ._gradient_flow_term import GradientFlowTerm, flatten_model
from ._progress import LogTimeProgressMeter
from ._trajectory import Trajectory

# Stock diffrax solvers, selectable by name.
STOCK_SOLVERS: dict[str, Callable[[], diffrax.AbstractSolver]] = {
    "tsit5": diffrax.Tsit5,
    "dopri5": diffrax.Dopri5,
    "dopri8": diffrax.Dopri8,
    "bosh3": diffrax.Bosh3,
    "kvaerno3": diffrax.Kvaerno3,
    "kvaerno4": diffrax.Kvaerno4,
    "kvaerno5": diffrax.Kvaerno5,
}
# New gradient evaluations per attempted step of the explicit FSAL methods (estimate for stats).
_EVALS_PER_STEP = {diffrax.Tsit5: 6, diffrax.Dopri5: 6, diffrax.Dopri8: 12, diffrax.Bosh3: 3}

SOLVER_REGISTRY: dict[str, Callable[[], diffrax.AbstractSolver]] = dict(STOCK_SOLVERS)
DEFAULT_SOLVER = "tsit5"


def register_solver(name: str, factory: Callable[[], diffrax.AbstractSolver], *, default: bool = False):
    """Make a solver selectable by name in :func:`solve_flow` (and the default when ``default=True``)."""
    global DEFAULT_SOLVER
    SOLVER_REGISTRY[name] = factory
    if default:
        DEFAULT_SOLVER = name


def make_solver(solver) -> tuple[diffrax.AbstractSolver, str]:
    if isinstance(solver, diffrax.AbstractSolver):
        return solver, type(solver).__name__
    if solver in (None, "auto"):
        solver = DEFAULT_SOLVER
    if not isinstance(solver, str) or solver.lower() not in SOLVER_REGISTRY:
        raise GflowInputError(f"`solver` must be a diffrax solver or one of {sorted(SOLVER_REGISTRY)} or 'auto', "
                              f"got {solver!r}")
    return SOLVER_REGISTRY[solver.lower()](), solver.lower()


def log_save_times(t0: float, t1: float, n: int, first: float | None = None) -> np.ndarray:
    """t0 followed by n − 1 log-spaced times from t0 + first to t1 (default first = 1e-6·(t1 − t0))."""
    n = positive_int("save_at", n, minimum=2)
    span = t1 - t0
    first = span * 1e-6 if first is None else first
    ts = np.concatenate([[t0], t0 + np.geomspace(first, span, n - 1)])
    ts[-1] = t1  # t0 + span can round above t1
    return np.minimum(ts, t1)


def _save_times(save_at, t0, t1):
    if isinstance(save_at, (int, np.integer)) and not isinstance(save_at, bool):
        return log_save_times(t0, t1, int(save_at))
    ts = np.asarray(save_at, dtype=np.float64).reshape(-1)
    if ts.size == 0 or not np.all(np.isfinite(ts)):
        raise GflowInputError("`save_at` must be a number of points or a non-empty array of finite times")
    if np.any(np.diff(ts) < 0) or ts[0] < t0 or ts[-1] > t1:
        raise GflowInputError(f"`save_at` times must be sorted and lie in [t0, t1] = [{t0}, {t1}]")
    return ts


def _diagnostic_functions(diagnostics) -> dict[str, Callable]:
    if diagnostics is None:
        return {}
    if isinstance(diagnostics, Mapping):
        items = dict(diagnostics)
    elif callable(diagnostics):
        items = {diagnostics.__name__: diagnostics}
    elif isinstance(diagnostics, Sequence) and not isinstance(diagnostics, str):
        items = {getattr(f, "__name__", f"diagnostic_{i}"): f for i, f in enumerate(diagnostics)}
    else:
        raise GflowInputError("`diagnostics` must be a mapping name → function(model), or a list of functions")
    for name, f in items.items():
        if not callable(f):
            raise GflowInputError(f"diagnostic {name!r} is not callable: {f!r}")
    return items


def _integrate_one(loss, model0, solver, t0, t1, ts, rtol, atol, stop_loss, diverge, max_steps, meter, watch_loss):
    """One flow; ``diverge`` = (loss threshold, parameter-norm threshold), ``watch_loss`` static."""
    theta0, static, unravel = flatten_model(model0)
    term = GradientFlowTerm(loss, static, unravel)
    diverge_loss, diverge_norm = diverge[0], diverge[1]

    def stop_or_diverge(t, y, args, **kwargs):
        # Parameters that are non-finite or have grown by diverge_factor: no loss evaluation needed.
        stop = jnp.logical_not(jnp.all(jnp.isfinite(y))) | (jnp.max(jnp.abs(y)) > diverge_norm)
        if watch_loss:  # a loss threshold was asked for: one loss evaluation per step serves both rules
            value = term.loss_value(y)
            stop = stop | (value <= stop_loss) | jnp.logical_not(jnp.isfinite(value)) | (jnp.abs(value) > diverge_loss)
        return stop

    sol = diffrax.diffeqsolve(
        term, solver, t0, t1, None, theta0,
        # A step size collapsing to dtmin (e.g. every trial step lands on NaN) ends the run as a failure
        # instead of grinding on to max_steps.
        stepsize_controller=diffrax.PIDController(rtol=rtol, atol=atol, dtmin=_DTMIN_RELATIVE * jnp.maximum(1.0, t1)),
        saveat=diffrax.SaveAt(ts=ts, t1=True),
        event=diffrax.Event(cond_fn=stop_or_diverge),
        max_steps=max_steps, throw=False, progress_meter=meter,
        # No one differentiates through the solve: a plain while loop, without the checkpointing that
        # reverse-mode needs, halves the per-step overhead of a stiff solver whose state holds a Jacobian.
        adjoint=diffrax.ForwardMode(),
    )
    # a few saved states at a time: a nonlinear loss on a large sample, vmapped over every saved time, would hold
    # all their hidden states at once (R5: 26 GB)
    losses = jax.lax.map(lambda y: jnp.where(jnp.all(jnp.isfinite(y)), term.loss_value(y), jnp.nan), sol.ys,
                         batch_size=_SAVED_STATES_PER_BATCH)
    return sol.ts, sol.ys, losses, sol.result == diffrax.RESULTS.max_steps_reached, \
        (sol.result == diffrax.RESULTS.successful) | (sol.result == diffrax.RESULTS.event_occurred), \
        sol.stats["num_steps"], sol.stats["num_accepted_steps"], \
        sol.stats["num_rejected_steps"]


_integrate = eqx.filter_jit(_integrate_one)
_DTMIN_RELATIVE = 1e-14
_SAVED_STATES_PER_BATCH = 8


@eqx.filter_jit
def _integrate_batch(losses, models0, solver, t0, t1, ts, rtol, atol, stop_loss, diverge, max_steps, meter,
                     watch_loss):
    def one(loss, model0, diverge):
        return _integrate_one(loss, model0, solver, t0, t1, ts, rtol, atol, stop_loss, diverge, max_steps, meter,
                              watch_loss)

    return jax.vmap(one)(losses, models0, diverge)


@eqx.filter_jit
def _evaluate_diagnostics(functions, template, params):
    _, static, unravel = flatten_model(template)
    return {name: jax.lax.map(lambda y: f(eqx.combine(unravel(y), static)), params,
                              batch_size=_SAVED_STATES_PER_BATCH) for name, f in functions.items()}


def default_atol(rtol: float, theta0) -> float:
    """rtol × (RMS of the initial parameters, capped at 1): relative accuracy even from tiny initializations."""
    rms = float(np.sqrt(np.mean(np.asarray(theta0) ** 2))) if np.size(theta0) else 1.0
    return rtol * min(1.0, rms) if rms > 0 else rtol * 1e-12


class _Setup(eqx.Module):
    """Validated arguments shared by solve_flow and solve_flows."""

    t0: float
    t1: float
    ts: np.ndarray
    rtol: float
    atol: float
    stop_loss: float | None
    diverge_factor: float
    max_steps: int
    functions: dict
    solver: Any
    solver_name: str
    progress: bool | str


@eqx.filter_jit
def _loss_value(loss, model):
    """L(model), compiled once per loss and model structure (eager evaluation recompiles scans every call)."""
    return loss(model)


def _check_model_and_loss(loss, model0, name="model0"):
    if not callable(loss):
        raise GflowInputError(f"`loss` must be callable on a model, got {type(loss).__name__}")
    if not isinstance(model0, eqx.Module):
        raise GflowInputError(f"`{name}` must be an equinox module (e.g. gflow.LinearRNN), got {type(model0).__name__}")
    theta0, _, _ = flatten_model(model0)
    if not bool(jnp.all(jnp.isfinite(theta0))):
        raise GflowInputError(f"`{name}` has non-finite parameters")
    loss0 = float(_loss_value(loss, model0))
    if not np.isfinite(loss0):
        raise GflowInputError(f"the loss at `{name}` is not finite ({loss0})")
    return theta0, loss0


def _setup(theta0, t1, rtol, atol, solver, save_at, t0, stop_loss, diverge_factor, diagnostics, max_steps, progress):
    t0 = float(t0)
    t1 = positive_float("t1", t1)
    if not np.isfinite(t0) or t1 <= t0:
        raise GflowInputError(f"`t1` ({t1}) must be larger than `t0` ({t0})")
    rtol = positive_float("rtol", rtol)
    atol = default_atol(rtol, theta0) if atol is None else positive_float("atol", atol)
    solver_obj, solver_name = make_solver(solver)
    return _Setup(t0=t0, t1=t1, ts=_save_times(save_at, t0, t1), rtol=rtol, atol=atol,
                  stop_loss=None if stop_loss is None else positive_float("stop_loss", stop_loss),
                  diverge_factor=positive_float("diverge_factor", diverge_factor),
                  max_steps=positive_int("max_steps", max_steps), functions=_diagnostic_functions(diagnostics),
                  solver=solver_obj, solver_name=solver_name,
                  progress=progress if progress == "auto" else bool(progress))


def _diverge_thresholds(setup, theta0, loss0):
    """(loss, parameter) levels beyond which a run is stopped as diverged: diverge_factor × max(|L0|, 1) and
    diverge_factor × max(max|θ0|, 1)."""
    scale = max(float(jnp.max(jnp.abs(theta0))) if np.size(theta0) else 1.0, 1.0)
    return _f64([setup.diverge_factor * max(abs(loss0), 1.0), setup.diverge_factor * scale])


def _f64(x):
    return jnp.asarray(x, dtype=jnp.float64)  # traced, so a new value does not recompile


def _solver_args(setup: _Setup):
    return (setup.solver, _f64(setup.t0), _f64(setup.t1), _f64(setup.ts), _f64(setup.rtol), _f64(setup.atol),
            _f64(-np.inf if setup.stop_loss is None else setup.stop_loss))


def _to_trajectory(setup: _Setup, loss, model0, theta0, loss0, out, wall, config) -> Trajectory:
    sol_ts, ys, losses, hit_max_steps, succeeded, steps, accepted, rejected = (np.asarray(o) for o in out)
    keep = np.isfinite(sol_ts)
    # The final state (SaveAt t1=True) is the last row; drop it when it repeats the last saved time.
    idx = np.flatnonzero(keep)
    if len(idx) >= 2 and sol_ts[idx[-1]] == sol_ts[idx[-2]]:
        keep[idx[-2]] = False
    sol_ts, ys, losses = sol_ts[keep], ys[keep], losses[keep]
    final_loss = losses[-1]
    diverge_loss, diverge_norm = (float(x) for x in _diverge_thresholds(setup, theta0, loss0))
    last = ys[np.flatnonzero(np.isfinite(sol_ts))[-1]] if len(ys) else np.asarray(theta0)
    blew_up = not np.all(np.isfinite(last)) or float(np.max(np.abs(last), initial=0.0)) > diverge_norm
    if bool(hit_max_steps):
        status = "max_steps"
        message = f"reached max_steps={setup.max_steps} at t={sol_ts[-1]:.4g} before t1={setup.t1:.4g}"
    elif blew_up or not np.isfinite(final_loss) or abs(final_loss) > diverge_loss or not bool(succeeded):
        status = "diverged"
        message = (f"the parameters or |loss| became non-finite or grew by more than {setup.diverge_factor:.0e}× "
                   f"at t={sol_ts[-1]:.4g}" if bool(succeeded)
                   else "the solver failed (step size collapsed or non-finite values)")
    elif setup.stop_loss is not None and final_loss <= setup.stop_loss and sol_ts[-1] < setup.t1:
        status, message = "stopped_at_loss", f"L ≤ {setup.stop_loss:g} at t={sol_ts[-1]:.6g}"
    else:
        status, message = "completed", ""
    good = np.all(np.isfinite(ys), axis=1)
    final_y = ys[np.flatnonzero(good)[-1]] if good.any() else np.asarray(theta0)
    _, static, unravel = flatten_model(model0)
    final = eqx.combine(unravel(jnp.asarray(final_y)), static)
    diag_values = {}
    if setup.functions:
        diag_values = {k: np.asarray(v) for k, v in
                       _evaluate_diagnostics(setup.functions, model0, jnp.asarray(ys)).items()}
    steps = int(steps)
    evals = getattr(setup.solver, "evaluations_per_step", None) or _EVALS_PER_STEP.get(type(setup.solver))
    solves = getattr(setup.solver, "linear_solves_per_step", None)
    run_stats = {
        "steps": steps, "accepted_steps": int(accepted), "rejected_steps": int(rejected),
        "gradient_evaluations": None if evals is None else int(evals * steps + 1),
        "linear_solves": None if solves is None else int(solves * steps),
        "wall_time_s": wall,
    }
    run_config = {
        "t0": setup.t0, "t1": setup.t1, "rtol": setup.rtol, "atol": setup.atol, "solver": setup.solver_name,
        "stop_loss": setup.stop_loss, "max_steps": setup.max_steps, "loss": type(loss).__name__,
        "convention": getattr(loss, "convention", "unknown"),
        "k": getattr(loss, "training_length", getattr(loss, "k", None)),
        "weighting": getattr(loss, "weighting", None), "model": type(model0).__name__,
        "structure": getattr(model0, "structure", None),
        "parameterization": getattr(model0, "parameterization", None), "n_params": int(np.size(theta0)),
    }
    run_config.update(config or {})
    return Trajectory(ts=sol_ts, loss=losses, diagnostics=diag_values, params=ys, final=final, stats=run_stats,
                      status=status, message=message, config=run_config)


def solve_flow(loss, model0, t1: float, *, rtol: float = 1e-8, atol: float | None = None, solver="auto",
               save_at=200, t0: float = 0.0, stop_loss: float | None = None, diverge_factor: float = 1e6,
               diagnostics=None, max_steps: int = 1_000_000, progress: bool | str = "auto",
               config: Mapping[str, Any] | None = None) -> Trajectory:
    """Integrate the gradient flow dθ/dt = −∇L(θ) of ``loss`` from ``model0`` over [t0, t1].

    - ``loss``: a module mapping a model to a scalar (e.g. :class:`gflow.PopulationLoss`); gflow's default
      solver also uses its ``residuals`` (L = ‖r‖²).
    - ``rtol``, ``atol``: the step-size controller's tolerances. ``atol`` defaults to rtol × RMS(θ0) (≤ rtol),
      so that tiny initializations are integrated to relative accuracy.
    - ``solver``: ``"auto"`` (gflow's Rosenbrock-W solver for gradient flows, :class:`GaussNewtonRosenbrock`),
      a registered name (``"rosenbrock"``, ``"rosenbrock-cg"``, ``"tsit5"``, ``"kvaerno5"``, ...) or any
      diffrax solver instance.
    - ``save_at``: number of log-spaced save times (default 200), or an array of times in [t0, t1].
    - ``stop_loss``: stop once L ≤ stop_loss (status ``"stopped_at_loss"``).
    - ``diverge_factor``: stop with status ``"diverged"`` once the parameters are non-finite or max|θ| exceeds
      diverge_factor × max(max|θ0|, 1), instead of returning NaN. |L| > diverge_factor × max(|L(θ0)|, 1) or
      a non-finite L is "diverged" too: checked at every step when ``stop_loss`` is given (the loss is then
      evaluated anyway), else at the saved times. A step size collapsing below 1e-14·max(1, t1) is "diverged".
    - ``diagnostics``: name → function(model) (or a list of functions), evaluated at every saved time.
    - ``progress``: print t and log-time progress during the solve: ``"auto"`` (default) once it has run
      for 5 s of wall time, ``True`` from the start, ``False`` never.

    Returns a :class:`gflow.Trajectory`; its ``final`` is the model at the last time reached.
    """
    theta0, loss0 = _check_model_and_loss(loss, model0)
    setup = _setup(theta0, t1, rtol, atol, solver, save_at, t0, stop_loss, diverge_factor, diagnostics,
                   max_steps, progress)
    start = time.perf_counter()
    out = _integrate(loss, model0, *_solver_args(setup), _diverge_thresholds(setup, theta0, loss0),
                     setup.max_steps, _meter(setup), setup.stop_loss is not None)
    out = jax.block_until_ready(out)
    wall = time.perf_counter() - start
    return _to_trajectory(setup, loss, model0, theta0, loss0, out, wall, config)


QUIET_SECONDS = 5.0  # progress="auto" reports only solves that have run longer than this


def _meter(setup):
    if setup.progress is False:
        return diffrax.NoProgressMeter()
    quiet = QUIET_SECONDS if setup.progress == "auto" else 0.0
    return LogTimeProgressMeter(_f64(setup.t0), _f64(setup.t1), _f64(quiet))


def _stack(trees, name):
    try:
        return jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *trees)
    except ValueError as e:
        raise GflowInputError(f"all `{name}` must have the same structure and shapes to be batched: {e}") from None


def solve_flows(losses, models0, t1: float, *, rtol: float = 1e-8, atol: float | None = None, solver="auto",
                save_at=200, t0: float = 0.0, stop_loss: float | None = None, diverge_factor: float = 1e6,
                diagnostics=None, max_steps: int = 1_000_000, progress: bool | str = "auto",
                config: Mapping[str, Any] | None = None) -> list[Trajectory]:
    """Integrate many independent flows in one batched (``vmap``-ed) call; arguments as :func:`solve_flow`.

    ``losses`` and ``models0`` are equal-length sequences of modules with identical shapes (pad losses of
    different training lengths with :meth:`PopulationLoss.padded_to`). Every flow shares the time grid,
    tolerances and solver, and keeps its own adaptive steps. ``stats["wall_time_s"]`` is the batch's time.
    """
    losses, models0 = list(losses), list(models0)
    if not losses or len(losses) != len(models0):
        raise GflowInputError(f"`losses` and `models0` must be non-empty and of equal length, "
                              f"got {len(losses)} and {len(models0)}")
    checked = [_check_model_and_loss(l, m, f"models0[{i}]") for i, (l, m) in enumerate(zip(losses, models0))]
    theta_all = np.concatenate([np.asarray(c[0]) for c in checked])
    setup = _setup(theta_all, t1, rtol, atol, solver, save_at, t0, stop_loss, diverge_factor, diagnostics,
                   max_steps, progress)
    diverge = jnp.stack([_diverge_thresholds(setup, c[0], c[1]) for c in checked])
    start = time.perf_counter()
    out = _integrate_batch(_stack(losses, "losses"), _stack(models0, "models0"), *_solver_args(setup), diverge,
                           setup.max_steps, _meter(setup), setup.stop_loss is not None)
    out = jax.block_until_ready(out)
    wall = time.perf_counter() - start
    return [_to_trajectory(setup, l, m, c[0], c[1], tuple(o[i] for o in out), wall, config)
            for i, (l, m, c) in enumerate(zip(losses, models0, checked))]


def _register_default_solver():
    from ._rosenbrock import GaussNewtonRosenbrock

    register_solver("rosenbrock", GaussNewtonRosenbrock, default=True)
    register_solver("rosenbrock-cg", lambda: GaussNewtonRosenbrock(linear_solver="cg"))


_register_default_solver()
