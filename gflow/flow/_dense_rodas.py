"""Rodas5P with the dense exact Jacobian, for flows with few parameters.

For a flow dθ/dt = −∇L(θ) with n parameters the exact Jacobian −∇²L is an n × n matrix; for small n (tens to a few
hundred) forming it (n forward-over-reverse products in one vectorized pass) and factoring I + hγ∇²L by LU once per
step is cheaper than the matrix-free machinery :class:`RodasGradientFlow` needs at large n (Hessian-vector products,
Richardson iterations preconditioned by a Woodbury solve of the Gauss–Newton part). Each of the 8 stages is then one
gradient evaluation and one pair of triangular solves, exact to rounding: a classical Rosenbrock step of order 5
(Rodas5P, Steinebach 2023; Hairer & Wanner, Solving ODEs II, IV.7.25), the method :class:`RodasGradientFlow`
approximates by iteration.

The loss needs no residuals: any scalar loss with a Hessian works (the residual-space error control, where the
solve asks for it, still needs a sum of squares).
"""

from __future__ import annotations

from typing import ClassVar

import diffrax
import equinox as eqx
import equinox.internal as eqxi
import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl

from ._gradient_flow_solver import AbstractGradientFlowSolver
from ._rodas import RODAS5P, rodas_combination, rodas_stages, RodasInterpolation, RodasTableau

# Below this many parameters a stage's solve is a product with the explicit inverse (LU-factored, then inverted: one
# factorization per step, then 8 mat-vecs); from it on, a pair of triangular solves per stage. Measured on a 2-core
# CPU: at n = 10 the inverse took a step from 17.2 µs to 12.6 µs; XLA's CPU inverse slows 10-40x from n = 32 on.
INVERSE_MAX_PARAMETERS = 32


def _stage_solver(matrix):
    """b ↦ matrix⁻¹ b, for the 8 stages of one step."""
    if matrix.shape[0] < INVERSE_MAX_PARAMETERS:
        inverse = jnp.linalg.inv(matrix)
        return lambda b: inverse @ b
    factor = jsl.lu_factor(matrix)
    return lambda b: jsl.lu_solve(factor, b)


class DenseRodas(AbstractGradientFlowSolver):
    """Rodas5P with the exact Jacobian −∇²L of the flow, formed densely and LU-factored once per step (module
    docstring). Per step: n Hessian columns (one vectorized forward-over-reverse pass), one LU factorization, 7 new
    gradient evaluations (FSAL: the step's end point is the next step's first stage) and 8 triangular solve pairs.

    Attributes:
        rodas: The method's coefficients (:data:`RODAS5P`).
    """

    rodas: RodasTableau = eqx.field(static=True, default=RODAS5P)

    term_structure: ClassVar = diffrax.AbstractTerm
    interpolation_cls: ClassVar = RodasInterpolation
    evaluations_per_step: ClassVar[int] = 8
    linear_solves_per_step: ClassVar[int] = 8
    needs_sum_of_squares: ClassVar[bool] = False

    def order(self, terms):
        return self.rodas.order

    def error_order(self, terms):
        return self.rodas.embedded_order

    def init(self, terms, t0, t1, y0, args):
        return terms.vf(t0, y0, args)

    def step(self, terms, t0, t1, y0, args, solver_state, made_jump):
        jumped = eqxi.nonbatchable(eqxi.unvmap_any(made_jump))
        f0 = jax.lax.cond(jumped, lambda: terms.vf(t0, y0, args), lambda: solver_state)
        h = t1 - t0
        tab = self.rodas
        gamma = tab.gamma
        jacobian = self.flow_jacobian(terms, t0, y0, args)
        linear_solve = _stage_solver(jnp.eye(y0.size, dtype=y0.dtype) - (h * gamma) * jacobian)

        stages = rodas_stages(tab, y0, f0, t0, h, lambda t, y: terms.vf(t, y, args), linear_solve)
        y1, y_error, d = rodas_combination(tab, y0, stages)
        y_error = jnp.where(jnp.all(jnp.isfinite(y1)), y_error, jnp.inf)
        f1 = terms.vf(t1, y1, args)
        return y1, y_error, dict(y0=y0, y1=y1, d=d), f1, diffrax.RESULTS.successful

    @staticmethod
    def flow_jacobian(terms, t0, y0, args):
        """The flow's Jacobian −∇²L at y0, dense: forward mode over the gradient, all n directions at once."""
        return jax.jacfwd(lambda y: terms.vf(t0, y, args))(y0)

    def func(self, terms, t0, y0, args):
        return terms.vf(t0, y0, args)
