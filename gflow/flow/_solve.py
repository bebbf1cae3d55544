"""The entry points of the gradient flow dθ/dt = −∇L(θ): :func:`solve_flow` (one flow), :func:`solve_flows` (a
stacked batch, in lock-step or through refilling slots), :func:`validate_flows` and :func:`lower_flows`. The solver,
the tolerances, the saving grid, the stopping rules and the diagnostics are their orthogonal arguments (in diffrax's
style); the integration itself is compiled once per problem structure.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Mapping

import diffrax
import equinox as eqx
import jax
import numpy as np

from .._checks import GflowInputError, positive_int
from ..models._flatten import flatten
from ..results._flow_batch import FlowBatch
from ..results._trajectory import Trajectory
from ..run import (
    batch_diagnostics,
    check_callable_loss,
    check_diagnostics,
    check_model_and_loss,
    diverge_limits,
    first_save_offset,
    flow_time_scale,
    is_count,
    log_save_times,
    QUIET_SECONDS,
    validate_batch,
)
from ..stacking import (
    batch_length,
    bucket_size,
    is_stacked,
    local_devices,
    mesh_over,
    pad_to,
    place,
    stack,
    take,
)
from ._assembly import build_flow_batch
from ._integrate import errors_as_nan, integrate, integrate_batch, integrate_batch_jit
from ._options import (
    check_solver_fits,
    flow_setup,
    FlowSetup,
    has_separable_curvature,
    SEPARABLE_MIN_PARAMETERS,
    SolveOptions,
)
from ._problem import f64, flow_problem, FlowProblem, with_batch_saves_checked
from ._progress import LogTimeProgressMeter, with_elapsed_lines
from ._refill import integrate_refilling, progress_printer
from ._restart import _rows_padded, continue_past_underflow
from ._step_control import flow_atols, resolves_loss


def flat_parameters(models0) -> np.ndarray:
    """θ0 (B, n) of every model of a stacked batch."""
    return np.asarray(_flat_parameters(models0))


@eqx.filter_jit
def _flat_parameters(models0):
    return eqx.filter_vmap(lambda m: flatten(m)[0])(models0)


def _atols(setup: FlowSetup, thetas: np.ndarray) -> np.ndarray:
    return flow_atols(setup.atol, setup.rtol, thetas)


def _meter(setup: FlowSetup, sharded: bool = False, flows: int = 0):
    """The log-time meter of ``progress=True``; none otherwise ("auto" prints elapsed time from the host instead:
    :func:`_reported`), and none in per-device programs (host callbacks stay out of them). It counts the first
    ``flows`` rows of a padded batch (0: every row)."""
    if setup.progress is not True or sharded:
        return diffrax.NoProgressMeter()
    return LogTimeProgressMeter(f64(setup.t0), f64(setup.t1), f64(0.0), flows=np.asarray(flows, dtype=np.int32))


def _reported(setup: FlowSetup, compute, label: str):
    """``compute()``, with elapsed-time lines under ``progress="auto"`` (:func:`with_elapsed_lines`)."""
    if setup.progress == "auto":
        return with_elapsed_lines(compute, QUIET_SECONDS, label)
    return compute()


def _shown_from_the_start(setup: FlowSetup, save_at, loss, model0, batched: bool = False) -> FlowSetup:
    """``setup`` whose default log-spaced save times (``save_at`` a count) begin at the flow's own first time scale
    (:func:`gflow.run.flow_time_scale`, :func:`gflow.run.first_save_offset`): a batch's fastest flow's."""
    if not is_count(save_at):
        return setup
    first = first_save_offset(flow_time_scale(loss, model0, batched), setup.t0, setup.t1)
    return dataclasses.replace(setup, ts=log_save_times(setup.t0, setup.t1, int(save_at), first))


def _with_error_control(config, resolve_loss: bool) -> dict:
    """The caller's config with the error control the solve used ("loss" or "parameters")."""
    return {"error_control": "loss" if resolve_loss else "parameters", **(config or {})}


