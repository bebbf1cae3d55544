"""Converting folders written by gflow ≤ 0.1, which stored models with pickle, to the pickle-free format.

Unpickling runs code from the file, so gflow never does it on its own: :func:`convert_legacy` does it once, and
only when the caller says the folder is trusted (``trust_pickle=True``: folders you made yourself).
"""

from __future__ import annotations

import json
import os
import pickle

from .._checks import GflowInputError
from ._file_sha256 import file_sha256
from ._json import write_json_atomic
from ._model_file import save_model

# (old pickle, new stem): a trajectory folder's model, a sweep run's final model
LEGACY_FILES = (("model.pkl", "model"), ("final.pkl", "final"))


def convert_legacy(path: str, *, trust_pickle: bool = False) -> list[str]:
    """Rewrite every pickled model under a folder without pickle.

    Each pickle becomes ``<stem>.json`` + ``<stem>.npz`` and is deleted; a sweep run's ``run.json`` checksums are
    updated.

    Args:
        path: A saved trajectory, a sweep run, or a whole sweep.
        trust_pickle: Required True: it loads each pickle once, which runs any code the file holds (pass it only
            for folders you made yourself).

    Returns:
        The converted files.

    Raises:
        GflowInputError: Without ``trust_pickle``, or when ``path`` is not a folder.
    """
    if not trust_pickle:
        raise GflowInputError("convert_legacy unpickles the old files, which runs code from them: pass "
                              "trust_pickle=True only for folders you made yourself")
    if not os.path.isdir(path):
        raise GflowInputError(f"{path!r} is not a folder")
    converted = []
    for folder, _, files in sorted(os.walk(path)):
        for old, stem in LEGACY_FILES:
            if old not in files:
                continue
            with open(os.path.join(folder, old), "rb") as f:
                model = pickle.load(f)  # noqa: S301 (the caller vouched for this folder)
            save_model(model, folder, stem)
            os.remove(os.path.join(folder, old))
            converted.append(os.path.join(folder, old))
            _update_checksums(folder, old, stem)
    return converted


def _update_checksums(folder: str, old: str, stem: str) -> None:
    """A sweep run lists the SHA-256 of its files in run.json, a saved trajectory in meta.json: swap the pickle's
    entry for the new files (a trajectory folder listing the model files gets their new checksums)."""
    for name in ("run.json", "meta.json"):
        path = os.path.join(folder, name)
        if not os.path.exists(path):
            continue
        with open(path) as f:
            meta = json.load(f)
        files = meta.get("files") if isinstance(meta, dict) else None
        if not isinstance(files, dict) or not ({old, f"{stem}.json", f"{stem}.npz"} & set(files)):
            continue
        files.pop(old, None)
        for new in (f"{stem}.json", f"{stem}.npz"):
            files[new] = file_sha256(os.path.join(folder, new))
        meta["files"] = dict(sorted(files.items()))
        write_json_atomic(path, meta, indent=1 if name == "run.json" else 2)
