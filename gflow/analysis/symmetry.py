"""How exactly a model sits on the symmetric class A = Aᵀ, B = Cᵀ (seed 001 §6, Thm 6.1; seed 000 Lemma 6).

Gradient flow, GD (seed 000 Lemma E.6, seed 001 eqs. 8–10) and any per-coordinate optimizer such as Adam
(seed 000 Lemma 6 / E.5) started on this class stay on it exactly: the gradients of B and Cᵀ are equal and the
gradient of A is symmetric there. Numerically the defects below must therefore stay at rounding level along such a
run.
"""

from __future__ import annotations

import jax.numpy as jnp

from .._checks import GflowInputError

_TINY = 1e-300


def balance_defect(model):
    """max |B − Cᵀ| / max(max|B|, max|C|): 0 on a balanced model.

    Args:
        model: A [`LinearRNN`][gflow.models.LinearRNN].

    Returns:
        A scalar array.
    """
    _, B, C = model.layers()
    if B.shape != C.T.shape:
        raise GflowInputError(f"balancedness needs B and Cᵀ of equal shape, got B {B.shape} and C {C.shape}")
    scale = jnp.maximum(jnp.maximum(jnp.max(jnp.abs(B)), jnp.max(jnp.abs(C))), _TINY)
    return jnp.max(jnp.abs(B - C.T)) / scale


def symmetry_defect(model):
    """max |A − Aᵀ| / max|A| of the transition matrix the model uses: 0 when A is symmetric.

    Args:
        model: A [`LinearRNN`][gflow.models.LinearRNN].

    Returns:
        A scalar array.
    """
    A = model.transition()
    return jnp.max(jnp.abs(A - A.T)) / jnp.maximum(jnp.max(jnp.abs(A)), _TINY)
