"""The empirical neural tangent kernel of a recurrent network, per time step (seed 003 Prop. 2, P7):

    K_t(x, x') = Σ_p ∂F_t(x)/∂θ_p · ∂F_t(x')/∂θ_p,

over the trained parameters θ only (frozen layers do not count). At seed 003's symmetric initialization it tends
to the kernel κ_t as m → ∞. Cost: one Jacobian of N·T·n_out rows by P columns; meant for small studies.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ..models._flatten import flatten, unflatten


def _output_jacobian(theta, static, unravel, inputs):
    """∂F/∂θ on a batch, shape (N, T[, n_out], P)."""
    return jax.vmap(lambda x: jax.jacrev(lambda th: unflatten(th, static, unravel)(x))(theta))(inputs)


def empirical_ntk(model, inputs, other=None):
    """K_t between the sequences ``inputs`` (N, T[, n_in]) and ``other`` (N', T[, n_in]; default ``inputs``).

    Shape (T, N, N') for scalar outputs, (T, N, N', n_out, n_out) for vector outputs.

    Args:
        model: A model mapping one sequence to its outputs.
        inputs: Input sequences, shape (N, T[, n_in]).
        other: A second set of sequences, shape (N', T[, n_in]) (default ``inputs``).

    Returns:
        K_t as above.
    """
    theta, static, unravel = flatten(model)
    J = _output_jacobian(theta, static, unravel, inputs)
    J2 = J if other is None else _output_jacobian(theta, static, unravel, other)
    if J.ndim == 3:
        return jnp.einsum("atp,btp->tab", J, J2)
    return jnp.einsum("atop,btqp->taboq", J, J2)
