"""Reading saved ``.npz`` and ``.json`` files: never unpickling, and a damaged file is a
:class:`gflow.GflowInputError` that names the file and says what to do (not a bare ``BadZipFile`` or
``JSONDecodeError``)."""

from __future__ import annotations

import json
import zipfile
import zlib

import numpy as np

from .._checks import GflowInputError

_REMEDY = "re-run the computation that wrote it, or save it again"


def read_npz(path: str) -> dict[str, np.ndarray]:
    """Every array of the ``.npz`` at ``path``, read without unpickling (an object array is refused)."""
    with open(path, "rb") as f:  # a missing file is a FileNotFoundError that names it
        is_zip = zipfile.is_zipfile(f)
    if not is_zip:
        raise GflowInputError(f"{path} is not a valid .npz (zip) file: it is truncated, damaged, or not an .npz at "
                              f"all; {_REMEDY}")
    try:
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except ValueError as e:
        raise GflowInputError(f"{path} holds pickled objects, which gflow does not load ({e})") from None
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as e:
        raise GflowInputError(f"{path} is damaged ({e}); {_REMEDY}") from None


def read_json(path: str):
    """The JSON document at ``path``; a truncated or otherwise broken file is an error that names it."""
    with open(path, "rb") as f:
        text = f.read()
    try:
        return json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise GflowInputError(f"{path} is damaged or truncated (not valid JSON: {e}); {_REMEDY}") from None
