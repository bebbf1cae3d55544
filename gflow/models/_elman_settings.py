"""The Elman RNNs of the three lazy-regime papers at their random initializations, with their trained layers.

| constructor | paper | W | A | B | λ | trained |
|---|---|---|---|---|---|---|
| :func:`elman_allen_zhu_li` | seed 004's RNN | N(0, 2/m) | N(0, 2/m) | N(0, 1/d_out) | ``output_scale`` | W |
| :func:`elman_panigrahi_goyal` | seed 002 Def. 3.2 | N(0, 2/m) | N(0, 2/m) | N(0, 2/d_out) | ``output_scale`` | W, A |
| :func:`elman_cayci_eryilmaz` | seed 003 Def. 1 | diag(±α) | N(0, I) | c = ±1 | 1/√m | W (diagonal), A (= U) |

Seeds 002/004 use ReLU; seed 003 a smooth activation (tanh by default). Their small output factor
λ = ε/(10 L ρ) is :func:`theory_output_scale`; our default is λ = 1 (the papers need the small λ only "for
technical reasons", seed 002 §3, the objective).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from .._checks import GflowInputError, positive_float, positive_int, prng_key
from ._elman_rnn import ElmanRNN


def _readout_shape(m: int, n_out: int | None):
    return (m,) if n_out is None else (positive_int("n_out", n_out), m)


def _input_shape(m: int, d: int | None):
    return (m,) if d is None else (m, positive_int("n_in", d))


def _he_elman(key, m, d, n_out, readout_variance, activation, output_scale, trained):
    key = prng_key("key", key)
    m = positive_int("hidden_size", m)
    shapes = ((m, m), _input_shape(m, d), _readout_shape(m, n_out))
    sizes = [math.prod(shape) for shape in shapes]
    draws = jnp.split(jax.random.normal(key, (sum(sizes),), dtype=jnp.float64), np.cumsum(sizes)[:-1])  # one draw
    W, A, B = (std * g.reshape(shape) for std, g, shape in zip(
        (math.sqrt(2.0 / m), math.sqrt(2.0 / m), math.sqrt(readout_variance)), draws, shapes))
    return ElmanRNN(W, A, B, activation=activation, output_scale=output_scale, trained=trained)


def elman_allen_zhu_li(key, hidden_size: int, n_in: int | None = None, *, n_out: int | None = None,
                       output_scale: float = 1.0, activation: str = "relu") -> ElmanRNN:
    """Seed 004's Elman RNN (Allen-Zhu & Li 2019) at its initialization.

    W, A ~ N(0, 2/m), B ~ N(0, 1/d_out) entries; **only W is trained** (A and B stay at initialization).

    Args:
        key: A JAX PRNG key.
        hidden_size: The width m.
        n_in: The token dimension d (None: scalar input).
        n_out: d_out (None: scalar output).
        output_scale: λ (see [`theory_output_scale`][gflow.models.theory_output_scale]).
        activation: The activation's name (``"relu"`` as in the paper).

    Returns:
        An [`ElmanRNN`][gflow.models.ElmanRNN].
    """
    return _he_elman(key, hidden_size, n_in, n_out, 1.0 / (n_out or 1), activation, output_scale, ("W",))


def elman_panigrahi_goyal(key, hidden_size: int, n_in: int | None = None, *, n_out: int | None = None,
                          output_scale: float = 1.0, activation: str = "relu") -> ElmanRNN:
    """Seed 002's Elman RNN (Panigrahi & Goyal 2021, Def. 3.2) at its initialization.

    W, A ~ N(0, 2/m), B ~ N(0, 2/d_out) entries; **W and A are trained**, B stays at initialization.

    Args:
        key: A JAX PRNG key.
        hidden_size: The width m.
        n_in: The token dimension d (None: scalar input).
        n_out: d_out (None: scalar output).
        output_scale: λ (see [`theory_output_scale`][gflow.models.theory_output_scale]).
        activation: The activation's name (``"relu"`` as in the paper).

    Returns:
        An [`ElmanRNN`][gflow.models.ElmanRNN].
    """
    return _he_elman(key, hidden_size, n_in, n_out, 2.0 / (n_out or 1), activation, output_scale, ("W", "A"))


def elman_cayci_eryilmaz(key, hidden_size: int, n_in: int | None = None, *, alpha: float,
                         activation: str = "tanh") -> ElmanRNN:
    """Seed 003 Def. 1 (Cayci & Eryilmaz), the symmetric random initialization of the diagonal-W RNN.

    For i ≤ m/2: c_i ~ Rad(1), W_ii ~ Rad(α), U_i ~ N(0, I_d); neuron i + m/2 copies neuron i with c negated, so the
    output F_t = (1/√m) Σ_i c_i H_t⁽ⁱ⁾ is exactly zero at initialization for every input. W (diagonal, stored as
    the vector (W_ii)) and U (our ``A``) are trained, c (our ``B``) is fixed. Needs m even. The paper assumes
    α ∈ (0, 1); any α > 0 is accepted, so that the long-memory regime α σ₁ ≥ 1 can be studied. ``hidden_size`` is
    the width m, ``n_in`` the input dimension d (None: scalar input).

    Args:
        key: A JAX PRNG key.
        hidden_size: The width m (even).
        n_in: The input dimension d (None: scalar input).
        alpha: α, the magnitude of W_ii.
        activation: The activation's name (``"tanh"`` by default).

    Returns:
        An [`ElmanRNN`][gflow.models.ElmanRNN] with λ = 1/√m.

    Raises:
        GflowInputError: An odd or too small m, or α ≤ 0.
    """
    key = prng_key("key", key)
    m, d = positive_int("hidden_size", hidden_size, minimum=2), n_in
    if m % 2:
        raise GflowInputError(f"`hidden_size` (m) must be even for the symmetric initialization (seed 003 Def. 1), got {m}")
    alpha = positive_float("alpha", alpha)
    k_c, k_v, k_u = jax.random.split(key, 3)
    half = m // 2
    c = jax.random.rademacher(k_c, (half,), dtype=jnp.float64)
    v = alpha * jax.random.rademacher(k_v, (half,), dtype=jnp.float64)
    u = jax.random.normal(k_u, _input_shape(half, d), dtype=jnp.float64)
    return ElmanRNN(jnp.concatenate([v, v]), jnp.concatenate([u, u]), jnp.concatenate([c, -c]),
                    activation=activation, output_scale=1.0 / math.sqrt(m), trained=("W", "A"))


def theory_output_scale(eps: float, length: int, m: int, n_out: int = 1) -> float:
    """λ = ε / (10 L ρ) with ρ = 100 L d_out ln m (seed 002 Thm 3.1, seed 004 Sec. 9; the log base is not given,
    natural log is our choice). At simulator scale λ is tiny (m = 1024, L = 10: ρ ≈ 6.9e3).

    Args:
        eps: ε, the target accuracy.
        length: L, the sequence length.
        m: The width.
        n_out: d_out.

    Returns:
        λ.
    """
    eps, length, m = positive_float("eps", eps), positive_int("length", length), positive_int("m", m, minimum=2)
    rho = 100.0 * length * positive_int("n_out", n_out) * math.log(m)
    return eps / (10.0 * length * rho)