def solve_flow(loss, model0, t1: float, *, rtol: float | None = None, atol: float | None = None, solver="auto",
               save_at=200, t0: float = 0.0, stop_loss: float | None = None, diverge_factor: float = 1e6,
               diagnostics=None, max_steps: int = 1_000_000, progress: bool | str = "auto",
               config: Mapping[str, Any] | None = None, stepsize_controller=None,
               error_control: str = "auto") -> Trajectory:
    """Integrate the gradient flow dθ/dt = −∇L(θ) of ``loss`` from ``model0`` over [t0, t1].

    Every step, of every solver, passes gflow's descent guard (:class:`gflow.flow.DescentController`): a step that
    would raise L by more than the rounding of its evaluation is rejected and retried smaller
    (``stats["rejected_ascent"]``). A value at a save time inside a step is the solver's dense output, as accurate
    as the step; the saved losses are checked for a rise beyond the rounding bound after the solve, and a flow whose
    saves rose is solved again with every step landing on each save time, so that every saved value is an accepted,
    descent-checked step end (:func:`gflow.flow.with_saves_checked`; :func:`solve_flows` likewise per flow, its
    steps covering at most ``BATCH_SAVES_PER_STEP`` save times each). A step that can no longer move the time
    variable (t + h = t in float64) ends the run with status ``"step_size_underflow"``; ``max_steps`` reached,
    ``"max_steps"``; both messages name the time reached.

    Args:
        loss: A module mapping a model to a scalar (e.g. :class:`gflow.PopulationLoss`); gflow's default solver also
            uses its ``residuals`` (L = ‖r‖²).
        model0: The start θ0, an equinox module (e.g. :class:`gflow.LinearRNN`).
        t1: The end time.
        rtol: The relative tolerance of the PIDController gflow builds (default ``DEFAULT_RTOL`` = 1e-8, usable
            range ``RTOL_RANGE`` = [1e-14, 0.1)).
        atol: Its absolute tolerance; default rtol × RMS(θ0) (≤ rtol), so that tiny initializations are integrated to
            relative accuracy.
        solver: ``"auto"`` (gflow's Rosenbrock-W solver for gradient flows, :class:`GaussNewtonRosenbrock`; Rodas5P
            at rtol ≤ ``AUTO_RODAS_MAX_RTOL``), a registered name (``"rosenbrock"``, ``"rosenbrock-cg"``,
            ``"tsit5"``, ``"kvaerno5"``, ...) or any diffrax solver instance.
        save_at: The number of log-spaced save times (default 200), an array of times in [t0, t1], or a
            ``diffrax.SaveAt(ts=..., t0=...)`` (times only). A number gives t0, then log-spaced times from t0 + δ to
            t1, where δ starts at the flow's own first time scale τ = 1/|λ|max of the Hessian ∇²L(θ0) (a few
            Hessian-vector power iterations before the solve; :func:`gflow.run.flow_time_scale`): δ = τ/100 rounded
            down to a power of ten, kept within [1e-15, 1e-2] × (t1 − t0) (:func:`gflow.run.first_save_offset`).
            A log-log plot of the default trajectory then shows the flow from where it starts to move, whatever
            t1; where τ cannot be estimated, δ = 1e-6 (t1 − t0).
        t0: The start time.
        stop_loss: Stop at the first step end where L ≤ stop_loss (status ``"stopped_at_loss"``); saves inside that
            last step may already be below it.
        diverge_factor: Stop with status ``"diverged"`` once the parameters are non-finite or max|θ| exceeds
            diverge_factor × max(max|θ0|, 1), instead of returning NaN. |L| > diverge_factor × max(|L(θ0)|, 1) or a
            non-finite L is "diverged" too: checked at every step when ``stop_loss`` is given (the loss is then
            evaluated anyway), else at the saved times.
        diagnostics: name → function(model) (or a list of functions), evaluated at every saved time; each is traced
            once on ``model0`` before the solve, so a diagnostic that cannot run fails at once
            (:class:`gflow.GflowInputError` naming it and quoting its error), not after the integration.
        max_steps: The most steps the flow takes.
        progress: ``"auto"``: print the wall time elapsed once the solve has run for 5 s (the compiled solve then
            has no host callback, so JAX's persistent cache keeps it across processes); True: print t and log-time
            progress from the start (the program is compiled anew in every process); False: print nothing.
        config: Entries added to the trajectory's ``config`` (winning over gflow's).
        stepsize_controller: Any adaptive diffrax step-size controller instead of rtol/atol (then give neither).
        error_control: ``"auto"`` measures the local error in residual space too for a sum of squares, so that L is
            resolved relative to itself down to its rounding floor (``"loss"``); ``"parameters"`` in θ only
            (gflow ≤ 0.1).

    Returns:
        A :class:`gflow.Trajectory`; its ``final`` is the model at the last time reached, its ``stats`` the step
        counts and work, its ``status`` and ``message`` how the flow ended.

    Raises:
        GflowInputError: An argument is malformed, the start has non-finite parameters or loss, or a diagnostic
            fails on the start.
    """
    theta0, loss0 = check_model_and_loss(loss, model0)
    # asked only where solver="auto" could take the separable solver (it costs ~0.5 ms of a short call)
    separable = (isinstance(solver, str) and solver == "auto" and np.size(theta0) >= SEPARABLE_MIN_PARAMETERS
                 and has_separable_curvature(loss, model0))
    setup = flow_setup(t1, SolveOptions.of(locals()), progress, n_params=np.size(theta0), separable=separable)
    check_solver_fits(setup, loss)
    check_diagnostics(setup.functions, model0)
    setup = _shown_from_the_start(setup, save_at, loss, model0)
    thetas, losses0 = np.asarray(theta0)[None], np.asarray([loss0])
    diverge, atol = diverge_limits(setup.diverge_factor, thetas, losses0), _atols(setup, thetas)
    problem = flow_problem(setup, resolves_loss(setup.error_control, loss))
    start = time.perf_counter()
    meter = _meter(setup)
    out = _reported(setup, lambda: jax.block_until_ready(integrate(problem, loss, model0, f64(atol[0]),
                                                                   f64(diverge[0]), meter, np.size(theta0))), "flow")
    out = jax.tree_util.tree_map(lambda o: np.asarray(o)[None], out)
    losses, models = _one_row(loss), _one_row(model0)
    out = continue_past_underflow(out, problem, losses, models, thetas, setup, diverge, atol)
    wall = time.perf_counter() - start
    return build_flow_batch(setup, losses, models, thetas, diverge, atol, out, wall,
                            batch_diagnostics(setup.functions, models, out.ys),
                            _with_error_control(config, problem.resolve_loss))[0]


