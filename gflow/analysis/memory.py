"""The memory functions and the memory cutoff of seed 003 (Cayci & Eryilmaz), eqs. (10), (30):

    μ_{0,t}(z) = Σ_{k<t} zᵏ,     μ_{1,t}(z) = Σ_{k<t} (k+1) zᵏ,     z = α_m σ₁,

bounded in t for z < 1 (short memory: width and iterations polynomial in T), polynomial at z = 1 (t and
t(t+1)/2), exponential for z > 1 ("exploding gradients in the kernel regime"). Sums are evaluated term by term,
which is exact where the closed forms (1 − zᵗ)/(1 − z) lose digits near z = 1.
"""

from __future__ import annotations

import math

import jax.numpy as jnp

from .._checks import GflowInputError, positive_float, positive_int
from ..models._elman_rnn import ElmanRNN
from ..models._frozen import unfrozen


def _powers(z, t: int):
    t = positive_int("t", t)
    z = jnp.asarray(z, dtype=jnp.float64)
    k = jnp.arange(t, dtype=jnp.float64)
    return k, z[..., None] ** k


def memory_function_0(z, t: int):
    """μ_{0,t}(z) = Σ_{k=0}^{t−1} zᵏ (elementwise in z).

    Args:
        z: The argument (an array: elementwise).
        t: The number of terms.

    Returns:
        An array shaped like ``z``.
    """
    _, p = _powers(z, t)
    return p.sum(axis=-1)


def memory_function_1(z, t: int):
    """μ_{1,t}(z) = Σ_{k=0}^{t−1} (k + 1) zᵏ (elementwise in z).

    Args:
        z: The argument (an array: elementwise).
        t: The number of terms.

    Returns:
        An array shaped like ``z``.
    """
    k, p = _powers(z, t)
    return ((k + 1.0) * p).sum(axis=-1)


def memory_argument(model: ElmanRNN):
    """z = α_m σ₁ of an Elman RNN: α_m = max_i |W_ii| = ‖W‖_{∞,∞} for the diagonal recurrence of seed 003 (the
    bound its projected GD keeps), and the spectral norm ‖W‖₂ for a full W (our extension); σ₁ = sup|σ'|.

    Args:
        model: An [`ElmanRNN`][gflow.models.ElmanRNN].

    Returns:
        z as a scalar array.
    """
    if not isinstance(model, ElmanRNN):
        raise GflowInputError(f"`model` must be a gflow.models.ElmanRNN, got {type(model).__name__}")
    W = unfrozen(model.W)
    alpha_m = jnp.max(jnp.abs(W)) if model.structure == "diagonal" else jnp.linalg.norm(W, ord=2)
    return alpha_m * model.sigma.sigma1


def memory_regime(z: float, *, rtol: float = 1e-12) -> str:
    """``"short"`` for α_m σ₁ < 1, ``"critical"`` at 1 (within ``rtol``), ``"long"`` above (seed 003 eqs. (10), (30)).

    Args:
        z: α_m σ₁ ([`memory_argument`][gflow.analysis.memory_argument]).
        rtol: The relative tolerance of "critical".

    Returns:
        ``"short"``, ``"critical"`` or ``"long"``.
    """
    z = float(z)
    if not math.isfinite(z) or z < 0:
        raise GflowInputError(f"`z` = α_m σ₁ must be a finite non-negative number, got {z}")
    if abs(z - 1.0) <= rtol:
        return "critical"
    return "short" if z < 1.0 else "long"


def transport_error_bound(teacher, length: int, delta: float = 0.05) -> float:
    """Hoeffding bound on the Monte-Carlo error of a :class:`gflow.objectives.nonlinear_teachers.TransportTeacher` with M
    samples, holding at each t ≤ T with probability ≥ 1 − δ (seed 003 §3.2, the argument of Prop. 3's proof):

        2 μ_{0,T}(α σ₁) σ₁ (ν̄_u + σ₀ ν̄_w) √(2 log(2/δ) / M).

    Args:
        teacher: A ``TransportTeacher`` (:mod:`gflow.objectives.nonlinear_teachers`).
        length: T.
        delta: δ.

    Returns:
        The bound, a float.
    """
    delta = positive_float("delta", delta)
    if not 0 < delta < 1:
        raise GflowInputError(f"`delta` must lie in (0, 1), got {delta}")
    sigma = teacher.network.sigma
    mu0 = float(memory_function_0(teacher.alpha * sigma.sigma1, length))
    M = teacher.network.width
    return 2.0 * mu0 * sigma.sigma1 * (teacher.nu_u + sigma.sigma0 * teacher.nu_w) * math.sqrt(
        2.0 * math.log(2.0 / delta) / M)
