"""Conserved quantities of gradient flow on any loss of the impulse response (seed 000 Lemmas 6, E.5–E.7; the matrix Q
is derived here).

Q = AAᵀ − AᵀA + BBᵀ − CᵀC is the Noether invariant of (A, B, C) → (G A G⁻¹, G B, C G⁻¹) for general A; its
trace ‖B‖² − ‖C‖² (seed 000 Lemma E.7) is conserved for every structure of A. Their drift is a solver check:
at tolerance level under the flow, growing like η·t under GD.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from .._checks import GflowInputError


def _require_trained(model, layers: str, quantity: str) -> None:
    """Q is conserved only when A, B, C all move with the flow, its trace only when B and C do: on a model with
    other layers frozen a drift would be physics, not solver error, so refuse rather than mislead."""
    trained = getattr(model, "trained", ("A", "B", "C"))
    missing = [name for name in layers if name not in trained]
    if missing:
        raise GflowInputError(f"{quantity} is conserved only when {', '.join(layers)} are all trained; this model "
                              f"freezes {', '.join(missing)} (trained: {', '.join(trained)})")


def _as_matrices(model):
    _require_trained(model, "ABC", "Q = AAᵀ − AᵀA + BBᵀ − CᵀC")
    _, B, C = model.layers()
    return model.transition(), B.reshape(model.d, -1), C.reshape(-1, model.d)


def balance_matrix(model):
    """Q = AAᵀ − AᵀA + BBᵀ − CᵀC, a (d, d) matrix.

    Args:
        model: A [`LinearRNN`][gflow.models.LinearRNN] with B and Cᵀ of one shape (SISO, or n_in = n_out).

    Returns:
        A (d, d) array.
    """
    A, B, C = _as_matrices(model)
    return A @ A.T - A.T @ A + B @ B.T - C.T @ C


def balance_matrix_scale(model):
    """‖AAᵀ‖ + ‖AᵀA‖ + ‖BBᵀ‖ + ‖CᵀC‖ (Frobenius): the size against which Q's drift is relative.

    Args:
        model: A [`LinearRNN`][gflow.models.LinearRNN] with B and Cᵀ of one shape (SISO, or n_in = n_out).

    Returns:
        A scalar array.
    """
    A, B, C = _as_matrices(model)
    n = jnp.linalg.norm
    return n(A @ A.T) + n(A.T @ A) + n(B @ B.T) + n(C.T @ C)


def norm_difference(model):
    """‖B‖_F² − ‖C‖_F² (seed 000 Lemma E.7), the trace of Q.

    Args:
        model: A [`LinearRNN`][gflow.models.LinearRNN].

    Returns:
        A scalar array.
    """
    _require_trained(model, "BC", "‖B‖² − ‖C‖²")
    _, B, C = model.layers()
    return jnp.sum(B**2) - jnp.sum(C**2)


def drift_series(values) -> np.ndarray:
    """‖v(t) − v(0)‖_F at every saved time of a conserved quantity (leading axis = time); NaN where v is not
    finite. Under GD it grows like η·t (derived here: O(η²) per step).

    Args:
        values: The quantity at every saved time (leading axis = time), e.g. from :func:`~gflow.analysis.along`.

    Returns:
        One drift per saved time (0 at the first).
    """
    v = np.asarray(values, dtype=np.float64)
    flat = v.reshape(len(v), -1)
    out = np.linalg.norm(flat - flat[0], axis=1)
    return np.where(np.all(np.isfinite(flat), axis=1), out, np.nan)


def drift(values) -> float:
    """max_t ‖v(t) − v(0)‖_F over a saved sequence of a conserved quantity (leading axis = time).

    Args:
        values: The quantity at every saved time (leading axis = time).

    Returns:
        The largest drift, a float.
    """
    v = np.asarray(values, dtype=np.float64)
    v = v[np.all(np.isfinite(v.reshape(len(v), -1)), axis=1)]
    if len(v) == 0:
        return float("nan")
    return float(np.max(drift_series(v)))


def relative_drift(values, scales) -> float:
    """drift(values) divided by the largest scale seen along the run.

    Args:
        values: The quantity at every saved time (leading axis = time).
        scales: Its scale at every saved time (e.g. [`balance_matrix_scale`][gflow.analysis.balance_matrix_scale]).

    Returns:
        A float.
    """
    scales = np.asarray(scales, dtype=np.float64)
    return drift(values) / float(np.nanmax(scales))
