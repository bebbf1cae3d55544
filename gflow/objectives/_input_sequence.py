"""Input sequences of the nonlinear papers: their shapes, and the distributions the studies draw them from.

A model acts on ONE sequence x of shape (T,) (scalar input) or (T, n_in); a sample of N sequences is batched by
``jax.vmap``. Samplers take ``(key, n, length)`` first, like :func:`gflow.objectives.gaussian_sequences` (seed 000/001's
N(0, 1) inputs); bind their other arguments with ``functools.partial`` to hand them to :class:`gflow.objectives.SampleLoss`.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .._checks import check_sequence as check_sequence, positive_float, positive_int, prng_key


def impulse(length: int) -> jax.Array:
    """The unit impulse (1, 0, …, 0) of shape (length,): a model's output on it is its impulse response.

    Args:
        length: The sequence length.

    Returns:
        Shape (length,).
    """
    return jnp.zeros(positive_int("length", length), dtype=jnp.float64).at[0].set(1.0)


def normalized_token_sequences(key, n: int, length: int, d: int, *, eps_x: float) -> jax.Array:
    """N normalized sequences of seed 002 Def. 3.1 (and seed 004's normalized input), shape (n, length, d).

    x⁽¹⁾ = x⁽ᴸ⁾ = (0, …, 0, 1) (bias tokens) and x⁽ˡ⁾ = (ε_x x̄⁽ˡ⁾, 0) for l = 2 … L−1, where the true tokens
    x̄⁽ˡ⁾ = (√3/2 · u, 1/2) ∈ S^{d−2} ⊂ ℝ^{d−1} have last coordinate 1/2 and u uniform on the unit sphere of ℝ^{d−2}
    (the papers leave the token distribution free; this uniform choice is ours). Needs d ≥ 3 and L ≥ 3.

    Args:
        key: A JAX PRNG key.
        n: N, the number of sequences.
        length: L ≥ 3, including the two bias tokens.
        d: The token dimension, ≥ 3.
        eps_x: ε_x, the scale of the true tokens.

    Returns:
        Shape (n, length, d).
    """
    key = prng_key("key", key)
    n, length, d = positive_int("n", n), positive_int("length", length, minimum=3), positive_int("d", d, minimum=3)
    eps_x = positive_float("eps_x", eps_x)
    u = jax.random.normal(key, (n, length - 2, d - 2), dtype=jnp.float64)
    u = u / jnp.linalg.norm(u, axis=-1, keepdims=True)
    half = jnp.full((n, length - 2, 1), 0.5)
    middle = jnp.concatenate([eps_x * jnp.sqrt(0.75) * u, eps_x * half, jnp.zeros((n, length - 2, 1))], axis=-1)
    bias = jnp.broadcast_to(jnp.zeros(d).at[-1].set(1.0), (n, 1, d))
    return jnp.concatenate([bias, middle, bias], axis=1)


def true_tokens(x, eps_x: float) -> jax.Array:
    """The true tokens x̄⁽²⁾ … x̄⁽ᴸ⁻¹⁾ (shape (L−2, d−1)) of one normalized sequence x (inverse of the scaling).

    Args:
        x: One normalized sequence, shape (L, d).
        eps_x: The ε_x it was made with.

    Returns:
        Shape (L − 2, d − 1).
    """
    return x[1:-1, :-1] / eps_x


def null_sequence(length: int, d: int) -> jax.Array:
    """The null sequence x⁽⁰⁾ of seed 004 (Lemma 5.2; the display is lost from our copy of the paper and
    reconstructed): the bias tokens with zero middle tokens.

    Args:
        length: L.
        d: The token dimension.

    Returns:
        Shape (length, d).
    """
    length, d = positive_int("length", length, minimum=3), positive_int("d", d, minimum=3)
    return jnp.zeros((length, d), dtype=jnp.float64).at[0, -1].set(1.0).at[-1, -1].set(1.0)


def unit_ball_sequences(key, n: int, length: int, d: int | None = None, *, radius: float = 1.0) -> jax.Array:
    """N sequences of i.i.d. tokens uniform in the ball ‖X_t‖ ≤ radius (seed 003 assumes max_t ‖X_t‖ ≤ 1 and fixes no
    distribution; uniform is our choice). Shape (n, length) for ``d=None`` (uniform on [−radius, radius]), else
    (n, length, d).

    Args:
        key: A JAX PRNG key.
        n: N, the number of sequences.
        length: T.
        d: The token dimension (None: scalar tokens).
        radius: The ball's radius.

    Returns:
        Shape (n, length) or (n, length, d).
    """
    key = prng_key("key", key)
    n, length = positive_int("n", n), positive_int("length", length)
    radius = positive_float("radius", radius)
    dim = 1 if d is None else positive_int("d", d)
    k_dir, k_rad = jax.random.split(key)
    g = jax.random.normal(k_dir, (n, length, dim), dtype=jnp.float64)
    r = radius * jax.random.uniform(k_rad, (n, length, 1), dtype=jnp.float64) ** (1.0 / dim)
    x = r * g / jnp.linalg.norm(g, axis=-1, keepdims=True)
    return x[..., 0] if d is None else x
