"""Discrete training runs (GD, GD with schedules, SGD, Adam, projected GD, normalized GD) from the same losses and
initial models as :func:`gflow.solve_flow`, returning the same :class:`gflow.Trajectory`.

Time along a discrete run is t_n = Σ_{i<n} η_i: t = η·n for constant-η GD, which is the explicit Euler method
for the flow dθ/dt = −∇L (seed 000 eq. 3.6, seed 001 eqs. 8–10), so GD and the flow share one time axis. For Adam the same
definition (t = n·lr at constant lr) is only a nominal axis: Adam's steps are not η·∇L. For normalized GD η_i is
the step actually taken, lr_i / ν_i (:func:`gflow.discrete.normalized_gradient_descent`).

A run may stop early on its loss, as Slutzky et al. (NeurIPS 2025) train: ``stop_loss`` = ε is checked after every
step on the full objective, and once L(θ_n) ≤ ε first holds (step n, recorded) the run takes exactly
``continue_steps`` more steps and stops.

The steps run inside one compiled ``lax.while_loop`` per chunk (between saved steps, at most 1/50 of the run),
with η, the data and the model as traced arrays, so sweeps over η reuse the compiled loop; the host only records
the saved rows, checks for divergence and prints progress between chunks.
"""

from __future__ import annotations

import time
from typing import Any, Mapping

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._checks import GflowInputError, one_of, positive_float, positive_int, prng_key
from ..models._flatten import evaluate_rows, flatten, unflatten
from ..objectives._empirical_loss import SHUFFLES
from ..results._trajectory import Trajectory
from ..run import (
    check_diagnostics,
    check_model_and_loss,
    diagnostic_functions,
    diverge_limits,
    QUIET_SECONDS,
    save_steps,
    StepProgress,
)
from ._schedules import as_schedule, ConstantSchedule
from ._update_rule import adam, gradient_descent, normalized_gradient_descent, UpdateRule

CHUNKS = 50  # a run is split into at least this many compiled chunks, so that progress can be reported
_DIVERGED = {
    1: "the loss became non-finite",
    2: "|loss| exceeded diverge_factor × max(|L(θ0)|, 1)",
    3: "the parameters (or the gradient) became non-finite",
    4: "max|θ| exceeded diverge_factor × max(max|θ0|, 1)",
}


