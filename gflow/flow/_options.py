"""The options of a solve, declared once (:class:`SolveOptions`, whose fields are the keyword options of
:func:`gflow.solve_flow`, :func:`gflow.solve_flows` and :func:`gflow.run_sweep`) and checked once before anything is
traced: the solver (by name, from a registry), the step-size control (rtol/atol, or a diffrax controller:
gflow/flow/_step_control.py), the save times (a count, an array, or a diffrax ``SaveAt``) and the diagnostics;
:class:`_Setup` holds them checked."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping, Sequence

import diffrax
import equinox as eqx
import numpy as np

from .._checks import GflowInputError, positive_float, positive_int
from ..objectives._abstract_objective import AbstractSumOfSquares
from ._gradient_flow_solver import AbstractGradientFlowSolver
from ._rodas import RodasGradientFlow
from ._rosenbrock import GaussNewtonRosenbrock
from ._step_control import user_controller

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

SOLVER_REGISTRY: dict[str, Callable[[], diffrax.AbstractSolver]] = {
    **STOCK_SOLVERS,
    "rosenbrock": GaussNewtonRosenbrock,
    "rosenbrock-cg": lambda: GaussNewtonRosenbrock(linear_solver="cg"),
    "rodas5p": RodasGradientFlow,
}
_default = {"name": "rosenbrock"}  # what solver="auto" resolves to; register_solver(..., default=True) changes it


# solver="auto" takes the fifth-order Rodas5P at rtol ≤ this, ROS34PW2 above. Measured on R1 (2-core CPU, warm, one
# process; bench/run.py --orders and issue 14's note): ROS34PW2 / Rodas5P wall = 0.50 at rtol 1e-8, 0.85 at 1e-10,
# 1.19–1.25 at 1e-12 (Rodas5P takes 4–12× fewer steps, but a step costs ~8–10× as much).
AUTO_RODAS_MAX_RTOL = 1e-11


def default_solver(rtol: float | None = None) -> str:
    """The name ``solver="auto"`` resolves to at ``rtol``: ``"rosenbrock"`` (ROS34PW2, :class:`GaussNewtonRosenbrock`),
    or ``"rodas5p"`` (:class:`RodasGradientFlow`) at rtol ≤ ``AUTO_RODAS_MAX_RTOL``; a registered solver made the
    default replaces both."""
    name = _default["name"]
    if name == "rosenbrock" and rtol is not None and rtol <= AUTO_RODAS_MAX_RTOL:
        return "rodas5p"
    return name


def register_solver(name: str, factory: Callable[[], diffrax.AbstractSolver], *, default: bool = False):
    """Make a solver selectable by name in :func:`solve_flow` (and the default when ``default=True``)."""
    SOLVER_REGISTRY[name] = factory
    if default:
        _default["name"] = name


def make_solver(solver, rtol: float | None = None) -> tuple[diffrax.AbstractSolver, str]:
    if isinstance(solver, diffrax.AbstractSolver):
        return solver, type(solver).__name__
    if solver in (None, "auto"):
        solver = default_solver(rtol)
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
    if isinstance(save_at, diffrax.SaveAt):
        save_at = _save_at_times(save_at, t0)
    if isinstance(save_at, (int, np.integer)) and not isinstance(save_at, bool):
        return log_save_times(t0, t1, int(save_at))
    if isinstance(save_at, (str, bytes, bool)):
        what = f"the string {save_at!r}" if isinstance(save_at, (str, bytes)) else f"the bool {save_at!r}"
        raise GflowInputError(f"`save_at` must be an int count of log-spaced save times or an array of times in "
                              f"[t0, t1] (or a diffrax.SaveAt(ts=...)), got {what}")
    try:
        ts = np.asarray(save_at, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise GflowInputError(f"`save_at` must be an int count of log-spaced save times or an array of times in "
                              f"[t0, t1], got {type(save_at).__name__} {save_at!r:.60}") from None
    if ts.size == 0 or not np.all(np.isfinite(ts)):
        raise GflowInputError("`save_at` must be a number of points or a non-empty array of finite times")
    if np.any(np.diff(ts) < 0) or ts[0] < t0 or ts[-1] > t1:
        raise GflowInputError(f"`save_at` times must be sorted and lie in [t0, t1] = [{t0}, {t1}]")
    return ts


_SAVE_Y = diffrax.SaveAt(t1=True).subs.fn  # diffrax's default: save the state itself


def _save_at_times(save_at: diffrax.SaveAt, t0: float) -> np.ndarray:
    """The times of a ``diffrax.SaveAt(ts=..., t0=...)``: gflow saves the parameters at given times (and always
    at the last time reached), so dense output, every step, or a custom ``fn`` are refused."""
    subs = save_at.subs
    if save_at.dense or not isinstance(subs, diffrax.SubSaveAt) or subs.steps or subs.fn is not _SAVE_Y:
        raise GflowInputError("`save_at` as a diffrax.SaveAt may only give times (SaveAt(ts=..., t0=..., t1=...)); "
                              "gflow saves the flat parameters at those times and evaluates `diagnostics` there")
    ts = [] if subs.ts is None else list(np.asarray(subs.ts, dtype=np.float64).reshape(-1))
    return np.asarray(([t0] if subs.t0 else []) + ts)


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


@dataclasses.dataclass(frozen=True)
class SolveOptions:
    """The keyword options of a solve and their defaults, written once: :func:`gflow.solve_flow` and
    :func:`gflow.solve_flows` take exactly these (tests/test_solve_options.py checks their signatures), and
    :func:`gflow.run_sweep` passes them on (``SOLVE_OPTIONS``)."""

    rtol: float | None = None
    atol: float | None = None
    solver: Any = "auto"
    save_at: Any = 200
    t0: float = 0.0
    stop_loss: float | None = None
    diverge_factor: float = 1e6
    diagnostics: Any = None
    max_steps: int = 1_000_000
    stepsize_controller: Any = None
    error_control: str = "auto"

    @classmethod
    def of(cls, arguments: Mapping[str, Any]) -> "SolveOptions":
        """The options among a call's ``arguments`` (its ``locals()``)."""
        return cls(**{field.name: arguments[field.name] for field in dataclasses.fields(cls)})


