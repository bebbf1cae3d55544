"""Extrapolation measures of seed 000 §2.4 / App. C.3 and seed 001 §2.5.

The tail window [k, horizon) and the default horizon are ours: the papers do not state them.
"""

from __future__ import annotations

import jax.numpy as jnp

from .._checks import GflowInputError, positive_int

DEFAULT_HORIZON = 100


def _window(k, horizon):
    k = positive_int("k", k)
    horizon = positive_int("horizon", horizon)
    if horizon <= k:
        raise GflowInputError(f"`horizon` ({horizon}) must exceed the training length k ({k})")
    return k, horizon


def _abs_diff(model, teacher, horizon):
    h = model.impulse_response(horizon)
    w = teacher.impulse_response(horizon)
    return jnp.abs(h - w).reshape(horizon, -1).max(axis=1), jnp.abs(w).reshape(horizon, -1).max(axis=1)


def tail_error(model, teacher, k: int, horizon: int = DEFAULT_HORIZON):
    """ℓ∞ distance of the impulse responses on the tail j ∈ [k, horizon) (seed 000 Sec. 5.1)."""
    k, horizon = _window(k, horizon)
    diff, _ = _abs_diff(model, teacher, horizon)
    return diff[k:].max()


def zero_solution_error(teacher, k: int, horizon: int = DEFAULT_HORIZON):
    """The baseline of seed 000 App. C.3: the tail error of the all-zero impulse response, max |w_j|."""
    k, horizon = _window(k, horizon)
    w = teacher.impulse_response(horizon)
    return jnp.abs(w).reshape(horizon, -1).max(axis=1)[k:].max()


def loss_at_length(model, teacher, q: int):
    """L_q = Σ_{j<q} ‖h_j − w_j‖² (seed 001 §2.5); nondecreasing in q, L_k is the training loss."""
    q = positive_int("q", q)
    diff = model.impulse_response(q) - teacher.impulse_response(q)
    return jnp.sum(diff * diff)


def extrapolates(model, teacher, eps: float, q: int) -> bool:
    """ε-extrapolation with horizon q (seed 000 Def. 2): |h_j − w_j| ≤ ε for all j < q."""
    q = positive_int("q", q)
    diff, _ = _abs_diff(model, teacher, q)
    return bool(diff.max() <= eps)
