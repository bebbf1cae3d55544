"""Step-size control of a flow, in one place for :func:`gflow.solve_flow`, :func:`gflow.solve_flows` and
:func:`gflow.run_sweep`: the default and usable rtol, the default atol, the user's diffrax controller or the
PIDController gflow builds, the descent guard that wraps either (:class:`DescentController`), the error control
("loss" or "parameters") and the solver's inner tolerances that follow rtol."""

from __future__ import annotations

import diffrax
import numpy as np

from .._checks import GflowInputError, one_of, positive_float
from ..objectives._abstract_objective import AbstractSumOfSquares
from ._descent import DescentController
from ._gradient_flow_solver import AbstractGradientFlowSolver
from ._rosenbrock import GaussNewtonRosenbrock

DEFAULT_RTOL = 1e-8
# The rtol a float64 solve can honour: below 1e-14 (≈ 90 unit roundoffs) the local error estimates sit at the rounding
# of θ itself (u ≈ 1.1e-16, times the dozens of operations of a step), so the controller would shrink steps for
# noise; at 0.1 and above an "error-controlled" answer can be off by its own size.
RTOL_RANGE = (1e-14, 0.1)
ERROR_CONTROLS = ("auto", "loss", "parameters")
# Whether solves fuse the descent guard's evaluation at the step's end into gflow's solvers (GaussNewtonRosenbrock.
# with_fused_guard): ROS34PW2 at every size, the Rodas solvers for flows of at most FUSED_GUARD_MAX_PARAMETERS
# parameters (gflow.flow._descent says why).
FUSE_GUARD = True


def checked_rtol(rtol) -> float:
    """``rtol`` as a float, refused outside ``RTOL_RANGE``."""
    rtol = positive_float("rtol", rtol)
    low, high = RTOL_RANGE
    if not low <= rtol < high:
        raise GflowInputError(f"`rtol` must lie in [{low:g}, {high:g}) for a float64 solve, got {rtol:g}: "
                              + ("an answer with a relative error of that size means nothing" if rtol >= high else
                                 "float64 (unit roundoff 1.1e-16) cannot deliver errors that small"))
    return rtol


def user_controller(stepsize_controller, rtol, atol):
    """(controller or None, rtol): ``rtol``/``atol`` are the shortcut for a PIDController (None); a diffrax
    controller given instead is used as it is, and then neither shortcut may be given (its own rtol, if it has one,
    is recorded)."""
    if stepsize_controller is None:
        return None, DEFAULT_RTOL if rtol is None else checked_rtol(rtol)
    if not isinstance(stepsize_controller, diffrax.AbstractAdaptiveStepSizeController):
        raise GflowInputError(f"`stepsize_controller` must be an adaptive diffrax step-size controller (e.g. "
                              f"diffrax.PIDController(rtol=..., atol=...)): gflow rejects and retries every step that "
                              f"would raise the loss; got {type(stepsize_controller).__name__} (fixed steps: "
                              f"gflow.run_gd)")
    if rtol is not None or atol is not None:
        raise GflowInputError("give either `rtol`/`atol` (gflow builds a PIDController from them) or a "
                              "`stepsize_controller`, not both")
    nominal = getattr(stepsize_controller, "rtol", None)  # recorded only; None for controllers without one
    return stepsize_controller, DEFAULT_RTOL if nominal is None else float(nominal)


def default_atols(rtol: float, thetas: np.ndarray) -> np.ndarray:
    """The default atol of every row of ``thetas`` (B, n): rtol × (RMS of the initial parameters, capped at 1),
    relative accuracy even from tiny initializations.

    Args:
        rtol: The relative tolerance.
        thetas: θ0 of every flow, (B, n).

    Returns:
        (B,) atols.
    """
    rms = np.sqrt(np.mean(thetas ** 2, axis=1)) if thetas.shape[1] else np.ones(thetas.shape[0])
    return np.where(rms > 0, rtol * np.minimum(1.0, rms), rtol * 1e-12)


def flow_atols(atol: float | None, rtol: float, thetas: np.ndarray) -> np.ndarray:
    """Each flow's atol: the one given, else its default (:func:`default_atols`)."""
    return np.full(thetas.shape[0], atol) if atol is not None else default_atols(rtol, thetas)


def group_atol(rtol: float | None, thetas: np.ndarray) -> float:
    """One atol for flows that must not depend on how they are batched (a sweep's shape group): the tightest of
    their defaults at ``rtol`` (None: ``DEFAULT_RTOL``; checked by :func:`checked_rtol` before it comes here, as
    :func:`gflow.run_sweep` does)."""
    return float(np.min(default_atols(DEFAULT_RTOL if rtol is None else float(rtol), thetas)))


def resolves_loss(error_control: str, loss) -> bool:
    """Whether a solve measures its local error in residual space as well (:class:`DescentController`):
    ``error_control`` "auto" (for every sum of squares), "loss" (refused for a loss without residuals) or
    "parameters" (θ only, gflow ≤ 0.1's control)."""
    error_control = one_of("error_control", error_control, ERROR_CONTROLS)
    if error_control == "loss" and not isinstance(loss, AbstractSumOfSquares):
        raise GflowInputError(f"error_control='loss' measures the error of the residuals r of L = ‖r‖², which "
                              f"{type(loss).__name__} does not provide (gflow.objectives.AbstractSumOfSquares); use "
                              "error_control='parameters'")
    return error_control != "parameters" and isinstance(loss, AbstractSumOfSquares)


def guarded_controller(controller, rtol, atol, term, resolve_loss: bool, theta_reference, problem) -> DescentController:
    """The controller a solve runs with (inside the compiled solve; ``rtol`` and ``atol`` traced): the user's
    ``controller``, or a PIDController(rtol, atol) when it is None, wrapped in the descent guard, which also makes
    every step land on each save time of ``problem`` (``save_on_steps``) or cover at most ``saves_per_step`` of
    them (:class:`gflow.flow.FlowProblem`)."""
    inner = controller if controller is not None else diffrax.PIDController(rtol=rtol, atol=atol)
    if problem.save_on_steps:
        step_ts, per_step = problem.ts, 1
    else:
        step_ts, per_step = (problem.ts, problem.saves_per_step) if problem.saves_per_step else (None, 1)
    return DescentController(inner, term, resolve_loss, theta_reference, step_ts=step_ts, saves_per_step=per_step)


def solver_for_rtol(solver, rtol):
    """``solver`` as a solve runs it under the descent guard (:func:`guarded_controller`): its inner tolerances
    following the (traced) ``rtol``, where it has any (:meth:`AbstractGradientFlowSolver.for_rtol`), and with
    ``FUSE_GUARD`` the guard's evaluation at the step's end fused into the step, where it can
    (:meth:`GaussNewtonRosenbrock.with_fused_guard`, also for :class:`RodasGradientFlow`); a stock diffrax solver as
    it is."""
    if FUSE_GUARD and isinstance(solver, GaussNewtonRosenbrock):
        solver = solver.with_fused_guard()
    return solver.for_rtol(rtol) if isinstance(solver, AbstractGradientFlowSolver) else solver