def _one_row(module):
    """A module as a stacked batch of one, its arrays on the host (an eager JAX broadcast per leaf costs tens of µs,
    and the batch's assembly reads them on the host anyway)."""
    return jax.tree_util.tree_map(lambda x: np.asarray(x)[None] if eqx.is_array(x) else x, module)


def _as_batch(losses, models0):
    """Stacked (losses, models0) and the number of flows, from stacked modules or equal-length lists."""
    if is_stacked(models0) or is_stacked(losses):
        if not (is_stacked(models0) and is_stacked(losses)):
            raise GflowInputError("`losses` and `models0` must both be stacked modules (leading batch axis) or both "
                                  "lists of modules")
        n = batch_length(models0, "models0")
        n_losses = batch_length(losses, "losses")
        if n_losses != n:
            raise GflowInputError(f"stacked `losses` hold {n_losses} flows but `models0` hold {n}")
        return losses, models0, n
    losses, models0 = list(losses), list(models0)
    if not losses or len(losses) != len(models0):
        raise GflowInputError(f"`losses` and `models0` must be non-empty and of equal length, "
                              f"got {len(losses)} and {len(models0)}")
    for i, loss in enumerate(losses):
        check_callable_loss(loss, f"losses[{i}]")
    return stack(losses, "losses"), stack(models0, "models0"), len(losses)


def validate_flows(losses, models0) -> tuple[np.ndarray, np.ndarray]:
    """Check a batch of flows as :func:`solve_flows` takes it, in one compiled call.

    Args:
        losses: Stacked losses or a list of losses.
        models0: Stacked starts or a list of starts.

    Returns:
        (θ0 (B, n), L(θ0) (B,)).

    Raises:
        GflowInputError: A flow has non-finite parameters or loss (naming it), or the batch is malformed.
    """
    losses, models0, _ = _as_batch(losses, models0)
    return validate_batch(losses, models0)


