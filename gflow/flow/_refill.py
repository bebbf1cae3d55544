"""Slots that refill: many flows through a compiled program of a fixed number of slots, a finished flow's slot taking
the next pending flow (docs/design.md, "Batching and bucketing").

A lock-step batch (``jax.vmap`` of ``diffrax.diffeqsolve``) runs until its slowest member is done: its cost is the
batch's largest step count times its size. Here the integration loop is written out (it is diffrax's loop, restricted
to what gflow's solves use: an adaptive controller, saves at given times and at the end, a boolean stopping event, no
dense output and no root finding) so that it can be run one step at a time for every slot of a batch, and a slot
whose flow has ended (completed, stopped at the loss threshold, diverged, max_steps or step-size underflow) is loaded
with the next pending flow. The cost is then about the sum of the flows' steps divided by the number of slots.

**What is guaranteed.** A slot's state is one row of vmapped arrays, updated by the same arithmetic whichever slot
it is in and whoever its neighbours are, and a new flow is initialised by the same vmapped arithmetic; so a flow's
result is bit-identical whatever its slot, its neighbours, its position in the batch and the number of devices, for a
given number of slots per device (tests/test_refill.py: a 3-flow subset of a 6-flow batch, other slots and
neighbours; 2 devices against 1). Against the lock-step path (:func:`gflow.solve_flows` without ``slots``) the loop
takes the steps diffrax takes and agrees to rounding (the compiled programs differ, so XLA may fuse differently);
the tests check agreement to 1e-9 and report, not require, bit-identity, with gflow's solvers, an implicit stock
solver, a user's PIDController with ``dtmin``, and models whose Frozen layers differ. Exceptions: the solvers that
couple the members of a batch on purpose, through an ``unvmap`` (``GaussNewtonRosenbrock`` refreshing a lagged,
materialized Jacobian for every member when one needs it, or falling back for every member when one Cholesky
fails; ``RodasGradientFlow`` iterating its Richardson solves until every member has converged): there a flow's
bits, and its Hessian-vector count, depend on its neighbours, finished slots included, in refilling and lock-step
batches alike, and the agreement is to the solver's tolerance (Rodas5P, the "auto" solver below rtol 1e-11: θ within
2e-8 on the test problem). A controller with jump times, and more than two save times within the 100 ulps below t1
that one step covers, are refused with a message.

**Refills in groups.** Initialising flows costs about a step of every slot, so slots are refilled when
``refill_group`` of them are waiting (about 1/16 of the slots) or when no slot is running any more: a waiting slot
idles for a few steps, and the number of refills is about the number of flows divided by the group.

Flows are loaded smallest start first (:func:`loading_order`), which changes no result. The device loop runs
``ITERATIONS_PER_CALL`` steps per call, so the host can print progress (flows done / total,
ETA) between calls; the state stays on the device.
"""

from __future__ import annotations

import dataclasses
import time

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

# Two of diffrax's private names, which its public API does not offer (diffrax 0.7): diffeqsolve wraps the terms in
# WrapTerm (the direction of integration) before any solver sees them, and fills in an implicit solver's root-finder
# tolerances marked use_stepsize_tol from the controller. This loop stands in for diffeqsolve's, so it must do the same
# for the solvers to compute what they compute there. Besides these, the loop keeps a flow's final diffrax.RESULTS
# as its integer code (equinox's ``EnumerationItem._value``) so that it can be stored in an array; the rest is diffrax's
# public solver and controller interface (init, step, adapt_step_size, wrap, interpolation_cls).
from diffrax._root_finder import use_stepsize_tol
from diffrax._term import WrapTerm

from .._checks import GflowInputError
from ..models._flatten import flatten, ROWS_PER_BATCH
from ..stacking import bucket_size, take
from ._descent import rejected_ascent, saved_losses
from ._gradient_flow_solver import hessian_vector_products
from ._options import FlowSetup
from ._problem import BATCH_SAVES_PER_STEP, FlowProblem, IntegratorOutput
from ._step_control import guarded_controller, solver_for_rtol
from ._stopping import stops
from ._term import GradientFlowTerm

