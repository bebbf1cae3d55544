"""One discrete training step in optax's style, ``init`` + ``update`` over a state.

θ_{n+1} = θ_n − η_n · u_n,   u_n = direction(∇L_n(θ_n)),

where ``direction`` is an optax transformation *without* its learning rate (identity for GD/SGD,
``optax.scale_by_adam`` for Adam) and η_n a schedule. Splitting the two (as ``optax.adam`` = ``scale_by_adam``
then ``scale_by_learning_rate``) keeps η out of the compiled code, so sweeps over η compile once, and gives every
run the time axis t_n = Σ_{i<n} η_i on which GD is the Euler method for the flow.
"""

from __future__ import annotations

import functools
from typing import Any

import equinox as eqx
import jax
import optax

from .._checks import GflowInputError, positive_float
from ._schedules import as_schedule


class UpdateState(eqx.Module):
    count: jax.Array
    inner: Any


class UpdateRule(eqx.Module):
    """θ ← θ − η_n · direction(∇L); ``schedule`` maps the step n to η_n."""

    schedule: Any
    direction: optax.GradientTransformation = eqx.field(static=True)
    name: str = eqx.field(static=True)
    hyperparameters: tuple = eqx.field(static=True, default=())  # (name, value) pairs for the run's config

    def init(self, theta) -> UpdateState:
        return UpdateState(count=jax.numpy.asarray(0), inner=self.direction.init(theta))

    def update(self, grad, state: UpdateState, theta):
        """(new θ, new state, η_n used)."""
        with jax.numpy_dtype_promotion("standard"):  # optax's bias correction computes float ** int32 count
            direction, inner = self.direction.update(grad, state.inner, theta)
        lr = self.schedule(state.count)
        return theta - lr * direction, UpdateState(count=state.count + 1, inner=inner), lr


_IDENTITY = optax.identity()


@functools.lru_cache(maxsize=None)
def _adam_direction(b1: float, b2: float, eps: float) -> optax.GradientTransformation:
    return optax.scale_by_adam(b1=b1, b2=b2, eps=eps)  # cached: one compiled loop per (b1, b2, eps)


def gradient_descent(lr, steps: int = 1) -> UpdateRule:
    """GD (or SGD on minibatches) with step size ``lr``: a number or a schedule step → η."""
    schedule, _ = as_schedule(lr, steps)
    return UpdateRule(schedule, _IDENTITY, "gd")


def adam(lr=1e-3, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8, steps: int = 1) -> UpdateRule:
    """Adam (Kingma & Ba 2015) as ``optax.adam``; defaults are the papers' (seed 000 App. C.1: lr 1e-3; Keras
    and optax defaults b1 0.9, b2 0.999, eps 1e-8)."""
    schedule, _ = as_schedule(lr, steps)
    for name, b in (("b1", b1), ("b2", b2)):
        if not 0.0 <= float(b) < 1.0:
            raise GflowInputError(f"`{name}` must lie in [0, 1), got {b!r}")
    b1, b2, eps = float(b1), float(b2), positive_float("eps", eps)
    return UpdateRule(schedule, _adam_direction(b1, b2, eps), "adam", (("b1", b1), ("b2", b2), ("eps", eps)))
