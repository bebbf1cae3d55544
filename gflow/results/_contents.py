"""What a saved trajectory folder holds, recorded in its ``meta.json`` at save time and checked on load: the shape of
every array, the model's parameter count and the SHA-256 of every other file. A file replaced or changed after
saving (a model copied in from another run, an ``arrays.npz`` from another folder) is a
:class:`gflow.GflowInputError` that names it and says what differs, instead of a trajectory whose ``final`` is
another run's model.

A folder written before these were recorded has no ``shapes``, ``n_params`` or ``files`` in its ``meta.json``: what
can still be checked is checked: the parameter count its run's ``config`` records, the width of ``params`` and the
number of saved rows.
"""

from __future__ import annotations

import os

import numpy as np

from .._checks import GflowInputError
from ..models._flatten import flatten
from ._file_sha256 import file_sha256

_REMEDY = "re-run the computation that wrote it, or save it again"


def model_size(model) -> int:
    """The number of trained parameters of ``model`` (the length of its flat θ)."""
    return int(np.size(flatten(model)[0]))


def check_consistent(arrays: dict[str, np.ndarray], n_params: int) -> None:
    """Refuse to save a trajectory whose arrays do not fit together or do not fit its final model.

    Args:
        arrays: ``ts``, ``loss``, ``params`` and the diagnostics.
        n_params: The final model's parameter count.

    Raises:
        GflowInputError: ``ts``, ``loss`` and ``params`` hold different numbers of saved rows, or a row of
            ``params`` is not a θ of the final model.
    """
    rows = {k: np.shape(arrays[k])[0] if np.ndim(arrays[k]) else None for k in ("ts", "loss", "params")}
    if len(set(rows.values())) != 1:
        raise GflowInputError(f"cannot save this trajectory: ts, loss and params hold {rows['ts']}, {rows['loss']} and "
                              f"{rows['params']} saved rows; they must hold one row per saved time each")
    width = np.shape(arrays["params"])[-1] if np.ndim(arrays["params"]) == 2 else None
    if width != n_params:
        raise GflowInputError(f"cannot save this trajectory: its params have shape {np.shape(arrays['params'])}, but "
                              f"its final model has {n_params} parameters (one row of {n_params} per saved time)")


def record(folder: str, arrays: dict[str, np.ndarray], n_params: int, files: list[str]) -> dict:
    """The ``meta.json`` entries that say what a folder holds.

    Args:
        folder: The folder the files were written to.
        arrays: The arrays written to ``arrays.npz``.
        n_params: The final model's parameter count.
        files: The files written (relative to ``folder``).

    Returns:
        ``{"n_params": ..., "shapes": {array: shape}, "files": {file: SHA-256}}``.
    """
    return {"n_params": int(n_params),
            "shapes": {k: list(np.shape(v)) for k, v in arrays.items()},
            "files": {name: file_sha256(os.path.join(folder, name)) for name in sorted(files)}}


def check(folder: str, meta: dict, arrays: dict[str, np.ndarray], model, *, meta_file: str, arrays_file: str,
          model_files: tuple[str, str]) -> None:
    """Check a loaded folder's arrays and model against its ``meta.json``.

    Args:
        folder: The folder.
        meta: Its ``meta.json``.
        arrays: The arrays read from ``arrays_file``.
        model: The model read from ``model_files``.
        meta_file: The name of the metadata file.
        arrays_file: The name of the arrays file.
        model_files: The names of the model's two files (``.json``, ``.npz``).

    Raises:
        GflowInputError: A file does not hold what ``meta.json`` records (the file named, and what differs).
    """
    meta_path, arrays_path = os.path.join(folder, meta_file), os.path.join(folder, arrays_file)
    model_paths = " and ".join(os.path.join(folder, f) for f in model_files)
    shapes = meta.get("shapes")
    if isinstance(shapes, dict):
        found = {k: list(np.shape(v)) for k, v in arrays.items()}
        if found != shapes:
            differ = sorted(k for k in set(found) | set(shapes) if found.get(k) != shapes.get(k))
            said = ", ".join(f"{k}: {_shape(found.get(k))} where {meta_file} records {_shape(shapes.get(k))}"
                             for k in differ)
            raise GflowInputError(f"{arrays_path} does not hold the arrays {meta_path} records ({said}): it was "
                                  f"replaced or changed after saving; {_REMEDY}")
    n_model = model_size(model)
    recorded = meta.get("n_params")
    source = "n_params"
    if not isinstance(recorded, int):  # a folder written before the contents were recorded: its run's config
        recorded, source = (meta.get("config") or {}).get("n_params"), "config.n_params"
    if isinstance(recorded, int) and not isinstance(recorded, bool) and recorded != n_model:
        raise GflowInputError(f"{model_paths} hold a model with {n_model} parameters, but {meta_path} records "
                              f"{source} = {recorded}: the model file does not belong to this trajectory (replaced, "
                              f"or copied from another run); {_REMEDY}")
    params = arrays.get("params")
    if params is not None and (np.ndim(params) != 2 or np.shape(params)[1] != n_model):
        raise GflowInputError(f"{arrays_path} holds params of shape {np.shape(params)}, but the model in "
                              f"{model_paths} has {n_model} parameters (one row of {n_model} per saved time): the "
                              f"files do not belong together; {_REMEDY}")
    rows = {k: np.shape(arrays[k])[0] for k in ("ts", "loss", "params") if k in arrays and np.ndim(arrays[k])}
    if len(set(rows.values())) > 1:
        raise GflowInputError(f"{arrays_path} holds {', '.join(f'{v} rows of {k}' for k, v in rows.items())}: one "
                              f"row per saved time each was written; {_REMEDY}")
    files = meta.get("files")
    if isinstance(files, dict):
        for name, digest in sorted(files.items()):
            path = os.path.join(folder, name)
            if not os.path.exists(path):
                raise GflowInputError(f"{path} is missing: {meta_path} records it; {_REMEDY}")
            found = file_sha256(path)
            if found != digest:
                raise GflowInputError(f"{path} is not the file saved with this trajectory: its SHA-256 is "
                                      f"{found[:12]}…, {meta_file} records {str(digest)[:12]}… (replaced or changed "
                                      f"after saving); {_REMEDY}")


def _shape(shape) -> str:
    return "missing" if shape is None else f"shape {tuple(shape)}"