ITERATIONS_PER_CALL = 2_000  # loop steps per compiled call: between calls the host reports progress
REFILL_FRACTION = 16  # refill when 1/REFILL_FRACTION of the slots are waiting (or none is running)
# Saves one step can make: a step covers at most BATCH_SAVES_PER_STEP distinct save times (dense-output saves; with
# save_on_steps it lands on each, and saves one), plus t0 on the first step and the last two times when diffrax
# stretches a step ending within 100 ulps of t1 to t1 (integrate_refilling removes repeated times and refuses grids
# that need more)
SAVES_PER_STEP = BATCH_SAVES_PER_STEP + 2


class _Flow(eqx.Module):
    """One flow's integration state, as diffrax's loop state for gflow's solves (its saves go straight to the
    outputs)."""

    tprev: jax.Array
    tnext: jax.Array
    y: jax.Array
    solver_state: object
    controller_state: object
    result: diffrax.RESULTS
    steps: jax.Array
    accepted: jax.Array
    rejected: jax.Array
    ts_index: jax.Array  # next entry of the save grid
    save_index: jax.Array  # next row of the flow's saves


class _Saves(eqx.Module):
    """What one step of a slot saves: up to SAVES_PER_STEP rows (row ``n_rows``, out of range, for none)."""

    rows: jax.Array
    ts: jax.Array
    ys: jax.Array


class _Stepper(eqx.Module):
    """What the loop needs of one flow besides its state: the term, solver and guarded controller built from its
    loss and atol, and its stopping rule. Built inside the trace, per slot."""

    terms: object
    solver: object
    controller: object
    diverge: jax.Array
    watch_loss: bool = eqx.field(static=True)

    def stops(self, y, stop_loss):
        """gflow's stopping event (the one the lock-step solve checks)."""
        return stops(self.terms.term, y, self.diverge[0], self.diverge[1], stop_loss, self.watch_loss)


def _stepper(problem: FlowProblem, loss, atol, diverge, static, unravel) -> _Stepper:
    term = GradientFlowTerm(loss, static, unravel)
    # diffeqsolve wraps the terms and the controller in the direction of integration (+1 here): so do we, so that
    # the solvers and the controller see exactly what they see there
    controller = guarded_controller(problem.controller, problem.rtol, atol, term, problem.resolve_loss, None,
                                    problem).wrap(1)
    solver = _with_stepsize_tolerances(solver_for_rtol(problem.solver, problem.rtol), controller)
    return _Stepper(terms=WrapTerm(term, 1), solver=solver, controller=controller, diverge=diverge,
                    watch_loss=problem.watch_loss)


def _with_stepsize_tolerances(solver, controller):
    """An implicit solver whose root finder takes its tolerances from the step-size controller (``use_stepsize_tol``),
    with them filled in, as ``diffrax.diffeqsolve`` does."""
    if not isinstance(solver, diffrax.AbstractImplicitSolver):
        return solver
    names = [n for n in ("rtol", "atol", "norm") if getattr(solver.root_finder, n) is use_stepsize_tol]
    if not names:
        return solver
    return eqx.tree_at(lambda s: tuple(getattr(s.root_finder, n) for n in names), solver,
                       tuple(getattr(controller, n) for n in names))


def _start(problem: _Stepper, theta0, t0, t1, stop_loss) -> _Flow:
    """diffeqsolve's initial state (dt0 None: the controller picks the first step)."""
    error_order = problem.solver.error_order(problem.terms)
    tnext, controller_state = problem.controller.init(problem.terms, t0, t1, theta0, None, None, problem.solver.func,
                                                      error_order)
    tnext = jnp.minimum(tnext, t1)
    solver_state = problem.solver.init(problem.terms, t0, tnext, theta0, None)
    result = diffrax.RESULTS.where(problem.stops(theta0, stop_loss), diffrax.RESULTS.event_occurred,
                                   diffrax.RESULTS.successful)
    zero = jnp.array(0)
    # a Python scalar in a state (a PIDController's "at dtmin" flag starts as False and is traced once dtmin is set)
    # becomes an array, so that each slot carries and updates its own
    solver_state, controller_state = jax.tree_util.tree_map(
        lambda x: jnp.asarray(x) if isinstance(x, (bool, int, float)) else x, (solver_state, controller_state))
    return _Flow(tprev=t0, tnext=tnext, y=theta0, solver_state=solver_state, controller_state=controller_state,
                 result=result, steps=zero, accepted=zero, rejected=zero, ts_index=zero, save_index=zero)


