"""Input validation that fails early, naming the argument, instead of deep inside JAX."""

from __future__ import annotations

import jax
import numpy as np


class GflowInputError(ValueError):
    """Raised when an argument passed to gflow is malformed (shape, value, name)."""


def as_float_array(name: str, value, *, ndim: int | tuple[int, ...] | None = None) -> np.ndarray:
    """Convert ``value`` to a float64 numpy array, checking rank and finiteness."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise GflowInputError(f"`{name}` must be a real array, got {type(value).__name__}: {e}") from None
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else ndim
        if arr.ndim not in allowed:
            raise GflowInputError(
                f"`{name}` must have {' or '.join(str(n) for n in allowed)} dimension(s), got shape {arr.shape}"
            )
    if not np.all(np.isfinite(arr)):
        raise GflowInputError(f"`{name}` contains non-finite values (NaN or inf)")
    return arr


def positive_int(name: str, value, *, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise GflowInputError(f"`{name}` must be an integer, got {value!r}")
    if value < minimum:
        raise GflowInputError(f"`{name}` must be >= {minimum}, got {value}")
    return int(value)


def positive_float(name: str, value) -> float:
    """``value`` as a positive finite float; a traced value (under ``eqx.filter_vmap``) passes unchecked."""
    if isinstance(value, jax.core.Tracer):
        return value
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise GflowInputError(f"`{name}` must be a positive number, got {value!r}") from None
    if not np.isfinite(v) or v <= 0:
        raise GflowInputError(f"`{name}` must be a positive finite number, got {value!r}")
    return v


def one_of(name: str, value, choices) -> str:
    if value not in choices:
        raise GflowInputError(f"`{name}` must be one of {sorted(choices)}, got {value!r}")
    return value
