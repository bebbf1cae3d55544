"""Projections onto per-neuron constraint sets around the initialization, for projected GD (seed 003's ‖·‖₂,∞-projected GD).

Seed 003 keeps every neuron i inside a box for its recurrent weight, |W_ii − W_ii(0)| ≤ ρ_w/√m, and an ℓ2
ball for its input weights, ‖U_i − U_i(0)‖ ≤ ρ_u/√m. Here a projection names the model's array (``"A"``,
``"B"``, ...) and the radius (pass ρ/√m yourself); the neuron index is one axis of that array. Projections onto
different arrays compose into the exact projection onto the product set.

Slutzky et al. (NeurIPS 2025) train a dense recurrent matrix and project it onto the diagonal matrices after every
step (their Keras ``DiagonalConstraint``, ``diag(diag_part(A))``): :func:`diagonal_projection`.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp

from .._checks import GflowInputError, positive_float
from ..models._frozen import Frozen


def _leaf(model, name: str):
    value = getattr(model, name, None) if isinstance(name, str) else None
    if isinstance(value, Frozen):
        raise GflowInputError(f"layer {name!r} of this model is frozen (gflow.models.Frozen): training never moves it, "
                              "so there is nothing to project")
    if not eqx.is_inexact_array(value):
        raise GflowInputError(f"`name` must name a floating-point array of the model, got {name!r}")
    return value


def _replace(model, name, value):
    return eqx.tree_at(lambda m: getattr(m, name), model, value)


class BoxProjection(eqx.Module):
    """Clip every entry of ``model.<name>`` to [center − radius, center + radius]."""

    center: jax.Array
    radius: jax.Array
    name: str = eqx.field(static=True)

    def __call__(self, model):
        delta = jnp.clip(getattr(model, self.name) - self.center, -self.radius, self.radius)
        return _replace(model, self.name, self.center + delta)


class BallProjection(eqx.Module):
    """Move each neuron's slice of ``model.<name>`` (index ``neuron_axis``) into the ℓ2 ball of ``radius``
    around its initial value, along the ray to the center."""

    center: jax.Array
    radius: jax.Array
    name: str = eqx.field(static=True)
    neuron_axis: int = eqx.field(static=True)

    def __call__(self, model):
        delta = getattr(model, self.name) - self.center
        others = tuple(a for a in range(delta.ndim) if a != self.neuron_axis)
        norm = jnp.sqrt(jnp.sum(delta * delta, axis=others, keepdims=True))
        shrink = jnp.where(norm > self.radius, self.radius / jnp.where(norm > 0, norm, 1.0), 1.0)
        return _replace(model, self.name, self.center + shrink * delta)


class DiagonalProjection(eqx.Module):
    """Zero the off-diagonal entries of the square matrix ``model.<name>``: diag(diag(A))."""

    mask: jax.Array  # True on the diagonal
    name: str = eqx.field(static=True)

    def __call__(self, model):
        return _replace(model, self.name, jnp.where(self.mask, getattr(model, self.name), 0.0))


class ComposedProjection(eqx.Module):
    """Several projections onto different arrays, applied in turn (the projection onto their product set)."""

    projections: tuple

    def __call__(self, model):
        for p in self.projections:
            model = p(model)
        return model


def box_projection(model0, name: str, radius: float) -> BoxProjection:
    """Per-entry box |θ − θ(0)| ≤ radius on ``model0.<name>`` (seed 003: W_ii, radius ρ_w/√m).

    Args:
        model0: The start the box is centred on.
        name: The array's field name.
        radius: The box's half-width.

    Returns:
        The projection, a function model → model.
    """
    center = _leaf(model0, name)
    return BoxProjection(center, jnp.asarray(positive_float("radius", radius), dtype=center.dtype), name)


def ball_projection(model0, name: str, radius: float, neuron_axis: int = 0) -> BallProjection:
    """Per-neuron ℓ2 ball ‖θ_i − θ_i(0)‖ ≤ radius on ``model0.<name>``, neuron i indexing ``neuron_axis``
    (seed 003: the rows U_i, radius ρ_u/√m; for a LinearRNN, rows of B are axis 0, columns of C axis 1).

    Args:
        model0: The start the ball is centred on.
        name: The array's field name.
        radius: The ball's radius.
        neuron_axis: The axis that indexes the neurons.

    Returns:
        The projection, a function model → model.
    """
    center = _leaf(model0, name)
    valid = isinstance(neuron_axis, int) and not isinstance(neuron_axis, bool)
    if not valid or not -center.ndim <= neuron_axis < center.ndim:
        raise GflowInputError(f"`neuron_axis` must be an axis of {name} (shape {center.shape}), got {neuron_axis!r}")
    return BallProjection(center, jnp.asarray(positive_float("radius", radius), dtype=center.dtype), name,
                          neuron_axis % center.ndim)


def diagonal_projection(model0, name: str = "A") -> DiagonalProjection:
    """Project ``model0.<name>``, a trained square matrix (the transition A of a ``LinearRNN(structure="general")``),
    onto the diagonal matrices after every step: its off-diagonal entries set to exactly 0, its diagonal kept, as
    Slutzky et al.'s Keras ``DiagonalConstraint`` does after each optimizer update. The step before it sees the full
    (d, d) gradient (so the normalized step's ‖∇_A L‖_F, :func:`gflow.discrete.normalized_gradient_descent`, counts
    off-diagonal entries, as theirs does); from a diagonal start the diagonal then moves as GD on the diagonal.
    A ``LinearRNN(structure="diagonal")`` is diagonal already and needs no projection.

    Args:
        model0: The start (its ``name`` array a square matrix).
        name: The array's field name.

    Returns:
        The projection, a function model → model.
    """
    value = _leaf(model0, name)
    if value.ndim != 2 or value.shape[0] != value.shape[1]:
        hint = (" (a diagonal-structure LinearRNN stores A as its eigenvalues: it needs no projection)"
                if value.ndim == 1 else "")
        raise GflowInputError(f"`{name}` must be a square matrix to be projected onto the diagonal ones, got shape "
                              f"{value.shape}{hint}")
    return DiagonalProjection(jnp.eye(value.shape[0], dtype=bool), name)


def compose_projections(*projections) -> ComposedProjection:
    """Apply box, ball and diagonal projections onto different arrays of the model one after another.

    Args:
        *projections: The projections, applied in order.

    Returns:
        Their composition, a function model → model.
    """
    if not projections:
        raise GflowInputError("`compose_projections` needs at least one projection")
    names = [getattr(p, "name", None) for p in projections]
    if not all(isinstance(p, (BoxProjection, BallProjection, DiagonalProjection)) for p in projections):
        raise GflowInputError("`compose_projections` takes BoxProjection / BallProjection / DiagonalProjection objects")
    if len(set(names)) != len(names):
        raise GflowInputError(f"each array may be constrained once (composing two projections of one array is not "
                              f"the projection onto the intersection), got {names}")
    return ComposedProjection(tuple(projections))