def _running(flow: _Flow, t1, max_steps: int):
    """Whether diffrax's loop would go on with ``flow`` (elementwise, so also for a stacked state)."""
    return (flow.tprev < t1) & (flow.result == diffrax.RESULTS.successful) & (flow.steps < max_steps)


def _advance(problem: _Stepper, flow: _Flow, t1, t1_clip_floor, save_ts, stop_loss, go) -> tuple[_Flow, _Saves]:
    """One iteration of the loop body of ``diffrax.diffeqsolve`` for gflow's solves: the new
    state and what the step saved. ``go`` False: the caller discards the step, and it saves nothing."""
    solver, terms = problem.solver, problem.terms
    # made_jump is always False: gflow's controllers make no jumps (a PIDController returns a constant False, which
    # diffrax's loop also keeps static), so the solvers' "after a jump" branches are not compiled
    y, y_error, dense_info, solver_state, solver_result = solver.step(
        terms, flow.tprev, flow.tnext, flow.y, None, flow.solver_state, False)
    y_error = jnp.where(jnp.isnan(y_error), jnp.inf, y_error)
    keep_step, tprev, tnext, made_jump, controller_state, controller_result = problem.controller.adapt_step_size(
        flow.tprev, flow.tnext, flow.y, y, None, y_error, solver.error_order(terms), flow.controller_state)
    if made_jump is not False:
        raise GflowInputError("refilling slots (solve_flows(..., slots=...)) need a step-size controller without jump "
                              "times; integrate this batch with slots=None")
    tprev = jnp.minimum(tprev, t1)
    clip = tnext > t1_clip_floor
    tnext = jnp.where(clip, jnp.where(keep_step, t1, tprev + 0.5 * (t1 - tprev)), tnext)

    def keep(a, b):
        return jnp.where(keep_step, a, b)

    y = keep(y, flow.y)
    solver_state = jax.tree_util.tree_map(keep, solver_state, flow.solver_state)
    solver_result = diffrax.RESULTS.where(keep_step, solver_result, diffrax.RESULTS.successful)
    result = diffrax.RESULTS.where(flow.result == diffrax.RESULTS.successful, solver_result, flow.result)
    result = diffrax.RESULTS.where(result == diffrax.RESULTS.successful, controller_result, result)

    interpolator = solver.interpolation_cls(t0=flow.tprev, t1=flow.tnext, **dense_info)
    # the save times this step reached (diffrax saves every ts ≤ the step's end, by interpolation), at most
    # SAVES_PER_STEP of them (their order is sorted, so they are the first ones)
    index = flow.ts_index + jnp.arange(SAVES_PER_STEP)
    t_save = save_ts[jnp.minimum(index, len(save_ts) - 1)]
    due = go & keep_step & (index < len(save_ts)) & (t_save <= flow.tnext)
    saves = _Saves(rows=jnp.where(due, flow.save_index + jnp.arange(SAVES_PER_STEP), len(save_ts) + 1), ts=t_save,
                   ys=jnp.stack([interpolator.evaluate(t_save[i]) for i in range(SAVES_PER_STEP)]))
    count = jnp.sum(due)
    result = diffrax.RESULTS.where(problem.stops(y, stop_loss), diffrax.RESULTS.event_occurred, result)
    return _Flow(tprev=tprev, tnext=tnext, y=y, solver_state=solver_state, controller_state=controller_state,
                 result=result, steps=flow.steps + 1,
                 accepted=flow.accepted + jnp.where(keep_step, 1, 0), rejected=flow.rejected + jnp.where(keep_step, 0, 1),
                 ts_index=flow.ts_index + count, save_index=flow.save_index + count), saves


