"""What a run produced: saved times, losses, diagnostics, parameters, solver statistics and status.

Saved to a folder (``arrays.npz``, ``meta.json``, and the final model as ``model.json`` + ``model.npz``, without
pickle: :func:`gflow.results.save_model`) and loaded back in one line, its files checked against what ``meta.json``
records: ``traj = gflow.load_trajectory("runs/eps1e-3")``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import uuid
from typing import Any

import numpy as np

from .._checks import GflowInputError
from ..models._flatten import flatten, unflatten
from . import _contents
from ._file_reading import read_json, read_npz
from ._json import jsonable
from ._model_file import load_model, save_model
from ._provenance import package_versions, provenance

ARRAYS, META = "arrays.npz", "meta.json"
STATUSES = ("completed", "stopped_at_loss", "max_steps", "diverged", "step_size_underflow")


@dataclasses.dataclass
class Trajectory:
    """One integrated (or discretely trained) run.

    Attributes:
        ts: The saved times.
        loss: L at those times.
        diagnostics: name → values at those times.
        params: The flat parameter vector at those times (rows).
        final: The model at the end.
        stats: Steps, rejected steps, gradient evaluations, wall time (the method's counts).
        status: One of ``STATUSES``.
        message: What happened to a run that did not complete ("" for one that did).
        config: How it was produced, including the loss convention (L or L/2), which sets the time unit.
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
    def save(self, path: str, overwrite: bool = False) -> str:
        """Write the trajectory to the folder ``path``.

        An existing folder is refused unless ``overwrite=True``, which replaces a saved trajectory (never a folder
        of other files). The folder is written beside ``path`` and renamed into place, so a crash mid-save leaves
        the old trajectory or none, never half of one. ``meta.json`` records what the folder holds (the shape of
        every array, the model's parameter count, the SHA-256 of every other file), which
        :func:`load_trajectory` checks.

        Args:
            path: The folder.
            overwrite: Replace a trajectory saved there.

        Returns:
            ``path``.

        Raises:
            GflowInputError: ``path`` holds something else, or the trajectory's arrays do not fit together or do
                not fit its final model (one row of its parameters per saved time).
        """
        _check_target(path, overwrite)
        parent = os.path.dirname(os.path.abspath(path))
        os.makedirs(parent, exist_ok=True)
        tmp = os.path.join(parent, f".{os.path.basename(os.path.abspath(path))}.saving-{uuid.uuid4().hex[:12]}")
        os.mkdir(tmp)  # not mkdtemp: its mode 0700 would stay on the renamed folder
        try:
            self._write(tmp)
            _move_into_place(tmp, path)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return path

    def _write(self, folder: str) -> None:
        arrays = {"ts": np.asarray(self.ts), "loss": np.asarray(self.loss), "params": np.asarray(self.params)}
        arrays.update({f"diag__{k}": np.asarray(v) for k, v in self.diagnostics.items()})
        n_params = _contents.model_size(self.final)
        _contents.check_consistent(arrays, n_params)
        np.savez_compressed(os.path.join(folder, ARRAYS), **arrays)
        model_files = save_model(self.final, folder)
        meta = {"status": self.status, "message": self.message, "stats": self.stats, "config": self.config,
                "convention": self.convention, "versions": package_versions(), "provenance": provenance(),
                **_contents.record(folder, arrays, n_params, [ARRAYS, *model_files])}
        with open(os.path.join(folder, META), "w") as f:
            json.dump(jsonable(meta), f, indent=2, default=str)

    @classmethod
    def load(cls, path: str) -> "Trajectory":
        """The trajectory saved in the folder ``path`` (:func:`load_trajectory`), its files checked against what
        its ``meta.json`` records.

        Args:
            path: The folder.

        Returns:
            The :class:`Trajectory`.

        Raises:
            GflowInputError: A file is missing, damaged, or not what ``meta.json`` records (the file named).
        """
        final = load_model(path)  # first: a folder from an older gflow gets its conversion hint
        arrays = read_npz(os.path.join(path, ARRAYS))
        meta = read_json(os.path.join(path, META))
        if not isinstance(meta, dict) or not {"stats", "status", "config"} <= set(meta):
            raise GflowInputError(f"{os.path.join(path, META)} is not a saved trajectory's metadata (no stats, status "
                                  "and config); re-run the computation that wrote it, or save it again")
        _contents.check(path, meta, arrays, final, meta_file=META, arrays_file=ARRAYS,
                        model_files=("model.json", "model.npz"))
        diags = {k[len("diag__"):]: v for k, v in arrays.items() if k.startswith("diag__")}
        return cls(ts=arrays["ts"], loss=arrays["loss"], diagnostics=diags, params=arrays["params"],
                   final=final, stats=meta["stats"], status=meta["status"], message=meta.get("message", ""),
                   config=meta["config"])


def _check_target(path: str, overwrite: bool) -> None:
    """Refuse to save over an existing folder unless ``overwrite``, and never over one that is not a trajectory."""
    if not os.path.lexists(path) or (os.path.isdir(path) and not os.listdir(path)):
        return
    if not os.path.isdir(path) or not os.path.exists(os.path.join(path, META)):
        raise GflowInputError(f"cannot save a trajectory to {path!r}: it exists and is not a saved trajectory "
                              "folder (no meta.json); choose another path")
    if not overwrite:
        raise GflowInputError(f"{path!r} already holds a saved trajectory; pass overwrite=True to replace it, or "
                              "choose another path")


def _move_into_place(tmp: str, path: str) -> None:
    """Rename the written folder ``tmp`` to ``path``; an old folder there is moved aside first, then deleted."""
    if not os.path.lexists(path):
        os.replace(tmp, path)
        return
    old = tmp + "-old"
    os.replace(path, old)
    os.replace(tmp, path)
    shutil.rmtree(old)


def load_trajectory(path: str) -> Trajectory:
    """Load a trajectory saved with :meth:`Trajectory.save`.

    Its arrays and final model are checked against its ``meta.json``: the shape of every array, the model's
    parameter count and the SHA-256 of every file recorded at save time (a folder saved before these were
    recorded: the parameter count of its run's ``config``, the width of ``params`` and the number of saved rows).

    Args:
        path: The folder it was saved to.

    Returns:
        The :class:`Trajectory`.

    Raises:
        GflowInputError: A file is missing, damaged, or does not hold what ``meta.json`` records (a model file
            copied from another run, say): the message names the file and what differs.
    """
    return Trajectory.load(path)
