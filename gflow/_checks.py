"""Input validation that fails early, naming the argument, instead of deep inside JAX."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np


class GflowInputError(ValueError):
    """Raised when an argument passed to gflow is malformed (shape, value, name)."""


def is_traced(*xs) -> bool:
    """Whether any of ``xs`` is a JAX tracer (inside ``jit`` or ``eqx.filter_vmap``), whose values can't be checked."""
    return any(isinstance(x, jax.core.Tracer) for x in xs)


def as_float_array(name: str, value, *, ndim: int | tuple[int, ...] | None = None) -> np.ndarray:
    """Convert ``value`` to a float64 numpy array, checking rank and finiteness; a traced value becomes a float64
    JAX array whose rank is checked (its values are not known yet)."""
    if is_traced(value):
        arr = jax.numpy.asarray(value, dtype=jax.numpy.float64)
        _check_ndim(name, arr, ndim)
        return arr
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise GflowInputError(f"`{name}` must be a real array, got {type(value).__name__}: {e}") from None
    _check_ndim(name, arr, ndim)
    if not np.all(np.isfinite(arr)):
        raise GflowInputError(f"`{name}` contains non-finite values (NaN or inf)")
    return arr


def _check_ndim(name: str, arr, ndim) -> None:
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else ndim
        if arr.ndim not in allowed:
            raise GflowInputError(
                f"`{name}` must have {' or '.join(str(n) for n in allowed)} dimension(s), got shape {arr.shape}"
            )


def _is_prng_key(value) -> bool:
    """A typed key (``jax.random.key``) or a legacy raw key (``jax.random.PRNGKey``: uint32 of shape (2,))."""
    dtype, shape = getattr(value, "dtype", None), getattr(value, "shape", None)
    if dtype is None or not isinstance(value, (jax.Array, np.ndarray)):
        return False
    return jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key) or (dtype == np.uint32 and shape == (2,))


def _described(value) -> str:
    if isinstance(value, (jax.Array, np.ndarray)):
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    if value is None:
        return "None"
    shown = value if isinstance(value, (int, float, np.generic)) else repr(value)
    return f"{type(value).__name__} {shown}"[:80]


def prng_key(name: str, key):
    """``key`` if it is a JAX PRNG key (typed or legacy uint32[2]; traced ones too), else an error that says what a
    key is and suspects swapped arguments."""
    if _is_prng_key(key):
        return key
    raise GflowInputError(f"`{name}` must be a JAX PRNG key, e.g. jax.random.key(0); got {_described(key)} (did you "
                          "swap the arguments, or pass a seed where the key goes?)")


def positive_int(name: str, value, *, minimum: int = 1) -> int:
    if _is_prng_key(value) and not isinstance(value, np.ndarray):
        raise GflowInputError(f"`{name}` must be an integer, got a JAX PRNG key (did you swap the arguments?)")
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise GflowInputError(f"`{name}` must be an integer, got {value!r}")
    if value < minimum:
        raise GflowInputError(f"`{name}` must be >= {minimum}, got {value}")
    return int(value)


def positive_float(name: str, value) -> float:
    """``value`` as a positive finite float; a traced value (under ``eqx.filter_vmap``) passes unchecked."""
    if is_traced(value):
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


def check_sequence(x, n_in: int, scalar: bool) -> jax.Array:
    """``x`` as a float array of shape (T,) (``scalar``) or (T, n_in), else :class:`gflow.GflowInputError`."""
    x = jnp.asarray(x, dtype=jnp.result_type(float))
    if (scalar and x.ndim != 1) or (not scalar and (x.ndim != 2 or x.shape[1] != n_in)):
        want = "(T,)" if scalar else f"(T, {n_in})"
        raise GflowInputError(f"input sequence `x` must have shape {want}, got {x.shape}")
    if x.shape[0] < 1:
        raise GflowInputError("input sequence `x` must have at least one step")
    return x