class _Final(eqx.Module):
    """A flow's statistics once its loop has ended (its saves and final row are in the loop's buffers)."""

    result: jax.Array  # a diffrax.RESULTS code
    steps: jax.Array
    accepted: jax.Array
    rejected: jax.Array
    hessian_vector_products: jax.Array
    rejected_ascent: jax.Array


def _final(solver, flow: _Flow, t1) -> _Final:
    """diffeqsolve's end of the loop: max_steps_reached for a flow still running."""
    still_running = (flow.tprev < t1) & (flow.result == diffrax.RESULTS.successful)
    result = diffrax.RESULTS.where(still_running, diffrax.RESULTS.max_steps_reached, flow.result)
    return _Final(result=result._value, steps=flow.steps, accepted=flow.accepted, rejected=flow.rejected,
                  hessian_vector_products=hessian_vector_products(solver, flow.solver_state),
                  rejected_ascent=rejected_ascent(flow.controller_state))


class _Slots(eqx.Module):
    """The slots of one device's program: which flow each holds (its local index; -1 for none), that flow's loss,
    atol and diverge thresholds (copied in at a refill, so a step gathers nothing), its state, and whether it is
    waiting (its loop has ended and its outputs are not yet written)."""

    flow: jax.Array
    loss: object
    static: object
    atol: jax.Array
    diverge: jax.Array
    state: _Flow
    waiting: jax.Array


class _Loop(eqx.Module):
    """One device's loop state: the slots; every flow's saved times and parameters (rows by local flow index, the
    row after a flow's last save holding its final state, the rest inf, as diffeqsolve lays them out) and
    statistics; the next pending flow; the iterations so far."""

    slots: _Slots
    ts: jax.Array  # (flows, saves + 1)
    ys: jax.Array  # (flows, saves + 1, n)
    final: _Final
    next_flow: jax.Array
    iterations: jax.Array


# Row operations on the slots' state. Every array of a slot has a leading slot axis (the states' Python scalars are
# made arrays by _start); a 0-d array, should one appear, is a constant of the state's structure and left alone.
def _batched(x) -> bool:
    return eqx.is_array(x) and x.ndim > 0


def _take_rows(tree, rows):
    return jax.tree_util.tree_map(lambda x: x[rows] if _batched(x) else x, tree)


def _slot_axis(x):
    """``in_axes`` of a slot's state for ``eqx.filter_vmap``."""
    return 0 if _batched(x) else None


def _where_rows(mask, a, b):
    """Rows of ``a`` where ``mask``, else of ``b`` (whose constants are kept)."""
    def pick(x, y):
        return jnp.where(mask.reshape(mask.shape + (1,) * (x.ndim - 1)), x, y) if _batched(y) else y

    return jax.tree_util.tree_map(pick, a, b)


def _set_rows(tree, rows, values):
    """``tree`` with rows ``rows`` replaced by ``values`` (an out-of-range row is dropped)."""
    return jax.tree_util.tree_map(lambda x, v: x.at[rows].set(v, mode="drop") if _batched(x) else x, tree, values)


class _Spec(eqx.Module):
    """What is fixed for a refill program: the solve's problem (its save grid the distinct save times), the model's
    structure, and the sizes."""

    problem: FlowProblem
    unravel: object = eqx.field(static=True)
    n_slots: int = eqx.field(static=True, default=1)
    refill_group: int = eqx.field(static=True, default=1)
    n_saves: int = eqx.field(static=True, default=0)


class _Flows(eqx.Module):
    """The flows of one device's program (leading flow axis): their losses, the static parts of their models (what
    θ does not hold: Frozen layers, integer arrays), θ0, atols and diverge thresholds."""

    losses: object
    statics: object
    thetas: jax.Array
    atols: jax.Array
    diverges: jax.Array
    count: jax.Array  # how many rows are real flows (the rest pad the program to a bucketed size and never run)


def _stepper_of(spec: _Spec, loss, static, atol, diverge) -> _Stepper:
    return _stepper(spec.problem, loss, atol, diverge, static, spec.unravel)


