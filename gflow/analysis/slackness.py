"""Complementary slackness of seed 001 (Theorem 6.1, eqs. 11–13; App. C eqs. 25–27).

For a memoryless teacher, a zero-loss point of the symmetric class (A = Aᵀ = U diag(λ) Uᵀ, B = Cᵀ) with k ≥ 3
has C A² B = Σ_i λ_i² c̃_i² = 0, hence λ_i c̃_i = 0 for every mode i: each eigen-direction either has
eigenvalue 0 or carries no input/readout weight, and then h_j = Σ_i λ_i^j c̃_i² = 0 for all j ≥ 1
(extrapolation). At any point of the class (not only minimizers) h_2 ≤ √L, so max_i |λ_i c̃_i| ≤ L^{1/4}
(derived here from Theorem 6.1's argument, not in the paper).

- :func:`slackness_modes`: per-mode quantities for symmetric (or diagonal) A, SISO and MIMO; traceable.
- :func:`general_slackness`: the same question for general A through the spectral projectors of eigenvalue
  clusters, from an eigendecomposition or, when the eigenvector matrix is ill-conditioned, a Schur
  block-diagonalization (numpy/scipy, not traceable).
- :func:`slackness_bound`, :func:`impulse_response_bound`: the bounds derived here from Theorem 6.1's argument (h_2 ≤
  √L).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .._checks import GflowInputError, one_of, positive_float
from .spectral import symmetric_eigendecomposition

DEFAULT_CLUSTER_TOL = 1e-5
DEFAULT_COND_MAX = 1e6


class SlacknessModes(NamedTuple):
    """Per-mode quantities of a model with symmetric A, modes ordered by ascending eigenvalue.

    ``input_projection`` b̃_i = u_iᵀ B and ``readout_projection`` c̃_i = C u_i (shape (d,) for SISO, (d, n_in) and
    (d, n_out) for MIMO); ``residual`` |λ_i|·‖b̃_i‖·‖c̃_i‖ (SISO: |λ_i|·|b̃_i c̃_i|, the norm of mode i's share of
    h_1); ``readout_residual`` |λ_i|·‖C u_i‖ and ``input_residual`` |λ_i|·‖u_iᵀ B‖ (App. C eq. 27; the quantity
    bounded by L^{1/4})."""

    eigenvalues: jax.Array
    input_projection: jax.Array
    readout_projection: jax.Array
    residual: jax.Array
    readout_residual: jax.Array
    input_residual: jax.Array


def slackness_modes(model, *, symmetrize: bool = False) -> SlacknessModes:
    """Complementary-slackness residuals per eigen-mode of a symmetric (or diagonal) A (seed 001 eq. 13, eq. 27).

    b̃ = Uᵀ B and c̃ = C U as in the paper (b̃ = c̃ on the balanced class). Within a repeated eigenvalue the
    split between modes depends on the basis eigh returns; sums over the eigenspace do not (for a
    basis-independent, clustered version see :func:`general_slackness`). ``symmetrize`` as in
    :func:`gflow.analysis.symmetric_eigendecomposition`.

    Args:
        model: A [`LinearRNN`][gflow.models.LinearRNN] with symmetric or diagonal A.
        symmetrize: Accept a general A, using sym(A) (see
            [`symmetric_eigendecomposition`][gflow.analysis.symmetric_eigendecomposition]).

    Returns:
        A [`SlacknessModes`][gflow.analysis.SlacknessModes].
    """
    lam, U = symmetric_eigendecomposition(model, symmetrize=symmetrize)
    _, B, C = model.layers()
    b = U.T @ B  # (d,) or (d, n_in): row i is u_iᵀ B
    c = (C @ U).T  # (d,) or (d, n_out): row i is (C u_i)ᵀ
    if model.siso:
        b_norm, c_norm = jnp.abs(b), jnp.abs(c)
    else:
        b_norm, c_norm = jnp.linalg.norm(b, axis=1), jnp.linalg.norm(c, axis=1)
    a = jnp.abs(lam)
    return SlacknessModes(lam, b, c, a * b_norm * c_norm, a * c_norm, a * b_norm)


def slackness_residual(model, *, symmetrize: bool = False):
    """max_i |λ_i|·|b̃_i c̃_i| (MIMO: max_i |λ_i|·‖u_iᵀ B‖·‖C u_i‖): 0 exactly under complementary slackness.

    Args:
        model: A [`LinearRNN`][gflow.models.LinearRNN] with symmetric or diagonal A.
        symmetrize: Accept a general A, using sym(A) (see
            [`symmetric_eigendecomposition`][gflow.analysis.symmetric_eigendecomposition]).

    Returns:
        A scalar array.

    See also: [`slackness_modes`][gflow.analysis.slackness_modes],
    [`general_slackness`][gflow.analysis.general_slackness].
    """
    return jnp.max(slackness_modes(model, symmetrize=symmetrize).residual)


def readout_slackness_residual(model, *, symmetrize: bool = False):
    """max_i |λ_i|·‖C u_i‖, the residual that :func:`slackness_bound` bounds by L^{1/4} on the symmetric class.

    Args:
        model: A [`LinearRNN`][gflow.models.LinearRNN] with symmetric or diagonal A.
        symmetrize: Accept a general A, using sym(A) (see
            [`symmetric_eigendecomposition`][gflow.analysis.symmetric_eigendecomposition]).

    Returns:
        A scalar array.
    """
    return jnp.max(slackness_modes(model, symmetrize=symmetrize).readout_residual)


def _loss_in_l_convention(loss_value, convention):
    one_of("convention", convention, ("L", "half"))
    L = np.asarray(loss_value, dtype=np.float64)
    if np.any(L < 0) or not np.all(np.isfinite(L)):
        raise GflowInputError("`loss_value` must be finite and nonnegative")
    return 2.0 * L if convention == "half" else L


def slackness_bound(loss_value, convention: str = "L"):
    """L^{1/4}: bound on max_i |λ_i|·‖C u_i‖ (derived here: h_2 ≤ √L; SISO: max_i |λ_i c̃_i|).

    Holds at every point with A = Aᵀ, B = Cᵀ for a memoryless teacher and k ≥ 3 (then h_2 = ‖A Cᵀ‖² is one of
    the residuals, so h_2 ≤ √L, and λ_i² ‖C u_i‖² ≤ ‖H_2‖ for MIMO too). ``loss_value`` is in the given loss
    convention; under ``"half"`` it is doubled first. Works elementwise on arrays (e.g. ``traj.loss``).

    Args:
        loss_value: L (a number or an array).
        convention: The convention of ``loss_value``, ``"L"`` or ``"half"``.

    Returns:
        L^{1/4}, elementwise.
    """
    return _loss_in_l_convention(loss_value, convention) ** 0.25


def impulse_response_bound(loss_value, spectral_radius, j, convention: str = "L"):
    """ρ(A)^{j−2} √L ≥ |h_j| for j ≥ 2 on the symmetric class, memoryless teacher, k ≥ 3 (derived here: |h_j| ≤
    ρ^{j−2} h_2).

    Args:
        loss_value: L (a number or an array).
        spectral_radius: ρ(A) ([`spectral_radius`][gflow.analysis.spectral_radius]).
        j: The lag, ≥ 2.
        convention: The convention of ``loss_value``, ``"L"`` or ``"half"``.

    Returns:
        The bound, elementwise.
    """
    L = _loss_in_l_convention(loss_value, convention)
    j = np.asarray(j)
    if np.any(j < 2):
        raise GflowInputError("impulse_response_bound holds for lags j >= 2")
    rho = np.asarray(spectral_radius, dtype=np.float64)
    if np.any(rho < 0):
        raise GflowInputError("`spectral_radius` must be nonnegative")
    return rho ** (j - 2.0) * np.sqrt(L)


# ------------------------------------------------------------------------------------------------ general A
class ClusterSlackness(NamedTuple):
    """Complementary slackness of a general A, one entry per eigenvalue cluster (ordered by center).

    ``centers`` λ_c (complex mean of the cluster), ``multiplicities`` n_c, ``residues`` μ_0 = C P_c B (scalar or
    (n_out, n_in)), ``moments`` the list of arrays (μ_0, …, μ_{n_c−1}) with μ_m = C P_c (A − λ_c)^m P_c B,
    ``residual`` |λ_c|·‖μ_0‖ + Σ_{m≥1} ‖μ_m‖, ``method`` "eig" or "schur", ``condition`` cond(V) of the
    eigenvector matrix (∞ when it was not formed)."""

    centers: np.ndarray
    multiplicities: np.ndarray
    residues: np.ndarray
    moments: list
    residual: np.ndarray
    method: str
    condition: float


def _cluster_labels(lam: np.ndarray, tol: float) -> list[np.ndarray]:
    """Single-linkage clusters of complex points: |λ_i − λ_j| ≤ tol joins i and j."""
    n = len(lam)
    parent = list(range(n))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    close = np.abs(lam[:, None] - lam[None, :]) <= tol
    for i, j in zip(*np.nonzero(np.triu(close, 1))):
        parent[find(i)] = find(j)
    roots = np.array([find(i) for i in range(n)])
    groups = [np.flatnonzero(roots == r) for r in np.unique(roots)]
    centers = [lam[g].mean() for g in groups]
    order = np.lexsort((np.imag(centers), np.real(centers)))
    return [groups[i] for i in order]


def _schur_blocks(A, B, C, groups, lam):
    """Block-diagonalize A by a sorted complex Schur form and Sylvester equations, one cluster at a time.

    Returns (T_c, C_c, B_c) per cluster with A ≅ ⊕ T_c, so that C A^j B = Σ_c C_c T_c^j B_c. For the remaining
    block M = [[T11, T12], [0, T22]] (cluster first), X solves T11 X − X T22 = −T12; then the cluster's right
    basis is Z1, its left basis Z1ᴴ − X Z2ᴴ, and the rest continues with right basis Z1 X + Z2, left Z2ᴴ.
    """
    from scipy.linalg import schur, solve_sylvester

    M, b, c = A.astype(np.complex128), B.astype(np.complex128), C.astype(np.complex128)
    blocks = []
    for idx, g in enumerate(groups):
        center = lam[g].mean()
        radius = np.max(np.abs(lam[g] - center))
        if idx == len(groups) - 1:
            blocks.append((M, c, b))
            break
        # every remaining eigenvalue is either in this cluster (within `radius`) or farther than the cluster
        # tolerance from all of its members; select with a margin halfway between
        others = np.concatenate([lam[h] for h in groups[idx + 1:]])
        gap = np.min(np.abs(others - center))
        cut = 0.5 * (radius + gap)
        T, Z, sdim = schur(M, output="complex", sort=lambda z, c0=center, r=cut: abs(z - c0) <= r)
        if sdim != len(g):
            raise np.linalg.LinAlgError(f"Schur reordering selected {sdim} eigenvalues for a cluster of {len(g)}")
        n1 = sdim
        T11, T12, T22 = T[:n1, :n1], T[:n1, n1:], T[n1:, n1:]
        X = solve_sylvester(T11, -T22, -T12)
        Z1, Z2 = Z[:, :n1], Z[:, n1:]
        blocks.append((T11, c @ Z1, (Z1.conj().T - X @ Z2.conj().T) @ b))
        M, b, c = T22, Z2.conj().T @ b, c @ (Z1 @ X + Z2)
    return blocks


def _moments_from_block(T, Cc, Bc, center):
    N = T - center * np.eye(len(T))
    out, v = [], Bc
    for _ in range(len(T)):
        out.append(Cc @ v)
        v = N @ v
    return out


def general_slackness(model, *, cluster_tol: float = DEFAULT_CLUSTER_TOL, cond_max: float = DEFAULT_COND_MAX,
                      method: str = "auto") -> ClusterSlackness:
    """Complementary slackness for a general (non-symmetric) A, by eigenvalue cluster (seed 001 Theorem 6.1 and App. C).

    With the spectral projector P_c of cluster c (eigenvalues within ``cluster_tol`` × max(1, ρ(A)) of each
    other, single linkage) and its mean eigenvalue λ_c, C A^j B = Σ_c Σ_m binom(j, m) λ_c^{j−m} μ_{c,m} with
    μ_{c,m} = C P_c (A − λ_c)^m P_c B. A memoryless teacher is matched for all j ≥ 1 iff every cluster has
    λ_c μ_{c,0} = 0 and μ_{c,m} = 0 for m ≥ 1, so the cluster's residual is

        r_c = |λ_c| ‖μ_{c,0}‖ + Σ_{m ≥ 1} ‖μ_{c,m}‖     (‖·‖: |·| for SISO, Frobenius for MIMO).

    For a diagonalizable A with simple eigenvalues this is |λ_i|·|ĉ_i b̂_i| with b̂ = V⁻¹B, ĉ = C V, which does
    not depend on how eigenvectors are scaled, and for a symmetric A it equals :func:`slackness_modes`'
    ``residual``. The μ's are basis independent, so both methods below give the same numbers:

    - ``"eig"``: A = V Λ V⁻¹ (numpy), μ_{c,m} = Σ_{i∈c} (λ_i − λ_c)^m ĉ_i b̂_i;
    - ``"schur"``: sorted complex Schur form + Sylvester equations (no eigenvectors), then the μ's of each
      triangular block — for defective or nearly defective A;
    - ``"auto"`` (default): "eig" when cond(V) ≤ ``cond_max`` (default 1e6: residues then carry a relative
      error of about cond(V)·1e-16 ≤ 1e-10), else "schur".

    numpy/scipy only (not traceable); apply it to saved models (``traj.model_at(i)``, ``traj.final``).

    Args:
        model: A [`LinearRNN`][gflow.models.LinearRNN].
        cluster_tol: Eigenvalues closer than this (relative to max(1, ρ(A))) form one cluster.
        cond_max: Above this condition number of the eigenvector matrix, ``"auto"`` uses the Schur form.
        method: ``"auto"``, ``"eig"`` or ``"schur"``.

    Returns:
        A [`ClusterSlackness`][gflow.analysis.ClusterSlackness].
    """
    one_of("method", method, ("auto", "eig", "schur"))
    cluster_tol = positive_float("cluster_tol", cluster_tol)
    cond_max = positive_float("cond_max", cond_max)
    A = np.asarray(model.transition(), dtype=np.float64)
    _, B, C = model.layers()
    B = np.asarray(B, dtype=np.float64).reshape(model.d, -1)
    C = np.asarray(C, dtype=np.float64).reshape(-1, model.d)
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(B)) and np.all(np.isfinite(C))):
        raise GflowInputError("general_slackness needs finite A, B, C")
    lam, V = np.linalg.eig(A)
    groups = _cluster_labels(lam, cluster_tol * max(1.0, float(np.max(np.abs(lam)))))
    cond = float(np.linalg.cond(V)) if method != "schur" else float("inf")
    if not np.isfinite(cond):
        cond = float("inf")
    use_eig = method == "eig" or (method == "auto" and cond <= cond_max)
    moments = []
    if use_eig:
        b_hat = np.linalg.solve(V, B)  # (d, n_in)
        c_hat = C @ V  # (n_out, d)
        for g in groups:
            center = lam[g].mean()
            per_mode = np.einsum("oi,ij->ioj", c_hat[:, g], b_hat[g])  # (n_c, n_out, n_in)
            moments.append([np.tensordot((lam[g] - center) ** m, per_mode, axes=1) for m in range(len(g))])
    else:
        for (T, Cc, Bc), g in zip(_schur_blocks(A, B, C, groups, lam), groups):
            moments.append(_moments_from_block(T, Cc, Bc, lam[g].mean()))
    centers = np.real_if_close(np.array([lam[g].mean() for g in groups]))
    moments = [[np.real_if_close(m[0, 0] if model.siso else m) for m in ms] for ms in moments]
    residual = np.array([abs(c0) * np.linalg.norm(np.atleast_1d(ms[0])) + sum(np.linalg.norm(np.atleast_1d(m))
                                                                              for m in ms[1:])
                         for c0, ms in zip(centers, moments)])
    residues = np.real_if_close(np.array([ms[0] for ms in moments]))
    return ClusterSlackness(centers, np.array([len(g) for g in groups]), residues, moments, residual,
                            "eig" if use_eig else "schur", cond)
