"""What a loss must provide for gflow's stiff solver, declared once (equinox style: an abstract module).

Every loss of the papers is a sum of squares L(θ) = ‖r(θ)‖² of residuals r (the convention's factor folded into
r). The Jacobian of the flow −∇L is then −2(JᵀJ + Σ_j r_j ∇²r_j) with J = ∂r/∂θ, and its stiff part −2JᵀJ is what
:class:`gflow.flow.GaussNewtonRosenbrock` factors (docs/design.md, "Why the flow is stiff"). A loss that subclasses
:class:`AbstractSumOfSquares` and implements :meth:`~AbstractSumOfSquares.residuals` gets that solver; the two
optional methods make it faster. Any other callable ``loss(model) -> scalar`` works with diffrax's stock solvers.
"""

from __future__ import annotations

import abc

import equinox as eqx
import jax
import jax.numpy as jnp


class AbstractSumOfSquares(eqx.Module):
    """L(model) = ‖r(model)‖².

    - :meth:`residuals` (required): r as a flat vector.
    - :meth:`residual_jacobian` (optional): ∂r/∂θ in closed form, as a model whose trained leaves carry a leading
      axis of length len(r); ``None`` (the default) lets the solver differentiate :meth:`residuals`.
    - :meth:`residual_jacobian_operator` (optional): ∂r/∂θ as a matrix-free operator with ``mv``, ``rmv`` and
      ``gram`` (:class:`gflow.objectives.ImpulseResponseJacobian`) for the models where one exists, else ``None``.
    - :meth:`curvature_units` (optional): which parameters each residual's curvature couples (a partition of θ into
      units over which every ∇²r_j is block-diagonal), for :class:`gflow.flow.SeparableRodas`; ``None`` by default.
    - :meth:`residual_targets` (optional): the labels inside r (r = prediction − label, factors folded in), from
      which gflow bounds the rounding error of r where prediction and label cancel (:func:`gflow.flow.loss_rounding`).

    gflow's losses also have a ``convention``, ``"L"`` or ``"half"`` (L/2, folded into r), the time unit of the
    flow (seed 000 Lemma E.4: the appendix drops the factor 2), which :meth:`description` reports.
    """

    @abc.abstractmethod
    def residuals(self, model) -> jax.Array:
        """r with L = ‖r‖², flattened.

        Args:
            model: The model the loss is evaluated at.

        Returns:
            A vector.
        """

    def __call__(self, model) -> jax.Array:
        r = self.residuals(model)
        return jnp.sum(r * r)

    def residual_jacobian(self, model):
        """∂r/∂θ in closed form, or None: then the solver differentiates
        [`residuals`][gflow.objectives.AbstractSumOfSquares.residuals].

        Args:
            model: The model the loss is evaluated at.

        Returns:
            The model with each trained leaf replaced by its rows of ∂r/∂θ (a leading axis of length len(r)), or
            None.
        """
        return None

    def residual_jacobian_operator(self, model):
        """∂r/∂θ as a matrix-free operator, or None where the loss has none for this model.

        Args:
            model: The model the loss is evaluated at.

        Returns:
            An object with ``mv``, ``rmv`` and ``gram``, or None.
        """
        return None

    def curvature_units(self, model):
        """The units of the residual curvature, or None: a partition of the trained parameters such that every
        residual is a sum over units of a function of that unit's parameters (plus a constant), so that each ∇²r_j,
        and with it S = Σ_j r_j ∇²r_j in the flow's Jacobian −2(JᵀJ + S), is block-diagonal over the units.
        :class:`gflow.flow.SeparableRodas` then solves its stage systems exactly from S's blocks.

        Args:
            model: The model the loss is evaluated at (only its structure is read).

        Returns:
            ``model`` with each trained leaf replaced by a numpy array of its shape holding each entry's unit (an
            integer, as float), or None (the default: no such structure declared).
        """
        return None

    def residual_targets(self) -> jax.Array | None:
        """The labels inside r, flat and in r's units (r = prediction − label), or ``None`` if r has no such part: the
        size of what cancels in r, from which the solver bounds r's rounding error near L = 0.

        Returns:
            A vector of r's length, or None.
        """
        return None

    def description(self) -> dict:
        """What a trajectory records about the loss: its convention, and where they apply its training length k
        and weighting.

        Returns:
            ``{"convention", "k", "weighting"}`` (None where they do not apply).
        """
        return {"convention": "unknown", "k": None, "weighting": None}
