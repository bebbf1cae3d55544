"""Gradient flow dθ/dt = −∇L(θ), integrated by diffrax with adaptive, error-controlled steps (float64).

One entry point, :func:`solve_flow`; the solver, the tolerances, the saving grid, the stopping rules and the
diagnostics are its orthogonal arguments (in diffrax's style).
"""

from __future__ import annotations

import contextlib
import time
from typing import Any, Mapping

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec

from .._checks import GflowInputError, positive_int
from ..models._flatten import evaluate_batch_rows, flatten, ROWS_PER_BATCH, unflatten
from ..results._flow_batch import FlowBatch
from ..results._trajectory import Trajectory
from ..stacking import (
    BATCH_AXIS,
    batch_length,
    bucket_size,
    is_stacked,
    local_devices,
    mesh_over,
    pad_to,
    place,
    repeat,
    stack,
    take,
)
from ._descent import rejected_ascent
from ._gradient_flow_solver import counts_hessian_vector_products, hessian_vector_products
from ._options import _check_solver_fits, _Setup, _setup, SolveOptions
from ._outcome import build_flow_batch, final_rows, IntegratorOutput, stops
from ._progress import LogTimeProgressMeter
from ._refill import integrate_refilling, progress_printer
from ._step_control import flow_atols, guarded_controller, resolves_loss, solver_for_rtol
from ._term import GradientFlowTerm


def _integrate_one(loss, model0, solver, controller, t0, t1, ts, rtol, atol, stop_loss, diverge, max_steps, meter,
                   watch_loss, resolve_loss, theta_reference=None):
    """One flow; ``diverge`` = (loss threshold, parameter-norm threshold), ``watch_loss`` and ``resolve_loss``
    static; ``controller`` None (a PIDController from rtol and atol) or the user's adaptive step-size controller.
    Either is wrapped in the descent guard (gflow/flow/_descent.py) and made to step onto every save time, so a saved
    value is an accepted, descent-checked step end, never an interpolant between steps (gflow/flow/_step_control.py).
    ``theta_reference``: the flow's θ0 when this solve continues it from a later state
    (:func:`_continue_past_underflow`). Returns an :class:`IntegratorOutput` (``time_restarts`` unset)."""
    theta0, static, unravel = flatten(model0)
    term = GradientFlowTerm(loss, static, unravel)
    solver = solver_for_rtol(solver, rtol)
    diverge_loss, diverge_norm = diverge[0], diverge[1]

    def stop_or_diverge(t, y, args, **kwargs):
        return stops(term, y, diverge_loss, diverge_norm, stop_loss, watch_loss)

    sol = diffrax.diffeqsolve(
        term, solver, t0, t1, None, theta0,
        stepsize_controller=guarded_controller(controller, rtol, atol, term, resolve_loss, theta_reference, ts),
        # the final solver state only where it carries a work count: other solvers' programs stay as they were
        saveat=diffrax.SaveAt(ts=ts, t1=True, solver_state=counts_hessian_vector_products(solver),
                              controller_state=True),
        event=diffrax.Event(cond_fn=stop_or_diverge),
        max_steps=max_steps, throw=False, progress_meter=meter,
        # No one differentiates through the solve: a plain while loop, without the checkpointing that
        # reverse-mode needs, halves the per-step overhead of a stiff solver whose state holds a Jacobian.
        adjoint=diffrax.ForwardMode(),
    )
    # the row at t0 is θ0 itself, whatever the first step did
    ys = jnp.where((sol.ts == t0)[:, None], theta0[None, :], sol.ys)
    # a few saved states at a time: a nonlinear loss on a large sample, vmapped over every saved time, would hold
    # all their hidden states at once (R5: 26 GB)
    losses = jax.lax.map(lambda y: jnp.where(jnp.all(jnp.isfinite(y)), term.loss_value(y), jnp.nan), ys,
                         batch_size=ROWS_PER_BATCH)
    return IntegratorOutput(
        ts=sol.ts, ys=ys, losses=losses, hit_max_steps=sol.result == diffrax.RESULTS.max_steps_reached,
        succeeded=(sol.result == diffrax.RESULTS.successful) | (sol.result == diffrax.RESULTS.event_occurred),
        steps=sol.stats["num_steps"], accepted=sol.stats["num_accepted_steps"],
        rejected=sol.stats["num_rejected_steps"],
        hessian_vector_products=hessian_vector_products(solver, sol.solver_state),
        underflow=sol.result == diffrax.RESULTS.dt_min_reached, rejected_ascent=rejected_ascent(sol.controller_state))