SOLVE_OPTIONS = tuple(field.name for field in dataclasses.fields(SolveOptions))


class _Setup(eqx.Module):
    """Validated options shared by solve_flow and solve_flows."""

    t0: float
    t1: float
    ts: np.ndarray
    rtol: float
    atol: float | None
    stop_loss: float | None
    diverge_factor: float
    max_steps: int
    functions: dict
    solver: Any
    solver_name: str
    progress: bool | str
    error_control: str
    controller: Any = None  # a user's diffrax step-size controller; None: PIDController(rtol, atol)


def _setup(t1, options: SolveOptions, progress) -> _Setup:
    t0 = float(options.t0)
    t1 = positive_float("t1", t1)
    if not np.isfinite(t0) or t1 <= t0:
        raise GflowInputError(f"`t1` ({t1}) must be larger than `t0` ({t0})")
    controller, rtol = user_controller(options.stepsize_controller, options.rtol, options.atol)
    atol = None if options.atol is None else positive_float("atol", options.atol)
    solver_obj, solver_name = make_solver(options.solver, rtol)
    stop_loss = options.stop_loss
    return _Setup(t0=t0, t1=t1, ts=_save_times(options.save_at, t0, t1), rtol=rtol, atol=atol, controller=controller,
                  stop_loss=None if stop_loss is None else positive_float("stop_loss", stop_loss),
                  diverge_factor=positive_float("diverge_factor", options.diverge_factor),
                  max_steps=positive_int("max_steps", options.max_steps),
                  functions=_diagnostic_functions(options.diagnostics),
                  solver=solver_obj, solver_name=solver_name, error_control=options.error_control,
                  progress=progress if progress == "auto" else bool(progress))


def _check_solver_fits(setup: _Setup, loss) -> None:
    """gflow's Rosenbrock solver factors the Gauss–Newton matrix of L = ‖r‖²: it needs a sum of squares."""
    if isinstance(setup.solver, AbstractGradientFlowSolver) and not isinstance(loss, AbstractSumOfSquares):
        raise GflowInputError(
            f"solver {setup.solver_name!r} needs a sum-of-squares loss (gflow.objectives.AbstractSumOfSquares: "
            f"implement `residuals(model)` with L = ‖r‖²), got {type(loss).__name__}; any other loss runs with a "
            "stock diffrax solver, e.g. solver='kvaerno5' (stiff) or 'tsit5'")