def _chunk_targets(save_steps: np.ndarray, steps: int):
    """(target step, is_saved) pairs: the saved steps, long gaps cut into pieces of ≤ ⌈steps / CHUNKS⌉ steps."""
    longest = max(1, -(-steps // CHUNKS))
    out, previous = [], 0
    for s in save_steps:
        for cut in range(previous + longest, s, longest):
            out.append((cut, False))
        out.append((int(s), True))
        previous = int(s)
    return out


class Kept(eqx.Module):
    """What a run returns to when a step is undone: θ, the rule's state, the time and the last step size."""

    theta: jax.Array
    rule_state: Any
    t: jax.Array
    t_compensation: jax.Array
    last_lr: jax.Array


class Carry(eqx.Module):
    """The state of a run between steps."""

    theta: jax.Array
    rule_state: Any
    sampler_state: Any
    step: jax.Array
    t: jax.Array  # Σ η_i, Kahan-compensated
    t_compensation: jax.Array
    code: jax.Array  # 0 running; > 0 the reason for divergence (_DIVERGED)
    reached: jax.Array  # the first step n ≥ 1 with L(θ_n) ≤ stop_loss, −1 before (and without stop_loss)
    last_lr: jax.Array  # the step size of the last step taken (NaN before the first)
    evaluations: jax.Array  # the gradient evaluations (one per pass of the loop, an undone step's included)
    previous: Kept  # the state before the last step taken (θ0's at step 0): where an offending step returns to

    def kept(self) -> Kept:
        return Kept(theta=self.theta, rule_state=self.rule_state, t=self.t, t_compensation=self.t_compensation,
                    last_lr=self.last_lr)


def initial_carry(theta, rule_state, sampler_state) -> Carry:
    """A run's state at step 0, strongly typed (as every chunk of the run returns it: one compiled program)."""
    zero = jnp.zeros(theta.shape[:-1])
    counts = jnp.zeros(theta.shape[:-1], dtype=jnp.int64)
    nan = jnp.full(theta.shape[:-1], jnp.nan, dtype=theta.dtype)
    return _strongly_typed(Carry(
        theta=theta, rule_state=rule_state, sampler_state=sampler_state, step=counts, t=zero, t_compensation=zero,
        code=jnp.zeros(theta.shape[:-1], dtype=jnp.asarray(0).dtype), reached=jnp.full(theta.shape[:-1], -1,
                                                                                        dtype=jnp.int64),
        last_lr=nan, evaluations=counts, previous=Kept(theta=theta, rule_state=rule_state, t=zero,
                                                       t_compensation=zero, last_lr=nan)))


def _flat(model):
    return flatten(model)[0]


def advance_steps(carry: Carry, stop, objective, model0, rule: UpdateRule, projection, batch_size, shuffle, limits,
                  stopping=None):
    """Take steps until ``carry.step == stop``, divergence, or (``stopping`` = (stop_loss, continue_steps) arrays)
    ``continue_steps`` steps after the full loss first fell to ``stop_loss`` (one run; vmapped for a batch by
    :func:`gflow.discrete.run_discrete_batch`)."""
    _, static, unravel = flatten(model0)
    full_loss = getattr(objective, "full_loss", objective)

    def to_model(theta):
        return unflatten(theta, static, unravel)

    def running(c: Carry):
        go = (c.step < stop) & (c.code == 0)
        if stopping is not None:
            go = go & ~((c.reached >= 0) & (c.step >= c.reached + stopping[1]))
        return go

    def body(c: Carry) -> Carry:
        if batch_size is None:
            batch, sampler_state = objective, c.sampler_state
        else:
            batch, sampler_state = objective.minibatch(c.sampler_state, c.step, batch_size, shuffle)
        value, grad = jax.value_and_grad(lambda th: batch(to_model(th)))(c.theta)
        theta, rule_state, lr = rule.update(grad, c.rule_state, c.theta, unravel)
        if projection is not None:
            theta = _flat(projection(to_model(theta)))
        # codes 1, 2: the loss of θ_n (this pass's value) is beyond the divergence level, so step n (θ_{n-1} → θ_n)
        # was the offending one: the run returns to θ_{n-1}. Codes 3, 4: the step from θ_n would leave the
        # level: it is not taken, θ_n stays.
        loss_code = jnp.where(~jnp.isfinite(value), 1, jnp.where(jnp.abs(value) > limits[0], 2, 0))
        code = jnp.where(loss_code != 0, loss_code, jnp.where(
            ~jnp.all(jnp.isfinite(theta)), 3, jnp.where(jnp.max(jnp.abs(theta)) > limits[1], 4, 0)))
        ok, back = code == 0, loss_code != 0
        reached = c.reached
        if stopping is not None:  # as their Keras callback: the full loss after the update (and the projection)
            hit = ok & (reached < 0) & (full_loss(to_model(theta)) <= stopping[0])
            reached = jnp.where(hit, c.step + 1, reached)
        reached = jnp.where(back & (reached >= c.step), -1, reached)  # reached by the step undone
        y = lr - c.t_compensation
        t = c.t + y
        stepped = Kept(theta=theta, rule_state=rule_state, t=t, t_compensation=(t - c.t) - y, last_lr=lr)
        select = lambda cond, new, old: jax.tree_util.tree_map(  # noqa: E731
            lambda a, b: jnp.where(cond, a, b), new, old)
        current = c.kept()
        state = select(ok, stepped, select(back, c.previous, current))
        step = jnp.where(ok, c.step + 1, jnp.where(back, jnp.maximum(c.step - 1, 0), c.step))
        return Carry(theta=state.theta, rule_state=state.rule_state, sampler_state=sampler_state, step=step,
                     t=state.t, t_compensation=state.t_compensation, code=code, reached=reached,
                     last_lr=state.last_lr, evaluations=c.evaluations + 1,
                     previous=select(ok, current, c.previous))

    # strongly typed in and out: a weakly typed leaf (a Python scalar's type) that became strong in the loop, or the
    # reverse, would make the next chunk's call a new program (three compiles of the batch runner, seconds each)
    return _strongly_typed(jax.lax.while_loop(running, body, carry))


def _strongly_typed(tree):
    """``tree`` with every array leaf of its own dtype, strongly typed (JAX's weak types come from Python scalars)."""
    return jax.tree_util.tree_map(lambda x: jax.lax.convert_element_type(x, x.dtype) if eqx.is_array(x) else x, tree)


_advance = eqx.filter_jit(advance_steps)


@eqx.filter_jit
def _schedule_values(schedule, steps):
    return jax.vmap(schedule)(steps)


@eqx.filter_jit
def _losses(loss, model0, params):
    _, static, unravel = flatten(model0)
    return jax.lax.map(lambda th: loss(unflatten(th, static, unravel)), params)


def check_key(key):
    """A typed PRNG key for minibatch sampling (a legacy uint32[2] key is wrapped); other values: the shared error."""
    key = prng_key("key", key)
    return key if jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key) else jax.random.wrap_key_data(key)


def run_discrete(objective, model0, *, rule: UpdateRule, steps: int, batch_size: int | None = None, key=None,
                 shuffle: str = "epoch", projection=None, save_at=200, diagnostics=None,
                 diverge_factor: float = 1e6, stop_loss: float | None = None, continue_steps: int | None = None,
                 progress: bool | str = "auto", method: str | None = None,
                 config: Mapping[str, Any] | None = None) -> Trajectory:
    """Train ``model0`` for ``steps`` steps of ``rule``.

    The trajectory's ``ts`` are t_n = Σ_{i<n} η_i (t = η·n for constant-η GD, the explicit Euler method for the
    flow: GD and the flow share one time axis). Many models in one compiled program:
    :func:`gflow.discrete.run_discrete_batch` (and ``run_gd_batch``, ...). The keyword options are the fields of
    :class:`gflow.discrete.DiscreteOptions`, and ``progress``, ``method``, ``config``.

    Args:
        objective: A loss module ``loss(model) -> scalar`` (full batch), or, with ``batch_size``, an
            :class:`gflow.objectives.EmpiricalLoss` (minibatches of its N sequences) or
            :class:`gflow.objectives.FreshGaussianSequences` (new sequences every step). The saved losses are the
            full objective's (``objective.full_loss``: the whole dataset, or the population loss for fresh
            sequences).
        model0: The start, an equinox module.
        rule: The update rule (:func:`gflow.discrete.gradient_descent`, :func:`gflow.discrete.adam`,
            :func:`gflow.discrete.normalized_gradient_descent`).
        steps: The steps to take.
        batch_size: Minibatch size (None: full batch).
        key: A ``jax.random.key`` seeding the minibatch sampling (required with ``batch_size``).
        shuffle: ``"epoch"`` or ``"with_replacement"``: how minibatches of a finite dataset are drawn.
        projection: A function model → model applied after every step of any rule (projected GD:
            :func:`box_projection`, :func:`diagonal_projection`).
        save_at: The number of log-spaced saved steps (default 200; step 0 and the last step included) or an array
            of integer steps; the final state is always saved.
        diagnostics: name → function(model) (or a list of functions), evaluated at every saved step.
        diverge_factor: Stop with status ``"diverged"`` (and a message naming the step) at the first step that
            makes the loss non-finite or |L| > diverge_factor × max(|L(θ0)|, 1), or θ non-finite or max|θ| >
            diverge_factor × max(max|θ0|, 1). The run ends at the state before that step: it is the trajectory's
            last row and ``final`` (``stats["steps"]`` its step), and no saved loss or θ lies beyond these levels.
            With minibatches the loss checked at each step is the minibatch's (the full objective's at the final
            state).
        stop_loss: ε: after every step (and its projection) the full objective's loss is checked, as Slutzky et
            al.'s Keras callback does; at the first step n with L(θ_n) ≤ ε (``stats["stop_loss_step"]``, None if
            never) the run goes on for ``continue_steps`` more steps and stops, with status ``"stopped_at_loss"``,
            its final state saved. ``steps`` caps the total: their protocol (at most E epochs to reach ε, then N
            more, which their code takes whether or not ε was reached) is ``steps = E + N``. Step 0 is not checked.
        continue_steps: N, the steps after ε is first reached (default 0; only with ``stop_loss``).
        progress: ``"auto"`` prints step lines once the run has taken 5 s, True from the start, False never.
        method: The run's ``config["method"]`` (default: named from the rule, minibatches and projection).
        config: Entries added to the trajectory's ``config`` (winning over gflow's).

    Returns:
        A :class:`gflow.Trajectory`: ``diagnostics`` include ``"step"`` and ``"learning_rate"`` (η at each saved
        step; ``"step_size"`` for normalized GD), ``stats`` the steps taken, gradient evaluations and wall time.

    Raises:
        GflowInputError: An argument is malformed, or the start has non-finite parameters or loss.
    """
    steps = positive_int("steps", steps)
    shuffle = check_run_inputs(objective, rule, batch_size, key, shuffle, projection)
    stop_loss, continue_steps = check_stopping(stop_loss, continue_steps)
    sampler_state = None if batch_size is None else objective.minibatch_init(check_key(key), batch_size, shuffle)
    full_loss = getattr(objective, "full_loss", objective)
    theta0, loss0 = check_model_and_loss(full_loss, model0)
    if projection is not None:
        projected = _flat(projection(model0))
        if projected.shape != theta0.shape:
            raise GflowInputError("`projection` must return a model of the same structure as model0")
    diverge_factor = positive_float("diverge_factor", diverge_factor)
    limits = jnp.asarray(diverge_limits(diverge_factor, np.asarray(theta0)[None], np.asarray([loss0]))[0])
    functions = diagnostic_functions(diagnostics)
    check_diagnostics(functions, model0)
    saved_steps = save_steps(save_at, steps)
    method = method_name(method, rule, batch_size, projection)

    stopping = stopping_arrays(stop_loss, continue_steps)
    carry = initial_carry(theta0, rule.init(theta0), sampler_state)
    quiet = QUIET_SECONDS if progress == "auto" else 0.0
    meter = StepProgress(method, steps, quiet) if progress else None
    rows = []  # the saved (step, t, θ, step size)
    start = time.perf_counter()
    for target, saved in _chunk_targets(saved_steps, steps):
        if target > 0:
            carry = _advance(carry, jnp.asarray(target, dtype=jnp.int64), objective, model0, rule, projection,
                             batch_size, shuffle, limits, stopping)
        reached, code = int(carry.step), int(carry.code)
        done = finished(stopping, carry.reached, carry.step)
        if saved or code or done:
            rows.append((reached, float(carry.t), np.asarray(carry.theta), float(carry.last_lr)))
        if meter is not None:
            meter.update(reached, float(carry.t))
        if code or done:
            break
    wall = time.perf_counter() - start
    if meter is not None:
        meter.update(int(carry.step), float(carry.t), final=True)

    hit = int(carry.reached) if stop_loss is not None else None
    rows, losses, code, hit = settle_rows(rows, previous_row(carry), code, hit, float(limits[0]),
                                          lambda thetas: np.asarray(_losses(full_loss, model0, jnp.asarray(thetas))))
    params = np.stack([r[2] for r in rows])
    step_arr = np.asarray([r[0] for r in rows], dtype=np.int64)
    ts = exact_times(rule, step_arr, np.asarray([r[1] for r in rows]))
    lrs = np.asarray([r[3] for r in rows])
    diag = {"step": step_arr, "learning_rate": np.asarray(_schedule_values(rule.schedule, jnp.asarray(step_arr)))}
    if rule.normalizer is not None:
        diag["step_size"] = lrs
    if functions:
        values = evaluate_rows(functions, model0, jnp.asarray(params))
        diag.update({k: np.asarray(v) for k, v in values.items()})
    _, static, unravel = flatten(model0)
    final = unflatten(jnp.asarray(params[-1]), static, unravel)

    taken = int(step_arr[-1])
    status, message = run_status(method, taken, rows[-1][1], code, stop_loss, continue_steps, hit)
    stats = run_stats(taken, int(carry.evaluations), len(ts), wall, objective, batch_size, stop_loss, hit)
    run_config = run_description(method, rule, steps, objective, model0, batch_size, shuffle, key, projection,
                                 diverge_factor, int(np.size(theta0)), config, stop_loss, continue_steps)
    return Trajectory(ts=ts, loss=losses, diagnostics=diag, params=params, final=final, stats=stats, status=status,
                      message=message, config=run_config)


def previous_row(carry: Carry, i: int | None = None) -> tuple:
    """(step, t, θ, step size) of the state before the last step a run took (member ``i`` of a batch)."""
    pick = (lambda x: np.asarray(x)) if i is None else (lambda x: np.asarray(x)[i])
    return (max(int(pick(carry.step)) - 1, 0), float(pick(carry.previous.t)), pick(carry.previous.theta),
            float(pick(carry.previous.last_lr)))


def settle_rows(rows: list, previous: tuple, code: int, reached, loss_limit: float, losses_of):
    """A run's saved rows, their losses, its divergence code and ``reached``, with no state beyond the divergence
    level among them.

    A row saved at a step that was later undone (the loss of θ_n found beyond the level: the run returned to
    θ_{n-1}) is dropped. The loop checks the loss of a state when it takes the next step from it, so the last
    state is checked here: a loss beyond the level there (code 0 so far) makes the run diverged (code 1 or 2)
    and ends it at ``previous``, the state before that last step.

    Args:
        rows: (step, t, θ, step size) saved in order, the run's final state last.
        previous: The same for the state before the final state's step (:func:`previous_row`).
        code: The run's divergence code (0: none).
        reached: The step at which L first fell to ``stop_loss`` (−1 never; None without ``stop_loss``).
        loss_limit: The divergence level of |L| (diverge_factor × max(|L(θ0)|, 1)).
        losses_of: (S, n) θ rows → their S losses (the full objective).

    Returns:
        ``(rows, losses, code, reached)``.
    """
    final = rows[-1]
    rows = [r for r in rows[:-1] if r[0] < final[0]] + [final]
    values = losses_of(np.stack([r[2] for r in rows] + [previous[2]]))
    losses, previous_loss = values[:len(rows)], values[len(rows)]
    end = 1 if not np.isfinite(losses[-1]) else 2 if abs(losses[-1]) > loss_limit else 0
    if code == 0 and end and final[0] > 0:
        code = end
        rows, losses = rows[:-1], losses[:-1]
        if not rows or rows[-1][0] < previous[0]:
            rows, losses = rows + [previous], np.append(losses, previous_loss)
        if reached is not None and reached >= final[0]:
            reached = -1
    return rows, np.asarray(losses), code, reached


def check_run_inputs(objective, rule, batch_size, key, shuffle, projection) -> str:
    """Check what a run is given (before anything is traced); returns ``shuffle``."""
    if not isinstance(rule, UpdateRule):
        raise GflowInputError(f"`rule` must be a gflow.discrete.UpdateRule (gflow.discrete.gradient_descent, gflow.discrete.adam), "
                              f"got {type(rule).__name__}")
    shuffle = one_of("shuffle", shuffle, SHUFFLES)
    if batch_size is None:
        if not callable(objective):
            raise GflowInputError(f"{type(objective).__name__} has no full-batch loss: give `batch_size` (and `key`)")
    else:
        if not callable(getattr(objective, "minibatch", None)):
            raise GflowInputError(f"`batch_size` needs an objective with minibatches (gflow.objectives.EmpiricalLoss or "
                                  f"gflow.objectives.FreshGaussianSequences), got {type(objective).__name__}")
        if key is None:
            raise GflowInputError("`key` (a jax.random.key) is required to sample minibatches")
    if projection is not None and not callable(projection):
        raise GflowInputError(f"`projection` must be a function model → model, got {type(projection).__name__}")
    return shuffle


def check_stopping(stop_loss, continue_steps) -> tuple[float | None, int | None]:
    """``stop_loss`` (a positive number or None) and ``continue_steps`` (an integer ≥ 0, only with ``stop_loss``;
    None means 0 there)."""
    if stop_loss is None:
        if continue_steps is not None:
            raise GflowInputError("`continue_steps` counts the steps taken after the loss first reaches `stop_loss`: "
                                  "give `stop_loss` too")
        return None, None
    stop_loss = positive_float("stop_loss", stop_loss)
    return stop_loss, 0 if continue_steps is None else positive_int("continue_steps", continue_steps, minimum=0)


def stopping_arrays(stop_loss, continue_steps):
    """The traced (stop_loss, continue_steps) of ``advance_steps``, or None without ``stop_loss``."""
    if stop_loss is None:
        return None
    return jnp.asarray(stop_loss, dtype=jnp.float64), jnp.asarray(continue_steps, dtype=jnp.int64)


def finished(stopping, reached, step):
    """Whether a run (numpy: each member of a batch) stopped on its loss: ``continue_steps`` steps after it first
    reached ``stop_loss``."""
    if stopping is None:
        return np.zeros(np.shape(step), dtype=bool) if np.ndim(step) else False
    reached, step = np.asarray(reached), np.asarray(step)
    done = (reached >= 0) & (step >= reached + int(stopping[1]))
    return done if done.ndim else bool(done)


def exact_times(rule: UpdateRule, steps: np.ndarray, summed: np.ndarray) -> np.ndarray:
    """The saved times: t = η·n exactly for a constant step, else the run's Σ η_i (Kahan-summed)."""
    if isinstance(rule.schedule, ConstantSchedule) and rule.normalizer is None:
        return float(rule.schedule.value) * steps.astype(np.float64)
    return summed


def method_name(method, rule, batch_size, projection) -> str:
    """The run's ``config["method"]``: ``method`` if given, else gd, sgd, adam, projected_gd, normalized_gd or
    projected_normalized_gd."""
    method = method or (rule.name if batch_size is None else f"s{rule.name}" if rule.name == "gd" else rule.name)
    return f"projected_{method}" if projection is not None and method in ("gd", "normalized_gd") else method


def run_status(method: str, taken: int, t: float, code: int, stop_loss=None, continue_steps=None,
               reached=None) -> tuple[str, str]:
    """(status, message) of a run that stopped with divergence ``code`` (0: none) after ``taken`` steps, having
    first reached ``stop_loss`` at step ``reached`` (None or −1: never)."""
    if code:
        return "diverged", (f"{method} diverged at step {taken + 1}: {_DIVERGED[code]}; the trajectory ends with the "
                            f"state before that step (step {taken}, t = {t:.4g})")
    if reached is not None and reached >= 0 and taken == reached + continue_steps:
        return "stopped_at_loss", (f"L ≤ {stop_loss:g} first at step {reached}; stopped {continue_steps} steps later "
                                   f"at step {taken} (t = {t:.6g})")
    return "completed", ""


def run_stats(taken: int, evaluations: int, n_saved: int, wall: float, objective, batch_size, stop_loss=None,
              reached=None) -> dict:
    """A run's ``stats``: steps, gradient and loss evaluations, wall time (and epochs on a finite dataset); with
    ``stop_loss``, ``stop_loss_step`` (the first step n with L(θ_n) ≤ stop_loss, None if never).

    Args:
        taken: The steps the final state is after (an undone step not counted).
        evaluations: The gradient evaluations (``Carry.evaluations``: the undone step's and the one that found a
            step to refuse included).
        n_saved: The saved rows.
        wall: The wall time in seconds.
        objective: The objective (its ``n`` gives the epochs of a minibatch run).
        batch_size: The minibatch size (None: full batch).
        stop_loss: ε, or None.
        reached: The first step with L ≤ ε (−1 or None: never).

    Returns:
        The ``stats`` dict.
    """
    stats = {"steps": taken, "gradient_evaluations": evaluations, "loss_evaluations": n_saved,
             "wall_time_s": wall}
    if stop_loss is not None:
        stats["loss_evaluations"] += evaluations  # the check after every step
        stats["stop_loss_step"] = reached if reached is not None and reached >= 0 else None
    n_data = getattr(objective, "n", None)
    if batch_size is not None and n_data is not None:
        stats["epochs"] = taken * batch_size / n_data
    return stats


def run_description(method, rule, steps, objective, model0, batch_size, shuffle, key, projection, diverge_factor,
                    n_params: int, config, stop_loss=None, continue_steps=None) -> dict:
    """A run's ``config``: method, rule and its hyperparameters, schedule, sampling, loss and model, and the
    caller's ``config`` (which wins)."""
    full_loss = getattr(objective, "full_loss", objective)
    _, schedule_description = as_schedule(rule.schedule, steps)
    run_config = {
        "method": method, "rule": rule.name, "steps": steps, **schedule_description,
        "time_axis": "t_n = sum of the step sizes eta_i over i < n" + (
            " (nominal for Adam)" if rule.name == "adam" else
            " (the steps taken, lr_i / nu_i)" if rule.normalizer is not None else ""),
        "batch_size": batch_size, "shuffle": shuffle if batch_size is not None else None,
        "key": None if key is None else np.asarray(jax.random.key_data(check_key(key))).tolist(),
        "projection": None if projection is None else type(projection).__name__,
        "diverge_factor": diverge_factor, "loss": type(objective).__name__,
        "convention": getattr(full_loss, "convention", "unknown"),
        "k": getattr(full_loss, "training_length", getattr(full_loss, "length", None)),
        "model": type(model0).__name__, "structure": getattr(model0, "structure", None),
        "parameterization": getattr(model0, "parameterization", None), "n_params": n_params,
    }
    if stop_loss is not None:
        run_config.update(stop_loss=stop_loss, continue_steps=continue_steps)
    run_config.update(dict(rule.hyperparameters))
    run_config.update(config or {})
    return run_config


def run_gd(objective, model0, *, lr, steps: int, **kwargs) -> Trajectory:
    """Full-batch gradient descent θ ← θ − η_n ∇L(θ) (seed 000 eq. 3.6 in explicit Euler steps).

    Args:
        objective: As :func:`run_discrete`.
        model0: As :func:`run_discrete`.
        lr: A number (t = η·n) or a schedule (:func:`gflow.discrete.multistep_schedule`, any optax schedule;
            t = Σ η_i).
        steps: The steps to take.
        **kwargs: The options of :func:`run_discrete`.

    Returns:
        The run's :class:`gflow.Trajectory`.
    """
    return run_discrete(objective, model0, rule=gradient_descent(lr, positive_int("steps", steps)), steps=steps,
                        **kwargs)


def run_sgd(objective, model0, *, lr, steps: int, batch_size: int, key, **kwargs) -> Trajectory:
    """Minibatch SGD on an :class:`gflow.objectives.EmpiricalLoss` (finite dataset) or
    :class:`gflow.objectives.FreshGaussianSequences` (new sequences every step).

    Args:
        objective: The objective with minibatches.
        model0: As :func:`run_discrete`.
        lr: A number or a schedule, as :func:`run_gd`.
        steps: The steps to take.
        batch_size: The minibatch size.
        key: A ``jax.random.key`` seeding the sampling.
        **kwargs: The options of :func:`run_discrete`.

    Returns:
        The run's :class:`gflow.Trajectory`.
    """
    return run_discrete(objective, model0, rule=gradient_descent(lr, positive_int("steps", steps)), steps=steps,
                        batch_size=batch_size, key=key, **kwargs)


def run_adam(objective, model0, *, lr=1e-3, steps: int = 15_000, b1: float = 0.9, b2: float = 0.999,
             eps: float = 1e-8, **kwargs) -> Trajectory:
    """Adam with the papers' defaults (seed 000 App. C.1: lr 1e-3, 15 000 steps); full batch, or minibatches
    with ``batch_size`` and ``key``. Its time axis t = Σ lr_i is nominal.

    Args:
        objective: As :func:`run_discrete`.
        model0: As :func:`run_discrete`.
        lr: The step size (a number or a schedule).
        steps: The steps to take.
        b1: Adam's β₁.
        b2: Adam's β₂.
        eps: Adam's ε.
        **kwargs: The options of :func:`run_discrete`.

    Returns:
        The run's :class:`gflow.Trajectory`.
    """
    rule = adam(lr, b1, b2, eps, positive_int("steps", steps))
    return run_discrete(objective, model0, rule=rule, steps=steps, **kwargs)


def run_projected_gd(objective, model0, *, lr, steps: int, projection, **kwargs) -> Trajectory:
    """Projected GD θ ← P(θ − η ∇L(θ)) (seed 003's ‖·‖₂,∞-projected GD).

    Args:
        objective: As :func:`run_discrete`.
        model0: As :func:`run_discrete`.
        lr: A number or a schedule, as :func:`run_gd`.
        steps: The steps to take.
        projection: P, from :func:`gflow.discrete.box_projection`, :func:`gflow.discrete.ball_projection` or
            :func:`gflow.discrete.compose_projections`.
        **kwargs: The options of :func:`run_discrete`.

    Returns:
        The run's :class:`gflow.Trajectory`.
    """
    if projection is None:
        raise GflowInputError("`projection` is required for projected GD")
    return run_discrete(objective, model0, rule=gradient_descent(lr, positive_int("steps", steps)), steps=steps,
                        projection=projection, **kwargs)


def run_normalized_gd(objective, model0, *, lr, steps: int, beta: float = 0.8, soft_const: float = 1e-6,
                      average: str = "layer_norms", **kwargs) -> Trajectory:
    """GD with Slutzky et al.'s normalized step θ ← θ − lr_k / (√(γ_k / (1 − β^{k+1})) + c) ∇L
    (:func:`gflow.discrete.normalized_gradient_descent`).

    Their discrete training is this step with ``projection=diagonal_projection(model0)`` on a general LinearRNN and
    ``stop_loss``, ``continue_steps``; minibatches with ``batch_size`` and ``key``. The time axis sums the steps
    taken, ``diagnostics["step_size"]`` the step that led to each saved row (NaN at step 0).

    Args:
        objective: As :func:`run_discrete`.
        model0: As :func:`run_discrete`.
        lr: lr_k, a number or a schedule.
        steps: The steps to take.
        beta: β (their code's 0.8).
        soft_const: c (their code's 1e-6).
        average: What γ_k averages (their code's ``"layer_norms"``).
        **kwargs: The options of :func:`run_discrete`.

    Returns:
        The run's :class:`gflow.Trajectory`.
    """
    rule = normalized_gradient_descent(lr, beta, soft_const, average, positive_int("steps", steps))
    return run_discrete(objective, model0, rule=rule, steps=steps, **kwargs)
