"""A result kept on disk with what made it: its *identity* (the configuration it answers) and its *code* (hashes of
the source that computed it), reused only when both match, else recomputed and the reason told. The sweep's run
folders (``run.json``, :func:`gflow.run_sweep`) and a study's cached results (``runs/<name>.json``,
studies/gru_extrapolation.py) both decide reuse with :func:`why_stale`; a single-file result goes through
:func:`cached_json`."""

from __future__ import annotations

import json
import os

from ._json import jsonable, write_json_atomic
from ._provenance import provenance

MISSING = "missing"
OTHER_CONFIGURATION = "another configuration under the same name"
CORRUPT = "incomplete or corrupt"


def why_stale(stored: dict, identity, code: dict | None) -> str | None:
    """None when the record ``stored`` (with keys ``identity`` and ``code``) was made for ``identity`` by ``code``;
    else why not. A ``code`` entry whose hash is None is not compared, nor is anything when ``code`` is None."""
    if stored.get("identity") != identity:
        return OTHER_CONFIGURATION
    if code is not None:
        made_by = stored.get("code") or {}
        changed = [k for k, h in code.items() if h is not None and made_by.get(k) != h]
        if changed:
            return f"made by other code ({', '.join(changed)} changed)"
    return None


def cache_record(identity, code: dict | None, **content) -> dict:
    """What a cached result stores beside its content: identity, code and the provenance of this run."""
    return {"identity": identity, "code": code, "provenance": provenance(), **content}


def load_cached_json(path: str, identity, code: dict) -> tuple[object, str | None]:
    """The result stored in a JSON file, if it holds this identity and was made by this code.

    Args:
        path: The JSON file.
        identity: What the result is of (compared as plain JSON).
        code: The code that must have made it.

    Returns:
        (the result, None); else (None, why not: :data:`MISSING`, :data:`CORRUPT` or :func:`why_stale`'s reason).
    """
    if not os.path.exists(path):
        return None, MISSING
    try:
        with open(path) as f:
            stored = json.load(f)
        why = why_stale(stored, jsonable(identity), code)
        return (stored["result"], None) if why is None else (None, why)
    except (OSError, ValueError, KeyError, AttributeError):
        return None, CORRUPT


def cached_json(path: str, identity, code: dict, compute) -> tuple[object, str | None]:
    """A result read from a JSON file when it is current, else computed and stored.

    Args:
        path: The JSON file.
        identity: What the result is of (stored as plain JSON, :func:`jsonable`).
        code: The code that makes it (:func:`provenance`'s hashes).
        compute: ``compute()`` makes the result.

    Returns:
        (the result, None) read from ``path`` when it holds this identity and code (:func:`load_cached_json`); else
        (``compute()``'s result, why it was recomputed: :data:`MISSING` when nothing was there), stored atomically.
    """
    result, why = load_cached_json(path, identity, code)
    if why is None:
        return result, None
    result = jsonable(compute())
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    write_json_atomic(path, cache_record(jsonable(identity), code, result=result), indent=None)
    return result, why
