"""Slots that refill: many flows through a compiled program of a fixed number of slots, a finished flow's slot taking
the next pending flow (issue 26, part 3; docs/design.md, "Batching and bucketing").

A lock-step batch (``jax.vmap`` of ``diffrax.diffeqsolve``) runs until its slowest member is done: its cost is the
batch's largest step count times its size. Here the integration loop is written out (it is diffrax's loop, restricted
to what gflow's solves use: an adaptive controller, saves at given times and at the end, a boolean stopping event, no
dense output and no root finding) so that it can be run one step at a time for every slot of a batch, and a slot
whose flow has ended (completed, stopped at the loss threshold, diverged, max_steps or step-size underflow) is loaded
with the next pending flow. The cost is then about the sum of the flows' steps divided by the number of slots.

**What is guaranteed.** A slot's state is one row of vmapped arrays, updated by the same arithmetic whichever slot
it is in and whoever its neighbours are, and a new flow is initialised by the same vmapped arithmetic; so a flow's
result is bit-identical whatever its slot, its neighbours and the order of the flows, for a given number of slots
per device (tests/test_refill.py: a permuted batch, and each flow alone in a program of the same size). Against the
lock-step path (:func:`gflow.solve_flows` without ``slots``) the loop takes the same steps in the same order and
agrees to rounding (the compiled programs differ, so XLA may fuse differently); the tests check agreement to 1e-9
relative and report, not require, bit-identity. Exceptions, as for lock-step batches: a solver that couples the
members of a batch on purpose (``GaussNewtonRosenbrock`` refreshing a lagged, materialized Jacobian for every member
when one needs it) and a different number of local devices.

**Refills in groups.** Initialising flows costs about a step of every slot, so slots are refilled when
``refill_group`` of them are waiting (about 1/16 of the slots) or when no slot is running any more: a waiting slot
idles for a few steps, and the number of refills is about the number of flows divided by the group.

Flows are loaded smallest start first (:func:`loading_order`), which changes no result. The device loop runs
``ITERATIONS_PER_CALL`` steps per call, so the host can print progress (flows done / total,
ETA) between calls; the state stays on the device.
"""

from __future__ import annotations

import time

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from diffrax._term import WrapTerm  # diffeqsolve wraps terms in it: the solvers see them as there

from ..models._flatten import flatten, ROWS_PER_BATCH
from ..stacking import bucket_size, take
from ._descent import rejected_ascent
from ._gradient_flow_solver import hessian_vector_products
from ._outcome import IntegratorOutput
from ._step_control import guarded_controller, solver_for_rtol
from ._term import GradientFlowTerm

ITERATIONS_PER_CALL = 2_000  # loop steps per compiled call: between calls the host reports progress
REFILL_FRACTION = 16  # refill when 1/REFILL_FRACTION of the slots are waiting (or none is running)


class _Flow(eqx.Module):
    """One flow's integration state, as diffrax's loop state for gflow's solves, with its save buffers."""

    tprev: jax.Array
    tnext: jax.Array
    y: jax.Array
    solver_state: object
    controller_state: object
    made_jump: jax.Array
    result: diffrax.RESULTS
    steps: jax.Array
    accepted: jax.Array
    rejected: jax.Array
    ts_index: jax.Array  # next entry of the save grid
    save_index: jax.Array  # next row of the buffers
    ts: jax.Array  # (S + 1,) saved times (inf: not reached), the last row for the final state
    ys: jax.Array  # (S + 1, n)


class _Problem(eqx.Module):
    """What the loop needs of one flow besides its state: the term, solver and guarded controller built from its
    loss and atol, and its stopping rule. Built inside the trace, per slot."""

    terms: object
    solver: object
    controller: object
    diverge: jax.Array
    watch_loss: bool = eqx.field(static=True)

    def stops(self, y, stop_loss):
        """gflow's stopping event (as gflow/flow/_solve.py: ``stop_or_diverge``)."""
        stop = jnp.logical_not(jnp.all(jnp.isfinite(y))) | (jnp.max(jnp.abs(y)) > self.diverge[1])
        if self.watch_loss:
            value = self.terms.term.loss_value(y)
            stop = stop | (value <= stop_loss) | jnp.logical_not(jnp.isfinite(value)) | (jnp.abs(value) > self.diverge[0])
        return stop


