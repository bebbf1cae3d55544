"""The options of a solve, declared once (:class:`SolveOptions`, whose fields are the keyword options of
:func:`gflow.solve_flow`, :func:`gflow.solve_flows` and :func:`gflow.run_sweep`: those every run shares,
:class:`gflow.run.RunOptions`, and a flow's own) and checked once before anything is traced: the solver (by name,
from a registry), the step-size control (rtol/atol, or a diffrax controller), the save times (a count, an array, or a
diffrax ``SaveAt``) and the diagnostics; :class:`FlowSetup` holds them checked."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import diffrax
import numpy as np

from .._checks import GflowInputError, positive_float, positive_int
from ..objectives._abstract_objective import AbstractSumOfSquares
from ..run import diagnostic_functions, option_names, RunOptions, save_times
from ._dense_rodas import DenseRodas
from ._gradient_flow_solver import AbstractGradientFlowSolver
from ._rodas import RodasGradientFlow
from ._rosenbrock import GaussNewtonRosenbrock
from ._separable_rodas import SeparableRodas
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
    "rodas5p-dense": DenseRodas,
    "rodas5p-separable": SeparableRodas,
}
_default = {"name": "rosenbrock"}  # what solver="auto" resolves to; register_solver(..., default=True) changes it


# solver="auto" takes Rodas5P with the dense exact Jacobian (DenseRodas) for a flow of at most this many parameters,
# whatever rtol: Slutzky et al.'s d = 10 SSM flow (2-core CPU, warm, bench/run.py --versus) took 629 steps of
# 12.6 µs against ROS34PW2's 2 615 of 22 µs, and at d = 30 28.8 ms against 66.7 ms; at d = 50 the dense step's
# factorization (XLA's CPU LU and inverse) cost more than ROS34PW2's whole step.
DENSE_MAX_PARAMETERS = 31

# Above that size, solver="auto" takes the fifth-order Rodas5P at rtol ≤ this, ROS34PW2 above. Measured on R1 (2-core CPU, warm, one
# process; bench/run.py --orders): ROS34PW2 / Rodas5P wall = 0.50 at rtol 1e-8, 0.85 at 1e-10,
# 1.19–1.25 at 1e-12 (Rodas5P takes 4–12× fewer steps, but a step costs ~8–10× as much).
AUTO_RODAS_MAX_RTOL = 1e-11


# solver="auto" takes Rodas5P with its stages solved exactly by block Woodbury (SeparableRodas) for one flow (solve_flow;
# solve_flows does not pass `separable`: see there) whose loss declares
# block-diagonal residual curvature (a diagonal LinearRNN under PopulationLoss) with SEPARABLE_MIN_PARAMETERS to
# SEPARABLE_MAX_PARAMETERS parameters, and from the minimum up at rtol ≤ AUTO_RODAS_MAX_RTOL at any size. Measured on
# Slutzky et al.'s SSM flow, rtol 1e-8 (2-core CPU, warm, one process, ad hoc scripts; bench/run.py --versus has the
# table): the same steps as the dense Rodas5P; wall separable / dense, median of 9 alternating rounds, 1.10 at
# d = 10, 0.91 at 16, 0.75 at 20, 0.57 at 30; at d = 100 half ROS34PW2's wall (637 against 1 868 steps), equal at
# rtol 1e-6; at d = 1 000 ROS34PW2 is 1.26× faster at rtol 1e-6 (a Rodas5P step costs ~2× a ROS34PW2 step there).
SEPARABLE_MIN_PARAMETERS = 16
SEPARABLE_MAX_PARAMETERS = 500


def default_solver(rtol: float | None = None, n_params: int | None = None, separable: bool = False) -> str:
    """The solver ``solver="auto"`` resolves to.

    Args:
        rtol: The solve's rtol (None: the default).
        n_params: The number of trained parameters of a flow (None: not known, taken as large).
        separable: Whether the loss declares block-diagonal residual curvature for the model
            (:meth:`gflow.objectives.AbstractSumOfSquares.curvature_units`).

    Returns:
        ``"rodas5p-separable"`` (:class:`SeparableRodas`) for a separable flow of ``SEPARABLE_MIN_PARAMETERS`` to
        ``SEPARABLE_MAX_PARAMETERS`` parameters, or of more at rtol ≤ ``AUTO_RODAS_MAX_RTOL``; else ``"rodas5p-dense"``
        (:class:`DenseRodas`) for at most ``DENSE_MAX_PARAMETERS`` parameters; else ``"rosenbrock"`` (ROS34PW2,
        :class:`GaussNewtonRosenbrock`), or ``"rodas5p"`` (:class:`RodasGradientFlow`) at rtol ≤
        ``AUTO_RODAS_MAX_RTOL``. A registered solver made the default replaces them all.
    """
    name = _default["name"]
    if name != "rosenbrock":
        return name
    tight = rtol is not None and rtol <= AUTO_RODAS_MAX_RTOL
    if separable and (n_params is None or n_params >= SEPARABLE_MIN_PARAMETERS) and (
            tight or (n_params is not None and n_params <= SEPARABLE_MAX_PARAMETERS)):
        return "rodas5p-separable"
    if n_params is not None and n_params <= DENSE_MAX_PARAMETERS:
        return "rodas5p-dense"
    if tight:
        return "rodas5p"
    return name


def has_separable_curvature(loss, model) -> bool:
    """Whether ``loss`` declares block-diagonal residual curvature for ``model``
    (:meth:`gflow.objectives.AbstractSumOfSquares.curvature_units`), which ``solver="auto"`` reads."""
    return isinstance(loss, AbstractSumOfSquares) and loss.curvature_units(model) is not None


def register_solver(name: str, factory: Callable[[], diffrax.AbstractSolver], *, default: bool = False) -> None:
    """Make a solver selectable by name in :func:`gflow.solve_flow` and :func:`gflow.solve_flows`.

    Args:
        name: The name ``solver=`` takes.
        factory: Makes the solver (called once per solve).
        default: Make it what ``solver="auto"`` resolves to.
    """
    SOLVER_REGISTRY[name] = factory
    if default:
        _default["name"] = name


def make_solver(solver, rtol: float | None = None, n_params: int | None = None,
                separable: bool = False) -> tuple[diffrax.AbstractSolver, str]:
    if isinstance(solver, diffrax.AbstractSolver):
        return solver, type(solver).__name__
    if solver in (None, "auto"):
        solver = default_solver(rtol, n_params, separable)
    if not isinstance(solver, str) or solver.lower() not in SOLVER_REGISTRY:
        raise GflowInputError(f"`solver` must be a diffrax solver or one of {sorted(SOLVER_REGISTRY)} or 'auto', "
                              f"got {solver!r}")
    return SOLVER_REGISTRY[solver.lower()](), solver.lower()


@dataclasses.dataclass(frozen=True)
class SolveOptions(RunOptions):
    """The keyword options of a solve and their defaults, written once: those of every run
    (:class:`gflow.run.RunOptions`: ``save_at``, ``stop_loss``, ``diverge_factor``, ``diagnostics``) and a flow's
    own. :func:`gflow.solve_flow` and :func:`gflow.solve_flows` take exactly these (tests/test_solve_options.py
    checks their signatures), and :func:`gflow.run_sweep` passes them on (``SOLVE_OPTIONS``).

    Attributes:
        rtol: The relative tolerance of the step-size control (None: ``DEFAULT_RTOL``; usable range ``RTOL_RANGE``).
        atol: The absolute tolerance (None: rtol × RMS(θ0), at most rtol, per flow).
        solver: ``"auto"``, a registered name (``SOLVER_REGISTRY``) or a diffrax solver.
        t0: The start time.
        max_steps: The most steps a flow takes (status ``"max_steps"`` beyond).
        stepsize_controller: A diffrax adaptive controller instead of rtol/atol.
        error_control: ``"auto"``, ``"loss"`` or ``"parameters"`` (``ERROR_CONTROLS``).
    """

    rtol: float | None = None
    atol: float | None = None
    solver: Any = "auto"
    t0: float = 0.0
    max_steps: int = 1_000_000
    stepsize_controller: Any = None
    error_control: str = "auto"


SOLVE_OPTIONS = option_names(SolveOptions)
"""The keyword options of :class:`SolveOptions`, in declaration order: what :func:`gflow.solve_flow`,
:func:`gflow.solve_flows` and a flow sweep accept."""


@dataclasses.dataclass(frozen=True)
class FlowSetup:
    """A solve's options, checked (:func:`flow_setup`): what :func:`gflow.solve_flow` and :func:`gflow.solve_flows`
    share before the flows' own values (θ0, atol, divergence limits) are known. Host-side only (a plain dataclass:
    an equinox module's attribute access costs µs, and a solve reads these hundreds of times)."""

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


