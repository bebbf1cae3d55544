"""One discrete training step in optax's style, ``init`` + ``update`` over a state.

θ_{n+1} = θ_n − (η_n / ν_n) · u_n,   u_n = direction(∇L_n(θ_n)),

where ``direction`` is an optax transformation *without* its learning rate (identity for GD/SGD,
``optax.scale_by_adam`` for Adam), η_n a schedule and ν_n an optional scalar *normalizer* computed from the
gradient (1 without one; the normalized step of :func:`normalized_gradient_descent`). Splitting them (as
``optax.adam`` = ``scale_by_adam`` then ``scale_by_learning_rate``) keeps η out of the compiled code, so sweeps over
η compile once, and gives every run the time axis t_n = Σ_{i<n} η_i / ν_i of the steps actually taken, on which GD
is the Euler method for the flow.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import optax

from .._checks import GflowInputError, one_of, positive_float
from ._schedules import as_schedule


class StepNormalizer(NamedTuple):
    """A scalar ν_n > 0 that divides the step size, from the gradient: θ ← θ − (η_n / ν_n) · u_n.

    ``init() -> state``; ``update(tensors, state, count) -> (ν_n, state)``, ``tensors`` the gradient as the
    model's trained arrays (a pytree) and ``count`` the step n (from 0).
    """

    init: Callable[[], Any]
    update: Callable[[Any, Any, jax.Array], tuple[jax.Array, Any]]


class UpdateState(eqx.Module):
    count: jax.Array
    inner: Any
    normalizer: Any = None  # the StepNormalizer's state (γ of the normalized step); None without one


class UpdateRule(eqx.Module):
    """θ ← θ − (η_n / ν_n) · direction(∇L).

    Attributes:
        schedule: Maps the step n to η_n.
        direction: An optax transformation: the gradient (and its state) to the step's direction.
        name: The rule's name (``"gd"``, ``"adam"``, ``"normalized_gd"``).
        hyperparameters: What the run's ``config`` records of it.
        normalizer: Maps the gradient to ν_n (None: 1).
    """

    schedule: Any
    direction: optax.GradientTransformation = eqx.field(static=True)
    name: str = eqx.field(static=True)
    hyperparameters: tuple = eqx.field(static=True, default=())  # (name, value) pairs for the run's config
    normalizer: StepNormalizer | None = eqx.field(static=True, default=None)

    def init(self, theta) -> UpdateState:
        return UpdateState(count=jnp.asarray(0), inner=self.direction.init(theta),
                           normalizer=None if self.normalizer is None else self.normalizer.init())

    def update(self, grad, state: UpdateState, theta, unravel: Callable | None = None):
        """(new θ, new state, step size η_n / ν_n used). ``unravel`` maps the flat gradient to the model's trained
        arrays, which a normalizer may measure one by one; without it the flat vector is one array."""
        with jax.numpy_dtype_promotion("standard"):  # optax's bias correction computes float ** int32 count
            direction, inner = self.direction.update(grad, state.inner, theta)
        lr = self.schedule(state.count)
        normalizer = state.normalizer
        if self.normalizer is not None:
            nu, normalizer = self.normalizer.update(grad if unravel is None else unravel(grad), normalizer,
                                                    state.count)
            lr = lr / nu
        return theta - lr * direction, UpdateState(count=state.count + 1, inner=inner, normalizer=normalizer), lr


_IDENTITY = optax.identity()


@functools.lru_cache(maxsize=None)
def _adam_direction(b1: float, b2: float, eps: float) -> optax.GradientTransformation:
    return optax.scale_by_adam(b1=b1, b2=b2, eps=eps)  # cached: one compiled loop per (b1, b2, eps)


def gradient_descent(lr, steps: int = 1) -> UpdateRule:
    """GD (or SGD on minibatches) with step size ``lr``: a number or a schedule step → η.

    Args:
        lr: The step size, a number or a schedule step → η.
        steps: The run's steps (to check a schedule against).

    Returns:
        The :class:`UpdateRule`.
    """
    schedule, _ = as_schedule(lr, steps)
    return UpdateRule(schedule, _IDENTITY, "gd")


def adam(lr=1e-3, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8, steps: int = 1) -> UpdateRule:
    """Adam (Kingma & Ba 2015) as ``optax.adam``; defaults are the papers' (seed 000 App. C.1: lr 1e-3; Keras
    and optax defaults b1 0.9, b2 0.999, eps 1e-8).

    Args:
        lr: The step size, a number or a schedule step → η.
        b1: β₁.
        b2: β₂.
        eps: ε.
        steps: The run's steps (to check a schedule against).

    Returns:
        The :class:`UpdateRule`.
    """
    schedule, _ = as_schedule(lr, steps)
    for name, b in (("b1", b1), ("b2", b2)):
        if not 0.0 <= float(b) < 1.0:
            raise GflowInputError(f"`{name}` must lie in [0, 1), got {b!r}")
    b1, b2, eps = float(b1), float(b2), positive_float("eps", eps)
    return UpdateRule(schedule, _adam_direction(b1, b2, eps), "adam", (("b1", b1), ("b2", b2), ("eps", eps)))


AVERAGES = ("layer_norms", "squared_norm")


@functools.lru_cache(maxsize=None)
def _normalized_step(beta: float, soft_const: float, average: str) -> StepNormalizer:
    """ν_k = √(γ_k / (1 − β^{k+1})) + c with γ_k = β γ_{k−1} + (1 − β) g_k, γ_{−1} = 0 (cached: one compiled loop
    per (β, c, average))."""

    def init():
        return jnp.zeros(())

    def update(tensors, gamma, count):
        leaves = jax.tree_util.tree_leaves(tensors)
        if average == "layer_norms":
            g = sum(jnp.sqrt(jnp.sum(x * x)) for x in leaves)  # Σ_W ‖∇_W L‖_F, not squared
        else:
            g = sum(jnp.sum(x * x) for x in leaves)  # ‖∇L‖² over all parameters
        gamma = beta * gamma + (1.0 - beta) * g
        corrected = gamma / (1.0 - beta ** (count + 1).astype(gamma.dtype))
        return jnp.sqrt(corrected) + soft_const, gamma

    return StepNormalizer(init, update)


def normalized_gradient_descent(lr, beta: float = 0.8, soft_const: float = 1e-6, average: str = "layer_norms",
                                steps: int = 1) -> UpdateRule:
    """(S)GD with one global step size normalized by a running average of the gradient's size: the step of
    Slutzky et al. (NeurIPS 2025; their common/scheduler.py, "appendix D.2 of arXiv 2201.11729"),

        θ_{k+1} = θ_k − η_k / (√(γ_k / (1 − β^{k+1})) + c) · ∇L(θ_k),   γ_k = β γ_{k−1} + (1 − β) g_k,  γ_{−1} = 0,

    k the step (from 0, never reset), η_k = ``lr`` (a number or a schedule), β = ``beta``, c = ``soft_const``.
    ``average`` picks g_k:

    - ``"layer_norms"`` (default, their code): Σ_W ‖∇_W L‖_F over the model's trained arrays (A, B, C of a
      LinearRNN; Frozen layers are not trained), a sum of Frobenius norms, *not* squared.
    - ``"squared_norm"`` (the reading "lr / (√(EMA of ‖∇L‖²) + c)" of their prose): ‖∇L‖² over all parameters.

    Defaults β = 0.8 and c = 1e-6 are their train.py's. Their g_k is the full training set's gradient (the
    scheduler's ``set_examples``); here it is the gradient the step uses, the same for full-batch runs (theirs are
    full batch). The step size η_k / ν_k is data-dependent, so the run's time axis t_n = Σ_{k<n} η_k / ν_k sums the
    steps actually taken. A projection (:func:`gflow.discrete.diagonal_projection`) measures nothing: g_k is the
    gradient before it, as in their Keras constraint.

    Args:
        lr: η_k, a number or a schedule.
        beta: β.
        soft_const: c.
        average: ``"layer_norms"`` or ``"squared_norm"``: what g_k is.
        steps: The run's steps (to check a schedule against).

    Returns:
        The :class:`UpdateRule`.
    """
    schedule, _ = as_schedule(lr, steps)
    try:
        beta = float(beta)
    except (TypeError, ValueError):
        raise GflowInputError(f"`beta` must be a number in [0, 1), got {beta!r}") from None
    if not 0.0 <= beta < 1.0:
        raise GflowInputError(f"`beta` must lie in [0, 1), got {beta!r}")
    soft_const = positive_float("soft_const", soft_const)
    average = one_of("average", average, AVERAGES)
    return UpdateRule(schedule, _IDENTITY, "normalized_gd",
                      (("beta", beta), ("soft_const", soft_const), ("average", average)),
                      _normalized_step(beta, soft_const, average))