@contextlib.contextmanager
def _errors_as_nan():
    """Trace with equinox's runtime checks (``eqx.error_if`` inside diffrax) turning values into NaN instead of
    raising through a host callback: JAX's persistent compilation cache refuses programs with host callbacks,
    and the checks guard inputs that gflow validates before the solve (a NaN that still appears is reported as
    status "diverged"). Changes only what is traced inside the block; without equinox's private switch, no-op."""
    errors = getattr(eqx, "_errors", None)
    if errors is None or not hasattr(errors, "EQX_ON_ERROR"):
        yield
        return
    before, errors.EQX_ON_ERROR = errors.EQX_ON_ERROR, "nan" if errors.EQX_ON_ERROR == "raise" else errors.EQX_ON_ERROR
    try:
        yield
    finally:
        errors.EQX_ON_ERROR = before


def _cacheable(jitted):
    """``jitted`` traced under :func:`_errors_as_nan`."""

    def call(*args):
        with _errors_as_nan():
            return jitted(*args)

    return call


_integrate = _cacheable(eqx.filter_jit(_integrate_one))


def _integrate_batch_impl(losses, models0, diverge, atol, solver, controller, t0, t1, ts, rtol, stop_loss, max_steps, meter,
                          watch_loss, resolve_loss, mesh):
    """Stacked flows in one program: vmapped, and split over ``mesh``'s devices (each device runs its own
    lock-step loop over its rows, so devices never wait for each other) when a mesh is given."""

    def local(losses, models0, diverge, atol, t0, t1, ts, rtol, stop_loss):
        def one(loss, model0, diverge, atol):
            return _integrate_one(loss, model0, solver, controller, t0, t1, ts, rtol, atol, stop_loss, diverge, max_steps,
                                  meter, watch_loss, resolve_loss)

        return eqx.filter_vmap(one)(losses, models0, diverge, atol)

    if mesh is None:
        return local(losses, models0, diverge, atol, t0, t1, ts, rtol, stop_loss)
    batched, static = eqx.partition((losses, models0, diverge, atol), eqx.is_array)
    shared = (t0, t1, ts, rtol, stop_loss)
    rows, every = PartitionSpec(BATCH_AXIS), PartitionSpec()
    return jax.shard_map(lambda b, c: local(*eqx.combine(b, static), *c), mesh=mesh,
                         in_specs=(jax.tree_util.tree_map(lambda _: rows, batched), (every,) * len(shared)),
                         out_specs=rows, check_vma=False)(batched, shared)


_integrate_batch_jit = eqx.filter_jit(_integrate_batch_impl)
_integrate_batch = _cacheable(_integrate_batch_jit)


@eqx.filter_jit
def _initial_values(losses, models0):
    """(θ0, L(θ0)) of every flow of a stacked batch, in one compiled call."""

    def one(loss, model):
        theta, _, _ = flatten(model)
        return theta, loss(model)

    return eqx.filter_vmap(one)(losses, models0)


def flat_parameters(models0) -> np.ndarray:
    """θ0 (B, n) of every model of a stacked batch."""
    return np.asarray(_flat_parameters(models0))


@eqx.filter_jit
def _flat_parameters(models0):
    return eqx.filter_vmap(lambda m: flatten(m)[0])(models0)


@eqx.filter_jit
def _loss_value(loss, model):
    """L(model), compiled once per loss and model structure (eager evaluation recompiles scans every call)."""
    return loss(model)


def _check_callable_loss(loss, name="loss"):
    if not callable(loss):
        raise GflowInputError(f"`{name}` must be callable on a model, got {type(loss).__name__}")


