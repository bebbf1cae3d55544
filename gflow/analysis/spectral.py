"""Spectra and spectral measures of linear RNNs (seed 000 §4 / Lemma 7 proof, Thm 8).

For a symmetric A = U Λ Uᵀ the impulse response is a sequence of moments,

    h_j = C A^j B = Σ_i λ_i^j g_i,      g_i = (C U)_i (Uᵀ B)_i          (seed 000 App. E.1.2),

of the discrete *spectral measure* μ = Σ_i g_i δ_{λ_i}. For a balanced model (B = Cᵀ) every weight
g_i = (Uᵀ B)_i² ≥ 0 and μ/h_0 is the law of the random variable Z of Lemma 7's proof; otherwise (e.g. the
Proposition 3 student) weights can be negative and μ is a *signed* measure. Theorem 8 compares μ/h_0 with the
teacher's measure in the 1-Wasserstein distance and through the normalized moments m_j = h_j / h_0.

Functions of one model are traceable (usable as ``solve_flow`` diagnostics) unless they say otherwise; the
measure-level functions (support size, W1) and the trajectory-level eigenvalue paths work on numpy arrays.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .._checks import as_float_array, GflowInputError, is_traced, positive_float, positive_int

SYMMETRY_TOLERANCE = 1e-8  # max|A − Aᵀ| ≤ this × max(1, max|A|) counts as symmetric for a "general" model


class DiscreteMeasure(NamedTuple):
    """μ = Σ_i weights_i δ_{atoms_i} on the real line (weights may be negative: a signed measure)."""

    atoms: jax.Array
    weights: jax.Array


def _symmetric_transition(model, symmetrize: bool):
    """The (d, d) symmetric matrix whose eigendecomposition the symmetric-A analyses use."""
    if model.structure in ("symmetric", "diagonal"):
        return model.transition()
    A = model.transition()
    if symmetrize or is_traced(A):
        return 0.5 * (A + A.T)
    An = np.asarray(A)
    asym = float(np.max(np.abs(An - An.T), initial=0.0))
    if asym > SYMMETRY_TOLERANCE * max(1.0, float(np.max(np.abs(An), initial=0.0))):
        raise GflowInputError(
            f"this analysis needs a symmetric A, but max|A − Aᵀ| = {asym:.3g}: pass symmetrize=True to use "
            f"sym(A) = (A + Aᵀ)/2, or use the general-A functions (eigenvalues, general_slackness)")
    return 0.5 * (A + A.T)


def symmetric_eigendecomposition(model, *, symmetrize: bool = False):
    """(λ, U) with A = U diag(λ) Uᵀ, λ ascending, for a model with symmetric (or diagonal) A.

    A ``"general"`` model is accepted when its A is symmetric to 1e-8 relative (checked unless traced), or with
    ``symmetrize=True``, which uses sym(A) = (A + Aᵀ)/2 (one of the readings of seed 001 Fig. 3 for a learned,
    nearly symmetric A; seed 001 §7).

    Args:
        model: A [`LinearRNN`][gflow.models.LinearRNN].
        symmetrize: Use sym(A) for a general A.

    Returns:
        ``(λ, U)``.

    Raises:
        GflowInputError: A general A that is not symmetric, without ``symmetrize``.
    """
    if model.structure == "diagonal":
        a = model.layers()[0]
        order = jnp.argsort(a)
        return a[order], jnp.eye(model.d, dtype=a.dtype)[:, order]
    return jnp.linalg.eigh(_symmetric_transition(model, symmetrize))


def eigenvalues(model):
    """Eigenvalues of A: real and ascending for symmetric/diagonal A (eigh), complex and sorted by
    (real part, imaginary part) for general A (``jnp.linalg.eigvals``, CPU only under jit).

    Args:
        model: A [`LinearRNN`][gflow.models.LinearRNN].

    Returns:
        Shape (d,).
    """
    if model.structure in ("symmetric", "diagonal"):
        return symmetric_eigendecomposition(model)[0]
    return jnp.sort(jnp.linalg.eigvals(model.transition()))


def spectral_radius(model):
    """ρ(A) = max_i |λ_i|, which sets how fast errors of the impulse response can grow (derived here from seed 001 Thm
    6.1's argument).

    Args:
        model: A [`LinearRNN`][gflow.models.LinearRNN].

    Returns:
        A scalar array.
    """
    return jnp.max(jnp.abs(eigenvalues(model)))


def spectral_measure(model, *, normalize: bool = False, symmetrize: bool = False) -> DiscreteMeasure:
    """Atoms λ_i and weights g_i = (C U)_i (Uᵀ B)_i of a SISO model with symmetric or diagonal A
    (seed 000 Lemma 7 proof / E.1.2). Works for students and for (balanced, diagonal) teachers.

    Σ_i g_i λ_i^j = h_j. ``normalize=True`` divides the weights by their sum h_0 = C B (the probability
    measure of Lemma 7's proof when the model is balanced). Atoms are ascending.

    Args:
        model: A SISO [`LinearRNN`][gflow.models.LinearRNN] with symmetric or diagonal A.
        normalize: Divide the weights by h_0.
        symmetrize: Use sym(A) for a general A.

    Returns:
        A [`DiscreteMeasure`][gflow.analysis.DiscreteMeasure].
    """
    if not model.siso:
        raise GflowInputError("spectral_measure is defined for SISO models (scalar weights g_i); for MIMO use "
                              "slackness_modes, which gives the per-mode vectors C u_i and u_iᵀ B")
    lam, U = symmetric_eigendecomposition(model, symmetrize=symmetrize)
    _, B, C = model.layers()
    g = (C @ U) * (U.T @ B)
    if normalize:
        g = g / jnp.sum(g)
    return DiscreteMeasure(lam, g)


def _as_measure(x, name: str) -> tuple[np.ndarray, np.ndarray]:
    if hasattr(x, "impulse_response"):
        x = spectral_measure(x)
    if not (isinstance(x, tuple) and len(x) == 2):
        raise GflowInputError(f"`{name}` must be a DiscreteMeasure (atoms, weights) or a SISO model with symmetric A, "
                              f"got {type(x).__name__}")
    atoms = as_float_array(f"{name}.atoms", x[0], ndim=1)
    weights = as_float_array(f"{name}.weights", x[1], ndim=1)
    if atoms.shape != weights.shape or atoms.size == 0:
        raise GflowInputError(f"`{name}` needs as many weights as atoms (at least one), got {atoms.shape} and "
                              f"{weights.shape}")
    return atoms, weights


def normalized_moments(x, n: int) -> np.ndarray:
    """m_j = h_j / h_0 for j = 0 .. n − 1 (seed 000 Thm 8 proof: m_j = C A^j B (C B)^{-1}).

    ``x`` is a model (any structure: the impulse response is used, so general A works too) or a
    :class:`DiscreteMeasure` (m_j = Σ g_i λ_i^j / Σ g_i). Raises if h_0 = 0, where the moments are undefined.

    Args:
        x: A model or a [`DiscreteMeasure`][gflow.analysis.DiscreteMeasure].
        n: The number of moments.

    Returns:
        Shape (n,).

    Raises:
        GflowInputError: h_0 = 0.
    """
    n = positive_int("n", n)
    if hasattr(x, "impulse_response"):
        h = np.asarray(x.impulse_response(n), dtype=np.float64)
        if h.ndim != 1:
            raise GflowInputError("normalized_moments needs a SISO model (scalar h_j)")
    else:
        atoms, weights = _as_measure(x, "x")
        h = np.array([np.sum(weights * atoms**j) for j in range(n)])
    if not np.isfinite(h[0]) or abs(h[0]) <= 1e-300:
        raise GflowInputError(f"normalized moments need h_0 = C B ≠ 0, got {h[0]!r}")
    return h / h[0]


def _clusters_1d(points: np.ndarray, tol: float) -> list[np.ndarray]:
    """Indices of ``points`` grouped by single linkage on the real line: neighbours within ``tol`` join."""
    order = np.argsort(points, kind="stable")
    breaks = np.flatnonzero(np.diff(points[order]) > tol) + 1
    return np.split(order, breaks)


def clustered_atoms(atoms, weights, tol: float) -> DiscreteMeasure:
    """Merge the atoms of a measure on the real line that lie within ``tol`` of a neighbour (single linkage: a chain
    of close atoms is one cluster) into one atom each. Used to count or weigh the distinct atoms of a learned spectral
    measure (seed 000 Thm 5, Lemma 7: a measure of ≤ d̂ atoms; prediction 000-P6).

    Args:
        atoms: the locations λ_i, shape (n,).
        weights: their weights g_i, shape (n,); pass ``abs(g)`` to merge masses.
        tol: the largest gap between neighbours of one cluster (absolute, >= 0).

    Returns:
        A [`DiscreteMeasure`][gflow.analysis.DiscreteMeasure] of NumPy arrays, one atom per cluster in ascending
        order: the mean of its locations weighted by |g_i| (their plain mean where all its weights are 0), and the
        sum of its weights.

    Raises:
        GflowInputError: shapes that differ, or a negative or non-finite ``tol``.
    """
    atoms = as_float_array("atoms", atoms, ndim=1)
    weights = as_float_array("weights", weights, ndim=1)
    if atoms.shape != weights.shape:
        raise GflowInputError(f"clustered_atoms needs as many weights as atoms, got {atoms.shape} and {weights.shape}")
    if not (np.isfinite(tol) and tol >= 0):
        raise GflowInputError(f"tol must be a finite number >= 0, got {tol!r}")
    if atoms.size == 0:
        return DiscreteMeasure(np.zeros(0), np.zeros(0))
    clusters = _clusters_1d(atoms, tol)
    where = [np.average(atoms[c], weights=np.abs(weights[c])) if np.any(weights[c]) else np.mean(atoms[c])
             for c in clusters]
    return DiscreteMeasure(np.asarray(where), np.asarray([np.sum(weights[c]) for c in clusters]))


def effective_support_size(x, *, weight_threshold: float = 1e-3, cluster_tol: float = 1e-3) -> int:
    """How many distinct atoms carry weight: prediction 000-P6 (the learned measure should collapse to ≤ d̂ atoms).

    Our definition (the paper gives none): atoms with |g_i| > ``weight_threshold`` × Σ_i |g_i| are *loaded*;
    loaded atoms closer than ``cluster_tol`` (absolute, single linkage) count as one. Defaults 1e-3 and 1e-3.
    ``x`` is a :class:`DiscreteMeasure` or a SISO model with symmetric A.

    Args:
        x: A [`DiscreteMeasure`][gflow.analysis.DiscreteMeasure] or a SISO model with symmetric A.
        weight_threshold: The relative weight above which an atom is loaded.
        cluster_tol: The distance below which loaded atoms count as one.

    Returns:
        The count.
    """
    atoms, weights = _as_measure(x, "x")
    weight_threshold = positive_float("weight_threshold", weight_threshold)
    cluster_tol = positive_float("cluster_tol", cluster_tol)
    total = float(np.sum(np.abs(weights)))
    if total == 0.0:
        return 0
    loaded = atoms[np.abs(weights) > weight_threshold * total]
    return len(clustered_atoms(loaded, np.ones_like(loaded), cluster_tol).atoms)


def wasserstein1(mu, nu, *, normalize: bool = True, mass_rtol: float = 1e-9) -> float:
    """The 1-Wasserstein distance of two discrete measures on the real line (seed 000 Thm 8, Wu & Yang 2020):

        W1(μ, ν) = ∫ |F_μ(x) − F_ν(x)| dx,      F the cumulative distribution function,

    evaluated exactly on the merged atoms. ``normalize=True`` (default) divides each measure by its total mass
    first (Thm 8 compares probability measures, C B and Ĉ B̂ normalized to 1); with ``normalize=False`` the two
    masses must agree to ``mass_rtol``.

    Signed weights (an unbalanced student, e.g. Proposition 3's): the same integral is the Kantorovich–Rubinstein
    norm sup_{f 1-Lipschitz} ∫ f d(μ − ν), which equals W1 for nonnegative measures and stays a metric for signed
    measures of equal mass; that is what is returned. A total mass of 0 cannot be normalized and raises.

    Args:
        mu: A [`DiscreteMeasure`][gflow.analysis.DiscreteMeasure].
        nu: Another.
        normalize: Divide each by its total mass first.
        mass_rtol: Without ``normalize``, how closely the masses must agree.

    Returns:
        The distance, a float.
    """
    (xa, wa), (xb, wb) = _as_measure(mu, "mu"), _as_measure(nu, "nu")
    ma, mb = float(np.sum(wa)), float(np.sum(wb))
    if normalize:
        for name, m, w in (("mu", ma, wa), ("nu", mb, wb)):
            if abs(m) <= 1e-12 * max(float(np.sum(np.abs(w))), 1e-300):
                raise GflowInputError(f"`{name}` has total mass {m:.3g} (≈ 0): it cannot be normalized")
        wa, wb = wa / ma, wb / mb
    elif abs(ma - mb) > mass_rtol * max(abs(ma), abs(mb), 1e-300):
        raise GflowInputError(f"W1 needs equal total masses, got {ma:.12g} and {mb:.12g}: pass normalize=True "
                              f"to compare the normalized measures")
    x = np.concatenate([xa, xb])
    w = np.concatenate([wa, -wb])
    order = np.argsort(x, kind="stable")
    x, cdf_difference = x[order], np.cumsum(w[order])
    return float(np.sum(np.abs(cdf_difference[:-1]) * np.diff(x)))


def eigenvalue_paths(source, *, symmetric: bool | None = None) -> np.ndarray:
    """Eigenvalues of A at every saved time ("spectral dynamics", seed 000 Lemma 7 proof, seed 001 Thm 6.1).

    ``source`` is a :class:`gflow.Trajectory` or an array of transition matrices of shape (T, d, d).
    Symmetric A (``symmetric=None`` decides from the trajectory's model structure, or from the matrices):
    real, ascending at every time (eigh). General A: complex; the first time is sorted by (real, imaginary
    part) and every later time is permuted to follow the previous one (minimum total |Δλ|, Hungarian
    assignment), so a column is one eigenvalue's path as long as the saving is fine enough to tell paths apart.

    Args:
        source: A :class:`~gflow.results.Trajectory` of linear RNNs, or transition matrices of shape (T, d, d).
        symmetric: Whether A is symmetric (None: decided from the source).

    Returns:
        Shape (T, d): real for symmetric A, complex otherwise.
    """
    from scipy.optimize import linear_sum_assignment

    if hasattr(source, "params") and hasattr(source, "final"):
        from .along import along

        mats = along(source, lambda m: m.transition())
        if symmetric is None:
            symmetric = getattr(source.final, "structure", "general") in ("symmetric", "diagonal")
    else:
        mats = as_float_array("source", source, ndim=3)
    if mats.shape[1] != mats.shape[2]:
        raise GflowInputError(f"transition matrices must be square, got shape {mats.shape}")
    if symmetric is None:
        scale = max(1.0, float(np.max(np.abs(mats), initial=0.0)))
        symmetric = bool(np.max(np.abs(mats - np.swapaxes(mats, 1, 2)), initial=0.0) <= SYMMETRY_TOLERANCE * scale)
    if symmetric:
        return np.linalg.eigvalsh(0.5 * (mats + np.swapaxes(mats, 1, 2)))
    out = np.empty(mats.shape[:2], dtype=np.complex128)
    for t, A in enumerate(mats):
        lam = np.linalg.eigvals(A)
        if t == 0:
            out[t] = lam[np.lexsort((lam.imag, lam.real))]
        else:
            rows, cols = linear_sum_assignment(np.abs(out[t - 1][:, None] - lam[None, :]))
            out[t, rows] = lam[cols]
    return out
