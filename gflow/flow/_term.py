"""The vector field −∇L(θ) as a diffrax term that remembers it is a gradient flow of a sum of squares.

Stock diffrax solvers see an ordinary ODE term. gflow's stiff solver also asks the term for the residuals r
(L = ‖r‖²) so that it can use the Gauss–Newton structure of the Jacobian −2(JᵀJ + Σ r_j ∇²r_j) (docs/design.md, "Why the flow is stiff").
"""

from __future__ import annotations

import abc
from typing import Any, Callable

import diffrax
import equinox as eqx
import jax
import jax.flatten_util
import jax.numpy as jnp
import numpy as np

from .._checks import GflowInputError
from ..models._flatten import unflatten
from ..objectives._abstract_objective import AbstractSumOfSquares
from ..objectives._residual_jacobian import DenseResidualJacobian


class AbstractSumOfSquaresTerm(diffrax.AbstractTerm):
    """What :class:`gflow.flow.GaussNewtonRosenbrock` needs from a term: the flow dθ/dt = −∇L(θ) of L = ‖r(θ)‖² on
    flat parameter vectors θ, with the residuals and their Jacobian as an operator (``mv``, ``rmv``, ``gram``)."""

    @abc.abstractmethod
    def residuals(self, y) -> jax.Array:
        """r(θ), flattened."""

    @abc.abstractmethod
    def residual_jacobian_operator(self, y):
        """J = ∂r/∂θ at θ as an operator on flat vectors."""

    @property
    def fuses_guard(self) -> bool:
        """Whether :meth:`residuals_and_vf` gives r and −∇L from one pass (False: a solver evaluates them apart)."""
        return False

    def curvature_units(self, y) -> np.ndarray | None:
        """Each coordinate's unit of the residual curvature (:meth:`gflow.objectives.AbstractSumOfSquares.
        curvature_units`), as integers 0 … U − 1 on the host, or None where the loss declares none."""
        return None

    def residuals_and_vf(self, y):
        """(r(θ), −∇L(θ)) from one forward and one reverse pass, where :attr:`fuses_guard`."""
        raise NotImplementedError(f"{type(self).__name__} does not evaluate r and −∇L together")


