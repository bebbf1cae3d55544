"""Named initializers, each returning a :class:`gflow.LinearRNN` and taking an explicit key.

Two scale conventions appear in seed 000: ``"entries"`` draws every entry as ε·N(0, 1)
(Prop. 9, main text), ``"normal"`` is the ε-normal initialization of Lemma E.10, N(0, ε²/n) per entry of
an n-entry parameter, so that every parameter has norm about ε.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .._checks import one_of, positive_float, positive_int, prng_key
from ._linear_rnn import LinearRNN

CONVENTIONS = ("entries", "normal")


def _shapes(d, n_in, n_out):
    if n_in is None and n_out is None:
        return (d,), (d,)
    n_in = positive_int("n_in", n_in if n_in is not None else 1)
    n_out = positive_int("n_out", n_out if n_out is not None else 1)
    return (d, n_in), (n_out, d)


def _gauss(key, shape, scale, convention):
    n = 1
    for s in shape:
        n *= s
    std = scale if convention == "entries" else scale / jnp.sqrt(n)
    return std * jax.random.normal(key, shape, dtype=jnp.float64)


def _symmetrize(A):
    return (A + A.T) / jnp.sqrt(2.0)


def _assemble(A, B, C, structure, parameterization):
    if structure == "diagonal":
        A = jnp.diag(A) if A.ndim == 2 else A
    elif structure == "symmetric" and A.ndim == 2:
        A = 0.5 * (A + A.T)
    return LinearRNN(A, B, C, structure=structure, parameterization=parameterization)


def gaussian(key, d: int, *, scale: float, structure: str = "general", convention: str = "entries",
             n_in: int | None = None, n_out: int | None = None, parameterization: str | None = None) -> LinearRNN:
    """Independent Gaussian A, B, C at scale ε (random, unbalanced, near-zero when ε is small).

    Args:
        key: A JAX PRNG key (``jax.random.key(0)``).
        d: The hidden size.
        scale: ε.
        structure: ``"general"``, ``"symmetric"`` or ``"diagonal"`` (see [`LinearRNN`][gflow.models.LinearRNN]).
        parameterization: For a symmetric A, ``"restricted"`` (default) or ``"triangular"``.
        convention: ``"entries"`` (every entry ε·N(0, 1), seed 000 Prop. 9) or ``"normal"`` (N(0, ε²/n) per entry of
            an n-entry parameter, seed 000 Lemma E.10).
        n_in: Inputs (MIMO); None with ``n_out`` None: SISO.
        n_out: Outputs (MIMO).

    Returns:
        A [`LinearRNN`][gflow.models.LinearRNN].

    Raises:
        GflowInputError: ``key`` is not a JAX PRNG key (e.g. an int, or the arguments swapped), or a size or scale is
            not positive.
    """
    key = prng_key("key", key)
    d = positive_int("d", d)
    scale = positive_float("scale", scale)
    one_of("convention", convention, CONVENTIONS)
    b_shape, c_shape = _shapes(d, n_in, n_out)
    kA, kB, kC = jax.random.split(key, 3)
    a_shape = (d,) if structure == "diagonal" else (d, d)
    A = _gauss(kA, a_shape, scale, convention)
    if structure == "symmetric":
        A = _symmetrize(A)
    return _assemble(A, _gauss(kB, b_shape, scale, convention), _gauss(kC, c_shape, scale, convention),
                     structure, parameterization)


def balanced(key, d: int, *, scale: float, structure: str = "symmetric", convention: str = "entries",
             n: int | None = None, parameterization: str | None = None) -> LinearRNN:
    """Balanced start B = Cᵀ (seed 000 Def. 4, seed 001 Thm 6.1) with A symmetric (or diagonal/general).

    Args:
        key: A JAX PRNG key (``jax.random.key(0)``).
        d: The hidden size.
        scale: ε.
        structure: ``"general"``, ``"symmetric"`` or ``"diagonal"`` (see [`LinearRNN`][gflow.models.LinearRNN]).
        parameterization: For a symmetric A, ``"restricted"`` (default) or ``"triangular"``.
        convention: ``"entries"`` (every entry ε·N(0, 1), seed 000 Prop. 9) or ``"normal"`` (N(0, ε²/n) per entry of
            an n-entry parameter, seed 000 Lemma E.10).
        n: Inputs = outputs (MIMO; balance needs them equal); None: SISO.

    Returns:
        A [`LinearRNN`][gflow.models.LinearRNN].

    Raises:
        GflowInputError: ``key`` is not a JAX PRNG key (e.g. an int, or the arguments swapped), or a size or scale is
            not positive.
    """
    key = prng_key("key", key)
    d = positive_int("d", d)
    scale = positive_float("scale", scale)
    one_of("convention", convention, CONVENTIONS)
    b_shape, _ = _shapes(d, n, n)
    kA, kB = jax.random.split(key)
    A = _gauss(kA, (d,) if structure == "diagonal" else (d, d), scale, convention)
    if structure == "symmetric":
        A = _symmetrize(A)
    B = _gauss(kB, b_shape, scale, convention)
    return _assemble(A, B, B.T, structure, parameterization)


def symmetric(key, d: int, *, scale: float, convention: str = "entries", n_in: int | None = None,
              n_out: int | None = None, parameterization: str | None = None) -> LinearRNN:
    """Symmetric A with independent (unbalanced) B and C.

    Args:
        key: A JAX PRNG key (``jax.random.key(0)``).
        d: The hidden size.
        scale: ε.
        convention: ``"entries"`` (every entry ε·N(0, 1), seed 000 Prop. 9) or ``"normal"`` (N(0, ε²/n) per entry of
            an n-entry parameter, seed 000 Lemma E.10).
        n_in: Inputs (MIMO); None with ``n_out`` None: SISO.
        n_out: Outputs (MIMO).
        parameterization: ``"restricted"`` (default) or ``"triangular"``.

    Returns:
        A [`LinearRNN`][gflow.models.LinearRNN].

    Raises:
        GflowInputError: ``key`` is not a JAX PRNG key (e.g. an int, or the arguments swapped), or a size or scale is
            not positive.
    """
    return gaussian(key, d, scale=scale, structure="symmetric", convention=convention, n_in=n_in,
                    n_out=n_out, parameterization=parameterization)


def residual(key, d: int, *, scale: float, structure: str = "symmetric", n: int | None = None,
             parameterization: str | None = None) -> LinearRNN:
    """Residual start A = I (seed 001 §6) with balanced B = Cᵀ of entries ε·N(0, 1).

    Args:
        key: A JAX PRNG key (``jax.random.key(0)``).
        d: The hidden size.
        scale: ε, the scale of B = Cᵀ.
        structure: ``"general"``, ``"symmetric"`` or ``"diagonal"`` (see [`LinearRNN`][gflow.models.LinearRNN]).
        parameterization: For a symmetric A, ``"restricted"`` (default) or ``"triangular"``.
        n: Inputs = outputs (MIMO); None: SISO.

    Returns:
        A [`LinearRNN`][gflow.models.LinearRNN].

    Raises:
        GflowInputError: ``key`` is not a JAX PRNG key (e.g. an int, or the arguments swapped), or a size or scale is
            not positive.
    """
    key = prng_key("key", key)
    d = positive_int("d", d)
    scale = positive_float("scale", scale)
    b_shape, _ = _shapes(d, n, n)
    B = scale * jax.random.normal(key, b_shape, dtype=jnp.float64)
    A = jnp.ones(d) if structure == "diagonal" else jnp.eye(d)
    return _assemble(A, B, B.T, structure, parameterization)


def xavier(key, d: int, *, structure: str = "general", n_in: int | None = None, n_out: int | None = None,
           gain: float = 1.0, parameterization: str | None = None) -> LinearRNN:
    """Glorot/Xavier uniform, U(±gain·√(6/(fan_in + fan_out))), as in the Keras runs of seed 001 (§7).

    Args:
        key: A JAX PRNG key (``jax.random.key(0)``).
        d: The hidden size.
        structure: ``"general"``, ``"symmetric"`` or ``"diagonal"`` (see [`LinearRNN`][gflow.models.LinearRNN]).
        parameterization: For a symmetric A, ``"restricted"`` (default) or ``"triangular"``.
        n_in: Inputs (MIMO); None with ``n_out`` None: SISO.
        n_out: Outputs (MIMO).
        gain: Multiplies the limit.

    Returns:
        A [`LinearRNN`][gflow.models.LinearRNN].

    Raises:
        GflowInputError: ``key`` is not a JAX PRNG key (e.g. an int, or the arguments swapped), or a size or scale is
            not positive.
    """
    key = prng_key("key", key)
    d = positive_int("d", d)
    b_shape, c_shape = _shapes(d, n_in, n_out)
    kA, kB, kC = jax.random.split(key, 3)

    def glorot(k, shape, fan_in, fan_out):
        lim = gain * jnp.sqrt(6.0 / (fan_in + fan_out))
        return jax.random.uniform(k, shape, minval=-lim, maxval=lim, dtype=jnp.float64)

    ni = 1 if len(b_shape) == 1 else b_shape[1]
    no = 1 if len(c_shape) == 1 else c_shape[0]
    A = glorot(kA, (d, d), d, d)
    if structure == "symmetric":
        A = _symmetrize(A)
    return _assemble(A, glorot(kB, b_shape, ni, d), glorot(kC, c_shape, d, no), structure, parameterization)
