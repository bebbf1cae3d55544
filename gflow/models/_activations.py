"""Activation functions of the nonlinear RNNs, with the constants the theory of seed 003 uses.

Seed 003 eq. (4): σ ∈ C²(ℝ) with sup|σ| ≤ σ₀, sup|σ'| ≤ σ₁, sup|σ''| ≤ σ₂; it names tanh, the logistic function
and the Gaussian exp(−z²/2) (the paper gives no constants; ours are their calculus values). The memory cutoff
of seed 003 eqs. (10), (30) is α σ₁ = 1.

ReLU (seeds 002, 004) is not C²; its derivative follows the papers' activation pattern D = diag(1[z ≥ 0]), so
σ'(0) = 1 (JAX's own ``relu`` has σ'(0) = 0; seed 002 eq. (4) writes D with 1[· ≥ 0]).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable

import jax
import jax.numpy as jnp

from .._checks import one_of


@jax.custom_jvp
def relu(z):
    """max(z, 0) with derivative 1[z ≥ 0] (the activation pattern of seeds 002 and 004).

    Args:
        z: An array.

    Returns:
        An array shaped like ``z``.
    """
    return jnp.maximum(z, jnp.zeros_like(z))


@relu.defjvp
def _relu_jvp(primals, tangents):
    (z,), (dz,) = primals, tangents
    return relu(z), jnp.where(z >= 0, dz, jnp.zeros_like(dz))


def gaussian(z):
    """exp(−z²/2), the Gaussian activation of seed 003.

    Args:
        z: An array.

    Returns:
        An array shaped like ``z``.
    """
    return jnp.exp(-0.5 * z * z)


@dataclasses.dataclass(frozen=True)
class Activation:
    """σ with its bounds σ₀ = sup|σ|, σ₁ = sup|σ'|, σ₂ = sup|σ''| (inf where unbounded)."""

    name: str
    fn: Callable
    sigma0: float
    sigma1: float
    sigma2: float

    @property
    def smooth(self) -> bool:
        """Whether σ is C² with bounded derivatives, as seed 003's analysis needs."""
        return math.isfinite(self.sigma2)


ACTIVATIONS = {
    "relu": Activation("relu", relu, math.inf, 1.0, math.inf),
    "tanh": Activation("tanh", jnp.tanh, 1.0, 1.0, 4.0 / (3.0 * math.sqrt(3.0))),
    "logistic": Activation("logistic", jax.nn.sigmoid, 1.0, 0.25, 1.0 / (6.0 * math.sqrt(3.0))),
    "gaussian": Activation("gaussian", gaussian, 1.0, math.exp(-0.5), 1.0),
}


def activation(name: str) -> Activation:
    """The activation called ``name``: ``"relu"``, ``"tanh"``, ``"logistic"`` or ``"gaussian"``.

    Args:
        name: The activation's name.

    Returns:
        An [`Activation`][gflow.models.Activation].

    Raises:
        GflowInputError: An unknown name.
    """
    return ACTIVATIONS[one_of("activation", name, ACTIVATIONS)]
