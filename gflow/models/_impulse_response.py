"""Impulse responses h_j = C A^j B of a dense A, with a structured derivative.

Forward: repeated mat-vec, v_{j+1} = A v_j (never matrix powers, docs/design.md). Derivative (seed 001 eqs. 5–7,
Matrix Cookbook eq. 91): with v_t = A^t B and u_s = (Aᵀ)^s Cᵀ,

    dh_j = Σ_{s+t=j−1} u_sᵀ dA v_t + u_jᵀ dB + dC v_j.

The A-term is one matrix product P = Uᵀ dA V followed by sums along the anti-diagonals s + t = j − 1, so
JAX's transpose of it (reverse mode) is U·H·Vᵀ with H Hankel in the cotangent: two matrix products instead
of k sequential rank-one updates through a scan. Forward mode (JVPs, for matrix-free solvers) works too.
"""

from __future__ import annotations

import functools
import os

import jax
import jax.numpy as jnp
import numpy as np

from .._checks import one_of

KRYLOV_METHODS = ("scan", "doubling")
# The elementwise-power scan of a diagonal model over at most this many lags is unrolled into straight-line code: on a
# CPU a loop iteration of a few tiny kernels costs more than the kernels (Slutzky et al.'s d = 10, 7-lag flow: a
# Rodas5P step of 37 µs in the loop, 10 µs unrolled; 2-core CPU). The dense Krylov scan stays a loop: unrolled, R1's
# (d = 40, k = 20) step took 1.8x as long and its compile 1.7x.
UNROLL_MAX_LAGS = 32


def _unroll(n: int) -> int:
    return n if n <= UNROLL_MAX_LAGS else 1
# "auto" picks per backend (see krylov_sequence); set GFLOW_KRYLOV to "scan" or "doubling" to force one.
KRYLOV_METHOD = os.environ.get("GFLOW_KRYLOV", "auto")


def _krylov_method() -> str:
    if KRYLOV_METHOD in KRYLOV_METHODS:
        return KRYLOV_METHOD
    return "scan" if jax.default_backend() == "cpu" else "doubling"


def krylov_sequence(A, X, n: int, method: str | None = None):
    """(X, A X, A² X, ..., A^{n−1} X) stacked on a leading axis.

    Two schedules with the same result up to rounding: ``"scan"``, n − 1 sequential mat-vecs in a loop
    (fewest flops; the CPU default), and ``"doubling"``, ⌈log₂ n⌉ rounds of [V; A^m V] with A^{2m} = (A^m)²,
    each one matrix product over the whole block (≈ 10× the flops at d = 40, n = 20, but log₂ n large kernels
    instead of a loop of n tiny ones: the accelerator default, where a loop iteration costs a host round trip).
    ``method`` (or ``GFLOW_KRYLOV=scan|doubling``) forces one. Jitted (n static) so that eager calls reuse one
    compiled program.

    Args:
        A: Shape (d, d).
        X: Shape (d,) or (d, p).
        n: The number of terms.
        method: ``"scan"`` or ``"doubling"`` (None: by the default backend).

    Returns:
        Shape (n,) + X.shape.
    """
    return _krylov(A, X, n, _krylov_method() if method is None else one_of("method", method, ("scan", "doubling")))


@functools.partial(jax.jit, static_argnums=(2, 3))
def _krylov(A, X, n: int, method: str):
    if method == "scan":
        def body(v, _):
            return A @ v, v

        _, vs = jax.lax.scan(body, X, None, length=n)
        return vs
    block, power = X[None], A  # block = (X, …, A^{m−1} X), power = A^m
    while block.shape[0] < n:
        block = jnp.concatenate([block, jnp.einsum("de,je...->jd...", power, block)])
        if block.shape[0] < n:
            power = power @ power
    return block[:n]


@functools.partial(jax.jit, static_argnums=3)
def diagonal_impulse_response(a, B, C, n: int):
    """h_j = C diag(a)^j B for j < n by elementwise powers in a scan: a (d,), B (d,) or (d, n_in), C (d,) or
    (n_out, d). Jitted (n static): an eager scan would be traced and compiled anew at every call.

    Args:
        a: The eigenvalues, (d,).
        B: (d,) or (d, n_in).
        C: (d,) or (n_out, d).
        n: The number of lags.

    Returns:
        Shape (n,) or (n, n_out, n_in).
    """

    def body(v, _):
        return (a * v.T).T, C @ v

    _, h = jax.lax.scan(body, B, None, length=n, unroll=_unroll(n))
    return h


@functools.partial(jax.custom_jvp, nondiff_argnums=(3,))
def dense_impulse_response(A, B, C, n: int):
    """h_j = C A^j B for j < n: A (d, d), B (d, n_in), C (n_out, d) → (n, n_out, n_in).

    Args:
        A: (d, d).
        B: (d, n_in).
        C: (n_out, d).
        n: The number of lags.

    Returns:
        Shape (n, n_out, n_in).
    """
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