def _problem(loss, atol, diverge, static, unravel, solver, controller, rtol, ts, watch_loss, resolve_loss):
    term = GradientFlowTerm(loss, static, unravel)
    # diffeqsolve wraps the terms and the controller in the direction of integration (+1 here): so do we, so that
    # the solvers and the controller see exactly what they see there
    return _Problem(terms=WrapTerm(term, 1), solver=solver_for_rtol(solver, rtol),
                    controller=guarded_controller(controller, rtol, atol, term, resolve_loss, None, ts).wrap(1),
                    diverge=diverge, watch_loss=watch_loss)


def _start(problem: _Problem, theta0, t0, t1, n_saves: int, stop_loss) -> _Flow:
    """diffeqsolve's initial state (dt0 None: the controller picks the first step)."""
    error_order = problem.solver.error_order(problem.terms)
    tnext, controller_state = problem.controller.init(problem.terms, t0, t1, theta0, None, None, problem.solver.func,
                                                      error_order)
    tnext = jnp.minimum(tnext, t1)
    solver_state = problem.solver.init(problem.terms, t0, tnext, theta0, None)
    result = diffrax.RESULTS.where(problem.stops(theta0, stop_loss), diffrax.RESULTS.event_occurred,
                                   diffrax.RESULTS.successful)
    zero = jnp.array(0)
    return _Flow(tprev=t0, tnext=tnext, y=theta0, solver_state=solver_state, controller_state=controller_state,
                 made_jump=jnp.array(False), result=result, steps=zero, accepted=zero, rejected=zero, ts_index=zero,
                 save_index=zero, ts=jnp.full(n_saves + 1, jnp.inf, dtype=theta0.dtype),
                 ys=jnp.full((n_saves + 1,) + theta0.shape, jnp.inf, dtype=theta0.dtype))


def _running(flow: _Flow, t1, max_steps: int):
    """Whether diffrax's loop would go on with ``flow`` (elementwise, so also for a stacked state)."""
    return (flow.tprev < t1) & (flow.result == diffrax.RESULTS.successful) & (flow.steps < max_steps)


def _advance(problem: _Problem, flow: _Flow, t1, t1_clip_floor, save_ts, stop_loss) -> _Flow:
    """One iteration of diffrax's loop body (diffrax/_integrate.py ``loop.body_fun``) for gflow's solves."""
    solver, terms = problem.solver, problem.terms
    y, y_error, dense_info, solver_state, solver_result = solver.step(
        terms, flow.tprev, flow.tnext, flow.y, None, flow.solver_state, flow.made_jump)
    y_error = jnp.where(jnp.isnan(y_error), jnp.inf, y_error)
    keep_step, tprev, tnext, made_jump, controller_state, controller_result = problem.controller.adapt_step_size(
        flow.tprev, flow.tnext, flow.y, y, None, y_error, solver.error_order(terms), flow.controller_state)
    tprev = jnp.minimum(tprev, t1)
    clip = tnext > t1_clip_floor
    tnext = jnp.where(clip, jnp.where(keep_step, t1, tprev + 0.5 * (t1 - tprev)), tnext)

    def keep(a, b):
        return jnp.where(keep_step, a, b)

    y = keep(y, flow.y)
    solver_state = jax.tree_util.tree_map(keep, solver_state, flow.solver_state)
    made_jump = keep(made_jump, flow.made_jump)
    solver_result = diffrax.RESULTS.where(keep_step, solver_result, diffrax.RESULTS.successful)
    result = diffrax.RESULTS.where(flow.result == diffrax.RESULTS.successful, solver_result, flow.result)
    result = diffrax.RESULTS.where(result == diffrax.RESULTS.successful, controller_result, result)

    interpolator = solver.interpolation_cls(t0=flow.tprev, t1=flow.tnext, **dense_info)

    def save_more(s):
        index, _, _, _ = s
        return keep_step & (save_ts[index] <= flow.tnext) & (index < len(save_ts))

    def save_one(s):
        index, row, ts, ys = s
        t = save_ts[index]
        return index + 1, row + 1, ts.at[row].set(t), ys.at[row].set(interpolator.evaluate(t))

    ts_index, save_index, ts, ys = jax.lax.while_loop(save_more, save_one,
                                                      (flow.ts_index, flow.save_index, flow.ts, flow.ys))
    result = diffrax.RESULTS.where(problem.stops(y, stop_loss), diffrax.RESULTS.event_occurred, result)
    return _Flow(tprev=tprev, tnext=tnext, y=y, solver_state=solver_state, controller_state=controller_state,
                 made_jump=made_jump, result=result, steps=flow.steps + 1,
                 accepted=flow.accepted + jnp.where(keep_step, 1, 0), rejected=flow.rejected + jnp.where(keep_step, 0, 1),
                 ts_index=ts_index, save_index=save_index, ts=ts, ys=ys)


