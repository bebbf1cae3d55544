"""What a batch of flows produced: arrays with a leading flow axis, and each flow's Trajectory on demand.

:func:`gflow.solve_flows` returns a :class:`FlowBatch`. Its arrays keep the batch axis (no Python loop over
flows), ``batch[i]`` is the familiar :class:`gflow.Trajectory` of flow i (built when first asked for), and
iterating gives them all, so code written for a list of trajectories keeps working.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..batching import take
from ..models._abstract_rnn import AbstractRNN
from ..models._flatten import flatten
from ..objectives._abstract_objective import AbstractSumOfSquares
from ._trajectory import STATUSES, Trajectory

COMPLETED, STOPPED_AT_LOSS, MAX_STEPS, DIVERGED, UNDERFLOW = (
    STATUSES.index(s) for s in ("completed", "stopped_at_loss", "max_steps", "diverged", "step_size_underflow"))


@dataclasses.dataclass(eq=False)
class FlowBatch(Sequence):
    """B flows integrated together (one compiled call).

    - ``ts`` (B, S): saved times, NaN where a flow stopped before that time; ``saved`` (B, S) marks the real
      rows (the final state is the last saved row of each flow); ``loss`` (B, S); ``params`` (B, S, n) flat
      parameter vectors; ``diagnostics`` name → (B, S).
    - ``final_params`` (B, n): the parameters at the last time each flow reached; ``final`` the final models
      as one stacked module.
    - ``status_codes`` (B,): indices into ``gflow.Trajectory`` statuses (``statuses`` gives the names);
      ``steps``, ``accepted_steps``, ``rejected_steps`` (B,), ``rejected_ascent`` (B,) the rejected steps that
      would have raised the loss, ``time_restarts`` (B,) the continuations in a fresh local time after a step-size
      underflow (gflow/flow/_solve.py); ``hessian_vector_products`` (B,) over the accepted steps, −1 for a solver that uses
      none; ``wall_time_s`` the batch's time.
    """

    ts: np.ndarray
    saved: np.ndarray
    loss: np.ndarray
    params: np.ndarray
    diagnostics: dict[str, np.ndarray]
    final_params: np.ndarray
    status_codes: np.ndarray
    steps: np.ndarray
    accepted_steps: np.ndarray
    rejected_steps: np.ndarray
    rejected_ascent: np.ndarray
    time_restarts: np.ndarray
    hessian_vector_products: np.ndarray
    wall_time_s: float
    config: dict[str, Any]
    _losses: Any = dataclasses.field(repr=False)
    _models0: Any = dataclasses.field(repr=False)
    _setup: Any = dataclasses.field(repr=False)
    _succeeded: np.ndarray = dataclasses.field(repr=False)
    _atol: np.ndarray = dataclasses.field(repr=False)
    _trajectories: dict = dataclasses.field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return int(self.status_codes.shape[0])

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        i = int(i)
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(f"flow {i} out of range for a batch of {len(self)}")
        if i not in self._trajectories:
            self._trajectories[i] = self._trajectory(i)
        return self._trajectories[i]

    @property
    def statuses(self) -> list[str]:
        return [STATUSES[c] for c in self.status_codes]

    @property
    def final(self):
        """The final models, stacked (leading batch axis)."""
        static = eqx.partition(self._models0, eqx.is_inexact_array)[1]  # stacked, e.g. each flow's Frozen layers
        return eqx.combine(jax.vmap(self._unravel)(jnp.asarray(self.final_params)), static)

    @functools.cached_property
    def _unravel(self):
        """Flat parameter vector → the model's trained arrays (the same for every flow: it depends on shapes)."""
        return flatten(take(self._models0, 0))[2]

    @functools.cached_property
    def _host(self):
        """The stacked losses and starts copied to the host once, so that a flow's row is a numpy index."""
        return jax.tree_util.tree_map(lambda x: np.asarray(x) if eqx.is_array(x) else x, (self._losses, self._models0))

    def __repr__(self) -> str:
        counts = {s: int(np.sum(self.status_codes == STATUSES.index(s))) for s in STATUSES}
        return (f"FlowBatch({len(self)} flows, {', '.join(f'{v} {k}' for k, v in counts.items() if v)}; steps "
                f"mean {np.mean(self.steps):.0f}, max {np.max(self.steps)}; wall {self.wall_time_s:.2f}s)")

    def _trajectory(self, i: int) -> Trajectory:
        setup = self._setup
        keep = self.saved[i]
        loss_i, model_i = take(self._host, i)
        # the non-trained arrays of flow i (e.g. Frozen layers), back on the device
        static = jax.tree_util.tree_map(lambda x: jnp.asarray(x) if eqx.is_array(x) else x,
                                        eqx.partition(model_i, eqx.is_inexact_array)[1])
        code = int(self.status_codes[i])
        t_end = float(self.ts[i][keep][-1])
        if code == MAX_STEPS:
            message = (f"reached max_steps={setup.max_steps} at t={t_end:.4g} before t1={setup.t1:.4g}: raise max_steps, "
                       "or loosen rtol")
        elif code == UNDERFLOW:
            message = (f"step size underflow at t={t_end:.6g}: the flow needs steps below the float64 spacing of t "
                       f"there ({np.spacing(t_end):.2g}); restart from the saved state with t0 = 0 (the flow is "
                       "autonomous: shift the times back afterwards), or loosen rtol")
        elif code == DIVERGED:
            message = (f"the parameters or |loss| became non-finite or grew by more than {setup.diverge_factor:.0e}× "
                       f"at t={t_end:.4g}" if self._succeeded[i]
                       else "the solver failed (step size collapsed or non-finite values)")
        elif code == STOPPED_AT_LOSS:
            message = f"L ≤ {setup.stop_loss:g} at t={t_end:.6g}"
        else:
            message = ""
        steps = int(self.steps[i])
        evals, solves = setup.evaluations_per_step, setup.linear_solves_per_step
        products = _hessian_products(int(self.hessian_vector_products[i]), steps, int(self.accepted_steps[i]))
        stats = {
            "steps": steps, "accepted_steps": int(self.accepted_steps[i]),
            "rejected_steps": int(self.rejected_steps[i]), "rejected_ascent": int(self.rejected_ascent[i]),
            "time_restarts": int(self.time_restarts[i]),
            "gradient_evaluations": None if evals is None else int(evals * steps + 1),
            "linear_solves": None if solves is None else int(solves * steps) + products.get("hessian_vector_products", 0),
            **products,
            "wall_time_s": self.wall_time_s,
        }
        config = {
            "t0": setup.t0, "t1": setup.t1, "rtol": setup.rtol, "atol": float(self._atol[i]),
            "solver": setup.solver_name, "stop_loss": setup.stop_loss, "max_steps": setup.max_steps,
            "loss": type(loss_i).__name__, **_loss_description(loss_i), "model": type(model_i).__name__,
            **_model_description(model_i),
            "n_params": int(self.final_params.shape[1]),
        }
        if setup.controller is not None:  # the user's controller replaced rtol and atol
            config.update(rtol=None, atol=None, stepsize_controller=repr(setup.controller))
        config.update(self.config or {})
        return Trajectory(ts=self.ts[i][keep], loss=self.loss[i][keep],
                          diagnostics={k: v[i][keep] for k, v in self.diagnostics.items()},
                          params=self.params[i][keep],
                          final=eqx.combine(self._unravel(jnp.asarray(self.final_params[i])), static),
                          stats=stats, status=STATUSES[code], message=message, config=config)


