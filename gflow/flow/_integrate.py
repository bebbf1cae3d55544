"""The compiled integration of gradient flows dθ/dt = −∇L(θ) by diffrax, with adaptive, error-controlled steps
(float64): one flow (:func:`integrate_one`), and a stacked batch in lock-step (vmapped, split over devices), both
taking the solve's shared part as one :class:`FlowProblem`; traced so that JAX's persistent compilation cache can
keep them (:func:`cacheable`)."""

from __future__ import annotations

import contextlib
import dataclasses

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec

from .._compilation_cache import exported_call
from ..models._flatten import flatten, ROWS_PER_BATCH
from ..stacking import BATCH_AXIS
from ._descent import rejected_ascent, saved_losses
from ._gradient_flow_solver import counts_hessian_vector_products, hessian_vector_products
from ._problem import BATCH_SAVES_PER_STEP, FlowProblem, IntegratorOutput, with_saves_checked
from ._step_control import guarded_controller, solver_for_rtol
from ._stopping import stops
from ._term import GradientFlowTerm


def integrate_one(problem: FlowProblem, loss, model0, atol, diverge, meter,
                  theta_reference=None) -> IntegratorOutput:
    """One flow of ``problem``, from ``model0`` under ``loss``.

    The controller (the problem's, or a PIDController from rtol and ``atol``) is wrapped in the descent guard
    (:class:`DescentController`). A value at a save time inside a step comes from the solver's dense output, and
    the saved rows' descent is counted (``saved_rises``); with ``problem.save_on_steps`` every step lands on each
    save time instead, so a saved value is an accepted, descent-checked step end (:func:`with_saves_checked`
    repeats a solve that way when a dense-output save rose).

    Args:
        problem: What the solve's flows share.
        loss: The flow's loss.
        model0: Its start.
        atol: Its absolute tolerance.
        diverge: Its (loss threshold, parameter-norm threshold).
        meter: A diffrax progress meter.
        theta_reference: The flow's θ0 when this solve continues it from a later state (a time restart).

    Returns:
        The flow's :class:`IntegratorOutput` (``time_restarts`` unset).
    """
    theta0, static, unravel = flatten(model0)
    term = GradientFlowTerm(loss, static, unravel)
    solver = solver_for_rtol(problem.solver, problem.rtol)
    diverge_loss, diverge_norm = diverge[0], diverge[1]

    def stop_or_diverge(t, y, args, **kwargs):
        return stops(term, y, diverge_loss, diverge_norm, problem.stop_loss, problem.watch_loss)

    sol = diffrax.diffeqsolve(
        term, solver, problem.t0, problem.t1, None, theta0,
        stepsize_controller=guarded_controller(problem.controller, problem.rtol, atol, term, problem.resolve_loss,
                                               theta_reference, problem),
        # the final solver state only where it carries a work count: other solvers' programs stay as they were
        saveat=diffrax.SaveAt(ts=problem.ts, t1=True, solver_state=counts_hessian_vector_products(solver),
                              controller_state=True),
        event=diffrax.Event(cond_fn=stop_or_diverge),
        max_steps=problem.max_steps, throw=False, progress_meter=meter,
        # No one differentiates through the solve: a plain while loop, without the checkpointing that
        # reverse-mode needs, halves the per-step overhead of a stiff solver whose state holds a Jacobian.
        adjoint=diffrax.ForwardMode(),
    )
    # the row at t0 is θ0 itself, whatever the first step did
    ys = jnp.where((sol.ts == problem.t0)[:, None], theta0[None, :], sol.ys)
    # a few saved states at a time: a nonlinear loss on a large sample, vmapped over every saved time, would hold
    # all their hidden states at once (R5: 26 GB)
    # only dense-output saves are descent-checked (with_saves_checked): saves on steps are step ends the guard accepted
    losses, rises = saved_losses(term, ys, theta0 if theta_reference is None else theta_reference, ROWS_PER_BATCH,
                                 check_descent=not problem.save_on_steps)
    return IntegratorOutput(
        ts=sol.ts, ys=ys, losses=losses, hit_max_steps=sol.result == diffrax.RESULTS.max_steps_reached,
        succeeded=(sol.result == diffrax.RESULTS.successful) | (sol.result == diffrax.RESULTS.event_occurred),
        steps=sol.stats["num_steps"], accepted=sol.stats["num_accepted_steps"],
        rejected=sol.stats["num_rejected_steps"],
        hessian_vector_products=hessian_vector_products(solver, sol.solver_state),
        underflow=sol.result == diffrax.RESULTS.dt_min_reached, rejected_ascent=rejected_ascent(sol.controller_state),
        saved_rises=rises)


@contextlib.contextmanager
def errors_as_nan():
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


def cacheable(jitted):
    """``jitted`` traced under :func:`errors_as_nan`."""

    def call(*args):
        with errors_as_nan():
            return jitted(*args)

    return call


