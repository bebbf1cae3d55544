"""Impulse responses h_j = C A^j B of a dense A, with a structured derivative.

Forward: repeated mat-vec, v_{j+1} = A v_j (never matrix powers, DESIGN.md). Derivative (spec 001 §3.1,
Matrix Cookbook eq. 91): with v_t = A^t B and u_s = (Aᵀ)^s Cᵀ,

    dh_j = Σ_{s+t=j−1} u_sᵀ dA v_t + u_jᵀ dB + dC v_j.

The A-term is one matrix product P = Uᵀ dA V followed by sums along the anti-diagonals s + t = j − 1, so
JAX's transpose of it (reverse mode) is U·H·Vᵀ with H Hankel in the cotangent: two matrix products instead
of k sequential rank-one updates through a scan. Forward mode (JVPs, for matrix-free solvers) works too.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np


@functools.partial(jax.jit, static_argnums=2)
def krylov_sequence(A, X, n: int):
    """(X, A X, A² X, ..., A^{n−1} X) stacked on a leading axis, by repeated mat-vec.

    Jitted (n static) so that eager calls, e.g. ``model.impulse_response(n)`` in an analysis script, reuse one
    compiled scan per shape instead of compiling a fresh one every call (≈ 0.3 s each)."""

    def body(v, _):
        return A @ v, v

    _, vs = jax.lax.scan(body, X, None, length=n)
    return vs


@functools.partial(jax.custom_jvp, nondiff_argnums=(3,))
def dense_impulse_response(A, B, C, n: int):
    """h_j = C A^j B for j < n: A (d, d), B (d, n_in), C (n_out, d) → (n, n_out, n_in)."""
    return jnp.einsum("od,jdi->joi", C, krylov_sequence(A, B, n))


@dense_impulse_response.defjvp
def _dense_impulse_response_jvp(n, primals, tangents):
    A, B, C = primals
    dA, dB, dC = tangents
    V = krylov_sequence(A, B, n)  # (n, d, n_in)
    U = krylov_sequence(A.T, C.T, n)  # (n, d, n_out)
    h = jnp.einsum("od,jdi->joi", C, V)
    P = jnp.einsum("sdo,tdi->stoi", U, jnp.einsum("de,tei->tdi", dA, V))  # u_sᵀ dA v_t: (n, n, n_out, n_in)
    lag = np.add.outer(np.arange(n), np.arange(n)) + 1  # s + t + 1 = j
    dh_A = jax.ops.segment_sum(P.reshape((n * n,) + P.shape[2:]), lag.reshape(-1), num_segments=2 * n)[:n]
    dh = dh_A + jnp.einsum("jdo,di->joi", U, dB) + jnp.einsum("od,jdi->joi", dC, V)
    return h, dh