def _last_true(mask) -> np.ndarray:
    """Per row of a (B, S) mask, the index of its last True entry (0 for a row with none)."""
    return mask.shape[1] - 1 - np.argmax(mask[:, ::-1], axis=1)


def final_rows(sol_ts) -> np.ndarray:
    """Index of each flow's final state: its last reached time (the SaveAt t1 row, or the last regular save
    when an event stopped the flow early)."""
    return _last_true(np.isfinite(sol_ts))


def status_codes(setup, sol_ts, ys, losses, hit_max_steps, succeeded, diverge, underflow) -> np.ndarray:
    """Each flow's status from its final state, vectorized over the batch."""
    rows, last = np.arange(sol_ts.shape[0]), final_rows(sol_ts)
    final_t, final_y, final_loss = sol_ts[rows, last], ys[rows, last], losses[rows, last]
    blew_up = (~np.all(np.isfinite(final_y), axis=1)) | (np.max(np.abs(final_y), axis=1, initial=0.0) > diverge[:, 1])
    diverged = blew_up | ~np.isfinite(final_loss) | (np.abs(final_loss) > diverge[:, 0]) | (~succeeded & ~underflow)
    stopped = np.zeros_like(diverged) if setup.stop_loss is None else \
        (final_loss <= setup.stop_loss) & (final_t < setup.t1)
    codes = np.full(final_t.shape, COMPLETED, dtype=np.int8)
    codes[stopped] = STOPPED_AT_LOSS
    codes[diverged] = DIVERGED
    codes[hit_max_steps] = MAX_STEPS
    codes[underflow] = UNDERFLOW
    return codes


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


def build(setup, losses, models0, theta0, diverge, atol, out, wall, diagnostics, config) -> FlowBatch:
    """Assemble a FlowBatch from the integrator's outputs (numpy arrays with a leading batch axis)."""
    sol_ts, ys, losses_v, hit_max, succeeded, steps, accepted, rejected, products, underflow, ascents, restarts = out
    saved = saved_rows(sol_ts)
    codes = status_codes(setup, sol_ts, ys, losses_v, hit_max.astype(bool), succeeded.astype(bool), diverge,
                         underflow.astype(bool))
    return FlowBatch(ts=np.where(saved, sol_ts, np.nan), saved=saved, loss=losses_v, params=ys,
                     diagnostics=diagnostics, final_params=last_finite_rows(ys, saved, theta0), status_codes=codes,
                     steps=steps.astype(np.int64), accepted_steps=accepted.astype(np.int64),
                     rejected_steps=rejected.astype(np.int64), rejected_ascent=ascents.astype(np.int64),
                     time_restarts=restarts.astype(np.int64),
                     hessian_vector_products=products.astype(np.int64),
                     wall_time_s=wall, config=dict(config or {}),
                     _losses=losses, _models0=models0, _setup=setup, _succeeded=succeeded.astype(bool),
                     _atol=np.asarray(atol, dtype=np.float64))


def _hessian_products(accepted_count: int, steps: int, accepted: int) -> dict:
    """Stats of a solver that counts its Hessian-vector products over the accepted steps (the solver state of a
    rejected step is dropped): the count, the total with rejected steps estimated at the accepted mean, and each
    also as extra preconditioned solves (one per Richardson iteration). Empty for other solvers (count −1)."""
    if accepted_count < 0:
        return {}
    total = round(accepted_count * steps / max(accepted, 1))
    return {"hessian_vector_products": total, "hessian_vector_products_accepted": accepted_count}


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
