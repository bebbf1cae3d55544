"""Teachers of the nonlinear papers: callables that map ONE input sequence to its labels at every step.

They label the sample of :class:`gflow.objectives.SampleLoss` (``SampleLoss.from_teacher``); any model is a teacher too.

| teacher | paper | labels |
|---|---|---|
| :class:`TokenSumTeacher` | seed 004 eq. (3.1), reconstructed | y_j = Σ_{i<j} Σ_r b Φ(⟨w, x̄_i⟩) at j = 3 … L |
| :class:`SequenceConceptTeacher` | seed 002 Def. 3.3 | y_L = Σ_r b Φ(⟨w, [x̄⁽²⁾ … x̄⁽ᴸ⁻¹⁾]⟩) |
| :class:`TransportTeacher` | seed 003 eq. (8) | F̃_t of transport maps (v_w, v_u), by Monte Carlo |
| :func:`fit_gru_teacher` | seed 000 App. C.2.3 | a small-init GRU fitted to an impulse response |
| :class:`AdversarialLateLabels` | seed 001 §7, Fig. 1 | a teacher's labels up to step k, erroneous after |

Seeds 002/004 act on the true tokens x̄ of a normalized sequence (:func:`gflow.objectives.normalized_token_sequences`);
their labels are zero at the steps they leave unsupervised (train with ``steps=range(3, L + 1)`` and
``steps="last"``).
"""

from __future__ import annotations

from typing import Callable

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._checks import as_float_array, GflowInputError, positive_float, positive_int, prng_key
from ..models._elman_rnn import ElmanRNN
from ._empirical_loss import _sequence_outputs
from ._input_sequence import check_sequence, true_tokens


def square(z):
    """Φ(z) = z² (a constant-degree polynomial concept, prediction 002-P4).

    Args:
        z: An array.

    Returns:
        z², elementwise.
    """
    return z * z


def cube(z):
    """Φ(z) = z³.

    Args:
        z: An array.

    Returns:
        z³, elementwise.
    """
    return z * z * z


def _check_phi(phi):
    if not callable(phi):
        raise GflowInputError(f"`phi` must be a function with phi(0) = 0, got {phi!r}")
    at_zero = float(phi(jnp.zeros(())))
    if at_zero != 0.0:
        raise GflowInputError(f"`phi` must satisfy phi(0) = 0 (seeds 002, 004), got phi(0) = {at_zero}")
    return phi


def _unit_rows(key, shape):
    w = jax.random.normal(key, shape, dtype=jnp.float64)
    return w / jnp.linalg.norm(w, axis=-1, keepdims=True)


class _TokenConcept(eqx.Module):
    """Unit directions ``w`` and weights ``b`` of one-hidden-layer nets Φ on the true tokens x̄ of a normalized
    sequence (seeds 002 and 004); ``scalar_output``: labels (L,) instead of (L, d_out)."""

    w: jax.Array
    b: jax.Array
    phi: Callable = eqx.field(static=True)
    eps_x: float = eqx.field(static=True)
    scalar_output: bool = eqx.field(static=True)

    def _shaped(self, y):
        return y[:, 0] if self.scalar_output else y


def _random_concept(cls, key, length, d, eps_x, p, n_out, phi, w_shape, b_shape):
    """``cls`` with unit w uniform on the sphere and b ~ U(−1, 1) (our choice; the papers fix no distribution)."""
    key = prng_key("key", key)
    length, d, p = positive_int("length", length, minimum=3), positive_int("d", d, minimum=3), positive_int("p", p)
    s = 1 if n_out is None else positive_int("n_out", n_out)
    k_w, k_b = jax.random.split(key)
    w = _unit_rows(k_w, w_shape(length, d, p, s))
    b = jax.random.uniform(k_b, b_shape(length, p, s), minval=-1.0, maxval=1.0, dtype=jnp.float64)
    return cls(w, b, _check_phi(phi), positive_float("eps_x", eps_x), n_out is None)


