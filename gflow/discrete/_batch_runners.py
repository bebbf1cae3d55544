"""Batched discrete runs: many models trained by GD, SGD, Adam, projected or normalized GD in one compiled program,
returned as the :class:`gflow.FlowBatch` that :func:`gflow.solve_flows` returns (docs/design.md,
"Batching and bucketing").

The one-run step loop of :func:`gflow.discrete.run_discrete` is vmapped over the members: each member has
its own model, step size, minibatch key, projection and divergence thresholds; the objective is shared, or, given
as a list or a stacked module with ``stacked_objective=True`` (as :func:`gflow.solve_flows` takes losses), vmapped
too, one per member (a sweep's members may have other teachers or training lengths). A member
that diverges, or that stops on its loss (``stop_loss``, then its own ``continue_steps``), stops alone (its row of
the vmapped ``while_loop`` is masked from then on) while the others go on. The batch runs in a program of a bucketed
size (:func:`gflow.stacking.bucket_size`), padded with copies of member 0, split over the local devices along the batch axis. Row i
is the one-by-one run of member i (tests/test_discrete_batch.py).

A batch is its own call (``run_gd_batch`` beside ``run_gd``, as ``solve_flows`` beside ``solve_flow``) because a
stacked model is a model whose arrays have one more axis: nothing tells it from one model reliably.
"""

from __future__ import annotations

import time
from typing import Any, Mapping

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec

from .. import stacking
from .._checks import GflowInputError, positive_float, positive_int
from ..results._flow_batch import FlowBatch
from ..results._trajectory import STATUSES
from ..run import (
    batch_diagnostics,
    check_diagnostics,
    check_model_and_loss,
    diagnostic_functions,
    diverge_limits,
    on_host,
    QUIET_SECONDS,
    save_steps,
    StepProgress,
    validate_batch,
)
from ._runners import (
    _chunk_targets,
    _losses,
    _schedule_values,
    advance_steps,
    check_key,
    check_run_inputs,
    check_stopping,
    exact_times,
    finished,
    initial_carry,
    method_name,
    previous_row,
    run_description,
    run_stats,
    run_status,
    settle_rows,
    stopping_arrays,
)
from ._update_rule import adam, gradient_descent, normalized_gradient_descent, UpdateRule


def _advance_batch_impl(carry, stop, objective, models0, rules, projections, batch_size, shuffle, limits, mesh,
                        stacked_objective: bool = False, stopping=None):
    """Every member's steps until ``stop``, its divergence or its stop on the loss (``stopping``, shared): the
    one-run loop, vmapped (and split over ``mesh``); ``objective`` shared, or one per member when
    ``stacked_objective``."""
    own, common = (objective, None) if stacked_objective else (None, objective)

    def local(members, stop, common, stopping):
        def one(c, model0, rule, projection, lim, own):
            obj = own if stacked_objective else common
            return advance_steps(c, stop, obj, model0, rule, projection, batch_size, shuffle, lim, stopping)

        return eqx.filter_vmap(one)(*members)

    members = (carry, models0, rules, projections, limits, own)
    if mesh is None:
        return local(members, stop, common, stopping)
    batched, static = eqx.partition(members, eqx.is_array)
    shared, shared_static = eqx.partition((stop, common, stopping), eqx.is_array)
    rows, every = PartitionSpec(stacking.BATCH_AXIS), PartitionSpec()
    return jax.shard_map(lambda b, s: local(eqx.combine(b, static), *eqx.combine(s, shared_static)), mesh=mesh,
                         in_specs=(jax.tree_util.tree_map(lambda _: rows, batched),
                                   jax.tree_util.tree_map(lambda _: every, shared)),
                         out_specs=rows, check_vma=False)(batched, shared)


_advance_batch = eqx.filter_jit(_advance_batch_impl)