def _ended(spec: _Spec, state: _Flow):
    return ~_running(state, spec.problem.t1, spec.problem.max_steps)  # elementwise: works on a stacked state


def _load(spec: _Spec, flows: _Flows, rows) -> _Slots:
    """Slots holding flows ``rows`` (clipped into range), at their initial states."""
    t0, t1, stop_loss = spec.problem.t0, spec.problem.t1, spec.problem.stop_loss
    rows = jnp.clip(rows, 0, flows.thetas.shape[0] - 1)
    loss, static = take(flows.losses, rows), take(flows.statics, rows)
    atol, diverge = flows.atols[rows], flows.diverges[rows]

    def one(loss, static, theta0, atol, diverge):
        return _start(_stepper_of(spec, loss, static, atol, diverge), theta0, t0, t1, stop_loss)

    state = eqx.filter_vmap(one)(loss, static, flows.thetas[rows], atol, diverge)
    return _Slots(flow=rows, loss=loss, static=static, atol=atol, diverge=diverge, state=state,
                  waiting=_ended(spec, state))


def _initial_loop(spec: _Spec, flows: _Flows) -> _Loop:
    n, first = flows.thetas.shape[0], jnp.arange(spec.n_slots)
    holds = first < flows.count
    slots = _load(spec, flows, first)
    slots = eqx.tree_at(lambda s: (s.flow, s.waiting), slots, (jnp.where(holds, first, -1), holds & slots.waiting))
    one = jax.eval_shape(lambda: _final(spec.problem.solver, _take_rows(slots.state, 0), spec.problem.t1))
    final = jax.tree_util.tree_map(lambda x: jnp.zeros((n,) + x.shape, x.dtype), one)
    rows = spec.n_saves + 1
    return _Loop(slots=slots, ts=jnp.full((n, rows), jnp.inf), ys=jnp.full((n, rows, flows.thetas.shape[1]), jnp.inf),
                 final=final, next_flow=jnp.minimum(jnp.asarray(spec.n_slots), flows.count), iterations=jnp.array(0))


def _refill(spec: _Spec, flows: _Flows, loop: _Loop) -> _Loop:
    """When due: write the final state and statistics of up to ``refill_group`` waiting slots, and load the next
    pending flows into them. Every write is a scatter whose rows are out of range when nothing is due, and only the
    loading of new flows (small) is conditional: a ``lax.cond`` over the loop's buffers would copy them every step
    (it cost 0.8 ms a step, more than a step, with 150 saves of 1 680 parameters for 6 flows)."""
    slots, n, none = loop.slots, flows.thetas.shape[0], spec.n_slots
    running = (slots.flow >= 0) & ~slots.waiting
    due = (jnp.sum(slots.waiting) >= spec.refill_group) | (~jnp.any(running) & jnp.any(slots.waiting))
    picked = jnp.nonzero(slots.waiting, size=spec.refill_group, fill_value=none)[0]  # in slot order
    valid = due & (picked < none)
    at = jnp.clip(picked, 0, none - 1)
    done = _take_rows(slots.state, at)
    target = jnp.where(valid, slots.flow[at], n)
    ts = loop.ts.at[target, done.save_index].set(done.tprev, mode="drop")
    ys = loop.ys.at[target, done.save_index].set(done.y, mode="drop")
    final = _set_rows(loop.final, target, eqx.filter_vmap(lambda f: _final(spec.problem.solver, f, spec.problem.t1),
                                                          in_axes=_slot_axis)(done))
    new = loop.next_flow + jnp.cumsum(valid) - 1
    loads = valid & (new < flows.count)
    shape = eqx.filter_eval_shape(_load, spec, flows, new)
    loaded = jax.lax.cond(jnp.any(loads), lambda: _load(spec, flows, new),
                          lambda: jax.tree_util.tree_map(
                              lambda x: jnp.zeros(x.shape, x.dtype) if isinstance(x, jax.ShapeDtypeStruct) else x, shape))
    slots = _set_rows(slots, jnp.where(loads, picked, none), eqx.tree_at(lambda s: s.flow, loaded, new))
    emptied = jnp.where(valid & ~loads, picked, none)
    slots = eqx.tree_at(lambda s: (s.flow, s.waiting), slots, (slots.flow.at[emptied].set(-1, mode="drop"),
                                                                slots.waiting.at[emptied].set(False, mode="drop")))
    return _Loop(slots=slots, ts=ts, ys=ys, final=final, next_flow=loop.next_flow + jnp.sum(loads),
                 iterations=loop.iterations)


