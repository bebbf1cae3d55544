"""Teachers: the models whose impulse responses the students learn.

Every teacher is a :class:`gflow.LinearRNN` (or any module with ``impulse_response(n)``), so it can be
inspected, saved and plotted like a student.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ._checks import GflowInputError, as_float_array, one_of, positive_int
from ._linear_rnn import LinearRNN


def memoryless(w) -> LinearRNN:
    """The memoryless teacher y = w* x_k of seed 001 §1.4: impulse response (w*, 0, 0, ...).

    ``w`` a scalar gives a SISO teacher (A = 0, B = 1, C = w*); a (n_out, n_in) matrix W* gives the MIMO
    teacher of seed 001 App. C, realised as A = 0, B = I_{n_in}, C = W*.
    """
    w = as_float_array("w", w, ndim=(0, 2))
    if w.ndim == 0:
        return LinearRNN(np.zeros((1, 1)), np.ones(1), np.array([float(w)]))
    n_in = w.shape[1]
    return LinearRNN(np.zeros((n_in, n_in)), np.eye(n_in), w)


def balanced(key, d: int, *, eigenvalue_range=(0.6, 1.05), placement: str = "random", mean: float = 0.5,
             scale: float = 1.0) -> LinearRNN:
    """The balanced diagonal teacher of seed 000 App. C.2.1 (spec 000 §1.4a).

    Eigenvalues of Â lie in ``eigenvalue_range`` (paper: 0.6 to 1.05), i.i.d. uniform
    (``placement="random"``, our default: the paper's "distribute uniformly" is unclear) or on an evenly
    spaced grid (``placement="grid"``). B̂ has N(mean, scale²) entries (paper: "around 0.5 and scale 1"),
    normalised so that Ĉ B̂ = ‖B̂‖² = 1, and Ĉ = B̂ᵀ. Hence w_0 = Ĉ B̂ = 1.
    """
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
    """
    d = positive_int("d", d)
    return LinearRNN(np.eye(d, k=1), np.eye(d)[:, -1], np.eye(d)[0])


def random_unbalanced(key, d: int, *, diagonal_scale: float = 0.1, superdiagonal_mean: float = 0.7,
                      superdiagonal_scale: float = 0.1) -> LinearRNN:
    """The random unbalanced teacher of seed 000 App. C.2.2 (Fig. 3b): upper bidiagonal Â.

    Diagonal ~ N(0, 0.1²), superdiagonal ~ N(0.7, 0.1²), B̂ and Ĉ as for :func:`delay`, so the response is
    zero before j = d - 1 and "revealed" after.
    """
    d = positive_int("d", d)
    k_diag, k_sup = jax.random.split(key)
    diag = diagonal_scale * jax.random.normal(k_diag, (d,), dtype=jnp.float64)
    sup = superdiagonal_mean + superdiagonal_scale * jax.random.normal(k_sup, (d - 1,), dtype=jnp.float64)
    A = jnp.diag(diag) + jnp.diag(sup, k=1)
    return LinearRNN(A, np.eye(d)[:, -1], np.eye(d)[0])


def from_model(model):
    """Use a trained (or any) model as the teacher: it must provide ``impulse_response(n)``."""
    if not callable(getattr(model, "impulse_response", None)):
        raise GflowInputError(f"`model` must have an impulse_response(n) method, got {type(model).__name__}")
    return model


def first_markov_parameter(teacher) -> float:
    """w_0 = Ĉ B̂ (seed 000 E.46) of a SISO teacher; its sign sets which of B ± Cᵀ grows (Prop. 9)."""
    h0 = np.asarray(teacher.impulse_response(1))[0]
    if np.ndim(h0) != 0:
        raise GflowInputError(f"`teacher` must be SISO for first_markov_parameter; its h_0 has shape {np.shape(h0)}")
    return float(h0)
