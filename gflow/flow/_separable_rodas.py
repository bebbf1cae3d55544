"""Rodas5P with its stage systems solved exactly, for flows whose residual curvature is block-diagonal.

The flow of L = ‖r‖² has the Jacobian −2(JᵀJ + S), S = Σ_j r_j ∇²r_j; Rodas5P's stages solve

    (I + c (JᵀJ + S)) k = b,    c = 2hγ                        (Hairer & Wanner, Solving ODEs II, IV.7.25).

:class:`RodasGradientFlow` solves them by Richardson iteration preconditioned with I + c JᵀJ, :class:`DenseRodas`
by an n × n LU. When every residual is a sum over units of a function of that unit's parameters (a diagonal linear
RNN: h_j = Σ_p C_p a_p^j B_p, seed 000 Lemma E.3; the diagonal SSM of Slutzky et al., NeurIPS 2025), S is
block-diagonal over the units (``curvature_units`` of the loss), and the system is solved exactly by Woodbury on
M = I + cS:

    (M + c JᵀJ)⁻¹ b = M⁻¹b − c M⁻¹Jᵀ (I_m + c J M⁻¹ Jᵀ)⁻¹ J M⁻¹ b,

with S's blocks from p Hessian-vector products of r(y0)·r (p the largest unit's size: one probe per position in a
unit, all units at once), the U blocks (p × p) and the m × m capacitance matrix inverted once per step (Cholesky;
LU where the capacitance matrix is not positive definite).
Per step that is O(n p² + m² n) and no iteration: the exact Rodas5P step, at the cost of ROS34PW2's linear algebra.
"""

from __future__ import annotations

from typing import ClassVar

import diffrax
import equinox.internal as eqxi
import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np

from .._checks import GflowInputError
from ._rodas import rodas_combination, rodas_stages, RodasGradientFlow
from ._rosenbrock import _flow_term


def unit_layout(units: np.ndarray) -> tuple[np.ndarray, int, int]:
    """(slot, U, p): each coordinate's position within its unit (0 … p − 1, in θ's order), the number of units and
    the largest unit's size, from the units 0 … U − 1 of :meth:`gflow.flow.GradientFlowTerm.curvature_units`."""
    units = np.asarray(units, dtype=np.int64)
    if units.size == 0:
        return np.zeros(0, np.int64), 0, 0
    order = np.argsort(units, kind="stable")
    starts = np.searchsorted(units[order], units[order])  # first position of each coordinate's unit in the sort
    slot = np.empty_like(units)
    slot[order] = np.arange(units.size) - starts
    return slot, int(units.max()) + 1, int(slot.max()) + 1


def block_woodbury_solve(jac, columns, c, units: np.ndarray, slots: np.ndarray, n_units: int):
    """b ↦ (M + c JᵀJ)⁻¹ b with M = I + cS block-diagonal (module docstring): the blocks inverted and the m × m
    capacitance matrix I_m + c J M⁻¹ Jᵀ inverted here, once.

    Args:
        jac: The residual Jacobian J as an operator (``mv``, ``rmv``).
        columns: S's columns at the unit-position probes, (p, n) (:func:`curvature_columns`).
        c: 2hγ.
        units: Each coordinate's unit.
        slots: Each coordinate's position in its unit.
        n_units: U.

    Returns:
        The solve, b ↦ x.
    """
    p = columns.shape[0]
    if p == 1:  # S diagonal: M⁻¹ elementwise (XLA's batched inverse of 1 × 1 blocks made the d = 100 SSM step 1.6×)
        diagonal_inverse = 1.0 / (1.0 + c * columns[0])

        def block_inverse(x):
            return diagonal_inverse * x
    else:
        # (unit, position) ↦ θ's index, n (an appended zero) where a unit has no such position: static-index gathers
        # both ways, no scatter
        index = np.full((n_units, p), units.size)
        index[units, slots] = np.arange(units.size)
        position = units * p + slots
        padded_columns = jnp.concatenate([columns.T, jnp.zeros((1, p), columns.dtype)])  # (n + 1, p)
        inverses = jnp.linalg.inv(jnp.eye(p, dtype=columns.dtype) + c * padded_columns[index])  # (U, p, p)

        def block_inverse(x):
            grid = jnp.concatenate([x, jnp.zeros(1, x.dtype)])[index]  # (U, p)
            return jnp.einsum("upq,uq->up", inverses, grid).reshape(-1)[position]

    m = jax.eval_shape(jac.mv, jnp.zeros(units.size, columns.dtype)).shape[0]
    eye = jnp.eye(m, dtype=columns.dtype)
    capacitance = eye + c * jax.vmap(lambda e: jac.mv(block_inverse(jac.rmv(e))), out_axes=1)(eye)
    # Cholesky when I_m + c J M⁻¹ Jᵀ is positive definite (always where M = I + cS is); an LU inverse where not (a
    # saddle of L at a long step). The factor is a custom call, so XLA keeps K⁻¹ once per step: with K's m = 1
    # inverse written as a division, XLA copied K's products with J into all 8 stages (the SSM flow at d = 100: 1.9×).
    chol = jnp.linalg.cholesky(capacitance)
    failed = eqxi.nonbatchable(eqxi.unvmap_any(~jnp.all(jnp.isfinite(chol))))
    inverse_capacitance = jax.lax.cond(failed, lambda: jnp.linalg.inv(capacitance),
                                       lambda: jsl.cho_solve((chol, True), eye))

    def solve(b):
        u = block_inverse(b)
        return u - c * block_inverse(jac.rmv(inverse_capacitance @ jac.mv(u)))

    return solve


