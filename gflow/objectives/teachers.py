"""Teachers: the models whose impulse responses the students learn.

Every teacher is a :class:`gflow.LinearRNN` (or any module with ``impulse_response(n)``), so it can be
inspected, saved and plotted like a student.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .._checks import as_float_array, GflowInputError, one_of, positive_int, prng_key
from ..models._linear_rnn import LinearRNN


def memoryless(w) -> LinearRNN:
    """The memoryless teacher y = w* x_k of seed 001 Lemma 3.1: impulse response (w*, 0, 0, ...).

    ``w`` a scalar gives a SISO teacher (A = 0, B = 1, C = w*); a (n_out, n_in) matrix W* gives the MIMO
    teacher of seed 001 App. C, realised as A = 0, B = I_{n_in}, C = W*.

    Args:
        w: w*, a scalar (SISO) or an (n_out, n_in) matrix W* (MIMO).

    Returns:
        A [`LinearRNN`][gflow.models.LinearRNN].
    """
    w = as_float_array("w", w, ndim=(0, 2))
    if w.ndim == 0:
        return LinearRNN(np.zeros((1, 1)), np.ones(1), jnp.reshape(w, (1,)))
    n_in = w.shape[1]
    return LinearRNN(np.zeros((n_in, n_in)), np.eye(n_in), w)


def balanced(key, d: int, *, eigenvalue_range=(0.6, 1.05), placement: str = "random", mean: float = 0.5,
             scale: float = 1.0) -> LinearRNN:
    """The balanced diagonal teacher of seed 000 App. C.2.1.

    Eigenvalues of Â lie in ``eigenvalue_range`` (paper: 0.6 to 1.05), i.i.d. uniform
    (``placement="random"``, our default: the paper's "distribute uniformly" is unclear) or on an evenly
    spaced grid (``placement="grid"``). B̂ has N(mean, scale²) entries (paper: "around 0.5 and scale 1"),
    normalised so that Ĉ B̂ = ‖B̂‖² = 1, and Ĉ = B̂ᵀ. Hence w_0 = Ĉ B̂ = 1.

    Args:
        key: A JAX PRNG key (``jax.random.key(0)``).
        d: d̂, the teacher's state dimension.
        eigenvalue_range: ``(low, high)`` of the eigenvalues of Â.
        placement: ``"random"`` (i.i.d. uniform) or ``"grid"`` (evenly spaced).
        mean: The mean of B̂'s entries before normalization.
        scale: Their standard deviation.

    Returns:
        A [`LinearRNN`][gflow.models.LinearRNN].
    """
    key = prng_key("key", key)
    d = positive_int("d", d)
    one_of("placement", placement, ("random", "grid"))
    lo, hi = (float(v) for v in eigenvalue_range)
    if not lo < hi:
        raise GflowInputError(f"`eigenvalue_range` must be (low, high) with low < high, got {eigenvalue_range}")
    k_eig, k_b = jax.random.split(key)
    if placement == "grid":
        eig = jnp.linspace(lo, hi, d)
    else:
        eig = jax.random.uniform(k_eig, (d,), minval=lo, maxval=hi, dtype=jnp.float64)
    b = mean + scale * jax.random.normal(k_b, (d,), dtype=jnp.float64)
    b = b / jnp.linalg.norm(b)
    return LinearRNN(eig, b, b, structure="diagonal")


def delay(d: int) -> LinearRNN:
    """The delay-line teacher of seed 000 App. C.2.2: impulse response 1 at j = d - 1, 0 elsewhere.

    Â is the nilpotent shift (ones on the superdiagonal), Ĉ = e_1ᵀ, B̂ = e_d.

    Args:
        d: d̂, the length of the delay line.

    Returns:
        A [`LinearRNN`][gflow.models.LinearRNN].
    """
    d = positive_int("d", d)
    return LinearRNN(np.eye(d, k=1), np.eye(d)[:, -1], np.eye(d)[0])


def random_unbalanced(key, d: int, *, diagonal_scale: float = 0.1, superdiagonal_mean: float = 0.7,
                      superdiagonal_scale: float = 0.1) -> LinearRNN:
    """The random unbalanced teacher of seed 000 App. C.2.2 (Fig. 3b): upper bidiagonal Â.

    Diagonal ~ N(0, 0.1²), superdiagonal ~ N(0.7, 0.1²), B̂ and Ĉ as for :func:`delay`, so the response is
    zero before j = d - 1 and "revealed" after.

    Args:
        key: A JAX PRNG key (``jax.random.key(0)``).
        d: d̂, the teacher's state dimension.
        diagonal_scale: Standard deviation of Â's diagonal (mean 0).
        superdiagonal_mean: Mean of Â's superdiagonal.
        superdiagonal_scale: Its standard deviation.

    Returns:
        A [`LinearRNN`][gflow.models.LinearRNN].
    """
    key = prng_key("key", key)
    d = positive_int("d", d)
    k_diag, k_sup = jax.random.split(key)
    diag = diagonal_scale * jax.random.normal(k_diag, (d,), dtype=jnp.float64)
    sup = superdiagonal_mean + superdiagonal_scale * jax.random.normal(k_sup, (d - 1,), dtype=jnp.float64)
    A = jnp.diag(diag) + jnp.diag(sup, k=1)
    return LinearRNN(A, np.eye(d)[:, -1], np.eye(d)[0])


def from_model(model):
    """Use a trained (or any) model as the teacher: it must provide ``impulse_response(n)``.

    Args:
        model: Any module with an ``impulse_response(n)`` method.

    Returns:
        ``model`` itself, checked.

    Raises:
        GflowInputError: ``model`` has no ``impulse_response``.
    """
    if not callable(getattr(model, "impulse_response", None)):
        raise GflowInputError(f"`model` must have an impulse_response(n) method, got {type(model).__name__}")
    return model


def first_markov_parameter(teacher) -> float:
    """w_0 = Ĉ B̂ (seed 000 E.46) of a SISO teacher; its sign sets which of B ± Cᵀ grows (Prop. 9).

    Args:
        teacher: A SISO model with ``impulse_response(n)``.

    Returns:
        w_0 as a float.

    Raises:
        GflowInputError: The teacher is not SISO.
    """
    h0 = np.asarray(teacher.impulse_response(1))[0]
    if np.ndim(h0) != 0:
        raise GflowInputError(f"`teacher` must be SISO for first_markov_parameter; its h_0 has shape {np.shape(h0)}")
    return float(h0)


def moment_matched_pair(d_hat: int = 2, *, atoms=None) -> tuple[LinearRNN, LinearRNN]:
    """Two balanced, stable, non-degenerate diagonal teachers of dimension d̂ whose impulse responses agree for
    j = 0 .. 2d̂ − 2 and differ at j = 2d̂ − 1 (seed 000 Lemma A.1 / Cor. A.2).

    Construction (ours; the paper cites Wu & Yang 2020 without one): for 2d̂ sorted distinct ``atoms`` x_i in
    [−1, 1], the signed weights ν_i = 1 / Π_{l≠i} (x_i − x_l) annihilate the moments 0 .. 2d̂ − 2 and alternate
    in sign. Its negative part (x_0, x_2, …) and positive part (x_1, x_3, …) are two d̂-atom measures with equal
    moments up to 2d̂ − 2; each, normalized to mass Ĉ B̂ = 1, is the spectral measure of a balanced teacher
    (Â = diag(atoms), B̂ = Ĉᵀ = √weights). The moments 2d̂ − 1 differ because the full Vandermonde is invertible.

    Default atoms: (−1/2, −1/4, 1/2, 1) for d̂ = 2, giving the pair (derived here, checked numerically)
    Â = diag(−1/2, 1/2), B̂ = (√0.5, √0.5) and Â = diag(−1/4, 1), B̂ = (√0.8, √0.2) (IRs 1, 0, 0.25 for j ≤ 2; 0 and
    0.1875 at j = 3); 2d̂ evenly spaced points in [−0.9, 0.9] otherwise.

    Args:
        d_hat: d̂, the dimension of each teacher.
        atoms: 2d̂ distinct points in [−1, 1] (sorted here).

    Returns:
        The two teachers, [`LinearRNN`][gflow.models.LinearRNN]s with diagonal A.

    Raises:
        GflowInputError: ``atoms`` are not 2d̂ distinct points in [−1, 1].
    """
    d_hat = positive_int("d_hat", d_hat)
    if atoms is None:
        atoms = np.array([-0.5, -0.25, 0.5, 1.0]) if d_hat == 2 else np.linspace(-0.9, 0.9, 2 * d_hat)
    x = np.sort(as_float_array("atoms", atoms, ndim=1))
    if x.shape != (2 * d_hat,):
        raise GflowInputError(f"`atoms` must hold 2·d_hat = {2 * d_hat} points, got {x.shape[0]}")
    if np.any(np.diff(x) <= 0):
        raise GflowInputError("`atoms` must be distinct")
    if np.any(np.abs(x) > 1):
        raise GflowInputError(f"`atoms` must lie in [-1, 1] (Lemma A.1's teachers are stable), got {x}")
    nu = np.array([1.0 / np.prod(x[i] - np.delete(x, i)) for i in range(2 * d_hat)])

    def teacher(idx):
        w = np.abs(nu[idx])
        b = np.sqrt(w / w.sum())
        return LinearRNN(x[idx], b, b, structure="diagonal")

    return teacher(np.arange(0, 2 * d_hat, 2)), teacher(np.arange(1, 2 * d_hat, 2))


def vandermonde_student(teacher, k: int, d: int, *, tail_values=None, eigenvalues=None, key=None) -> LinearRNN:
    """A symmetric student with zero loss at training length k whose impulse response takes arbitrary values at
    j = k .. d − 1 (seed 000 Prop. 3 / E.2; needs d > k).

    A = U diag(λ) Uᵀ with distinct eigenvalues λ (default: d Chebyshev points in (−0.95, 0.95), which keep the
    Vandermonde matrix V_{j,i} = λ_i^j well conditioned for moderate d); weights g = V⁻¹ r with r_j = w_j (the
    teacher's IR) for j < k and r_j = ``tail_values`` for j = k .. d − 1 (default w_j + 1); then Uᵀ B = √|g| and
    C U = sign(g) √|g|, so (C U)_i (Uᵀ B)_i = g_i and h_j = r_j for j < d. U is a random orthogonal matrix drawn
    with ``key`` (identity when ``key`` is None). The student is balanced only if every g_i ≥ 0.

    Args:
        teacher: A SISO model with ``impulse_response(n)``.
        k: The training length.
        d: The student's hidden size, > k.
        tail_values: r_j for j = k … d − 1: a scalar or d − k values (default w_j + 1).
        eigenvalues: d distinct eigenvalues λ (default: Chebyshev points in (−0.95, 0.95)).
        key: A JAX PRNG key for the orthogonal U; None: U = I.

    Returns:
        A symmetric [`LinearRNN`][gflow.models.LinearRNN].

    Raises:
        GflowInputError: d ≤ k, a MIMO teacher, or bad ``tail_values`` / ``eigenvalues``.
    """
    key = None if key is None else prng_key("key", key)
    k = positive_int("k", k)
    d = positive_int("d", d)
    if d <= k:
        raise GflowInputError(f"Proposition 3 needs d > k, got d = {d} and k = {k}")
    w = jnp.asarray(teacher.impulse_response(d), dtype=jnp.float64)  # pure JAX below: works under filter_vmap
    if w.ndim != 1:
        raise GflowInputError("vandermonde_student needs a SISO teacher")
    if tail_values is None:
        tail = w[k:] + 1.0
    else:
        tail = as_float_array("tail_values", tail_values, ndim=(0, 1))
        tail = jnp.full(d - k, tail) if tail.ndim == 0 else tail
        if tail.shape != (d - k,):
            raise GflowInputError(f"`tail_values` must hold d − k = {d - k} values, got {np.shape(tail_values)}")
    if eigenvalues is None:
        lam = 0.95 * np.cos(np.pi * (np.arange(d) + 0.5) / d)
    else:
        lam = as_float_array("eigenvalues", eigenvalues, ndim=1)
        if lam.shape != (d,) or len(np.unique(lam)) != d:
            raise GflowInputError(f"`eigenvalues` must be {d} distinct values, got {lam}")
    r = jnp.concatenate([w[:k], tail])
    V = np.vander(lam, d, increasing=True).T  # V[j, i] = λ_i^j
    g = jnp.linalg.solve(V, r)
    if key is None:
        U = jnp.eye(d)
    else:
        U, R = jnp.linalg.qr(jax.random.normal(key, (d, d), dtype=jnp.float64))
        U = U * jnp.sign(jnp.diag(R))
    s = jnp.sqrt(jnp.abs(g))
    return LinearRNN((U * lam) @ U.T, U @ s, (jnp.sign(g) * s) @ U.T, structure="symmetric")
