"""What a solve produced, and what it means: the integrator's outputs by name (:class:`IntegratorOutput`), each
flow's status, message, statistics and configuration, assembled into the plain data of a :class:`gflow.FlowBatch`.

The status of a flow is read from its final state (``gflow.results.STATUSES``): ``"diverged"`` when its parameters
or loss are non-finite or beyond the diverge thresholds, or the solver failed; ``"stopped_at_loss"`` when L ≤
stop_loss before t1; ``"max_steps"`` and ``"step_size_underflow"`` from the solver's result; else ``"completed"``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..models._abstract_rnn import AbstractRNN
from ..objectives._abstract_objective import AbstractSumOfSquares
from ..results._flow_batch import FlowBatch
from ..results._trajectory import STATUSES
from ..stacking import take
from ._gradient_flow_solver import evaluations_per_step, linear_solves_per_step

COMPLETED, STOPPED_AT_LOSS, MAX_STEPS, DIVERGED, UNDERFLOW = (
    STATUSES.index(s) for s in ("completed", "stopped_at_loss", "max_steps", "diverged", "step_size_underflow"))


class IntegratorOutput(NamedTuple):
    """What the compiled solve returns for each flow (with a leading flow axis once batched): ``ts`` the saved
    times and the final time (inf past the end of a flow that stopped early), ``ys`` the flat parameters there,
    ``losses`` L there, the solver's result (``hit_max_steps``, ``succeeded``, ``underflow``: the step size reached
    the resolution of t), its step counts, the Hessian-vector products of a solver that counts them (−1 otherwise),
    the steps rejected for an ascent of the loss, and ``time_restarts`` (set after the solve,
    gflow/flow/_solve.py: ``_continue_past_underflow``)."""

    ts: Any
    ys: Any
    losses: Any
    hit_max_steps: Any
    succeeded: Any
    steps: Any
    accepted: Any
    rejected: Any
    hessian_vector_products: Any
    underflow: Any
    rejected_ascent: Any
    time_restarts: Any = None

    def on_host(self, rows: int | None = None) -> "IntegratorOutput":
        """Every output as a writable numpy array, the first ``rows`` flows (all when None)."""
        return jax.tree_util.tree_map(lambda x: np.array(x if rows is None else np.asarray(x)[:rows]), self)


def stops(term, y, diverge_loss, diverge_norm, stop_loss, watch_loss: bool):
    """gflow's stopping event for a flow at θ = ``y`` (the lock-step and the refilling loops alike): parameters that
    are non-finite or beyond ``diverge_norm``, and with ``watch_loss`` (a loss threshold was asked for: one loss
    evaluation per step serves both rules) L ≤ ``stop_loss``, a non-finite L or |L| beyond ``diverge_loss``."""
    stop = jnp.logical_not(jnp.all(jnp.isfinite(y))) | (jnp.max(jnp.abs(y)) > diverge_norm)
    if watch_loss:
        value = term.loss_value(y)
        stop = stop | (value <= stop_loss) | jnp.logical_not(jnp.isfinite(value)) | (jnp.abs(value) > diverge_loss)
    return stop


def _last_true(mask) -> np.ndarray:
    """Per row of a (B, S) mask, the index of its last True entry (0 for a row with none)."""
    return mask.shape[1] - 1 - np.argmax(mask[:, ::-1], axis=1)


def final_rows(sol_ts) -> np.ndarray:
    """Index of each flow's final state: its last reached time (the SaveAt t1 row, or the last regular save
    when an event stopped the flow early)."""
    return _last_true(np.isfinite(sol_ts))


def saved_rows(sol_ts) -> np.ndarray:
    """(B, S) mask of real saves: reached times, without a save that the next reached row repeats (the final
    state of a flow that ran to t1)."""
    saved = np.isfinite(sol_ts)
    repeats = saved[:, :-1] & saved[:, 1:] & (sol_ts[:, :-1] == sol_ts[:, 1:])
    saved[:, :-1] &= ~repeats
    return saved


def last_finite_rows(ys, saved, theta0) -> np.ndarray:
    """Each flow's last saved parameter vector that is finite everywhere (θ0 if none is)."""
    good = saved & np.all(np.isfinite(ys), axis=2)
    out = ys[np.arange(ys.shape[0]), _last_true(good)]
    return np.where(good.any(axis=1)[:, None], out, theta0)


def status_codes(setup, out: IntegratorOutput, diverge) -> np.ndarray:
    """Each flow's status (an index into ``STATUSES``) from its final state, vectorized over the batch."""
    hit_max, succeeded, underflow = (np.asarray(x).astype(bool) for x in (out.hit_max_steps, out.succeeded,
                                                                          out.underflow))
    rows, last = np.arange(out.ts.shape[0]), final_rows(out.ts)
    final_t, final_y, final_loss = out.ts[rows, last], out.ys[rows, last], out.losses[rows, last]
    blew_up = (~np.all(np.isfinite(final_y), axis=1)) | (np.max(np.abs(final_y), axis=1, initial=0.0) > diverge[:, 1])
    diverged = blew_up | ~np.isfinite(final_loss) | (np.abs(final_loss) > diverge[:, 0]) | (~succeeded & ~underflow)
    stopped = np.zeros_like(diverged) if setup.stop_loss is None else \
        (final_loss <= setup.stop_loss) & (final_t < setup.t1)
    codes = np.full(final_t.shape, COMPLETED, dtype=np.int8)
    codes[stopped] = STOPPED_AT_LOSS
    codes[diverged] = DIVERGED
    codes[hit_max] = MAX_STEPS
    codes[underflow] = UNDERFLOW
    return codes