def _check_model_and_loss(loss, model0, name="model0"):
    _check_callable_loss(loss)
    if not isinstance(model0, eqx.Module):
        raise GflowInputError(f"`{name}` must be an equinox module (e.g. gflow.LinearRNN), got {type(model0).__name__}")
    theta0, _, _ = flatten(model0)
    if not bool(jnp.all(jnp.isfinite(theta0))):
        raise GflowInputError(f"`{name}` has non-finite parameters")
    loss0 = float(_loss_value(loss, model0))
    if not np.isfinite(loss0):
        raise GflowInputError(f"the loss at `{name}` is not finite ({loss0})")
    return theta0, loss0


def diverge_limits(diverge_factor: float, thetas: np.ndarray, losses0: np.ndarray) -> np.ndarray:
    """(B, 2): the (loss, parameter) levels beyond which a run is stopped as diverged, diverge_factor ×
    max(|L0|, 1) and diverge_factor × max(max|θ0|, 1) (flows and batched discrete runs alike)."""
    scale = np.maximum(np.max(np.abs(thetas), axis=1, initial=0.0), 1.0)
    return diverge_factor * np.stack([np.maximum(np.abs(losses0), 1.0), scale], axis=1)


def _diverge_thresholds(setup, thetas: np.ndarray, losses0: np.ndarray) -> np.ndarray:
    return diverge_limits(setup.diverge_factor, thetas, losses0)


def _atols(setup, thetas: np.ndarray) -> np.ndarray:
    return flow_atols(setup.atol, setup.rtol, thetas)


def _f64(x):
    return jnp.asarray(x, dtype=jnp.float64)  # traced, so a new value does not recompile


def _shared_args(setup: _Setup):
    return (_f64(setup.t0), _f64(setup.t1), _f64(setup.ts), _f64(setup.rtol),
            _f64(-np.inf if setup.stop_loss is None else setup.stop_loss))


def _batch_diagnostics(setup, models0, params):
    """Diagnostics at every saved row of every flow, in one compiled call: name → (B, S)."""
    if not setup.functions:
        return {}
    return evaluate_batch_rows(setup.functions, models0, params)


def solve_flow(loss, model0, t1: float, *, rtol: float | None = None, atol: float | None = None, solver="auto",
               save_at=200, t0: float = 0.0, stop_loss: float | None = None, diverge_factor: float = 1e6,
               diagnostics=None, max_steps: int = 1_000_000, progress: bool | str = "auto",
               config: Mapping[str, Any] | None = None, stepsize_controller=None,
               error_control: str = "auto") -> Trajectory:
    """Integrate the gradient flow dθ/dt = −∇L(θ) of ``loss`` from ``model0`` over [t0, t1].

    - ``loss``: a module mapping a model to a scalar (e.g. :class:`gflow.PopulationLoss`); gflow's default
      solver also uses its ``residuals`` (L = ‖r‖²).
    - ``rtol`` (default 1e-8, usable range [1e-14, 0.1)), ``atol``: the tolerances of the PIDController gflow
      builds. ``atol`` defaults to rtol × RMS(θ0) (≤ rtol), so that tiny initializations are integrated to relative
      accuracy. ``stepsize_controller``: any adaptive diffrax step-size controller instead (then give neither
      ``rtol`` nor ``atol``), for every flow.
    - Every step, of every solver, passes gflow's descent guard (gflow/flow/_descent.py): a step that would raise L
      by more than the rounding of its evaluation is rejected and retried smaller (``stats["rejected_ascent"]``),
      and steps land on every save time, so a saved value is an accepted step's end, never an interpolant.
      ``error_control``: ``"auto"`` (default) measures the local error in residual space too for a sum of squares,
      so that L is resolved relative to itself down to its rounding floor (``"loss"``), ``"parameters"`` in θ
      only (gflow ≤ 0.1).
    - ``solver``: ``"auto"`` (gflow's Rosenbrock-W solver for gradient flows, :class:`GaussNewtonRosenbrock`),
      a registered name (``"rosenbrock"``, ``"rosenbrock-cg"``, ``"tsit5"``, ``"kvaerno5"``, ...) or any
      diffrax solver instance.
    - ``save_at``: number of log-spaced save times (default 200), an array of times in [t0, t1], or a
      ``diffrax.SaveAt(ts=..., t0=...)`` (times only).
    - ``stop_loss``: stop once L ≤ stop_loss (status ``"stopped_at_loss"``).
    - ``diverge_factor``: stop with status ``"diverged"`` once the parameters are non-finite or max|θ| exceeds
      diverge_factor × max(max|θ0|, 1), instead of returning NaN. |L| > diverge_factor × max(|L(θ0)|, 1) or
      a non-finite L is "diverged" too: checked at every step when ``stop_loss`` is given (the loss is then
      evaluated anyway), else at the saved times. A step that can no longer move the time variable (t + h = t in
      float64) ends the run with status ``"step_size_underflow"``; ``max_steps`` reached, ``"max_steps"``; both
      messages name the time reached.
    - ``diagnostics``: name → function(model) (or a list of functions), evaluated at every saved time.
    - ``progress``: print t and log-time progress during the solve: ``"auto"`` (default) once it has run
      for 5 s of wall time, ``True`` from the start, ``False`` never.

    Returns a :class:`gflow.Trajectory`; its ``final`` is the model at the last time reached.
    """
    theta0, loss0 = _check_model_and_loss(loss, model0)
    setup = _setup(t1, SolveOptions.of(locals()), progress)
    _check_solver_fits(setup, loss)
    thetas, losses0 = np.asarray(theta0)[None], np.asarray([loss0])
    diverge, atol = _diverge_thresholds(setup, thetas, losses0), _atols(setup, thetas)
    resolve = resolves_loss(setup.error_control, loss)
    t0_, t1_, ts_, rtol_, stop_ = _shared_args(setup)
    start = time.perf_counter()
    out = _integrate(loss, model0, setup.solver, setup.controller, t0_, t1_, ts_, rtol_, _f64(atol[0]), stop_,
                     _f64(diverge[0]), setup.max_steps, _meter(setup), setup.stop_loss is not None, resolve)
    out = jax.tree_util.tree_map(lambda o: np.asarray(o)[None], jax.block_until_ready(out))
    losses, models = repeat(loss, 1), repeat(model0, 1)
    out = _continue_past_underflow(out, losses, models, thetas, setup, diverge, atol, resolve)
    wall = time.perf_counter() - start
    return build_flow_batch(setup, losses, models, thetas, diverge, atol, out, wall,
                            _batch_diagnostics(setup, models, out.ys), _with_error_control(config, resolve))[0]


