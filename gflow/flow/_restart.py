"""Time restarts: a flow whose steps underflowed the float64 spacing of t is continued from its last state in a
fresh local time τ = t − t_stop (the flow is autonomous), so an escape at t ~ 1e12 is resolved whatever t1 is; the
continuation's saves merged back at their requested global times."""

from __future__ import annotations

import dataclasses

import diffrax
import equinox as eqx
import jax
import numpy as np

from ..models._flatten import flatten, unflatten
from ..stacking import pad_to, take
from ._integrate import cacheable, integrate_one
from ._options import FlowSetup
from ._problem import f64, FlowProblem, IntegratorOutput
from ._stopping import final_rows

MAX_TIME_RESTARTS = 16  # continuations in a fresh local time per flow (each after a step-size underflow)


def _restart_batch_impl(problem: FlowProblem, losses, models0, thetas, references, diverge, atol, t1s, tss):
    """Flows continued from states ``thetas`` (rows of a stacked batch) each in its own local time [0, t1s[i]] with
    save times tss[i] (``problem``'s t0 is 0, its t1 and ts are replaced per flow): one vmapped program
    (:func:`continue_past_underflow`)."""

    def one(loss, model0, theta, reference, diverge, atol, t1, ts):
        _, static, unravel = flatten(model0)
        local = eqx.tree_at(lambda p: (p.t1, p.ts), problem, (t1, ts))
        return integrate_one(local, loss, unflatten(theta, static, unravel), atol, diverge, diffrax.NoProgressMeter(),
                             reference)

    return eqx.filter_vmap(one)(losses, models0, thetas, references, diverge, atol, t1s, tss)


_restart_batch = cacheable(eqx.filter_jit(_restart_batch_impl))


def continue_past_underflow(out: IntegratorOutput, problem: FlowProblem, losses, models0, thetas, setup: FlowSetup,
                            diverge, atols, program: int = 1) -> IntegratorOutput:
    """Continue every flow whose steps underflowed the float64 spacing of t.

    Each such flow is continued from its last state in a fresh local time τ = t − t_stop, up to ``MAX_TIME_RESTARTS``
    times, each restart allowed ``max_steps`` (a restart is not begun once the flow's steps reach ``max_steps``): a
    split time (t_stop, τ) for the autonomous flow. A restart that makes no progress ends the flow with its underflow
    status. The flows that need a restart are continued together, one round per restart, in vmapped programs of
    ``program`` flows (padded with copies: the program size of the solve that ran them, so that a flow's bits depend
    on its batch as the solve's do, never on which or how many other flows restart; one by one, a batch of 4 096
    such flows on a GPU took longer than the 290 s we gave it).

    Args:
        out: The integrator's outputs with a leading flow axis (numpy).
        problem: The solve's problem.
        losses: The stacked losses.
        models0: The stacked starts.
        thetas: θ0 of every flow, (B, n).
        setup: The solve's checked options.
        diverge: Every flow's divergence limits, (B, 2).
        atols: Every flow's atol, (B,).
        program: The flows per restart program.

    Returns:
        The outputs merged (saved times as requested), with ``time_restarts`` the number of restarts of each flow.
    """
    out = out.on_host()
    restarts = np.zeros(out.ts.shape[0], dtype=np.int64)
    if not out.underflow.any():  # the common case: nothing to continue (no restart problem to build)
        return out._replace(time_restarts=restarts)
    stuck = np.zeros(out.ts.shape[0], dtype=bool)  # a restart that took no step: not tried again
    # a continuation steps onto its save times (rare: not worth a second solve when a dense-output save rises)
    local_problem = dataclasses.replace(
        problem.with_times((f64(0.0), problem.t1, problem.ts, problem.rtol, problem.stop_loss)), save_on_steps=True)
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
            part = _restart_batch(local_problem, *padded, *(f64(x) for x in arrays))
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


def _merge_restart(out, part, i, j, setup: FlowSetup, t_stop, local_ts, local_t1, restarts, stuck) -> None:
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
