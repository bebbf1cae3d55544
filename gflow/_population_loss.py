"""Closed-form population loss of a linear RNN against a teacher.

Seed 000 eq. 3.4 / Lemma E.1 and seed 001 Lemma 3.1 / C.1: for whitened inputs (E x = 0, E x xᵀ = I)

    L = Σ_{j<k} weight_j ‖h_j − w_j‖²,      h_j = C A^j B,  w_j the teacher's impulse response,

with weight_j = 1 (last-step labels) or weight_j = k − j (labels at every step: seed 000 App. D, eq. D.3).
``convention="half"`` multiplies by 1/2, which is the time unit of seed 000's appendix (spec 000 §3.2).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp

from ._checks import GflowInputError, one_of, positive_int

WEIGHTINGS = ("uniform", "accumulating")
CONVENTIONS = ("L", "half")


class PopulationLoss(eqx.Module):
    """L(model) = scale · Σ_j weight_j ‖h_j − w_j‖², written as ‖r‖² with r = residuals(model)."""

    target: jax.Array
    weights: jax.Array
    k: int = eqx.field(static=True)
    weighting: str = eqx.field(static=True)
    convention: str = eqx.field(static=True)

    def __init__(self, teacher, k: int, weighting: str = "uniform", convention: str = "L"):
        self.k = positive_int("k", k)
        self.weighting = one_of("weighting", weighting, WEIGHTINGS)
        self.convention = one_of("convention", convention, CONVENTIONS)
        if not callable(getattr(teacher, "impulse_response", None)):
            raise GflowInputError(f"`teacher` must have an impulse_response(n) method, got {type(teacher).__name__}")
        self.target = jax.lax.stop_gradient(jnp.asarray(teacher.impulse_response(self.k), dtype=jnp.float64))
        j = jnp.arange(self.k, dtype=jnp.float64)
        w = jnp.ones(self.k) if weighting == "uniform" else self.k - j
        self.weights = w * (0.5 if convention == "half" else 1.0)

    def _check_model(self, model):
        h_shape = self.target.shape[1:]
        m_shape = () if model.siso else (model.n_out, model.n_in)
        if h_shape != m_shape:
            raise GflowInputError(
                f"model output shape {m_shape or 'scalar (SISO)'} does not match the teacher's "
                f"{h_shape or 'scalar (SISO)'}"
            )

    def residuals(self, model) -> jax.Array:
        """r with L = ‖r‖²: r_j = √(scale·weight_j) (h_j − w_j), flattened."""
        self._check_model(model)
        diff = model.impulse_response(self.k) - self.target
        w = jnp.sqrt(self.weights).reshape((-1,) + (1,) * (diff.ndim - 1))
        return (w * diff).reshape(-1)

    def __call__(self, model) -> jax.Array:
        r = self.residuals(model)
        return jnp.sum(r * r)

    @property
    def time_unit(self) -> str:
        """How to read rates: under "L", ‖B ∓ Cᵀ‖ ∝ e^{∓2 w0 t}; under "half", the squared norms are."""
        return "L (no 1/2)" if self.convention == "L" else "L/2 (seed 000 appendix units)"
