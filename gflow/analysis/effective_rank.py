"""The magnitude spectrum of the transition A that Slutzky et al. (NeurIPS 2025, arXiv 2410.10473) log while a
diagonal SSM trains: its entropy effective rank and its largest |eigenvalues| (their repository, common/plotting.py
and common/callbacks.py).

The effective rank of Roy & Vetterli (EUSIPCO 2007, Def. 1) of a matrix with singular values σ_1 … σ_d is

    p_i = σ_i / Σ_j σ_j,        H = −Σ_i p_i ln p_i   (0 · ln 0 = 0),        erank = exp(H) ∈ [1, d]:

1 when one value carries everything, d when all are equal. Slutzky et al. apply it to the |eigenvalues| of their
diagonal A, which are its singular values. We use the same numbers for every structure:

- ``"diagonal"``: |a_i|, elementwise (no d × d matrix, so a width of thousands costs O(d));
- ``"symmetric"``: |λ_i| from ``eigvalsh``, which are the singular values of a symmetric A;
- ``"general"``: the singular values (Roy & Vetterli's definition), *not* the |eigenvalues|, which differ for a
  non-normal A.

The all-zero A has no distribution p; its effective rank is defined here as 0, the rank of the zero matrix
(Slutzky et al.'s code would divide 0 by 0). Both functions are traceable (``solve_flow`` diagnostics, ``vmap``),
except :func:`top_eigenvalue_magnitudes` of a general A under ``jit`` off the CPU (``jnp.linalg.eigvals``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .._checks import GflowInputError, positive_int
from ..models._linear_rnn import LinearRNN


def _linear_rnn(model, name: str) -> LinearRNN:
    if not isinstance(model, LinearRNN):
        raise GflowInputError(f"{name} needs a gflow.LinearRNN (its transition A), got {type(model).__name__}")
    return model


def _singular_values(model):
    """σ(A), unsorted for diagonal A (|a_i|), without building a d × d matrix there."""
    if model.structure == "diagonal":
        return jnp.abs(model.layers()[0])
    if model.structure == "symmetric":
        return jnp.abs(jnp.linalg.eigvalsh(model.transition()))
    return jnp.linalg.svd(model.transition(), compute_uv=False)


def _entropy_rank(s):
    """exp(−Σ p_i ln p_i) with p = s / Σ s, s ≥ 0; 0 for s = 0. Both branches stay finite, so the gradient does
    too."""
    total = jnp.sum(s)
    nonzero = total > 0
    p = s / jnp.where(nonzero, total, 1.0)
    positive = p > 0
    plogp = jnp.where(positive, p * jnp.log(jnp.where(positive, p, 1.0)), 0.0)
    return jnp.where(nonzero, jnp.exp(-jnp.sum(plogp)), 0.0)


def effective_rank(model) -> jax.Array:
    """Entropy effective rank exp(−Σ p_i ln p_i), p_i = σ_i / Σ_j σ_j, of the transition A (Roy & Vetterli 2007;
    Slutzky et al. 2025, common/plotting.py, over all d values): |a_i| for diagonal A, singular values otherwise.

    In [1, d] for A ≠ 0; 0 for A = 0 (our convention); NaN only if A is not finite.

    Args:
        model: A [`LinearRNN`][gflow.models.LinearRNN].

    Returns:
        A scalar array.
    """
    model = _linear_rnn(model, "effective_rank")
    return _entropy_rank(_singular_values(model))


def top_eigenvalue_magnitudes(model, k: int) -> jax.Array:
    """The k largest |λ_i(A)|, descending: the "absolute largest diagonal entries" Slutzky et al. plot (their
    callbacks.py; the top 7). Diagonal A: ``jax.lax.top_k`` of |a|; symmetric: |eigvalsh|; general: |eigvals|,
    which under ``jit`` runs on the CPU only.

    Args:
        model: A [`LinearRNN`][gflow.models.LinearRNN].
        k: How many, at most d.

    Returns:
        Shape (k,), descending.
    """
    model = _linear_rnn(model, "top_eigenvalue_magnitudes")
    k = positive_int("k", k)
    if k > model.d:
        raise GflowInputError(f"`k` ({k}) must be at most the state dimension d = {model.d}")
    if model.structure == "diagonal":
        return jax.lax.top_k(jnp.abs(model.layers()[0]), k)[0]
    if model.structure == "symmetric":
        magnitudes = jnp.abs(jnp.linalg.eigvalsh(model.transition()))
    else:
        magnitudes = jnp.abs(jnp.linalg.eigvals(model.transition()))
    return jax.lax.top_k(magnitudes, k)[0]