def _run(spec: _Spec, flows: _Flows, loop: _Loop, iterations) -> _Loop:
    """Up to ``iterations`` more iterations of one device's loop: refill when due, then one step of every running
    slot, its saves written straight into the flow's rows."""
    t1, ts, stop_loss = spec.problem.t1, spec.problem.ts, spec.problem.stop_loss
    t1_clip_floor = t1
    for _ in range(100):  # diffrax: a step ending within 100 ulps of t1 is stretched to t1
        t1_clip_floor = jnp.nextafter(t1_clip_floor, -jnp.inf)
    limit = loop.iterations + iterations
    n = flows.thetas.shape[0]

    def more(loop):
        return jnp.any(loop.slots.flow >= 0) & (loop.iterations < limit)

    def one(loss, static, atol, diverge, state, go):
        return _advance(_stepper_of(spec, loss, static, atol, diverge), state, t1, t1_clip_floor, ts,
                        stop_loss, go)

    def body(loop):
        loop = _refill(spec, flows, loop)
        slots = loop.slots
        # every slot steps, the ones not running discarding theirs (a lax.cond to skip the step when nothing runs
        # would copy the state)
        go = (slots.flow >= 0) & ~slots.waiting
        stepped, saves = eqx.filter_vmap(one, in_axes=_slot_axis)(slots.loss, slots.static, slots.atol, slots.diverge,
                                                                  slots.state, go)
        owner = jnp.broadcast_to(jnp.where(go, slots.flow, n)[:, None], saves.rows.shape)
        state = _where_rows(go, stepped, slots.state)
        slots = eqx.tree_at(lambda s: (s.state, s.waiting), slots, (state, slots.waiting | (go & _ended(spec, state))))
        return _Loop(slots=slots, ts=loop.ts.at[owner, saves.rows].set(saves.ts, mode="drop"),
                     ys=loop.ys.at[owner, saves.rows].set(saves.ys, mode="drop"), final=loop.final,
                     next_flow=loop.next_flow, iterations=loop.iterations + 1)

    return jax.lax.while_loop(more, body, loop)


@eqx.filter_jit
def _initial(fixed):
    spec, flows = fixed
    return _initial_loop(spec, flows)


@eqx.filter_jit(donate="all-except-first")
def _continue(fixed, loop, iterations):
    spec, flows = fixed
    return _run(spec, flows, loop, iterations)


def _outputs(spec: _Spec, flows: _Flows, loop: _Loop, t0) -> IntegratorOutput:
    """The integrator's outputs of ``flows`` (as the lock-step solve returns them): the row at t0 is θ0 itself, and
    L at every saved row."""

    def one(loss, static, theta0, ts, ys, fin):
        term = GradientFlowTerm(loss, static, spec.unravel)
        ys = jnp.where((ts == t0)[:, None], theta0[None, :], ys)
        # only dense-output saves are descent-checked: saves on steps are step ends the guard accepted
        values, rises = saved_losses(term, ys, theta0, ROWS_PER_BATCH, check_descent=not spec.problem.save_on_steps)
        return IntegratorOutput(
            ts=ts, ys=ys, losses=values, hit_max_steps=fin.result == diffrax.RESULTS.max_steps_reached._value,
            succeeded=(fin.result == diffrax.RESULTS.successful._value) | (
                fin.result == diffrax.RESULTS.event_occurred._value),
            steps=fin.steps, accepted=fin.accepted, rejected=fin.rejected,
            hessian_vector_products=fin.hessian_vector_products,
            underflow=fin.result == diffrax.RESULTS.dt_min_reached._value, rejected_ascent=fin.rejected_ascent,
            saved_rises=rises)

    return eqx.filter_vmap(one)(flows.losses, flows.statics, flows.thetas, loop.ts, loop.ys, loop.final)