MAX_TIME_RESTARTS = 16  # continuations in a fresh local time per flow (each after a step-size underflow)


def _restart_batch_impl(losses, models0, thetas, references, diverge, atol, t1s, tss, solver, controller, t0, rtol,
                        stop_loss, max_steps, watch_loss, resolve_loss):
    """Flows continued from states ``thetas`` (rows of a stacked batch) each in its own local time [0, t1s[i]] with
    save times tss[i]: one vmapped program (:func:`_continue_past_underflow`)."""

    def one(loss, model0, theta, reference, diverge, atol, t1, ts):
        _, static, unravel = flatten(model0)
        return _integrate_one(loss, unflatten(theta, static, unravel), solver, controller, t0, t1, ts, rtol, atol,
                              stop_loss, diverge, max_steps, diffrax.NoProgressMeter(), watch_loss, resolve_loss,
                              reference)

    return eqx.filter_vmap(one)(losses, models0, thetas, references, diverge, atol, t1s, tss)


_restart_batch = _cacheable(eqx.filter_jit(_restart_batch_impl))


def _continue_past_underflow(out: IntegratorOutput, losses, models0, thetas, setup, diverge, atols,
                             resolve_loss, program: int = 1) -> IntegratorOutput:
    """Continue every flow whose steps underflowed the float64 spacing of t (gflow/flow/_descent.py, "time
    resolution") from its last state in a fresh local time τ = t − t_stop, up to ``MAX_TIME_RESTARTS`` times, each
    restart allowed ``max_steps`` (a restart is not begun once the flow's steps reach ``max_steps``): a split time
    (t_stop, τ) for the autonomous flow, so an escape at t ~ 1e12 is resolved whatever t1 is. A restart that makes
    no progress ends the flow with its underflow status. The flows that need a restart are continued together, one
    round per restart, in vmapped programs of ``program`` flows (padded with copies: the program size of the solve that
    ran them, so that a flow's bits depend on its batch as the solve's do, never on which or how many other flows
    restart; one by one, a batch of 4 096 such flows on a GPU took longer than the 290 s we gave it). ``out`` holds the
    integrator's outputs with a leading flow axis (numpy); returns them merged (saved times as requested), with
    ``time_restarts`` the number of restarts of each flow."""
    out = out.on_host()
    restarts = np.zeros(out.ts.shape[0], dtype=np.int64)
    stuck = np.zeros(out.ts.shape[0], dtype=bool)  # a restart that took no step: not tried again
    for _ in range(MAX_TIME_RESTARTS):
        beyond = out.underflow & ~stuck & (out.steps >= setup.max_steps)
        out.hit_max_steps[beyond], out.underflow[beyond] = True, False
        todo = np.flatnonzero(out.underflow & ~stuck)
        if todo.size == 0:
            break
        for start in range(0, todo.size, program):
            rows = todo[start:start + program]
            last = final_rows(out.ts[rows])
            t_stops = out.ts[rows, last]
            local_t1s = setup.t1 - t_stops
            local_ts = np.clip(setup.ts[None, :] - t_stops[:, None], 0.0, local_t1s[:, None])
            size = program  # always the same program: a flow's restart does not depend on how many others restart
            padded = [_rows_padded(x, rows, size) for x in (losses, models0)]
            arrays = [np.concatenate([x, np.repeat(x[:1], size - rows.size, axis=0)]) for x in
                      (out.ys[rows, last], thetas[rows], diverge[rows], np.asarray(atols)[rows], local_t1s, local_ts)]
            part = _restart_batch(*padded, *(_f64(x) for x in arrays), setup.solver, setup.controller, _f64(0.0),
                                  _f64(setup.rtol), _shared_args(setup)[4], setup.max_steps,
                                  setup.stop_loss is not None, resolve_loss)
            part = jax.block_until_ready(part).on_host(rows.size)
            for j, i in enumerate(rows):
                _merge_restart(out, part, i, j, setup, t_stops[j], local_ts[j], local_t1s[j], restarts, stuck)
    return out._replace(time_restarts=restarts)


