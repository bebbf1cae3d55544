"""When a flow stops, and what its end means: the stopping event checked every step (:func:`stops`: divergence,
and L ≤ stop_loss), each flow's final row, and its status and message read from its final state.

The status of a flow (``gflow.results.STATUSES``): ``"diverged"`` when its parameters or loss are non-finite or
beyond the diverge thresholds, or the solver failed; ``"stopped_at_loss"`` when L ≤ stop_loss before t1;
``"max_steps"`` and ``"step_size_underflow"`` from the solver's result; else ``"completed"``.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ..results._trajectory import STATUSES
from ._options import FlowSetup
from ._problem import IntegratorOutput

COMPLETED, STOPPED_AT_LOSS, MAX_STEPS, DIVERGED, UNDERFLOW = (
    STATUSES.index(s) for s in ("completed", "stopped_at_loss", "max_steps", "diverged", "step_size_underflow"))


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


def status_codes(setup: FlowSetup, out: IntegratorOutput, diverge) -> np.ndarray:
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


def status_message(setup: FlowSetup, code: int, t_end: float, succeeded: bool) -> str:
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
