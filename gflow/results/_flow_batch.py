"""What a batch of runs produced (flows or discrete runs alike): arrays with a leading run axis, and each run's
Trajectory on demand.

:func:`gflow.solve_flows` and the batched discrete runners (:func:`gflow.discrete.run_discrete_batch`, ...) return a
:class:`FlowBatch`. Its arrays keep the batch axis (no Python loop over runs), ``batch[i]`` is the familiar
:class:`gflow.Trajectory` of run i (built when first asked for), and iterating gives them all, so code written for a
list of trajectories keeps working. A FlowBatch holds plain data: the statuses, messages, statistics and
configurations were built by the run that made it.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Any

import equinox as eqx
import jax
import numpy as np

from ..models._flatten import host_unravel
from ..stacking import take
from ._trajectory import STATUSES, Trajectory

# the counts a flow's stats hold (a discrete batch holds "steps" only)
COUNTS = ("steps", "accepted_steps", "rejected_steps", "rejected_ascent", "time_restarts", "hessian_vector_products")


@dataclasses.dataclass(eq=False)
class FlowBatch(Sequence):
    """B runs made together (one compiled call): flows, or discrete runs of any method.

    Attributes:
        ts: (B, S) saved times, NaN where a run stopped before that time.
        saved: (B, S) the real rows (the final state is the last saved row of each run).
        loss: (B, S) the loss at the saved rows.
        params: (B, S, n) flat parameter vectors at the saved rows.
        diagnostics: name → (B, S).
        final_params: (B, n) the parameters at the last time each run reached (``final``: the final models as one
            stacked module).
        status_codes: (B,) indices into ``gflow.results.STATUSES`` (``statuses`` gives the names).
        stats: name → (B,) int64 counts of the method that made the batch. Every method: ``steps``. A flow adds
            ``accepted_steps``, ``rejected_steps``, ``rejected_ascent`` (the rejected steps that would have raised
            the loss), ``time_restarts`` (the continuations in a fresh local time after a step-size underflow) and
            ``hessian_vector_products`` (over the accepted steps, −1 for a solver that uses none). Each count is
            also an attribute (``batch.steps``).
        wall_time_s: The batch's wall time.
        config: What the batch was asked (the caller's ``config``, and the method).
    """

    ts: np.ndarray
    saved: np.ndarray
    loss: np.ndarray
    params: np.ndarray
    diagnostics: dict[str, np.ndarray]
    final_params: np.ndarray
    status_codes: np.ndarray
    stats: dict[str, np.ndarray]
    wall_time_s: float
    config: dict[str, Any]
    _models0: Any = dataclasses.field(repr=False)  # the stacked starts: the structure of ``final``
    _messages: tuple[str, ...] = dataclasses.field(repr=False)  # each flow's Trajectory.message
    _stats: tuple[dict, ...] = dataclasses.field(repr=False)  # each flow's Trajectory.stats
    _configs: tuple[dict, ...] = dataclasses.field(repr=False)  # each flow's Trajectory.config
    _trajectories: dict = dataclasses.field(default_factory=dict, repr=False)

    def __getattr__(self, name: str):
        """A count of ``stats`` as an attribute (``batch.steps``, ``batch.rejected_steps``, ...)."""
        stats = self.__dict__.get("stats")
        if stats is not None and name in stats:
            return stats[name]
        if name in COUNTS:
            method = (self.__dict__.get("config") or {}).get("method", "flow")
            raise AttributeError(f"this batch ({method}) has no count {name!r}: its stats hold {sorted(stats or {})}")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

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
        return eqx.combine(self._unravel(self.final_params), static)

    @functools.cached_property
    def _unravel(self):
        """Flat parameter vector → the model's trained arrays (the same for every flow: it depends on shapes)."""
        return host_unravel(take(self._host_models0, 0))

    @functools.cached_property
    def _host_models0(self):
        """The stacked starts copied to the host once, so that a flow's row is a numpy index."""
        return jax.tree_util.tree_map(lambda x: np.asarray(x) if eqx.is_array(x) else x, self._models0)

    @functools.cached_property
    def _host_static(self):
        """The stacked starts' non-trained part (e.g. Frozen layers), on the host."""
        return eqx.partition(self._host_models0, eqx.is_inexact_array)[1]

    def __repr__(self) -> str:
        counts = {s: int(np.sum(self.status_codes == STATUSES.index(s))) for s in STATUSES}
        return (f"FlowBatch({len(self)} flows, {', '.join(f'{v} {k}' for k, v in counts.items() if v)}; steps "
                f"mean {np.mean(self.steps):.0f}, max {np.max(self.steps)}; wall {self.wall_time_s:.2f}s)")

    def _trajectory(self, i: int) -> Trajectory:
        keep = self.saved[i]
        # the non-trained arrays of flow i (e.g. Frozen layers), back on the device in one batched transfer
        arrays, rest = eqx.partition(take(self._host_static, i), eqx.is_array)
        static = eqx.combine(jax.device_put(arrays), rest)
        return Trajectory(ts=self.ts[i][keep], loss=self.loss[i][keep],
                          diagnostics={k: v[i][keep] for k, v in self.diagnostics.items()},
                          params=self.params[i][keep],
                          final=eqx.combine(self._unravel(self.final_params[i]), static),
                          stats=dict(self._stats[i]), status=STATUSES[int(self.status_codes[i])],
                          message=self._messages[i], config=dict(self._configs[i]))