class GradientFlowTerm(AbstractSumOfSquaresTerm):
    """dθ/dt = −∇L(θ) on the flat parameter vector θ of a model.

    Attributes:
        loss: Maps a model to a scalar; the structured solver needs a
            :class:`gflow.objectives.AbstractSumOfSquares` (:attr:`is_sum_of_squares`).
        static: The non-array part of the model.
        unravel: Maps θ back to the model's arrays.
    """

    loss: Any
    static: Any
    unravel: Callable = eqx.field(static=True)

    @property
    def is_sum_of_squares(self) -> bool:
        return isinstance(self.loss, AbstractSumOfSquares)

    @property
    def loss_is_norm_of_residuals(self) -> bool:
        """Whether L(θ) is ‖r(θ)‖² as computed by AbstractSumOfSquares (a subclass may define its own value)."""
        return self.is_sum_of_squares and type(self.loss).__call__ is AbstractSumOfSquares.__call__

    @property
    def fuses_guard(self) -> bool:
        """Whether :meth:`residuals_and_vf` applies: L is ‖r‖² as AbstractSumOfSquares computes it, so one pass
        through r gives the flow's field and the residuals the descent guard needs at the same point."""
        return self.loss_is_norm_of_residuals

    def model(self, y):
        return unflatten(y, self.static, self.unravel)

    def loss_value(self, y):
        return self.loss(self.model(y))

    def _sum_of_squares(self) -> AbstractSumOfSquares:
        if not self.is_sum_of_squares:
            raise GflowInputError(
                f"the loss {type(self.loss).__name__} is not a sum of squares: gflow's stiff solver needs a "
                "gflow.objectives.AbstractSumOfSquares (implement `residuals(model)` with L = ‖r‖²); any other "
                "loss runs with a stock diffrax solver, e.g. solver='kvaerno5' or 'tsit5'")
        return self.loss

    def residuals(self, y):
        return self._sum_of_squares().residuals(self.model(y))

    def curvature_units(self, y) -> np.ndarray | None:
        """The loss's curvature units (:meth:`gflow.objectives.AbstractSumOfSquares.curvature_units`) on flat θ:
        integers 0 … U − 1 of θ's length, a host constant (read off the model's structure, so also under tracing),
        or None where the loss declares none."""
        if not self.is_sum_of_squares:
            return None
        tree = self.loss.curvature_units(self.model(y))
        if tree is None:
            return None
        leaves = jax.tree_util.tree_leaves(eqx.filter(tree, eqx.is_inexact_array))
        if not all(isinstance(leaf, np.ndarray) for leaf in leaves):
            raise GflowInputError(f"{type(self.loss).__name__}.curvature_units must return numpy arrays for every "
                                  "trained leaf (the units are read off the model's structure, not its values)")
        units = np.concatenate([leaf.ravel() for leaf in leaves]) if leaves else np.zeros(0)
        if units.size != y.size:
            raise GflowInputError(f"{type(self.loss).__name__}.curvature_units gives {units.size} units for "
                                  f"{y.size} parameters")
        return np.unique(units, return_inverse=True)[1].reshape(-1)

    def residual_targets(self):
        """The labels inside r (:meth:`gflow.objectives.AbstractSumOfSquares.residual_targets`), or None."""
        return self._sum_of_squares().residual_targets()

    def residual_jacobian(self, y):
        """J = ∂r/∂θ (m × n): in closed form when the loss provides it, else by autodiff (forward mode when there
        are no more parameters than residuals, n ≤ m; reverse mode otherwise)."""
        rows = self._sum_of_squares().residual_jacobian(self.model(y))
        if rows is None:
            m = jax.eval_shape(self.residuals, y).shape[0]
            return (jax.jacfwd if y.size <= m else jax.jacrev)(self.residuals)(y)
        leaves = jax.tree_util.tree_leaves(eqx.filter(rows, eqx.is_inexact_array))
        m = leaves[0].shape[0]
        return jnp.concatenate([leaf.reshape(m, -1) for leaf in leaves], axis=1)

    def residual_jacobian_operator(self, y):
        """J as an operator on flat vectors (``mv``, ``rmv``, ``gram``): matrix-free when the loss has a structured
        form for this model, else the materialized matrix."""
        op = self._sum_of_squares().residual_jacobian_operator(self.model(y))
        if op is None:
            return DenseResidualJacobian(self.residual_jacobian(y))
        return _FlatOperator(op, self.unravel)

    def vf(self, t, y, args):
        return _negative_gradient(self, y)

    def residuals_and_vf(self, y):
        """(r(θ), −∇L(θ)) of L = ‖r‖² from one forward and one reverse pass (``jax.value_and_grad`` with r as its
        auxiliary output): the field a solver evaluates at a step's end (FSAL) and the residuals the descent guard
        judges that end by (:class:`gflow.flow.DescentController`), for the price of the field alone.

        Args:
            y: θ, flat.

        Returns:
            (r(θ), −∇L(θ)).
        """
        if not self.fuses_guard:
            raise GflowInputError(f"the loss {type(self.loss).__name__} is not ‖r‖² as AbstractSumOfSquares computes "
                                  "it: its field and residuals are evaluated apart")
        return _residuals_and_negative_gradient(self, y)

    def contr(self, t0, t1, **kwargs):
        return t1 - t0

    def prod(self, vf, control):
        return jax.tree_util.tree_map(lambda v: v * control, vf)

    def vf_prod(self, t, y, args, control):
        return self.prod(self.vf(t, y, args), control)


@eqx.filter_jit
def _negative_gradient(term: GradientFlowTerm, y):
    """−∇L(θ). Jitted so that a solver which evaluates the field at several places of its step (and diffrax,
    which traces its step more than once) traces the gradient once and reuses it: a quarter of R1's first-call
    time was spent tracing the same gradient 22 times."""
    return -jax.grad(term.loss_value)(y)


@eqx.filter_jit
def _residuals_and_negative_gradient(term: GradientFlowTerm, y):
    """(r(θ), −∇L(θ)) of L = ‖r‖², one forward and one reverse pass; jitted as :func:`_negative_gradient` is."""

    def loss_and_residuals(y):
        r = term.residuals(y)
        return jnp.sum(r * r), r

    (_, r), gradient = jax.value_and_grad(loss_and_residuals, has_aux=True)(y)
    return r, -gradient


class _FlatOperator(eqx.Module):
    """A residual-Jacobian operator on models, seen on flat parameter vectors."""

    op: Any
    unravel: Callable = eqx.field(static=True)

    def mv(self, b):
        return self.op.mv(self.unravel(b))

    def rmv(self, z):
        return jax.flatten_util.ravel_pytree(eqx.filter(self.op.rmv(z), eqx.is_inexact_array))[0]

    def gram(self):
        return self.op.gram()