class _Finished(eqx.Module):
    """A flow's outputs once its loop has ended (the integrator's outputs but the losses, computed after the loop)."""

    ts: jax.Array
    ys: jax.Array
    result: diffrax.RESULTS
    steps: jax.Array
    accepted: jax.Array
    rejected: jax.Array
    hessian_vector_products: jax.Array
    rejected_ascent: jax.Array


def _finish(problem: _Problem, flow: _Flow, t1, max_steps: int) -> _Finished:
    """diffeqsolve's end of the loop: the final state saved in the next row (SaveAt t1), max_steps_reached for a flow
    still running."""
    still_running = (flow.tprev < t1) & (flow.result == diffrax.RESULTS.successful)
    result = diffrax.RESULTS.where(still_running, diffrax.RESULTS.max_steps_reached, flow.result)
    return _Finished(ts=flow.ts.at[flow.save_index].set(flow.tprev), ys=flow.ys.at[flow.save_index].set(flow.y),
                     result=result, steps=flow.steps, accepted=flow.accepted, rejected=flow.rejected,
                     hessian_vector_products=hessian_vector_products(problem.solver, flow.solver_state),
                     rejected_ascent=rejected_ascent(flow.controller_state))


class _Slots(eqx.Module):
    """The slots of one device's program: which flow each holds (its local index; -1 for none), that flow's loss,
    atol and diverge thresholds (copied in at a refill, so a step gathers nothing), its state, and whether it is
    waiting (its loop has ended and its outputs are not yet written)."""

    flow: jax.Array
    loss: object
    atol: jax.Array
    diverge: jax.Array
    state: _Flow
    waiting: jax.Array


class _Loop(eqx.Module):
    """One device's loop state: the slots, the outputs of every flow (rows by local flow index), the next pending
    flow and the iterations so far."""

    slots: _Slots
    out: _Finished
    next_flow: jax.Array
    iterations: jax.Array


# Row operations on the slots' state. Every array of a slot has a leading slot axis, except constants of a state's
# structure (a PIDController's "no dtmin" flag, False, becomes a 0-d array in the loop's carry): those are left alone.
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
    """What is fixed for a refill program: the model's structure, the solver and controller, and the sizes."""

    static: object
    unravel: object = eqx.field(static=True)
    solver: object = None
    controller: object = None
    n_slots: int = eqx.field(static=True, default=1)
    refill_group: int = eqx.field(static=True, default=1)
    n_saves: int = eqx.field(static=True, default=0)
    max_steps: int = eqx.field(static=True, default=1)
    watch_loss: bool = eqx.field(static=True, default=False)
    resolve_loss: bool = eqx.field(static=True, default=True)


class _Flows(eqx.Module):
    """The flows of one device's program (leading flow axis): their losses, θ0, atols and diverge thresholds."""

    losses: object
    thetas: jax.Array
    atols: jax.Array
    diverges: jax.Array
    count: jax.Array  # how many rows are real flows (the rest pad the program to a bucketed size and never run)


def _problem_of(spec: _Spec, shared, loss, atol, diverge) -> _Problem:
    _, _, ts, rtol, _ = shared
    return _problem(loss, atol, diverge, spec.static, spec.unravel, spec.solver, spec.controller, rtol, ts,
                    spec.watch_loss, spec.resolve_loss)


def _ended(spec: _Spec, shared, state: _Flow):
    return ~_running(state, shared[1], spec.max_steps)  # elementwise: works on a stacked state


def _load(spec: _Spec, shared, flows: _Flows, rows) -> _Slots:
    """Slots holding flows ``rows`` (clipped into range), at their initial states."""
    t0, t1, _, _, stop_loss = shared
    rows = jnp.clip(rows, 0, flows.thetas.shape[0] - 1)
    loss, atol, diverge = take(flows.losses, rows), flows.atols[rows], flows.diverges[rows]

    def one(loss, theta0, atol, diverge):
        return _start(_problem_of(spec, shared, loss, atol, diverge), theta0, t0, t1, spec.n_saves, stop_loss)

    state = eqx.filter_vmap(one)(loss, flows.thetas[rows], atol, diverge)
    return _Slots(flow=rows, loss=loss, atol=atol, diverge=diverge, state=state, waiting=_ended(spec, shared, state))


def _finished(spec: _Spec, shared, slots: _Slots) -> _Finished:
    def one(loss, atol, diverge, state):
        return _finish(_problem_of(spec, shared, loss, atol, diverge), state, shared[1], spec.max_steps)

    return eqx.filter_vmap(one, in_axes=_slot_axis)(slots.loss, slots.atol, slots.diverge, slots.state)