# From this many parameters, solve_flow integrates its flow as a batch of one (:func:`integrate_one_as_batch`).
# Measured (2-core CPU, warm, one process, solve_flow through each program in 5 alternating rounds, 200 saves, the SSM
# flows 2; median of the per-round wall ratios, batch of one / plain): d = 10 SSM flow 1.44, d = 100 1.27, R2 (2 600
# parameters) 1.15, R1 (1 680) 1.05, a general student d = 50 (2 600) 1.02, d = 100 (10 200) 0.98, R3 (40 400,
# t1 = 3) 0.76. The vmapped program writes its saved rows faster (R3 with 2 saves: 1.03); why, XLA's CPU programs
# did not show.
AS_BATCH_MIN_PARAMETERS = 10_000


def integrate_one_as_batch(problem: FlowProblem, loss, model0, atol, diverge, meter) -> IntegratorOutput:
    """:func:`integrate_one` as a batch of one (vmapped), its outputs without the batch axis: the same method and
    steps, equal to rounding (``AS_BATCH_MIN_PARAMETERS`` says when it is faster)."""
    one = lambda x: jnp.expand_dims(x, 0) if eqx.is_array(x) else x  # noqa: E731
    losses, models0 = jax.tree_util.tree_map(one, (loss, model0))
    out = eqx.filter_vmap(lambda l, m, a, d: integrate_one(problem, l, m, a, d, meter))(
        losses, models0, jnp.expand_dims(atol, 0), jnp.expand_dims(diverge, 0))
    return jax.tree_util.tree_map(lambda x: x[0], out)


_integrate_jit = eqx.filter_jit(integrate_one)
_integrate_as_batch_jit = eqx.filter_jit(integrate_one_as_batch)


def integrate(problem: FlowProblem, loss, model0, atol, diverge, meter, n_params: int = 0) -> IntegratorOutput:
    """:func:`integrate_one` (from ``AS_BATCH_MIN_PARAMETERS`` parameters ``n_params`` on, as a batch of one:
    :func:`integrate_one_as_batch`), compiled (traced under :func:`errors_as_nan`), repeated with every step landing
    on the save times when a dense-output save rose (:func:`with_saves_checked`). Without a progress meter, through a
    program stored on disk (``gflow._compilation_cache.exported_call``), so that a fresh process neither traces nor
    lowers a solve an earlier one ran; a meter's host callbacks cannot be stored."""
    if n_params >= AS_BATCH_MIN_PARAMETERS:
        fn, name, jitted = integrate_one_as_batch, "gflow.flow.integrate_one_as_batch", _integrate_as_batch_jit
    else:
        fn, name, jitted = integrate_one, "gflow.flow.integrate_one", _integrate_jit

    def solve(problem):
        args = (problem, loss, model0, atol, diverge, meter)
        with errors_as_nan():
            if isinstance(meter, diffrax.NoProgressMeter):
                return exported_call(name, fn, args, jitted)
            return jitted(*args)

    return with_saves_checked(solve, problem)


def _integrate_batch_impl(problem: FlowProblem, losses, models0, diverge, atol, meter, mesh) -> IntegratorOutput:
    """Stacked flows of ``problem`` in one program: vmapped, and split over ``mesh``'s devices (each device runs its
    own lock-step loop over its rows, so devices never wait for each other) when a mesh is given. Saves come from
    the dense output, a step covering at most ``BATCH_SAVES_PER_STEP`` save times, as in the refilling loop, so
    that the two paths agree to rounding (unless ``problem.save_on_steps``: every step lands on them); the caller
    solves again the flows whose saves rose (:func:`gflow.flow.with_batch_saves_checked`)."""
    if not problem.save_on_steps:
        problem = dataclasses.replace(problem, saves_per_step=BATCH_SAVES_PER_STEP)

    def local(losses, models0, diverge, atol, times):
        shared = problem.with_times(times)

        def one(loss, model0, diverge, atol):
            return integrate_one(shared, loss, model0, atol, diverge, meter)

        return eqx.filter_vmap(one)(losses, models0, diverge, atol)

    if mesh is None:
        return local(losses, models0, diverge, atol, problem.times())
    batched, static = eqx.partition((losses, models0, diverge, atol), eqx.is_array)
    shared = problem.times()
    rows, every = PartitionSpec(BATCH_AXIS), PartitionSpec()
    return jax.shard_map(lambda b, c: local(*eqx.combine(b, static), c), mesh=mesh,
                         in_specs=(jax.tree_util.tree_map(lambda _: rows, batched), (every,) * len(shared)),
                         out_specs=rows, check_vma=False)(batched, shared)


integrate_batch_jit = eqx.filter_jit(_integrate_batch_impl)
integrate_batch = cacheable(integrate_batch_jit)
