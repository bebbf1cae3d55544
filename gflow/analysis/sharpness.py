"""Sharpness λ_max(∇²L(θ)) and the stability edge 2/λ_max of gradient descent.

GD θ ← θ − η∇L is linearly stable at a minimum iff η < 2/λ_max (the Euler method on the flow's linearization
dθ/dt = −H θ); along the flow, 2/λ_max(θ(t)) is the largest step size with which GD can follow it (the "edge of
stability"; Cohen et al. 2021). λ_max is computed matrix-free from Hessian-vector products (forward-over-reverse),
by Lanczos with full reorthogonalization (default) or by power iteration; no n × n Hessian is formed.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._checks import GflowInputError, one_of, positive_float, positive_int
from ..models._flatten import flatten, unflatten

METHODS = ("lanczos", "power")


def _hvp_function(loss, model):
    theta, static, unravel = flatten(model)
    grad = jax.grad(lambda th: loss(unflatten(th, static, unravel)))
    return theta, lambda v: jax.jvp(grad, (theta,), (v,))[1]


@eqx.filter_jit
def _lanczos(loss, model, v0, iterations: int):
    theta, hvp = _hvp_function(loss, model)
    n = theta.shape[0]
    Q = jnp.zeros((iterations + 1, n)).at[0].set(v0 / jnp.linalg.norm(v0))

    def body(j, carry):
        Q, alpha, beta = carry
        w = hvp(Q[j])
        a = jnp.dot(w, Q[j])
        mask = (jnp.arange(iterations + 1) <= j)[:, None].astype(Q.dtype)
        for _ in range(2):  # full reorthogonalization against every earlier vector, twice ("twice is enough")
            w = w - (mask * Q).T @ ((mask * Q) @ w)
        b = jnp.linalg.norm(w)
        # b ≈ 0: the Krylov space is invariant; the remaining vectors stay 0 and only add Ritz values 0.
        q = jnp.where(b > 1e-12 * jnp.abs(a) + 1e-300, w / jnp.where(b > 0, b, 1.0), 0.0)
        return Q.at[j + 1].set(q), alpha.at[j].set(a), beta.at[j].set(b)

    _, alpha, beta = jax.lax.fori_loop(0, iterations, body, (Q, jnp.zeros(iterations), jnp.zeros(iterations)))
    T = jnp.diag(alpha) + jnp.diag(beta[:-1], 1) + jnp.diag(beta[:-1], -1)
    return jnp.max(jnp.linalg.eigvalsh(T))


@eqx.filter_jit
def _power(loss, model, v0, iterations: int):
    """Power iteration for the dominant eigenvalue μ; if μ < 0, again on H − μI, whose dominant eigenvalue is
    λ_max − μ, so that the result is the largest algebraic eigenvalue either way."""
    _, hvp = _hvp_function(loss, model)

    def iterate(shift, v):
        def body(_, v):
            w = hvp(v) - shift * v
            return w / jnp.linalg.norm(w)

        v = jax.lax.fori_loop(0, iterations, body, v)
        return jnp.dot(v, hvp(v)), v

    v0 = v0 / jnp.linalg.norm(v0)
    mu, v = iterate(0.0, v0)
    return jax.lax.cond(mu < 0, lambda: iterate(mu, v0)[0], lambda: mu)


def _start(n: int, iterations: int, method: str, key):
    """(start vector, iterations, method) after validation; Lanczos needs at most n iterations."""
    one_of("method", method, METHODS)
    iterations = positive_int("iterations", iterations)
    if n == 0:
        raise GflowInputError("the model has no parameters")
    v0 = jax.random.normal(jax.random.key(0) if key is None else key, (n,), dtype=jnp.float64)
    return v0, min(iterations, n) if method == "lanczos" else iterations, method


def sharpness(loss, model, *, iterations: int = 40, method: str = "lanczos", key=None) -> float:
    """λ_max of the Hessian of ``loss`` at ``model`` (flat parameters θ, as the flow and GD see them).

    ``"lanczos"`` returns the largest Ritz value after min(iterations, n) steps (exact for iterations ≥ n, and
    for the top eigenvalue usually converged in a few tens); ``"power"`` the Rayleigh quotient after
    ``iterations`` power steps (twice as many when a negative eigenvalue dominates, see ``_power``), which
    converges slowly when the top two eigenvalues are close. ``key`` seeds the start vector (default
    ``jax.random.key(0)``).

    Args:
        loss: A loss (a callable on the model).
        model: The model.
        iterations: Lanczos or power steps.
        method: ``"lanczos"`` or ``"power"``.
        key: A JAX PRNG key for the start vector.

    Returns:
        λ_max, a float.

    See also: [`stability_edge`][gflow.analysis.stability_edge].
    """
    theta, _, _ = flatten(model)
    return float(_along_rows(loss, model, theta[None], *_start(theta.shape[0], iterations, method, key))[0])


@eqx.filter_jit
def _along_rows(loss, template, params, v0, iterations: int, method: str):
    _, static, unravel = flatten(template)
    one = _lanczos if method == "lanczos" else _power
    return jax.vmap(lambda th: one(loss, unflatten(th, static, unravel), v0, iterations))(params)


def sharpness_along(loss, traj, *, iterations: int = 40, method: str = "lanczos", key=None) -> np.ndarray:
    """:func:`sharpness` at every saved point of a trajectory (one batched call).

    Args:
        loss: A loss (a callable on the model).
        traj: A :class:`~gflow.results.Trajectory`.
        iterations: Lanczos or power steps.
        method: ``"lanczos"`` or ``"power"``.
        key: A JAX PRNG key for the start vector.

    Returns:
        One λ_max per saved time.
    """
    params = jnp.asarray(traj.params)
    return np.asarray(_along_rows(loss, traj.final, params, *_start(params.shape[1], iterations, method, key)))


def stability_edge(lambda_max) -> float:
    """2/λ_max: the largest step size for which GD is linearly stable where the sharpness is λ_max.

    Args:
        lambda_max: The sharpness.

    Returns:
        2/λ_max.
    """
    return 2.0 / positive_float("lambda_max", lambda_max)