def _rows_padded(tree, rows, size: int):
    """Rows ``rows`` of a stacked module, padded to ``size`` with copies of the first; a module without arrays (a
    loss whose fields are all static) is the same for every row and is returned as it is."""
    if not jax.tree_util.tree_leaves(eqx.filter(tree, eqx.is_array)):
        return tree
    return pad_to(take(tree, rows), size)


def _merge_restart(out, part, i, j, setup, t_stop, local_ts, local_t1, restarts, stuck) -> None:
    """Write row ``j`` of a restart's outputs ``part`` into flow ``i`` of ``out``: the save rows after ``t_stop``
    and the end row, at their requested global times, step counts added."""
    if part.steps[j] == 0 or part.ts[j, -1] == 0.0:  # no step taken: restarting again would repeat this one
        stuck[i] = True
        return
    later = np.concatenate([setup.ts > t_stop, [True]])  # the save rows this part owns, and the end row
    local = part.ts[j, later]
    requested = np.concatenate([setup.ts, [setup.t1]])[later]
    ended = np.concatenate([local_ts, [local_t1]])[later]
    # a row the part reached at the requested local time is that requested time (no rounding of τ + t_stop)
    out.ts[i, later] = np.where(local == ended, requested, np.where(np.isfinite(local), local + t_stop, local))
    out.ys[i, later], out.losses[i, later] = part.ys[j, later], part.losses[j, later]
    out.hit_max_steps[i], out.succeeded[i], out.underflow[i] = part.hit_max_steps[j], part.succeeded[j], \
        part.underflow[j]
    restarts[i] += 1
    for total, added in ((out.steps, part.steps), (out.accepted, part.accepted), (out.rejected, part.rejected),
                         (out.rejected_ascent, part.rejected_ascent)):
        total[i] += added[j]
    if out.hessian_vector_products[i] >= 0:
        out.hessian_vector_products[i] += part.hessian_vector_products[j]


def _with_error_control(config, resolve_loss: bool) -> dict:
    """The caller's config with the error control the solve used ("loss" or "parameters")."""
    return {"error_control": "loss" if resolve_loss else "parameters", **(config or {})}