def flow_setup(t1, options: SolveOptions, progress, n_params: int | None = None,
               separable: bool = False) -> FlowSetup:
    """Check a solve's options (rtol here, once, before anything uses it).

    Args:
        t1: The end time.
        options: The solve's options.
        progress: ``"auto"``, True or False.
        n_params: The flows' number of parameters, which ``solver="auto"`` reads (None: not known).
        separable: Whether the loss declares block-diagonal residual curvature (:func:`has_separable_curvature`),
            which ``solver="auto"`` reads.

    Returns:
        The checked setup.
    """
    t0 = float(options.t0)
    t1 = positive_float("t1", t1)
    if not np.isfinite(t0) or t1 <= t0:
        raise GflowInputError(f"`t1` ({t1}) must be larger than `t0` ({t0})")
    controller, rtol = user_controller(options.stepsize_controller, options.rtol, options.atol)
    atol = None if options.atol is None else positive_float("atol", options.atol)
    solver_obj, solver_name = make_solver(options.solver, rtol, n_params, separable)
    stop_loss = options.stop_loss
    return FlowSetup(t0=t0, t1=t1, ts=save_times(options.save_at, t0, t1), rtol=rtol, atol=atol, controller=controller,
                  stop_loss=None if stop_loss is None else positive_float("stop_loss", stop_loss),
                  diverge_factor=positive_float("diverge_factor", options.diverge_factor),
                  max_steps=positive_int("max_steps", options.max_steps),
                  functions=diagnostic_functions(options.diagnostics),
                  solver=solver_obj, solver_name=solver_name, error_control=options.error_control,
                  progress=progress if progress == "auto" else bool(progress))


def check_solver_fits(setup: FlowSetup, loss) -> None:
    """gflow's Rosenbrock solver factors the Gauss–Newton matrix of L = ‖r‖²: it needs a sum of squares."""
    if (isinstance(setup.solver, AbstractGradientFlowSolver) and setup.solver.needs_sum_of_squares
            and not isinstance(loss, AbstractSumOfSquares)):
        raise GflowInputError(
            f"solver {setup.solver_name!r} needs a sum-of-squares loss (gflow.objectives.AbstractSumOfSquares: "
            f"implement `residuals(model)` with L = ‖r‖²), got {type(loss).__name__}; any other loss runs with "
            "solver='rodas5p-dense' (the exact Hessian, dense: up to a few hundred parameters) or a stock diffrax "
            "solver, e.g. solver='kvaerno5' (stiff) or 'tsit5'")
