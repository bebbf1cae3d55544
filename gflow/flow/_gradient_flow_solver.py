"""What gflow asks of a solver besides diffrax's solver interface: its work per step (for a flow's statistics), its
inner tolerances, and the Hessian-vector products it counts — declared on :class:`AbstractGradientFlowSolver` (the
way diffrax declares ``term_structure`` and ``interpolation_cls``: ``eqx.AbstractClassVar``), and for the stock
diffrax solvers in :data:`STOCK_EVALUATIONS_PER_STEP`. gflow never probes a solver with ``hasattr``."""

from typing import ClassVar

import diffrax
import jax
import jax.numpy as jnp
from equinox import AbstractClassVar  # (no `from __future__ import annotations`: equinox reads these at run time)

# New gradient evaluations per attempted step of the explicit FSAL methods (an estimate, for a flow's statistics);
# the implicit stock solvers (Kvaerno) evaluate a number that depends on their Newton iterations: not counted.
STOCK_EVALUATIONS_PER_STEP: dict[type, int] = {diffrax.Tsit5: 6, diffrax.Dopri5: 6, diffrax.Dopri8: 12, diffrax.Bosh3: 3}


class AbstractGradientFlowSolver(diffrax.AbstractAdaptiveSolver):
    """A diffrax solver written for gradient flows of sums of squares (:class:`GaussNewtonRosenbrock`,
    :class:`RodasGradientFlow`), which declares its work; :meth:`for_rtol` gives the solver whose inner tolerances
    follow the solve's (traced) rtol.

    Attributes:
        evaluations_per_step: New gradient evaluations per attempted step (``stats["gradient_evaluations"]``).
        linear_solves_per_step: Linear solves per attempted step (``stats["linear_solves"]``).
        counts_hessian_vector_products: Whether its state counts Hessian-vector products over the accepted steps,
            read by :meth:`hessian_vector_products` from the final solver state (then saved by the solve).
        needs_sum_of_squares: Whether it uses the residuals r of L = ‖r‖² (False: any scalar loss).
    """

    evaluations_per_step: AbstractClassVar[int]
    linear_solves_per_step: AbstractClassVar[int]
    counts_hessian_vector_products: ClassVar[bool] = False
    needs_sum_of_squares: ClassVar[bool] = True

    def for_rtol(self, rtol) -> "AbstractGradientFlowSolver":
        """This solver with its inner tolerances set from the solve's ``rtol`` (itself when it has none)."""
        return self

    @staticmethod
    def hessian_vector_products(solver_state) -> jax.Array:
        """Hessian-vector products over the accepted steps, from a final solver state (−1: not counted)."""
        return jnp.asarray(-1)


def evaluations_per_step(solver) -> int | None:
    """New gradient evaluations per attempted step of ``solver``; None where unknown (an implicit stock solver)."""
    if isinstance(solver, AbstractGradientFlowSolver):
        return solver.evaluations_per_step
    return STOCK_EVALUATIONS_PER_STEP.get(type(solver))


def linear_solves_per_step(solver) -> int | None:
    """Linear solves per attempted step of a gradient-flow solver; None for a stock diffrax solver."""
    return solver.linear_solves_per_step if isinstance(solver, AbstractGradientFlowSolver) else None


def counts_hessian_vector_products(solver) -> bool:
    return isinstance(solver, AbstractGradientFlowSolver) and solver.counts_hessian_vector_products


def hessian_vector_products(solver, solver_state) -> jax.Array:
    """The Hessian-vector products ``solver`` counted over the accepted steps; −1 for a solver that counts none."""
    if counts_hessian_vector_products(solver):
        return jnp.asarray(solver.hessian_vector_products(solver_state))
    return jnp.asarray(-1)