QUIET_SECONDS = 5.0  # progress="auto" reports only solves that have run longer than this


def _meter(setup, sharded: bool = False):
    if setup.progress is False or sharded:  # host callbacks stay out of per-device programs
        return diffrax.NoProgressMeter()
    quiet = QUIET_SECONDS if setup.progress == "auto" else 0.0
    return LogTimeProgressMeter(_f64(setup.t0), _f64(setup.t1), _f64(quiet))


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
        _check_callable_loss(loss, f"losses[{i}]")
    return stack(losses, "losses"), stack(models0, "models0"), len(losses)


def validate_flows(losses, models0) -> tuple[np.ndarray, np.ndarray]:
    """θ0 (B, n) and L(θ0) (B,) of a batch as :func:`solve_flows` takes it (stacked modules or lists), checked in one
    compiled call: a flow with non-finite parameters or loss raises :class:`gflow.GflowInputError` naming it."""
    losses, models0, _ = _as_batch(losses, models0)
    return _validate_batch(losses, models0)


def _validate_batch(losses, models0):
    """θ0 (B, n) and L(θ0) (B,) of a stacked batch, checked in one compiled call; a bad flow is named."""
    thetas, losses0 = (np.asarray(x) for x in _initial_values(losses, models0))
    bad = np.flatnonzero(~np.all(np.isfinite(thetas), axis=1))
    if bad.size:
        raise GflowInputError(f"`models0[{bad[0]}]` has non-finite parameters ({bad.size} flow(s) in all: "
                              f"{bad[:10].tolist()})")
    bad = np.flatnonzero(~np.isfinite(losses0))
    if bad.size:
        raise GflowInputError(f"the loss at `models0[{bad[0]}]` is not finite ({losses0[bad[0]]}; {bad.size} "
                              f"flow(s) in all: {bad[:10].tolist()})")
    return thetas, losses0


