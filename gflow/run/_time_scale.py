"""A flow's first time scale, read off its start before the solve: 1/|λ|max of the Hessian ∇²L(θ0), by a few
Hessian-vector power iterations. Where the default save times of a flow begin (:func:`first_save_offset`).

Why the curvature and not the loss's own rate L(θ0)/‖∇L(θ0)‖²: near a saddle (a small initialization) the gradient
is tiny and that ratio is huge (2e4 for the README's flow at scale 1e-3, 2e10 at 1e-6) while the flow escapes at
t ≈ ln(1/ε)/|λ|; the Hessian there has eigenvalues ±2|w0| (the B–C coupling of the j = 0 term), so 1/|λ|max = 1/(2|w0|)
is the escape's own rate at any ε, and, away from a saddle, the fastest mode's decay time."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..models._flatten import flatten, unflatten

POWER_ITERATIONS = 12  # ‖H v_k‖ rises towards |λ|max; 12 steps are within 1 % on the README's flow (2.0004 vs 2)


def _curvature(loss, model0) -> jax.Array:
    """|λ|max of ∇²L(θ0), estimated by ``POWER_ITERATIONS`` power iterations (‖H v_k‖, a lower bound that rises
    towards it), from a fixed start vector (so the estimate is reproducible)."""
    theta, static, unravel = flatten(model0)
    gradient = jax.grad(lambda th: loss(unflatten(th, static, unravel)))
    v = jnp.cos(1.0 + 0.7548776662466927 * jnp.arange(theta.size, dtype=theta.dtype))  # no eigenvector of a model
    v = v / jnp.linalg.norm(v)

    def iterate(_, carry):
        v, _ = carry
        hv = jax.jvp(gradient, (theta,), (v,))[1]
        norm = jnp.linalg.norm(hv)
        return jnp.where(norm > 0, hv / jnp.where(norm > 0, norm, 1.0), v), norm

    return jax.lax.fori_loop(0, POWER_ITERATIONS, iterate, (v, jnp.zeros((), theta.dtype)))[1]


_curvature_one = eqx.filter_jit(_curvature)
_curvature_batch = eqx.filter_jit(eqx.filter_vmap(_curvature))


def flow_time_scale(loss, model0, batched: bool = False) -> float | None:
    """The flow's first time scale 1/|λ|max(∇²L(θ0)) (the fastest of a stacked batch's flows).

    Args:
        loss: The loss (a stacked batch of losses with ``batched``).
        model0: The start (a stacked batch of starts with ``batched``).
        batched: Whether ``loss`` and ``model0`` are stacked.

    Returns:
        The time scale, or None where it cannot be estimated (a loss that cannot be differentiated twice, a zero
        or non-finite curvature): the caller then keeps the fixed rule.
    """
    try:
        curvature = np.asarray((_curvature_batch if batched else _curvature_one)(loss, model0))
    except Exception:  # noqa: BLE001  (the solve itself reports what is wrong with the loss)
        return None
    curvature = curvature[np.isfinite(curvature) & (curvature > 0)]
    return float(1.0 / np.max(curvature)) if curvature.size else None
