"""Plain-JSON versions of results (numpy scalars and arrays, non-finite floats) for summary files."""

from __future__ import annotations

import math

import numpy as np


def jsonable(x):
    """Recursively convert numpy types to Python ones; non-finite floats become the strings "nan"/"inf"."""
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