def solve_flows(losses, models0, t1: float, *, rtol: float | None = None, atol: float | None = None, solver="auto",
                save_at=200, t0: float = 0.0, stop_loss: float | None = None, diverge_factor: float = 1e6,
                diagnostics=None, max_steps: int = 1_000_000, progress: bool | str = "auto",
                config: Mapping[str, Any] | None = None, devices=None,
                program_size: int | None = None, stepsize_controller=None, error_control: str = "auto",
                slots: int | None = None) -> FlowBatch:
    """Integrate many independent flows in one compiled, batched call; arguments as :func:`solve_flow`.

    ``losses`` and ``models0`` are either *stacked* modules (every array with a leading batch axis, e.g.
    ``eqx.filter_vmap(lambda key: initializers.balanced(key, 40, scale=1e-2))(keys)``) or equal-length
    sequences of modules with identical shapes (pad losses of different training lengths with
    :meth:`PopulationLoss.padded_to`). Every flow shares the time grid, rtol and solver and keeps its own
    adaptive steps and its own default ``atol`` (as :func:`solve_flow` would choose it), so flow i of a batch
    equals ``solve_flow`` of flow i to within the tolerance.

    The batch runs in a program of a bucketed size (gflow/stacking.py: 1, 2, 3, 4, 6, 8, 12, … flows, padded
    with copies of flow 0), so nearby batch sizes share one compiled program and a flow's result does not
    depend on which other flows share its batch. It is split over ``devices`` (default: every local device of
    the default backend) along the batch axis. ``program_size`` asks for a program of at least that many flows
    (:func:`gflow.run_sweep` uses it so that a resumed sweep computes its missing flows in the program its
    finished ones used).

    ``slots``: run the batch through a program of ``slots`` flows per device whose slots refill
    (gflow/flow/_refill.py): when a flow ends, its slot takes the next pending flow, so the batch costs about the
    sum of its flows' steps over ``slots`` instead of its largest step count times its size. A flow's result is then
    bit-identical whatever its slot, neighbours and position in the batch, for a given number of slots per device
    (except with the solvers that couple a batch's members, gflow/flow/_refill.py); it agrees with the lock-step path
    (``slots=None``, the default) to rounding. ``program_size`` is then not used. Refused: a step-size controller
    with jump times, and more than two save times within 100 ulps of t1.

    Returns a :class:`gflow.FlowBatch`: arrays with a leading flow axis, ``batch[i]`` the
    :class:`gflow.Trajectory` of flow i. ``stats["wall_time_s"]`` is the batch's time.
    """
    losses, models0, n = _as_batch(losses, models0)
    thetas, losses0 = _validate_batch(losses, models0)
    setup = _setup(t1, SolveOptions.of(locals()), progress)
    _check_solver_fits(setup, losses)
    diverge, atols = _diverge_thresholds(setup, thetas, losses0), _atols(setup, thetas)
    devices = local_devices(devices)
    resolve = resolves_loss(setup.error_control, take(losses, 0))
    if slots is not None:
        return _solve_refilling(losses, models0, thetas, setup, diverge, atols, devices, positive_int("slots", slots),
                                resolve, config)
    size = bucket_size(n, len(devices))
    if program_size is not None:
        size = max(size, bucket_size(positive_int("program_size", program_size), len(devices)))
    mesh = mesh_over(devices) if len(devices) > 1 else None
    padded = [pad_to(x, size) for x in (losses, models0, (_f64(diverge), _f64(atols)))]
    if mesh is not None:
        padded = [place(x, mesh) for x in padded]
    (losses_p, models_p, (diverge_p, atol_p)) = padded
    start = time.perf_counter()
    out = _integrate_batch(losses_p, models_p, diverge_p, atol_p, setup.solver, setup.controller, *_shared_args(setup),
                           setup.max_steps, _meter(setup, sharded=mesh is not None), setup.stop_loss is not None,
                           resolve, mesh)
    out = _continue_past_underflow(jax.block_until_ready(out).on_host(n), losses, models0, thetas, setup, diverge,
                                   atols, resolve, program=size // (1 if mesh is None else len(mesh.devices.flat)))
    wall = time.perf_counter() - start
    return build_flow_batch(setup, losses, models0, thetas, diverge, atols, out, wall,
                            _batch_diagnostics(setup, models0, out.ys), _with_error_control(config, resolve))


def _solve_refilling(losses, models0, thetas, setup, diverge, atols, devices, slots: int, resolve, config) -> FlowBatch:
    """:func:`solve_flows` through refilling slots: ``slots`` split over ``devices`` (at least one each)."""
    per_device = -(-slots // len(devices))
    meter = None if setup.progress is False else progress_printer(0.0 if setup.progress is True else QUIET_SECONDS)
    start = time.perf_counter()
    out = integrate_refilling(losses, models0, thetas, atols, diverge, setup, _shared_args(setup), per_device, devices,
                              setup.stop_loss is not None, resolve, meter)
    out = _continue_past_underflow(out, losses, models0, thetas, setup, diverge, atols, resolve, program=per_device)
    wall = time.perf_counter() - start
    return build_flow_batch(setup, losses, models0, thetas, diverge, atols, out, wall,
                            _batch_diagnostics(setup, models0, out.ys),
                            {"slots": per_device * len(devices), **_with_error_control(config, resolve)})


def lower_flows(losses, models0, t1: float, *, rtol: float | None = None, atol: float | None = None, solver="auto",
                save_at=8, error_control: str = "auto"):
    """The program :func:`solve_flows` compiles for this batch (without a progress meter), lowered but not run: a
    ``jax.stages.Lowered`` whose ``.compile().as_text()`` is the optimized HLO (bench/_kernels.py counts its kernels)."""
    losses, models0, n = _as_batch(losses, models0)
    setup = _setup(t1, SolveOptions(rtol=rtol, atol=atol, solver=solver, save_at=save_at, error_control=error_control),
                   progress=False)
    size = bucket_size(n)
    losses, models0 = pad_to(losses, size), pad_to(models0, size)
    diverge, atols = np.ones((size, 2)) * setup.diverge_factor, _atols(setup, flat_parameters(models0))
    with _errors_as_nan():
        return _integrate_batch_jit.lower(losses, models0, _f64(diverge), _f64(atols), setup.solver, setup.controller,
                                          *_shared_args(setup), setup.max_steps, _meter(setup), False,
                                          resolves_loss(setup.error_control, take(losses, 0)), None).lowered
