"""Balancedness of a linear RNN (seed 000 Def. 4, Prop. 9, Lemmas E.12–E.14).

Y = B − Cᵀ and W = B + Cᵀ (E.46; E.14's proof flips the sign of Y, which no norm sees). A balanced model has
Y = 0. Near zero, under gradient flow on L (no 1/2), ‖Y‖ ∝ e^{−2 w0 t} and ‖W‖ ∝ e^{+2 w0 t}; under L/2 the
same rates hold for the squared norms (seed 000 eqs. E.103–E.115).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from .._checks import GflowInputError, one_of, positive_float


def _bc(model):
    _, B, C = model.layers()
    if B.shape != C.T.shape:
        raise GflowInputError(f"balancedness needs B and Cᵀ of equal shape, got B {B.shape} and C {C.shape}")
    return B, C.T


def imbalance_norm(model):
    """‖Y‖_F = ‖B − Cᵀ‖_F.

    Args:
        model: A [`LinearRNN`][gflow.models.LinearRNN] with B and Cᵀ of one shape (SISO, or n_in = n_out).

    Returns:
        A scalar array.
    """
    B, Ct = _bc(model)
    return jnp.linalg.norm((B - Ct).reshape(-1))


def balance_norm(model):
    """‖W‖_F = ‖B + Cᵀ‖_F.

    Args:
        model: A [`LinearRNN`][gflow.models.LinearRNN] with B and Cᵀ of one shape (SISO, or n_in = n_out).

    Returns:
        A scalar array.
    """
    B, Ct = _bc(model)
    return jnp.linalg.norm((B + Ct).reshape(-1))


def balance_ratio(model):
    """ρ_bal = ‖B − Cᵀ‖_F / ‖B + Cᵀ‖_F (seed 000 eq. 4.2); 0 exactly when the model is balanced.

    Args:
        model: A [`LinearRNN`][gflow.models.LinearRNN] with B and Cᵀ of one shape (SISO, or n_in = n_out).

    Returns:
        A scalar array.

    See also: [`imbalance_norm`][gflow.analysis.imbalance_norm], [`balance_norm`][gflow.analysis.balance_norm].
    """
    return imbalance_norm(model) / balance_norm(model)


def transition_to_balance_ratio(model):
    """‖A‖_F / ‖B + Cᵀ‖_F, which Lemma E.12 shows vanishes like ε^{1/4} at τ_ε.

    Args:
        model: A [`LinearRNN`][gflow.models.LinearRNN] with B and Cᵀ of one shape (SISO, or n_in = n_out).

    Returns:
        A scalar array.
    """
    return jnp.linalg.norm(model.transition()) / balance_norm(model)


def balancing_time(eps: float, w0: float, convention: str = "L") -> float:
    """τ_ε, the time at which Lemma E.12 bounds ρ_bal by O(ε^{1/2}).

    Seed 000 Lemma E.12: t = (1/(2 w0)) ln(ε^{−1/2}) = ln(1/ε)/(4 w0) in the appendix's L/2 time
    units. Gradient flow on L runs twice as fast, so under ``convention="L"`` τ_ε = ln(1/ε)/(8 w0).

    Args:
        eps: ε, the initialization scale.
        w0: w_0 = Ĉ B̂ > 0, the teacher's first Markov parameter
            ([`first_markov_parameter`][gflow.objectives.teachers.first_markov_parameter]).
        convention: The loss convention, ``"L"`` or ``"half"``.

    Returns:
        τ_ε in the flow's time units.
    """
    eps = positive_float("eps", eps)
    w0 = positive_float("w0", w0)
    one_of("convention", convention, ("L", "half"))
    t_half = np.log(1.0 / eps) / (4.0 * w0)
    return t_half / 2.0 if convention == "L" else t_half


def early_phase_rate(norm: str, w0: float, convention: str = "L") -> float:
    """The predicted exponential rate of ‖B − Cᵀ‖ ("imbalance") or ‖B + Cᵀ‖ ("balance") near zero.

    Under L: ∓2 w0 for the norms (Prop. 9 sketch). Under L/2 the squared norms have ∓2 w0, so the norms ∓w0.

    Args:
        norm: Which norm: ``"imbalance"`` (‖B − Cᵀ‖, decays) or ``"balance"`` (‖B + Cᵀ‖, grows).
        w0: w_0 = Ĉ B̂, the teacher's first Markov parameter.
        convention: The loss convention, ``"L"`` or ``"half"``.

    Returns:
        The rate r of the norm ∝ e^{r t}.
    """
    one_of("norm", norm, ("imbalance", "balance"))
    sign = -1.0 if norm == "imbalance" else 1.0
    return sign * 2.0 * w0 if convention == "L" else sign * w0