def _stacked(value, n: int | None, name: str):
    """A stacked module from a stacked module or a list of modules; its batch length checked against ``n``."""
    if isinstance(value, (list, tuple)):
        value = stacking.stack(value, name)
    elif not stacking.is_stacked(value):
        raise GflowInputError(f"`{name}` must be a stacked module (leading batch axis, gflow.stacking.stack) or a "
                              f"list of modules, got {type(value).__name__}")
    length = stacking.batch_length(value, name)
    if n is not None and length != n:
        raise GflowInputError(f"`{name}` holds {length} members but `models0` holds {n}")
    return value


def _check_member(loss, models0):
    """Row 0 of ``models0`` must be a model ``loss`` takes: one unstacked model passes the batch-axis check when its
    arrays share their first size, and is caught here."""
    try:
        check_model_and_loss(loss, stacking.take(models0, 0), "models0[0]")
    except GflowInputError:
        raise
    except Exception as e:  # e.g. an IndexError from a model whose arrays lost an axis
        raise GflowInputError(f"`models0` must be a stacked batch of models (leading batch axis, "
                              f"gflow.stacking.stack); its row 0 is not a model the loss takes "
                              f"({type(e).__name__}: {e}). Was one model passed? Use run_gd / run_adam for one.") from None


def _member_rules(rule, n: int) -> list[UpdateRule]:
    rules = list(rule) if isinstance(rule, (list, tuple)) else [rule] * n
    if len(rules) != n:
        raise GflowInputError(f"`rule` must be one UpdateRule or one per member ({n}), got {len(rules)}")
    return rules


def _member_keys(key, n: int):
    """One typed key per member: ``key`` of shape (B,), or one key split into B (member i gets split(key, B)[i])."""
    if key is None:
        return None
    if getattr(key, "dtype", None) == np.uint32 and np.ndim(key) == 2:  # legacy raw keys, one per row
        key = jax.random.wrap_key_data(jnp.asarray(key))
    if getattr(key, "ndim", None) == 1 and jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key):
        if key.shape[0] != n:
            raise GflowInputError(f"`key` holds {key.shape[0]} keys but the batch has {n} members: give one key (split "
                                  f"per member) or shape ({n},)")
        return key
    return jax.random.split(check_key(key), n)


def _tree_stack(trees):
    return jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *trees)