class TokenSumTeacher(_TokenConcept):
    """Seed 004's concept class (eq. 3.1, reconstructed: the display is lost from our copy): at every output
    position j = 3 … L

        F*_{j,s}(x̄) = Σ_{i=2}^{j−1} Σ_{r≤p} b_{i→j,r,s} Φ(⟨w_{i→j,r,s}, x̄_i⟩),   ‖w‖ = 1, |b| ≤ 1, Φ(0) = 0,

    a sum of functions of single earlier tokens ("adapts to time but not to tokens", as seed 002 puts it). ``w`` has
    shape (L−2, L, p, d_out, d−1) (true position i = 2 … L−1, output position j = 1 … L), ``b`` (L−2, L, p, d_out);
    entries with i ≥ j are ignored. Input: a normalized sequence (L, d); output (L,) or (L, d_out), zero at j ≤ 2.
    """

    def __call__(self, x):
        L, d = self.b.shape[1], self.w.shape[-1] + 1
        x = check_sequence(x, d, False)
        if x.shape[0] != L:
            raise GflowInputError(f"this teacher labels sequences of length {L}, got {x.shape[0]}")
        tokens = true_tokens(x, self.eps_x)  # (L−2, d−1)
        i, j = np.arange(L - 2)[:, None] + 2, np.arange(L)[None, :] + 1
        earlier = jnp.asarray((i < j)[:, :, None, None], dtype=self.b.dtype)
        terms = earlier * self.b * self.phi(jnp.einsum("ijrsk,ik->ijrs", self.w, tokens))
        return self._shaped(terms.sum(axis=(0, 2)))


def token_sum_teacher(key, length: int, d: int, *, eps_x: float, p: int = 1, n_out: int | None = None,
                      phi: Callable = square) -> TokenSumTeacher:
    """A random :class:`TokenSumTeacher` for normalized sequences of length L and token dimension d.

    Args:
        key: A JAX PRNG key.
        length: L.
        d: The token dimension.
        eps_x: ε_x of the normalized sequences it reads.
        p: Terms per (i, j) pair.
        n_out: d_out (None: scalar output).
        phi: Φ, with Φ(0) = 0.

    Returns:
        A [`TokenSumTeacher`][gflow.objectives.nonlinear_teachers.TokenSumTeacher].
    """
    return _random_concept(TokenSumTeacher, key, length, d, eps_x, p, n_out, phi,
                           lambda L, d, p, s: (L - 2, L, p, s, d - 1), lambda L, p, s: (L - 2, L, p, s))


class SequenceConceptTeacher(_TokenConcept):
    """Seed 002 Def. 3.3 (eq. 2): one output at the last step,

        F*_s(x̄) = Σ_{r≤p} b_{r,s} Φ(⟨w_{r,s}, [x̄⁽²⁾, …, x̄⁽ᴸ⁻¹⁾]⟩),   w_{r,s} ∈ S^{(L−2)(d−1)−1}, |b| ≤ 1, Φ(0) = 0,

    a one-hidden-layer net on the whole concatenated sequence. ``w`` (p, d_out, (L−2)(d−1)), ``b`` (p, d_out).
    Input: a normalized sequence (L, d); output (L,) or (L, d_out), zero before step L.
    """

    def __call__(self, x):
        x = jnp.asarray(x)
        if x.ndim != 2 or (x.shape[0] - 2) * (x.shape[1] - 1) != self.w.shape[-1]:
            raise GflowInputError(f"input sequence `x` of shape {x.shape} does not match this teacher "
                                  f"((L − 2)(d − 1) = {self.w.shape[-1]})")
        last = jnp.sum(self.b * self.phi(self.w @ true_tokens(x, self.eps_x).reshape(-1)), axis=0)  # (d_out,)
        return self._shaped(jnp.zeros((x.shape[0], self.b.shape[1]), self.b.dtype).at[-1].set(last))


def sequence_concept_teacher(key, length: int, d: int, *, eps_x: float, p: int = 1, n_out: int | None = None,
                             phi: Callable = square) -> SequenceConceptTeacher:
    """A random :class:`SequenceConceptTeacher`.

    Args:
        key: A JAX PRNG key.
        length: L.
        d: The token dimension.
        eps_x: ε_x of the normalized sequences it reads.
        p: Hidden units.
        n_out: d_out (None: scalar output).
        phi: Φ, with Φ(0) = 0.

    Returns:
        A [`SequenceConceptTeacher`][gflow.objectives.nonlinear_teachers.SequenceConceptTeacher].
    """
    return _random_concept(SequenceConceptTeacher, key, length, d, eps_x, p, n_out, phi,
                           lambda L, d, p, s: (p, s, (L - 2) * (d - 1)), lambda L, p, s: (p, s))