def curvature_columns(residuals, y0, slots: np.ndarray, block_size: int):
    """S = Σ_j r_j(y0) ∇²r_j(y0) applied to one probe per position in a unit (the indicator of the coordinates at
    that position): for a block-diagonal S, row i of probe k is S's entry (i, the coordinate at position k of i's
    unit), so the p products read every block at once.

    Args:
        residuals: y ↦ r(y).
        y0: Where S is taken.
        slots: Each coordinate's position in its unit (:func:`unit_layout`).
        block_size: p.

    Returns:
        The products, shape (p, n).
    """
    r0 = jax.lax.stop_gradient(residuals(y0))
    gradient = jax.grad(lambda y: jnp.dot(r0, residuals(y)))
    if block_size == 1:
        return jax.jvp(gradient, (y0,), (jnp.ones_like(y0),))[1][None]
    probes = jnp.asarray(slots[None, :] == np.arange(block_size)[:, None], dtype=y0.dtype)  # (p, n)
    return jax.vmap(lambda v: jax.jvp(gradient, (y0,), (v,))[1])(probes)


class SeparableRodas(RodasGradientFlow):
    """Rodas5P for a gradient flow of L = ‖r‖² whose loss declares block-diagonal residual curvature
    (``curvature_units``: a diagonal :class:`gflow.LinearRNN` under :class:`gflow.PopulationLoss`), each stage solved
    exactly by a block Woodbury solve (module docstring). Per step: 7 new gradient evaluations and the end point's
    (FSAL), the residual Jacobian J, p Hessian-vector products for S's blocks, 8 block Woodbury solves. The other
    attributes are :class:`RodasGradientFlow`'s (its iteration settings are not used).
    """

    evaluations_per_step: ClassVar[int] = 8
    counts_hessian_vector_products: ClassVar[bool] = False

    @staticmethod
    def _units(flow, y0) -> np.ndarray:
        units = flow.curvature_units(y0)
        if units is None:
            raise GflowInputError(
                "solver 'rodas5p-separable' needs a loss whose residual curvature is block-diagonal over units "
                "(AbstractSumOfSquares.curvature_units: a diagonal LinearRNN under PopulationLoss); this one declares "
                "none: use solver='auto', 'rodas5p' or 'rodas5p-dense'")
        return units

    def init(self, terms, t0, t1, y0, args):
        self._units(_flow_term(terms), y0)
        return super().init(terms, t0, t1, y0, args)

    def step(self, terms, t0, t1, y0, args, solver_state, made_jump):
        flow = _flow_term(terms)
        units = self._units(flow, y0)
        slots, n_units, block_size = unit_layout(units)
        f_prev, _, gram, age, products = solver_state
        jumped = eqxi.nonbatchable(eqxi.unvmap_any(made_jump))
        f0 = jax.lax.cond(jumped, lambda: terms.vf(t0, y0, args), lambda: f_prev)
        h = t1 - t0
        c = 2.0 * h * self.rodas.gamma
        jac = flow.residual_jacobian_operator(y0)  # exact at y0 every step: Rodas5P's order needs it
        columns = curvature_columns(flow.residuals, y0, slots, block_size)
        solve = block_woodbury_solve(jac, columns, c, units, slots, n_units)
        stages = rodas_stages(self.rodas, y0, f0, t0, h, lambda t, y: terms.vf(t, y, args), solve)
        y1, y_error, d = rodas_combination(self.rodas, y0, stages)
        y_error = jnp.where(jnp.all(jnp.isfinite(y1)), y_error, jnp.inf)  # a singular M or capacitance: reject
        f1, y_error = self._end_of_step(flow, terms, t1, y1, args, y_error, jac.mv)
        return y1, y_error, dict(y0=y0, y1=y1, d=d), (f1, jac, gram, age, products), diffrax.RESULTS.successful