def run_discrete_batch(objective, models0, *, rule, steps: int, batch_size: int | None = None, key=None,
                       shuffle: str = "epoch", projection=None, save_at=200, diagnostics=None,
                       diverge_factor: float = 1e6, stop_loss: float | None = None, continue_steps: int | None = None,
                       progress: bool | str = "auto", method: str | None = None,
                       config: Mapping[str, Any] | None = None, devices=None, stacked_objective: bool = False,
                       program_size: int | None = None) -> FlowBatch:
    """Train every model of the batch ``models0`` for ``steps`` steps in one compiled program.

    Options as :func:`gflow.discrete.run_discrete` (the fields of :class:`gflow.discrete.DiscreteOptions`), with
    per-member values where noted. A member that diverges stops alone with status ``"diverged"``.

    Args:
        objective: One objective shared by every member; or one per member, as a list of B objectives or, with
            ``stacked_objective=True``, a stacked module (leading batch axis B, like the losses of
            :func:`gflow.solve_flows`; e.g. the population losses of other teachers or training lengths, padded to
            one shape).
        models0: A stacked module (leading batch axis B, :func:`gflow.stacking.stack`) or a list of modules.
        rule: One UpdateRule for every member, or a list of B (e.g. different step sizes).
        steps: The steps to take.
        batch_size: As :func:`gflow.discrete.run_discrete`.
        key: One key, split per member (member i gets ``jax.random.split(key, B)[i]``), or B keys (shape (B,)).
        shuffle: As :func:`gflow.discrete.run_discrete`.
        projection: A stacked projection or a list of B (each built from its member's start).
        save_at: As :func:`gflow.discrete.run_discrete`.
        diagnostics: As :func:`gflow.discrete.run_discrete`.
        diverge_factor: As :func:`gflow.discrete.run_discrete`, per member from its own start.
        stop_loss: One value, applied to each member on its own: a member whose loss reaches it takes
            ``continue_steps`` more steps and then stops moving while the others go on; a member that never reaches
            it runs to ``steps``.
        continue_steps: As :func:`gflow.discrete.run_discrete`.
        progress: As :func:`gflow.discrete.run_discrete`.
        method: As :func:`gflow.discrete.run_discrete`.
        config: As :func:`gflow.discrete.run_discrete`.
        devices: The devices the batch is split over (default: every local device).
        stacked_objective: ``objective`` is a stacked module, one per member (a stacked module is not told from one
            objective by its arrays, hence the flag).
        program_size: Run in a program of at least this many members (bucketed, :func:`gflow.stacking.bucket_size`),
            as :func:`gflow.solve_flows`; :func:`gflow.run_sweep` fixes it per group, so that a member gives the same
            bits however the runs are batched or resumed.

    Returns:
        A :class:`gflow.FlowBatch` whose ``stats`` hold the members' ``steps``; ``batch[i]`` is the
        :class:`gflow.Trajectory` that ``run_discrete(objective, models0[i], rule=rule_i, key=key_i, ...)`` returns
        (``stats["wall_time_s"]`` the batch's time).

    Raises:
        GflowInputError: An argument is malformed, or a member's start has non-finite parameters or loss.
    """
    stop_loss, continue_steps = check_stopping(stop_loss, continue_steps)
    stopping = stopping_arrays(stop_loss, continue_steps)
    steps = positive_int("steps", steps)
    models0 = _stacked(models0, None, "models0")
    n = stacking.batch_length(models0, "models0")
    stacked_objective = bool(stacked_objective) or isinstance(objective, (list, tuple))
    if stacked_objective:
        objective = _stacked(objective, n, "objective")
    member = (lambda i: stacking.take(objective, i)) if stacked_objective else (lambda i: objective)
    rules = _member_rules(rule, n)
    for r in rules:
        shuffle = check_run_inputs(member(0), r, batch_size, key, shuffle, None)
    projections = None if projection is None else _stacked(projection, n, "projection")
    keys = _member_keys(key, n)
    full_loss = getattr(objective, "full_loss", objective)
    _check_member(getattr(member(0), "full_loss", member(0)), models0)
    thetas, losses0 = validate_batch(full_loss if stacked_objective else stacking.repeat(full_loss, n), models0)
    diverge_factor = positive_float("diverge_factor", diverge_factor)
    limits = diverge_limits(diverge_factor, thetas, losses0)
    functions = diagnostic_functions(diagnostics)
    check_diagnostics(functions, stacking.take(models0, 0), "models0[0]")
    saved_steps = save_steps(save_at, steps)
    method = method_name(method, rules[0], batch_size, projection)
    rules_stacked = stacking.stack(rules, "rule")
    samplers = None if batch_size is None else _tree_stack(
        [member(i).minibatch_init(keys[i], batch_size, shuffle) for i in range(n)])

    devices = stacking.local_devices(devices)
    size = stacking.bucket_size(n, len(devices))
    if program_size is not None:
        size = max(size, stacking.bucket_size(positive_int("program_size", program_size), len(devices)))
    mesh = stacking.mesh_over(devices) if len(devices) > 1 else None
    padded = [stacking.pad_to(x, size) if x is not None else None for x in (
        models0, rules_stacked, projections, jnp.asarray(limits), jnp.asarray(thetas), samplers,
        objective if stacked_objective else None)]
    models_p, rules_p, projections_p, limits_p, thetas_p, samplers_p, objective_p = padded
    objective_p = objective_p if stacked_objective else objective
    carry = initial_carry(thetas_p, eqx.filter_vmap(lambda r, th: r.init(th))(rules_p, thetas_p), samplers_p)
    if mesh is not None:
        carry, models_p, rules_p, projections_p, limits_p = (
            stacking.place(x, mesh) for x in (carry, models_p, rules_p, projections_p, limits_p))
        if stacked_objective:
            objective_p = stacking.place(objective_p, mesh)

    quiet = QUIET_SECONDS if progress == "auto" else 0.0
    meter = StepProgress(f"{method} ×{n}", steps, quiet) if progress else None
    rows = [[] for _ in range(n)]  # each member's saved (step, t, θ, last step size)
    active = np.ones(n, dtype=bool)
    start = time.perf_counter()
    for target, saved in _chunk_targets(saved_steps, steps):
        if target > 0:
            carry = _advance_batch(carry, jnp.asarray(target, dtype=jnp.int64), objective_p, models_p, rules_p,
                                   projections_p, batch_size, shuffle, limits_p, mesh, stacked_objective, stopping)
        reached, codes, ts_now, hits, last_lrs = (np.asarray(x)[:n] for x in (
            carry.step, carry.code, carry.t, carry.reached, carry.last_lr))
        done = finished(stopping, hits, reached)
        record = active & (saved | (codes != 0) | done)
        if record.any():
            theta = np.asarray(carry.theta)[:n]
            for i in np.flatnonzero(record):
                rows[i].append((int(reached[i]), float(ts_now[i]), theta[i], float(last_lrs[i])))
        active &= (codes == 0) & ~done
        if meter is not None:
            meter.update(int(reached.max()), float(ts_now[0]))
        if not active.any():
            break
    wall = time.perf_counter() - start
    if meter is not None:
        meter.update(int(np.asarray(carry.step)[:n].max()), float(np.asarray(carry.t)[0]), final=True)
    codes, hits, evaluations = (np.asarray(x)[:n] for x in (carry.code, carry.reached, carry.evaluations))
    previous = [previous_row(carry, i) for i in range(n)]
    return _as_flow_batch(member, models0, rules, rows, previous, codes, hits, evaluations, limits[:, 0], wall,
                          functions, dict(method=method, steps=steps, batch_size=batch_size, shuffle=shuffle,
                                          diverge_factor=diverge_factor, config=config, stop_loss=stop_loss,
                                          continue_steps=continue_steps), keys, projections)