class TransportTeacher(eqx.Module):
    """Seed 003 eq. (8): the infinite-width RNN function of transport maps v_w, v_u,

        F̃_t = E[ Σ_{k<t} w₀ᵏ (v_u(u₀)ᵀ X_{t−k−1} + v_w(w₀) h⁰_{t−k−1}) Π_{s≤k} I⁰_{t−s−1} ],
        w₀ ~ Rad(α), u₀ ~ N(0, I),

    estimated with M samples (w₀, u₀). By Prop. 1 the bracket is the derivative of the scalar recurrence
    h⁰_t = σ(w₀ h⁰_{t−1} + u₀ᵀ X_{t−1}) in the direction (v_w(w₀), v_u(u₀)), so F̃_t is a JVP of the width-M
    diagonal ``network`` (readout: the mean over its neurons); it is F^Lin of that network at the transported
    point (Remark 4). ``v_w``: (M,), ``v_u``: (M,) or (M, d); ``nu_w``, ``nu_u`` their sup bounds ν̄_w, ν̄_u.
    """

    network: ElmanRNN
    v_w: jax.Array
    v_u: jax.Array
    nu_w: float = eqx.field(static=True)
    nu_u: float = eqx.field(static=True)

    @property
    def alpha(self) -> float:
        return float(jnp.max(jnp.abs(self.network.W)))

    def __call__(self, x):
        params, static = eqx.partition(self.network, eqx.is_inexact_array)
        tangent = eqx.tree_at(lambda p: (p.W, p.A), params, (self.v_w, self.v_u))
        return jax.jvp(lambda p: eqx.combine(p, static)(x), (params,), (tangent,))[1]


def transport_teacher(key, d: int | None = None, *, alpha: float, activation: str = "tanh", n_samples: int = 4096,
                      nu_w: float = 1.0, nu_u: float = 1.0, v_w=None, v_u: Callable | None = None) -> TransportTeacher:
    """A :class:`TransportTeacher` in the class F_{ν̄_w, ν̄_u} of seed 003 eq. (9) (inputs of dimension d; None:
    scalar). The paper gives no concrete target (seed 003 §3.2); our defaults:

    - ``v_w`` = (v_w(+α), v_w(−α)), default drawn U(−ν̄_w, ν̄_w);
    - ``v_u`` a function ℝ^d → ℝ^d (ℝ → ℝ for scalar inputs), default the constant ν̄_u e with e a random unit
      vector (an odd v_u would average out against the even σ' of tanh: F̃ ≈ 0).

    Both are checked against ν̄_w, ν̄_u on the M samples (|v_w| ≤ ν̄_w, ‖v_u(u₀)‖ ≤ ν̄_u).

    Args:
        key: A JAX PRNG key.
        d: The input dimension (None: scalar inputs).
        alpha: α, the magnitude of w₀.
        activation: The activation's name.
        n_samples: M, the Monte-Carlo samples (w₀, u₀).
        nu_w: ν̄_w.
        nu_u: ν̄_u.
        v_w: The pair (v_w(+α), v_w(−α)).
        v_u: The map v_u.

    Returns:
        A [`TransportTeacher`][gflow.objectives.nonlinear_teachers.TransportTeacher].

    Raises:
        GflowInputError: ``v_w`` or ``v_u`` outside the class's bounds, or a bad size.
    """
    key = prng_key("key", key)
    M = positive_int("n_samples", n_samples)
    alpha, nu_w, nu_u = positive_float("alpha", alpha), positive_float("nu_w", nu_w), positive_float("nu_u", nu_u)
    k_w, k_u, k_vw, k_m = jax.random.split(key, 4)
    w0 = alpha * jax.random.rademacher(k_w, (M,), dtype=jnp.float64)
    u0 = jax.random.normal(k_u, (M,) if d is None else (M, positive_int("d", d)), dtype=jnp.float64)
    if v_w is None:
        v_w = jax.random.uniform(k_vw, (2,), minval=-nu_w, maxval=nu_w, dtype=jnp.float64)
    v_w = as_float_array("v_w", v_w, ndim=1)
    if v_w.shape != (2,) or np.max(np.abs(v_w)) > nu_w:
        raise GflowInputError(f"`v_w` must be the pair (v_w(+α), v_w(−α)) with |v_w| ≤ nu_w = {nu_w}, got {v_w}")
    if v_u is None:
        direction = _unit_rows(k_m, (1 if d is None else d,))
        constant = nu_u * (direction[0] if d is None else direction)

        def v_u(u):
            return jnp.broadcast_to(constant, jnp.shape(u))

    vu = jax.vmap(v_u)(u0)
    if vu.shape != u0.shape:
        raise GflowInputError(f"`v_u` must map each u₀ of shape {u0.shape[1:]} to the same shape, got {vu.shape[1:]}")
    largest = float(jnp.max(jnp.abs(vu) if d is None else jnp.linalg.norm(vu, axis=-1)))
    if largest > nu_u * (1 + 1e-12):
        raise GflowInputError(f"`v_u` exceeds its bound nu_u = {nu_u} on the samples (max ‖v_u(u₀)‖ = {largest:.4g})")
    network = ElmanRNN(w0, u0, jnp.full(M, 1.0 / M), activation=activation, trained=("W", "A"))
    vw = jnp.where(w0 > 0, v_w[0], v_w[1])
    return TransportTeacher(network, vw, vu, nu_w, nu_u)