def _initial_loop(spec: _Spec, shared, flows: _Flows) -> _Loop:
    first = jnp.arange(spec.n_slots)
    holds = first < flows.count
    slots = _load(spec, shared, flows, first)
    slots = eqx.tree_at(lambda s: (s.flow, s.waiting), slots, (jnp.where(holds, first, -1), holds & slots.waiting))
    one = jax.eval_shape(lambda: _take_rows(_finished(spec, shared, slots), 0))
    out = jax.tree_util.tree_map(lambda s: jnp.zeros((flows.thetas.shape[0],) + s.shape, s.dtype), one)
    return _Loop(slots=slots, out=out, next_flow=jnp.minimum(jnp.asarray(spec.n_slots), flows.count),
                 iterations=jnp.array(0))


def _refill(spec: _Spec, shared, flows: _Flows, loop: _Loop) -> _Loop:
    """Write the outputs of up to ``refill_group`` waiting slots and load the next pending flows into them."""
    slots, n_flows, none = loop.slots, flows.thetas.shape[0], spec.n_slots
    picked = jnp.nonzero(slots.waiting, size=spec.refill_group, fill_value=none)[0]  # in slot order
    valid = picked < none
    done = _take_rows(slots, jnp.clip(picked, 0, none - 1))
    out = _set_rows(loop.out, jnp.where(valid, done.flow, n_flows), _finished(spec, shared, done))
    new = loop.next_flow + jnp.cumsum(valid) - 1
    loads = valid & (new < flows.count)
    loaded = eqx.tree_at(lambda s: s.flow, _load(spec, shared, flows, new), new)
    slots = _set_rows(slots, jnp.where(loads, picked, none), loaded)
    emptied = jnp.where(valid & ~loads, picked, none)
    slots = eqx.tree_at(lambda s: (s.flow, s.waiting), slots, (slots.flow.at[emptied].set(-1, mode="drop"),
                                                                slots.waiting.at[emptied].set(False, mode="drop")))
    return _Loop(slots=slots, out=out, next_flow=loop.next_flow + jnp.sum(loads), iterations=loop.iterations)


def _run(spec: _Spec, shared, flows: _Flows, loop: _Loop, iterations) -> _Loop:
    """Up to ``iterations`` more iterations of one device's loop: refill when due, then one step of every running
    slot."""
    _, t1, ts, _, stop_loss = shared
    t1_clip_floor = t1
    for _ in range(100):  # diffrax: a step ending within 100 ulps of t1 is stretched to t1
        t1_clip_floor = jnp.nextafter(t1_clip_floor, -jnp.inf)
    limit = loop.iterations + iterations

    def more(loop):
        return jnp.any(loop.slots.flow >= 0) & (loop.iterations < limit)

    def step(slots):
        def one(loss, atol, diverge, state):
            return _advance(_problem_of(spec, shared, loss, atol, diverge), state, t1, t1_clip_floor, ts, stop_loss)

        go = (slots.flow >= 0) & ~slots.waiting
        stepped = eqx.filter_vmap(one, in_axes=_slot_axis)(slots.loss, slots.atol, slots.diverge, slots.state)
        state = _where_rows(go, stepped, slots.state)
        return eqx.tree_at(lambda s: (s.state, s.waiting), slots,
                           (state, slots.waiting | (go & _ended(spec, shared, state))))

    def body(loop):
        slots = loop.slots
        idle = ~jnp.any((slots.flow >= 0) & ~slots.waiting)
        due = (jnp.sum(slots.waiting) >= spec.refill_group) | (idle & jnp.any(slots.waiting))
        loop = jax.lax.cond(due, lambda lp: _refill(spec, shared, flows, lp), lambda lp: lp, loop)
        # every slot steps, the ones not running discarding theirs (a lax.cond around the step, to skip it when
        # nothing runs, cost 27 % per step on the CPU: it copies the state)
        slots = step(loop.slots)
        return _Loop(slots=slots, out=loop.out, next_flow=loop.next_flow, iterations=loop.iterations + 1)

    return jax.lax.while_loop(more, body, loop)


@eqx.filter_jit
def _initial(fixed):
    spec, shared, flows = fixed
    return _initial_loop(spec, shared, flows)


@eqx.filter_jit(donate="all-except-first")
def _continue(fixed, loop, iterations):
    spec, shared, flows = fixed
    return _run(spec, shared, flows, loop, iterations)