def _as_flow_batch(member, models0, rules, rows, previous, codes, hits, evaluations, loss_limits, wall, functions,
                   options, keys, projections) -> FlowBatch:
    """The members' saved rows as a FlowBatch whose ``batch[i]`` is what ``run_discrete`` returns for member i
    (``member(i)``: member i's objective; ``previous[i]``: the state before its last step, where it returns if
    that step's loss is beyond ``loss_limits[i]``, as :func:`gflow.discrete.run_discrete` does)."""
    n, width = len(rows), max(len(r) for r in rows)
    n_params = int(rows[0][0][2].size)
    stop_loss, continue_steps = options["stop_loss"], options["continue_steps"]
    codes, hits = [int(c) for c in codes], [int(h) if stop_loss is not None else None for h in hits]
    member_losses = []
    for i in range(n):
        model_i, objective = stacking.take(models0, i), member(i)
        full_loss = getattr(objective, "full_loss", objective)

        def losses_of(thetas, model_i=model_i, full_loss=full_loss):  # padded to one shape: compiled once
            padded = np.concatenate([thetas, np.repeat(thetas[-1:], width + 1 - len(thetas), axis=0)])
            return np.asarray(_losses(full_loss, model_i, jnp.asarray(padded)))[:len(thetas)]

        rows[i], losses_i, codes[i], hits[i] = settle_rows(rows[i], previous[i], codes[i], hits[i],
                                                           float(loss_limits[i]), losses_of)
        member_losses.append(losses_i)
    saved = np.zeros((n, width), dtype=bool)
    step_arr = np.zeros((n, width), dtype=np.int64)
    ts = np.full((n, width), np.nan)
    params = np.zeros((n, width, n_params))
    lrs = np.zeros((n, width))
    step_sizes = np.full((n, width), np.nan)
    losses = np.full((n, width), np.nan)
    statuses, messages, stats, configs = [], [], [], []
    models_host = on_host(models0)
    for i, r in enumerate(rows):
        k = len(r)
        saved[i, :k] = True
        step_arr[i, :k] = [row[0] for row in r]
        params[i, :k] = np.stack([row[2] for row in r])
        params[i, k:] = params[i, k - 1]  # padding rows: the final state, never read
        step_sizes[i, :k] = [row[3] for row in r]
        schedule = rules[i].schedule
        ts[i, :k] = exact_times(rules[i], step_arr[i, :k], np.asarray([row[1] for row in r]))
        objective = member(i)
        losses[i, :k] = member_losses[i]
        lrs[i, :k] = np.asarray(_schedule_values(schedule, jnp.asarray(step_arr[i, :k])))
        hit, taken = hits[i], int(step_arr[i, k - 1])
        status, message = run_status(options["method"], taken, float(r[-1][1]), codes[i], stop_loss,
                                     continue_steps, hit)
        statuses.append(status)
        messages.append(message)
        stats.append(run_stats(taken, int(evaluations[i]), k, wall, objective, options["batch_size"], stop_loss,
                               hit))
        configs.append(run_description(
            options["method"], rules[i], options["steps"], objective, stacking.take(models_host, i), options["batch_size"],
            options["shuffle"], None if keys is None else keys[i],
            None if projections is None else stacking.take(projections, i), options["diverge_factor"], n_params,
            options["config"], stop_loss, continue_steps))
    diagnostics = {"step": step_arr, "learning_rate": lrs}
    if rules[0].normalizer is not None:
        diagnostics["step_size"] = step_sizes
    diagnostics.update(batch_diagnostics(functions, models0, params))
    last = saved.sum(axis=1) - 1
    counts = step_arr[np.arange(n), last]
    status_codes = np.asarray([STATUSES.index(s) for s in statuses], dtype=np.int8)
    return FlowBatch(ts=ts, saved=saved, loss=losses, params=params, diagnostics=diagnostics,
                     final_params=params[np.arange(n), last], status_codes=status_codes, stats={"steps": counts},
                     wall_time_s=wall, config={"method": options["method"], **(options["config"] or {})},
                     _models0=models0, _messages=tuple(messages), _stats=tuple(stats), _configs=tuple(configs))