_outputs_jit = eqx.filter_jit(_outputs)


def refill_group(n_slots: int) -> int:
    """How many waiting slots are refilled at once: about 1/REFILL_FRACTION of the slots (at least 1)."""
    return max(1, n_slots // REFILL_FRACTION)


def loading_order(thetas: np.ndarray) -> np.ndarray:
    """The order in which flows are loaded into the slots: smallest RMS of θ0 first (stable, so equal starts keep
    their order). A flow from a small initialization spends the most steps escaping the saddle at 0 (its step count
    grows like log(1/scale)), and a slow flow loaded last runs on while the other slots idle, so the slow ones go
    first. A heuristic for the sweeps gflow is used for (init scales × seeds × lengths); it changes no result (a
    flow's bits do not depend on when it is loaded, but for the solvers that couple a batch's members: module
    docstring), only how well the slots stay busy at the end."""
    return np.argsort(np.sqrt(np.mean(np.asarray(thetas) ** 2, axis=1)), kind="stable")


def integrate_refilling(problem: FlowProblem, losses, models0, thetas, atols, diverge, setup: FlowSetup,
                        slots_per_device: int, devices, progress=None) -> IntegratorOutput:
    """Integrate the flows of a stacked batch through refilling slots, saves from the dense output with a step
    covering at most ``BATCH_SAVES_PER_STEP`` save times, as the lock-step batch takes them (with
    ``problem.save_on_steps``, every step landing on them); the caller solves again the flows whose saves rose
    (:func:`gflow.flow.with_batch_saves_checked`).

    The flows go in :func:`loading_order`, dealt round-robin to the devices (each device's rows padded to a bucketed
    size; padding rows never run).

    Args:
        problem: What the flows share.
        losses: The stacked losses.
        models0: The stacked starts.
        thetas: θ0 of every flow, (B, n).
        atols: Every flow's atol, (B,).
        diverge: Every flow's divergence limits, (B, 2).
        setup: The solve's checked options (its save times and time span).
        slots_per_device: The slots of each device's program.
        devices: The devices.
        progress: ``progress(done, total, elapsed)``, called between compiled calls.

    Returns:
        The integrator's outputs as numpy arrays with a leading flow axis, in the batch's order (``time_restarts``
        unset).
    """
    if not problem.save_on_steps:
        problem = dataclasses.replace(problem, saves_per_step=BATCH_SAVES_PER_STEP)
    _, _, unravel = flatten(take(models0, 0))
    statics = eqx.partition(models0, eqx.is_inexact_array)[1]  # each flow's own (the arrays θ does not hold)
    save_ts, repeats = distinct_save_times(setup.ts, setup.t0, setup.t1)
    problem = eqx.tree_at(lambda p: p.ts, problem, jnp.asarray(save_ts))
    spec = _Spec(problem=problem, unravel=unravel, n_slots=slots_per_device,
                 refill_group=refill_group(slots_per_device), n_saves=len(save_ts))
    n, order = int(thetas.shape[0]), loading_order(thetas)
    dealt = [order[d::len(devices)] for d in range(len(devices))]
    per = bucket_size(len(dealt[0]))  # rows per device: nearby batch sizes share a program
    programs = []
    for mine, device in zip(dealt, devices):
        rows = np.concatenate([mine, np.zeros(per - len(mine), dtype=np.int64)])
        flows = jax.device_put(_Flows(losses=take(losses, rows), statics=take(statics, rows),
                                      thetas=jnp.asarray(thetas[rows]),
                                      atols=jnp.asarray(atols[rows], dtype=jnp.float64),
                                      diverges=jnp.asarray(diverge[rows], dtype=jnp.float64),
                                      count=jnp.asarray(len(mine))), device)
        fixed = (eqx.tree_at(lambda s: s.problem.times(), spec, jax.device_put(problem.times(), device)), flows)
        programs.append([fixed, _initial(fixed)])
    started = time.perf_counter()
    while True:
        for program in programs:  # dispatched asynchronously: the devices run side by side
            program[1] = _continue(program[0], program[1], jnp.asarray(ITERATIONS_PER_CALL))
        remaining = sum(int(jnp.sum(p[1].slots.flow >= 0)) for p in programs)
        if remaining == 0:
            break
        if progress is not None:
            progress(sum(int(p[1].next_flow) for p in programs) - remaining, n, time.perf_counter() - started)
    result = None
    for mine, ((spec_, flows), loop) in zip(dealt, programs):
        out = [np.asarray(x)[:len(mine)] for x in _outputs_jit(spec_, flows, loop, spec_.problem.t0)[:-1]]
        if result is None:
            result = [np.empty((n,) + x.shape[1:], x.dtype) for x in out]
        for whole, part in zip(result, out):
            whole[mine] = part
    return _with_repeated_saves(IntegratorOutput(*result), repeats)


def distinct_save_times(ts: np.ndarray, t0: float, t1: float) -> tuple[np.ndarray, np.ndarray]:
    """The distinct save times of ``ts`` (sorted) and, for each time of ``ts``, its index among them. A step saves at
    most SAVES_PER_STEP distinct times, BATCH_SAVES_PER_STEP of them inside it; a grid that would need more in one
    step (more than two times within the 100 ulps below t1 that diffrax stretches a step over) is refused."""
    distinct, repeats = np.unique(np.asarray(ts, dtype=np.float64), return_inverse=True)
    floor = float(t1)
    for _ in range(100):
        floor = float(np.nextafter(floor, -np.inf))
    stretched = int(np.sum(distinct > floor)) + int(floor <= t0)
    if stretched > SAVES_PER_STEP - BATCH_SAVES_PER_STEP:
        raise GflowInputError(f"refilling slots save at most {SAVES_PER_STEP - BATCH_SAVES_PER_STEP} distinct times "
                              f"within 100 ulps of t1 = {t1}, which one step covers, and {stretched} save times lie "
                              "there: space them out, or use slots=None")
    return distinct, repeats.reshape(-1)


def _with_repeated_saves(out: IntegratorOutput, repeats: np.ndarray) -> IntegratorOutput:
    """Outputs on the caller's save grid from outputs on its distinct times (:func:`distinct_save_times`): diffrax
    saves a repeated time once per repeat, and the final state in the row after the last save."""
    if len(repeats) == out.ts.shape[1] - 1:
        return out
    saved = np.sum(np.isfinite(out.ts), axis=1) - 1  # distinct saves made (the row after them: the final state)
    rows = np.full((out.ts.shape[0], len(repeats) + 1), -1)
    for i, made in enumerate(saved):
        kept = np.flatnonzero(repeats < made)  # a sorted grid: the first ones
        rows[i, :kept.size] = repeats[kept]
        rows[i, kept.size] = made  # the final state
    pick = np.maximum(rows, 0)

    def laid_out(x, fill):
        x = np.take_along_axis(x, pick.reshape(pick.shape + (1,) * (x.ndim - 2)), axis=1)
        return np.where((rows >= 0).reshape(rows.shape + (1,) * (x.ndim - 2)), x, fill)

    return out._replace(ts=laid_out(out.ts, np.inf), ys=laid_out(out.ys, np.inf), losses=laid_out(out.losses, np.nan))


PRINT_EVERY_SECONDS = 2.0


def progress_printer(quiet_seconds: float):
    """A host progress line for refilling slots, at most every PRINT_EVERY_SECONDS once ``quiet_seconds`` have
    passed: flows done / total and the ETA from the flows done so far."""
    last = [-float("inf")]

    def report(done: int, total: int, elapsed: float) -> None:
        if elapsed < quiet_seconds or elapsed - last[0] < PRINT_EVERY_SECONDS:
            return
        last[0] = elapsed
        rate = done / elapsed if elapsed > 0 else 0.0
        eta = f"{(total - done) / rate:.0f}s" if rate > 0 else "?"
        print(f"  [flows +{elapsed:6.1f}s] flows {done}/{total} done (refilling slots), ETA {eta}", flush=True)

    return report