def _outputs(spec: _Spec, flows: _Flows, out: _Finished, t0) -> IntegratorOutput:
    """The integrator's outputs of ``flows`` (as gflow/flow/_solve.py ``_integrate_one`` returns them): the row at
    t0 is θ0 itself, and L at every saved row."""

    def one(loss, theta0, fin):
        term = GradientFlowTerm(loss, spec.static, spec.unravel)
        ys = jnp.where((fin.ts == t0)[:, None], theta0[None, :], fin.ys)
        values = jax.lax.map(lambda y: jnp.where(jnp.all(jnp.isfinite(y)), term.loss_value(y), jnp.nan), ys,
                             batch_size=ROWS_PER_BATCH)
        return IntegratorOutput(
            ts=fin.ts, ys=ys, losses=values, hit_max_steps=fin.result == diffrax.RESULTS.max_steps_reached,
            succeeded=(fin.result == diffrax.RESULTS.successful) | (fin.result == diffrax.RESULTS.event_occurred),
            steps=fin.steps, accepted=fin.accepted, rejected=fin.rejected,
            hessian_vector_products=fin.hessian_vector_products,
            underflow=fin.result == diffrax.RESULTS.dt_min_reached, rejected_ascent=fin.rejected_ascent)

    return eqx.filter_vmap(one)(flows.losses, flows.thetas, out)


_outputs_jit = eqx.filter_jit(_outputs)


def refill_group(n_slots: int) -> int:
    """How many waiting slots are refilled at once: about 1/REFILL_FRACTION of the slots (at least 1)."""
    return max(1, n_slots // REFILL_FRACTION)


def loading_order(thetas: np.ndarray) -> np.ndarray:
    """The order in which flows are loaded into the slots: smallest RMS of θ0 first (stable, so equal starts keep
    their order). A flow from a small initialization spends the most steps escaping the saddle at 0 (its step count
    grows like log(1/scale)), and a slow flow loaded last runs on while the other slots idle, so the slow ones go
    first. A heuristic for the sweeps gflow is used for (init scales × seeds × lengths); it changes no result (a
    flow's bits do not depend on when it is loaded), only how well the slots stay busy at the end."""
    return np.argsort(np.sqrt(np.mean(np.asarray(thetas) ** 2, axis=1)), kind="stable")


def integrate_refilling(losses, models0, thetas, atols, diverge, setup, shared, slots_per_device: int, devices,
                        watch_loss: bool, resolve_loss: bool, progress=None) -> IntegratorOutput:
    """Integrate the flows of a stacked batch through ``slots_per_device`` refilling slots on each of ``devices``:
    the flows in :func:`loading_order`, dealt round-robin to the devices (each device's rows padded to a bucketed
    size; padding rows never run). Returns the integrator's outputs as numpy arrays with a leading flow axis, in the
    batch's order (``time_restarts`` unset). ``progress(done, total, elapsed)``: called between compiled calls."""
    _, static, unravel = flatten(take(models0, 0))
    spec = _Spec(static=static, unravel=unravel, solver=setup.solver, controller=setup.controller,
                 n_slots=slots_per_device, refill_group=refill_group(slots_per_device), n_saves=len(setup.ts),
                 max_steps=setup.max_steps, watch_loss=watch_loss, resolve_loss=resolve_loss)
    n, order = int(thetas.shape[0]), loading_order(thetas)
    dealt = [order[d::len(devices)] for d in range(len(devices))]
    per = bucket_size(len(dealt[0]))  # rows per device: nearby batch sizes share a program
    programs = []
    for mine, device in zip(dealt, devices):
        rows = np.concatenate([mine, np.zeros(per - len(mine), dtype=np.int64)])
        flows = jax.device_put(_Flows(losses=take(losses, rows), thetas=jnp.asarray(thetas[rows]),
                                      atols=jnp.asarray(atols[rows], dtype=jnp.float64),
                                      diverges=jnp.asarray(diverge[rows], dtype=jnp.float64),
                                      count=jnp.asarray(len(mine))), device)
        fixed = (spec, jax.device_put(shared, device), flows)
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
    for mine, ((spec_, shared_, flows), loop) in zip(dealt, programs):
        out = [np.asarray(x)[:len(mine)] for x in _outputs_jit(spec_, flows, loop.out, shared_[0])[:-1]]
        if result is None:
            result = [np.empty((n,) + x.shape[1:], x.dtype) for x in out]
        for whole, part in zip(result, out):
            whole[mine] = part
    return IntegratorOutput(*result)


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