def damped_oscillation(length: int = 40, *, decay: float = 0.9, frequency: float = 0.3) -> jax.Array:
    """w_j = decayʲ cos(frequency · j), j < length: our default target for :func:`fit_gru_teacher` (seed 000
    fits its GRU teacher to "an arbitrarily chosen impulse response" and does not say which).

    Args:
        length: The number of lags.
        decay: The decay per lag.
        frequency: The angular frequency per lag.

    Returns:
        Shape (length,).
    """
    j = jnp.arange(positive_int("length", length), dtype=jnp.float64)
    return decay ** j * jnp.cos(frequency * j)


class AdversarialLateLabels(eqx.Module):
    """Seed 001 §7 (Fig. 1) "adversarial data": a teacher's labels up to step k and erroneous (non-extrapolating)
    labels after it, for training sequences longer than k.

    The paper does not say which erroneous values; ours are an echo of earlier inputs: for outputs y_t (t = 1 … T,
    y_t depends on x_1 … x_t)

        y_t = teacher(x)_t + Σ_{j≥0} late_response_j · x_{t−k−j},

    which changes nothing at t ≤ k, so a model fitting these labels agrees with the teacher on length-k
    sequences and does not extrapolate (for the memoryless teacher y_t = w* x_t it has memory k). Default
    ``late_response = (1.0,)``: an echo, of amplitude 1, of the input k steps back. Scalar inputs and outputs.
    """

    teacher: Callable
    late_response: jax.Array
    k: int = eqx.field(static=True)

    def __init__(self, teacher, k: int, late_response=(1.0,)):
        """Wrap a teacher.

        Args:
            teacher: A callable mapping one input sequence to its outputs.
            k: The last step whose label is the teacher's.
            late_response: The echo's weights late_response_j.

        Raises:
            GflowInputError: A teacher that is not callable, or a bad ``k``.
        """
        if not callable(teacher):
            raise GflowInputError(f"`teacher` must map one input sequence to its outputs, got {teacher!r}")
        self.teacher = teacher
        self.k = positive_int("k", k)
        self.late_response = jnp.asarray(as_float_array("late_response", late_response, ndim=1))

    def __call__(self, x):
        x = check_sequence(x, 1, True)
        T, k = x.shape[0], self.k
        response = jnp.zeros(T, x.dtype)
        if k < T:
            late = self.late_response[: T - k]
            response = response.at[k: k + late.shape[0]].set(late)
        y = self.teacher(x)
        if y.shape != (T,):
            raise GflowInputError(f"the teacher must give scalar labels of shape ({T},), got {y.shape}")
        return y + _sequence_outputs(response, x[None], "accumulating")[0]