def solve_flows(losses, models0, t1: float, *, rtol: float | None = None, atol: float | None = None, solver="auto",
                save_at=200, t0: float = 0.0, stop_loss: float | None = None, diverge_factor: float = 1e6,
                diagnostics=None, max_steps: int = 1_000_000, progress: bool | str = "auto",
                config: Mapping[str, Any] | None = None, devices=None,
                program_size: int | None = None, stepsize_controller=None, error_control: str = "auto",
                slots: int | None = None) -> FlowBatch:
    """Integrate many independent flows in one compiled, batched call.

    Every flow shares the time grid, rtol and solver and keeps its own adaptive steps and its own default ``atol``
    (as :func:`solve_flow` would choose it), so flow i of a batch equals ``solve_flow`` of flow i to within the
    tolerance. The batch runs in a program of a bucketed size (:func:`gflow.stacking.bucket_size`: 1, 2, 3, 4, 6, 8,
    12, … flows, padded with copies of flow 0), so nearby batch sizes share one compiled program and a flow's result
    does not depend on which other flows share its batch.

    Args:
        losses: *Stacked* losses (every array with a leading batch axis) or an equal-length sequence of losses with
            identical shapes (pad losses of different training lengths with :meth:`PopulationLoss.padded_to`).
        models0: The starts, stacked (e.g. ``eqx.filter_vmap(lambda key: initializers.balanced(key, 40,
            scale=1e-2))(keys)``) or a sequence of modules.
        t1: The end time.
        rtol: As :func:`solve_flow`.
        atol: As :func:`solve_flow` (one value for every flow; default each flow's own).
        solver: As :func:`solve_flow`.
        save_at: As :func:`solve_flow`; the flows share one grid, so a number starts it at the first time scale of
            the batch's fastest flow.
        t0: As :func:`solve_flow`.
        stop_loss: As :func:`solve_flow`.
        diverge_factor: As :func:`solve_flow`.
        diagnostics: As :func:`solve_flow`.
        max_steps: As :func:`solve_flow`.
        progress: As :func:`solve_flow` (a batch reports flows done and the slowest running flow).
        config: As :func:`solve_flow`.
        devices: The devices the batch is split over along the batch axis (default: every local device of the
            default backend).
        program_size: Ask for a program of at least that many flows (:func:`gflow.run_sweep` uses it so that a
            resumed sweep computes its missing flows in the program its finished ones used).
        stepsize_controller: As :func:`solve_flow`, for every flow.
        error_control: As :func:`solve_flow`.
        slots: Run the batch through a program of ``slots`` flows per device whose slots refill (docs/design.md,
            "Batching and bucketing"): when a flow ends, its slot takes the next pending flow, so the batch costs
            about the sum of its flows' steps over ``slots`` instead of its largest step count times its size. A
            flow's result is then bit-identical whatever its slot, neighbours and position in the batch, for a given
            number of slots per device (except with the solvers that couple a batch's members on purpose:
            ``GaussNewtonRosenbrock`` refreshing a lagged Jacobian, ``RodasGradientFlow`` iterating its linear
            solves); it agrees with the lock-step path (``slots=None``, the default) to rounding. ``program_size``
            is then not used. Refused: a step-size controller with jump times, and more than two save times within
            100 ulps of t1.

    Returns:
        A :class:`gflow.FlowBatch`: arrays with a leading flow axis, ``batch[i]`` the :class:`gflow.Trajectory` of
        flow i, ``batch.stats`` the flows' step counts; ``wall_time_s`` is the batch's time.

    Raises:
        GflowInputError: An argument is malformed, or a flow's start has non-finite parameters or loss (naming it).
    """
    losses, models0, n = _as_batch(losses, models0)
    thetas, losses0 = validate_batch(losses, models0)
    # solver="auto" keeps a batch off the separable Rodas5P: on the 2-core CPU a lock-step batch of 4 of seed 000's
    # fig1a flows took 1.23× ROS34PW2's wall with it (one flow alone: 0.64×)
    setup = flow_setup(t1, SolveOptions.of(locals()), progress, n_params=thetas.shape[1])
    check_solver_fits(setup, losses)
    check_diagnostics(setup.functions, take(models0, 0), "models0[0]")
    setup = _shown_from_the_start(setup, save_at, losses, models0, batched=True)
    diverge, atols = diverge_limits(setup.diverge_factor, thetas, losses0), _atols(setup, thetas)
    devices = local_devices(devices)
    problem = flow_problem(setup, resolves_loss(setup.error_control, take(losses, 0)))
    if slots is not None:
        return _solve_refilling(problem, losses, models0, thetas, setup, diverge, atols, devices,
                                positive_int("slots", slots), config)
    size = bucket_size(n, len(devices))
    if program_size is not None:
        size = max(size, bucket_size(positive_int("program_size", program_size), len(devices)))
    mesh = mesh_over(devices) if len(devices) > 1 else None
    padded = [pad_to(x, size) for x in (losses, models0, (f64(diverge), f64(atols)))]
    if mesh is not None:
        padded = [place(x, mesh) for x in padded]
    (losses_p, models_p, (diverge_p, atol_p)) = padded
    start = time.perf_counter()
    meter = _meter(setup, sharded=mesh is not None, flows=n)
    out = _reported(setup, lambda: jax.block_until_ready(integrate_batch(problem, losses_p, models_p, diverge_p, atol_p,
                                                                         meter, mesh)), "flows")

    def on_steps(rows):  # the flows whose saves rose, in the program the batch ran
        again = [_rows_padded(x, rows, size) for x in (losses, models0, (f64(diverge), f64(atols)))]
        if mesh is not None:
            again = [place(x, mesh) for x in again]
        return jax.block_until_ready(integrate_batch(dataclasses.replace(problem, save_on_steps=True), again[0],
                                                     again[1], again[2][0], again[2][1], meter, mesh)).on_host(len(rows))

    out = with_batch_saves_checked(out.on_host(n), on_steps)
    out = continue_past_underflow(out, problem, losses, models0, thetas, setup,
                                  diverge, atols, program=size // (1 if mesh is None else len(mesh.devices.flat)))
    wall = time.perf_counter() - start
    return build_flow_batch(setup, losses, models0, thetas, diverge, atols, out, wall,
                            batch_diagnostics(setup.functions, models0, out.ys),
                            _with_error_control(config, problem.resolve_loss))


def _solve_refilling(problem: FlowProblem, losses, models0, thetas, setup: FlowSetup, diverge, atols, devices,
                     slots: int, config) -> FlowBatch:
    """:func:`solve_flows` through refilling slots: ``slots`` split over ``devices`` (at least one each)."""
    per_device = -(-slots // len(devices))
    meter = None if setup.progress is False else progress_printer(0.0 if setup.progress is True else QUIET_SECONDS)
    start = time.perf_counter()
    out = integrate_refilling(problem, losses, models0, thetas, atols, diverge, setup, per_device, devices, meter)
    out = with_batch_saves_checked(out, lambda rows: integrate_refilling(
        dataclasses.replace(problem, save_on_steps=True), take(losses, rows), take(models0, rows), thetas[rows],
        np.asarray(atols)[rows], np.asarray(diverge)[rows], setup, per_device, devices, None))
    out = continue_past_underflow(out, problem, losses, models0, thetas, setup, diverge, atols, program=per_device)
    wall = time.perf_counter() - start
    return build_flow_batch(setup, losses, models0, thetas, diverge, atols, out, wall,
                            batch_diagnostics(setup.functions, models0, out.ys),
                            {"slots": per_device * len(devices), **_with_error_control(config, problem.resolve_loss)})


def lower_flows(losses, models0, t1: float, *, rtol: float | None = None, atol: float | None = None, solver="auto",
                save_at=8, error_control: str = "auto"):
    """The program :func:`solve_flows` compiles for this batch (without a progress meter), lowered but not run.

    Args:
        losses: Stacked losses or a list of losses.
        models0: Stacked starts or a list of starts.
        t1: The end time.
        rtol: As :func:`solve_flows`.
        atol: As :func:`solve_flows`.
        solver: As :func:`solve_flows`.
        save_at: As :func:`solve_flows` (default 8; a number of times starts them at 1e-6 (t1 − t0): their values
            do not change the program).
        error_control: As :func:`solve_flows`.

    Returns:
        A ``jax.stages.Lowered`` whose ``.compile().as_text()`` is the optimized HLO (the bench counts its kernels).
    """
    losses, models0, n = _as_batch(losses, models0)
    size = bucket_size(n)
    losses, models0 = pad_to(losses, size), pad_to(models0, size)
    thetas = flat_parameters(models0)
    setup = flow_setup(t1, SolveOptions(rtol=rtol, atol=atol, solver=solver, save_at=save_at,
                                        error_control=error_control), progress=False, n_params=thetas.shape[1])
    diverge, atols = np.ones((size, 2)) * setup.diverge_factor, _atols(setup, thetas)
    problem = flow_problem(setup, resolves_loss(setup.error_control, take(losses, 0)))  # no stop_loss: watches no L
    with errors_as_nan():
        return integrate_batch_jit.lower(problem, losses, models0, f64(diverge), f64(atols), _meter(setup),
                                         None).lowered
