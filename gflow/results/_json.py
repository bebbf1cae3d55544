"""Plain-JSON versions of results (numpy scalars and arrays, non-finite floats) for summary files, and the one
atomic JSON writer every summary, record and cache file goes through."""

from __future__ import annotations

import json
import math
import os

import numpy as np


def jsonable(x):
    """Plain JSON data from numpy-holding data.

    Args:
        x: Nested dicts, lists, tuples, numpy scalars and arrays, Python scalars.

    Returns:
        The same with numpy types converted to Python ones, recursively; non-finite floats become the strings
        "nan"/"inf".
    """
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return jsonable(x.tolist())
    if isinstance(x, (np.floating, float)):
        x = float(x)
        return x if math.isfinite(x) else str(x)
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.bool_):
        return bool(x)
    return x


def write_text_atomic(path: str, text: str) -> None:
    """Write ``text`` to ``path`` through ``path.tmp`` and ``os.replace``: a reader sees the old file or the new
    one, never half of one.

    Args:
        path: The file.
        text: Its new contents.
    """
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def write_json_atomic(path: str, obj, *, indent: int | None = 2, ensure_ascii: bool = True,
                      final_newline: bool = False) -> None:
    """Write ``jsonable(obj)`` as JSON to ``path`` atomically (:func:`write_text_atomic`).

    Args:
        path: The file.
        obj: What to write (:func:`jsonable` makes it plain).
        indent: As ``json.dumps``.
        ensure_ascii: As ``json.dumps``.
        final_newline: End the file with a newline.
    """
    text = json.dumps(jsonable(obj), indent=indent, ensure_ascii=ensure_ascii)
    write_text_atomic(path, text + ("\n" if final_newline else ""))
