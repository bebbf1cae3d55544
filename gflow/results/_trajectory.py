"""What a run produced: saved times, losses, diagnostics, parameters, solver statistics and status.

Saved to a folder (``arrays.npz``, ``meta.json``, and the final model as ``model.json`` + ``model.npz``, see
gflow/results/_model_file.py: no pickle) and loaded back in one line:
``traj = gflow.load_trajectory("runs/eps1e-3")``.
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any

import numpy as np

from ..models._flatten import flatten, unflatten
from ._json import jsonable
from ._model_file import load_model, read_npz, save_model
from ._provenance import package_versions, provenance

STATUSES = ("completed", "stopped_at_loss", "max_steps", "diverged", "step_size_underflow")


@dataclasses.dataclass
class Trajectory:
    """One integrated (or discretely trained) run.

    ``ts`` saved times; ``loss`` L at those times; ``diagnostics`` name → values at those times; ``params``
    the flat parameter vector at those times (rows); ``final`` the model at the end; ``stats`` steps,
    rejected steps, gradient evaluations, wall time; ``status`` one of ``STATUSES``; ``config`` how it was
    produced, including the loss convention (L or L/2), which sets the time unit.
    """

    ts: np.ndarray
    loss: np.ndarray
    diagnostics: dict[str, np.ndarray]
    params: np.ndarray
    final: Any
    stats: dict[str, Any]
    status: str
    message: str = ""
    config: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def convention(self) -> str:
        return self.config.get("convention", "unknown")

    def model_at(self, i: int):
        """The model saved at ``ts[i]``."""
        _, static, unravel = flatten(self.final)
        return unflatten(self.params[i], static, unravel)

    def __repr__(self) -> str:
        return (f"Trajectory(status={self.status!r}, {len(self.ts)} saved times up to t={self.ts[-1]:.3g}, "
                f"final loss={self.loss[-1]:.3e}, steps={self.stats.get('steps')}, "
                f"wall={self.stats.get('wall_time_s', float('nan')):.2f}s)")

    # ------------------------------------------------------------------------------------------------
    def save(self, path: str) -> str:
        """Write the trajectory to the folder ``path`` (created if needed); returns ``path``."""
        os.makedirs(path, exist_ok=True)
        arrays = {"ts": self.ts, "loss": self.loss, "params": self.params}
        arrays.update({f"diag__{k}": np.asarray(v) for k, v in self.diagnostics.items()})
        tmp = os.path.join(path, ".arrays.tmp.npz")
        np.savez_compressed(tmp, **arrays)
        os.replace(tmp, os.path.join(path, "arrays.npz"))
        save_model(self.final, path)
        meta = {"status": self.status, "message": self.message, "stats": self.stats, "config": self.config,
                "convention": self.convention, "versions": package_versions(), "provenance": provenance()}
        with open(os.path.join(path, "meta.json"), "w") as f:
            json.dump(jsonable(meta), f, indent=2, default=str)
        return path

    @classmethod
    def load(cls, path: str) -> "Trajectory":
        final = load_model(path)  # first: a folder from an older gflow gets its conversion hint
        arrays = read_npz(os.path.join(path, "arrays.npz"))
        with open(os.path.join(path, "meta.json")) as f:
            meta = json.load(f)
        diags = {k[len("diag__"):]: v for k, v in arrays.items() if k.startswith("diag__")}
        return cls(ts=arrays["ts"], loss=arrays["loss"], diagnostics=diags, params=arrays["params"],
                   final=final, stats=meta["stats"], status=meta["status"], message=meta.get("message", ""),
                   config=meta["config"])


def load_trajectory(path: str) -> Trajectory:
    """Load a trajectory saved with :meth:`Trajectory.save`."""
    return Trajectory.load(path)