def _per_member(make, lr, n: int) -> list[UpdateRule] | UpdateRule:
    """``make(lr)`` for every member: ``lr`` one step size or schedule, or B step sizes (shape (B,))."""
    if callable(lr) or np.ndim(lr) == 0:
        return make(lr)
    values = np.asarray(lr)
    if values.shape != (n,):
        raise GflowInputError(f"`lr` must be one step size (or schedule) for every member or an array of shape "
                              f"({n},), one per member; got shape {values.shape}")
    return [make(float(v)) for v in values]


def _stacked_models(models0):
    """(``models0`` stacked once, its batch length B): a list is stacked here, not again by run_discrete_batch."""
    models0 = _stacked(models0, None, "models0")
    return models0, stacking.batch_length(models0, "models0")


def run_gd_batch(objective, models0, *, lr, steps: int, **kwargs) -> FlowBatch:
    """:func:`gflow.discrete.run_gd` of every member of ``models0`` in one program.

    Args:
        objective: As :func:`run_discrete_batch`.
        models0: As :func:`run_discrete_batch`.
        lr: One value or schedule, or B values (shape (B,)).
        steps: The steps to take.
        **kwargs: The options of :func:`run_discrete_batch`.

    Returns:
        The batch's :class:`gflow.FlowBatch`.
    """
    steps = positive_int("steps", steps)
    models0, n = _stacked_models(models0)
    rule = _per_member(lambda v: gradient_descent(v, steps), lr, n)
    return run_discrete_batch(objective, models0, rule=rule, steps=steps, **kwargs)