def status_message(setup, code: int, t_end: float, succeeded: bool) -> str:
    """What happened to a flow that did not complete, and what to do about it ("" for a completed one)."""
    if code == MAX_STEPS:
        return (f"reached max_steps={setup.max_steps} at t={t_end:.4g} before t1={setup.t1:.4g}: raise max_steps, "
                "or loosen rtol")
    if code == UNDERFLOW:
        return (f"step size underflow at t={t_end:.6g}: the flow needs steps below the float64 spacing of t "
                f"there ({np.spacing(t_end):.2g}); restart from the saved state with t0 = 0 (the flow is "
                "autonomous: shift the times back afterwards), or loosen rtol")
    if code == DIVERGED:
        return (f"the parameters or |loss| became non-finite or grew by more than {setup.diverge_factor:.0e}× "
                f"at t={t_end:.4g}" if succeeded else "the solver failed (step size collapsed or non-finite values)")
    if code == STOPPED_AT_LOSS:
        return f"L ≤ {setup.stop_loss:g} at t={t_end:.6g}"
    return ""


def _hessian_products(accepted_count: int, steps: int, accepted: int) -> dict:
    """Stats of a solver that counts its Hessian-vector products over the accepted steps (the solver state of a
    rejected step is dropped): the count, and the total with rejected steps estimated at the accepted mean. Empty
    for other solvers (count −1)."""
    if accepted_count < 0:
        return {}
    total = round(accepted_count * steps / max(accepted, 1))
    return {"hessian_vector_products": total, "hessian_vector_products_accepted": accepted_count}


def flow_stats(solver, steps: int, accepted: int, rejected: int, ascents: int, restarts: int, products: int,
               wall: float) -> dict:
    """A flow's ``stats``: its step counts, and its gradient evaluations and linear solves as the solver declares
    them per step (gflow/flow/_gradient_flow_solver.py; None where unknown)."""
    evals, solves = evaluations_per_step(solver), linear_solves_per_step(solver)
    products = _hessian_products(products, steps, accepted)
    return {
        "steps": steps, "accepted_steps": accepted, "rejected_steps": rejected, "rejected_ascent": ascents,
        "time_restarts": restarts,
        "gradient_evaluations": None if evals is None else int(evals * steps + 1),
        "linear_solves": None if solves is None else int(solves * steps) + products.get("hessian_vector_products", 0),
        **products,
        "wall_time_s": wall,
    }


def _loss_description(loss) -> dict:
    """convention, k and weighting of a sum-of-squares loss (AbstractSumOfSquares.description); unknown otherwise."""
    if isinstance(loss, AbstractSumOfSquares):
        return loss.description()
    return {"convention": "unknown", "k": None, "weighting": None}


def _model_description(model) -> dict:
    """structure and parameterization of a gflow RNN (AbstractRNN.description); None for other modules."""
    if isinstance(model, AbstractRNN):
        return model.description()
    return {"structure": None, "parameterization": None}


def flow_config(setup, atol: float, loss, model, n_params: int, config: dict) -> dict:
    """A flow's ``config``: the solve's options, its atol, what its loss and model are, and the caller's
    ``config`` (which wins)."""
    out = {
        "t0": setup.t0, "t1": setup.t1, "rtol": setup.rtol, "atol": atol,
        "solver": setup.solver_name, "stop_loss": setup.stop_loss, "max_steps": setup.max_steps,
        "loss": type(loss).__name__, **_loss_description(loss), "model": type(model).__name__,
        **_model_description(model), "n_params": n_params,
    }
    if setup.controller is not None:  # the user's controller replaced rtol and atol
        out.update(rtol=None, atol=None, stepsize_controller=repr(setup.controller))
    out.update(config)
    return out


def _on_host(tree):
    return jax.tree_util.tree_map(lambda x: np.asarray(x) if eqx.is_array(x) else x, tree)


def build_flow_batch(setup, losses, models0, theta0, diverge, atol, out: IntegratorOutput, wall, diagnostics,
                     config) -> FlowBatch:
    """A FlowBatch from the integrator's outputs (numpy arrays with a leading flow axis, ``time_restarts`` set):
    statuses, messages, statistics and configurations built here, so the batch holds plain data."""
    saved = saved_rows(out.ts)
    ts = np.where(saved, out.ts, np.nan)
    codes = status_codes(setup, out, diverge)
    counts = {name: np.asarray(x).astype(np.int64) for name, x in (
        ("steps", out.steps), ("accepted_steps", out.accepted), ("rejected_steps", out.rejected),
        ("rejected_ascent", out.rejected_ascent), ("time_restarts", out.time_restarts),
        ("hessian_vector_products", out.hessian_vector_products))}
    succeeded, atol, config = out.succeeded.astype(bool), np.asarray(atol, dtype=np.float64), dict(config or {})
    losses_host, models_host = _on_host((losses, models0))
    n_params = int(out.ys.shape[2])
    messages, stats, configs = [], [], []
    for i in range(len(codes)):
        t_end = float(ts[i][saved[i]][-1])
        messages.append(status_message(setup, int(codes[i]), t_end, bool(succeeded[i])))
        stats.append(flow_stats(setup.solver, *(int(counts[k][i]) for k in (
            "steps", "accepted_steps", "rejected_steps", "rejected_ascent", "time_restarts",
            "hessian_vector_products")), wall))
        configs.append(flow_config(setup, float(atol[i]), take(losses_host, i), take(models_host, i), n_params,
                                   config))
    return FlowBatch(ts=ts, saved=saved, loss=out.losses, params=out.ys, diagnostics=diagnostics,
                     final_params=last_finite_rows(out.ys, saved, theta0), status_codes=codes, **counts,
                     wall_time_s=wall, config=config, _models0=models0, _messages=tuple(messages),
                     _stats=tuple(stats), _configs=tuple(configs))
