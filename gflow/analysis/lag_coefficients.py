"""The per-lag coefficients γ^(l) of the gradient of a population loss: Slutzky et al. (NeurIPS 2025,
arXiv 2410.10473), Proposition 1, as their code computes it (common/callbacks.py in their repository).

For a SISO model under L = Σ_j w_j (h_j − h*_j)² (a :class:`gflow.PopulationLoss`, whose weights w_j already hold
any ½ of its convention), with residuals r_j = h_j − h*_j, put

    γ^(l) = −2 (l + 1) w_{l+1} r_{l+1},        l = 0 … k − 2.

For diagonal A = diag(a) the gradient is then a polynomial in each eigenvalue,

    −∂L/∂a_p = b_p c_p Σ_{l=0}^{k−2} γ^(l) a_p^l,

so γ^(0) (lag 1) pushes every entry at the same rate, and γ^(l) (lag l + 1) favours large |a_p| more as l grows.
Their γ uses δ = y − ŷ (target minus prediction), γ^(l) = (2 (l + 1)/n) Σ_i δ_i x_{i, L−2−l}: an impulse sequence
with its last output labelled sees one lag, and the mean over n sequences is w = 1/n, so the two agree sign for
sign. Lag 0 (h_0 = C B) does not depend on A and has no coefficient.

For any A (general or symmetric, gradient with respect to the transition matrix), with u_s = (Aᵀ)^s Cᵀ and
v_m = A^m B, the same coefficients read

    −∇_A L = Σ_j (−2 w_j r_j) Σ_{s+m=j−1} u_s v_mᵀ = Σ_l γ^(l) / (l + 1) · Σ_{s+m=l} u_s v_mᵀ,

which is the diagonal formula when u_s v_mᵀ = diag(c ⊙ b ⊙ a^{s+m}).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .._checks import GflowInputError
from ..models._linear_rnn import LinearRNN
from ..objectives._population_loss import PopulationLoss


def lag_gradient_coefficients(loss, model) -> jax.Array:
    """(γ^(0), …, γ^(k−2)) with γ^(l) = −2 (l + 1) w_{l+1} (h_{l+1} − h*_{l+1}) (Slutzky et al. 2025, Prop. 1):
    for diagonal A, −∂L/∂a_p = b_p c_p Σ_l γ^(l) a_p^l. SISO models under a :class:`gflow.PopulationLoss`;
    empty for k = 1. Traceable: ``diagnostics={"gamma": lambda m: lag_gradient_coefficients(loss, m)}``.

    Args:
        loss: A [`PopulationLoss`][gflow.objectives.PopulationLoss].
        model: A SISO [`LinearRNN`][gflow.models.LinearRNN].

    Returns:
        Shape (k − 1,).
    """
    if not isinstance(loss, PopulationLoss):
        raise GflowInputError(f"lag_gradient_coefficients needs a gflow.PopulationLoss (per-lag weights and the "
                              f"teacher's impulse response), got {type(loss).__name__}")
    if not isinstance(model, LinearRNN):
        raise GflowInputError(f"lag_gradient_coefficients needs a gflow.LinearRNN, got {type(model).__name__}")
    if not model.siso or loss.target.ndim != 1:
        which = "model" if not model.siso else "teacher"
        raise GflowInputError(f"lag_gradient_coefficients is defined for SISO models (scalar h_j); the {which} is "
                              f"MIMO")
    r = model.impulse_response(loss.n_lags) - loss.target
    lags = jnp.arange(1, loss.n_lags, dtype=r.dtype)
    return -2.0 * lags * loss.weights[1:] * r[1:]