def run_sgd_batch(objective, models0, *, lr, steps: int, batch_size: int, key, **kwargs) -> FlowBatch:
    """:func:`gflow.discrete.run_sgd` of every member in one program.

    Args:
        objective: As :func:`run_discrete_batch`, with minibatches.
        models0: As :func:`run_discrete_batch`.
        lr: One value or schedule, or B values.
        steps: The steps to take.
        batch_size: The minibatch size.
        key: One key (split per member) or B keys.
        **kwargs: The options of :func:`run_discrete_batch`.

    Returns:
        The batch's :class:`gflow.FlowBatch`.
    """
    return run_gd_batch(objective, models0, lr=lr, steps=steps, batch_size=batch_size, key=key, **kwargs)


def run_adam_batch(objective, models0, *, lr=1e-3, steps: int = 15_000, b1: float = 0.9, b2: float = 0.999,
                   eps: float = 1e-8, **kwargs) -> FlowBatch:
    """:func:`gflow.discrete.run_adam` of every member in one program.

    Args:
        objective: As :func:`run_discrete_batch`.
        models0: As :func:`run_discrete_batch`.
        lr: One value or B values.
        steps: The steps to take.
        b1: Adam's β₁.
        b2: Adam's β₂.
        eps: Adam's ε.
        **kwargs: The options of :func:`run_discrete_batch`.

    Returns:
        The batch's :class:`gflow.FlowBatch`.
    """
    steps = positive_int("steps", steps)
    models0, n = _stacked_models(models0)
    rule = _per_member(lambda v: adam(v, b1, b2, eps, steps), lr, n)
    return run_discrete_batch(objective, models0, rule=rule, steps=steps, **kwargs)


def run_projected_gd_batch(objective, models0, *, lr, steps: int, projection, **kwargs) -> FlowBatch:
    """:func:`gflow.discrete.run_projected_gd` of every member in one program.

    Args:
        objective: As :func:`run_discrete_batch`.
        models0: As :func:`run_discrete_batch`.
        lr: One value or schedule, or B values.
        steps: The steps to take.
        projection: Stacked, or a list of B projections, each built from its member's start.
        **kwargs: The options of :func:`run_discrete_batch`.

    Returns:
        The batch's :class:`gflow.FlowBatch`.
    """
    if projection is None:
        raise GflowInputError("`projection` is required for projected GD")
    return run_gd_batch(objective, models0, lr=lr, steps=steps, projection=projection, **kwargs)


def run_normalized_gd_batch(objective, models0, *, lr, steps: int, beta: float = 0.8, soft_const: float = 1e-6,
                            average: str = "layer_norms", **kwargs) -> FlowBatch:
    """:func:`gflow.discrete.run_normalized_gd` of every member in one program.

    Args:
        objective: As :func:`run_discrete_batch`.
        models0: As :func:`run_discrete_batch`.
        lr: One value or schedule, or B values.
        steps: The steps to take.
        beta: β, shared.
        soft_const: c, shared.
        average: What γ_k averages, shared.
        **kwargs: The options of :func:`run_discrete_batch` (``projection`` a list or stack of B, e.g.
            ``[diagonal_projection(m) for m in starts]``; ``stop_loss``, ``continue_steps`` per member).

    Returns:
        The batch's :class:`gflow.FlowBatch`.
    """
    steps = positive_int("steps", steps)
    models0, n = _stacked_models(models0)
    rule = _per_member(lambda v: normalized_gradient_descent(v, beta, soft_const, average, steps), lr, n)
    return run_discrete_batch(objective, models0, rule=rule, steps=steps, **kwargs)
