"""Closed-form population loss of a linear RNN against a teacher.

Seed 000 eq. 3.4 / Lemma E.1 and seed 001 Lemma 3.1 / C.1: for whitened inputs (E x = 0, E x xᵀ = I)

    L = Σ_{j<k} weight_j ‖h_j − w_j‖²,      h_j = C A^j B,  w_j the teacher's impulse response,

with weight_j = 1 (last-step labels) or weight_j = k − j (labels at every step: seed 000 App. D, eq. D.3), or any
nonnegative weights given lag by lag: impulse sequences whose last output is labelled see one lag each, so Slutzky
et al.'s (NeurIPS 2025, §3) mean squared error over a "baseline" sequence (lag L − 1) and a "special" one (lag 1) is
weights ½ at those two lags (:meth:`PopulationLoss.at_lags`). ``convention="half"`` multiplies by 1/2, which is the
time unit of seed 000's appendix (Lemma E.4, eqs. E.9–E.10).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._checks import GflowInputError, is_traced, one_of, positive_int
from ..models._impulse_response import krylov_sequence
from ._abstract_objective import AbstractSumOfSquares
from ._residual_jacobian import ImpulseResponseJacobian

WEIGHTINGS = ("uniform", "accumulating")
CONVENTIONS = ("L", "half")


def _lag_weights(weighting, k):
    """Explicit per-lag weights as a float64 vector; checked (length k, nonnegative, finite, not all 0) unless
    traced."""
    try:
        w = jnp.asarray(weighting, dtype=jnp.float64)
    except (TypeError, ValueError):
        raise GflowInputError(f"`weighting` must be one of {list(WEIGHTINGS)} or a vector of per-lag weights, got "
                              f"{weighting!r}") from None
    if w.ndim != 1:
        raise GflowInputError(f"per-lag `weighting` must be a vector (one weight per lag j = 0 … k−1), got shape "
                              f"{w.shape}")
    if w.shape[0] != k:
        raise GflowInputError(f"per-lag `weighting` has {w.shape[0]} entries, the loss holds {k} lags (k, or k_max "
                              "when given)")
    if not is_traced(w):
        wn = np.asarray(w)
        if not np.all(np.isfinite(wn)) or np.any(wn < 0) or not np.any(wn > 0):
            raise GflowInputError(f"per-lag weights must be finite, nonnegative and not all zero, got {wn.tolist()}")
    return w


class _HeldResponse(eqx.Module):
    """A teacher given by its impulse response table (h*_0, …, h*_{n−1}), zero beyond it: how
    :meth:`PopulationLoss.padded_to` hands a loss's own target back to the constructor."""

    table: jax.Array

    def impulse_response(self, n: int) -> jax.Array:
        pad = n - self.table.shape[0]
        if pad <= 0:
            return self.table[:n]
        return jnp.concatenate([self.table, jnp.zeros((pad,) + self.table.shape[1:], self.table.dtype)])


class PopulationLoss(AbstractSumOfSquares):
    """The closed-form population loss of a linear RNN against a teacher: L = scale · Σ_j weight_j ‖h_j − w_j‖².

    Seed 000 eq. 3.4 / Lemma E.1 and seed 001 Lemma 3.1 / C.1 (whitened inputs), App. D eq. D.3 for the accumulating
    weights; written as ‖r‖² with r = [`residuals`][gflow.objectives.PopulationLoss.residuals]. The loss's training
    length (``description()["k"]``, [`training_length`][gflow.objectives.PopulationLoss.training_length]) is the last
    lag with a non-zero weight + 1, whatever trailing zeros a weight vector has.

    See also: [`SampleLoss`][gflow.objectives.SampleLoss] (the same loss on given sequences),
    [`EmpiricalLoss`][gflow.objectives.EmpiricalLoss] (on sampled sequences).
    """

    target: jax.Array
    """The teacher's impulse response w_0 … w_{n_lags−1}, zero beyond the training length."""
    weights: jax.Array
    """The per-lag weights, the convention's factor (1 or ½) folded in, zero beyond the training length."""
    n_lags: int = eqx.field(static=True)
    """The number of lags the loss holds: the training length k, or k_max when padded (not the training length,
    which is [`training_length`][gflow.objectives.PopulationLoss.training_length])."""
    weighting: str = eqx.field(static=True)
    """``"uniform"``, ``"accumulating"`` or ``"custom"`` (per-lag weights given as a vector)."""
    convention: str = eqx.field(static=True)
    """``"L"`` (no factor) or ``"half"`` (L/2, the time unit of seed 000's appendix)."""

    def __init__(self, teacher, k: int, weighting: str = "uniform", convention: str = "L", *, k_max: int | None = None):
        """Build the loss over the teacher's first k lags.

        Args:
            teacher: A model with an ``impulse_response(n)`` method (a [`LinearRNN`][gflow.models.LinearRNN], a
                teacher of :mod:`gflow.objectives.teachers`).
            k: The training length: lags j = 0 … k − 1 are weighted. May be a traced integer (under ``vmap``) when
                ``k_max`` is given.
            weighting: ``"uniform"`` (weight 1 at every lag j < k: last-step labels), ``"accumulating"`` (k − j: labels
                at every step, seed 000 App. D), or a vector of nonnegative per-lag weights (k of them, k_max when
                ``k_max`` is given; ``weighting == "custom"`` afterwards;
                [`at_lags`][gflow.objectives.PopulationLoss.at_lags]
                builds one from a dict).
            convention: ``"L"`` (no factor) or ``"half"`` (L/2, the time unit of seed 000's appendix, Lemma E.4).
            k_max: Hold k_max lags with zero weight beyond k (as
                [`padded_to`][gflow.objectives.PopulationLoss.padded_to]),
                so that losses of different training lengths have one shape, e.g.
                ``eqx.filter_vmap(lambda t, k: PopulationLoss(t, k, k_max=24))(teachers, jnp.arange(16, 25))``.

        Raises:
            GflowInputError: A bad ``k``, ``k_max``, ``weighting`` or ``convention``, a traced ``k`` without ``k_max``,
                or a teacher without ``impulse_response``.
        """
        traced = is_traced(k)
        if traced and k_max is None:
            raise GflowInputError("a traced training length `k` (under vmap) needs a static `k_max`")
        if k_max is not None:
            k_max = positive_int("k_max", k_max)
            if not traced and positive_int("k", k) > k_max:
                raise GflowInputError(f"`k_max` ({k_max}) must be at least the training length k ({k})")
        custom = not isinstance(weighting, str)
        self.n_lags = k_max if k_max is not None else positive_int("k", k)
        # per-lag weights cover every lag the loss holds: k of them, or k_max (those beyond k are masked) with k_max
        lag_weights = _lag_weights(weighting, self.n_lags) if custom else None
        self.weighting = "custom" if custom else one_of("weighting", weighting, WEIGHTINGS)
        self.convention = one_of("convention", convention, CONVENTIONS)
        if not callable(getattr(teacher, "impulse_response", None)):
            raise GflowInputError(f"`teacher` must have an impulse_response(n) method, got {type(teacher).__name__}")
        target = teacher.impulse_response(self.n_lags)
        # on the host when nothing is traced: the same float64 values, without compiling five small programs
        xp = jnp if is_traced(k, target, lag_weights) else np
        target = xp.asarray(target, dtype=np.float64)
        j = xp.arange(self.n_lags, dtype=np.float64)
        k = xp.asarray(k, dtype=np.float64)
        inside = j < k
        target = xp.where(inside.reshape((-1,) + (1,) * (target.ndim - 1)), target, 0.0)
        if custom:
            w = lag_weights
        else:
            w = xp.ones(self.n_lags) if weighting == "uniform" else k - j
        weights = xp.where(inside, w, 0.0) * (0.5 if convention == "half" else 1.0)
        self.target, self.weights = jax.lax.stop_gradient(jnp.asarray(target)), jnp.asarray(weights)

    @classmethod
    def at_lags(cls, teacher, lag_weights: dict, convention: str = "L") -> "PopulationLoss":
        """The loss Σ_j weight_j ‖h_j − w_j‖² over the lags named in ``lag_weights``, k = the largest lag + 1.

        Slutzky et al.'s baseline design at length L is ``{L − 1: 1}``, with the special sequence
        ``{L − 1: 0.5, 1: 0.5}`` (the mean over the two sequences). Built in numpy: under ``vmap`` (a traced weight) use
        ``PopulationLoss(teacher, k, weighting=w)`` with the vector itself.

        Args:
            teacher: A model with an ``impulse_response(n)`` method.
            lag_weights: ``{lag: weight}``, lags integers ≥ 0, weights nonnegative and not all zero.
            convention: ``"L"`` or ``"half"``.

        Returns:
            A `PopulationLoss` with ``weighting == "custom"``.

        Raises:
            GflowInputError: ``lag_weights`` is not a non-empty dict of integer lags and valid weights.
        """
        if not isinstance(lag_weights, dict) or not lag_weights:
            raise GflowInputError(f"`lag_weights` must be a non-empty dict {{lag: weight}}, got {lag_weights!r}")
        lags = list(lag_weights)
        if not all(isinstance(lag, (int, np.integer)) and not isinstance(lag, bool) and lag >= 0 for lag in lags):
            raise GflowInputError(f"lags must be integers >= 0, got {lags}")
        w = np.zeros(max(lags) + 1)
        for lag, weight in lag_weights.items():
            w[lag] = weight
        return cls(teacher, len(w), weighting=w, convention=convention)

    def description(self) -> dict:
        """What the loss is, as plain data for a trajectory's record.

        Returns:
            ``{"convention", "k", "weighting"}``, and ``"lag_weights"`` (before the convention's factor) for custom
            weights.
        """
        out = {"convention": self.convention, "k": self.training_length, "weighting": self.weighting}
        if self.weighting == "custom":
            scale = 2.0 if self.convention == "half" else 1.0
            out["lag_weights"] = [float(w) * scale for w in np.asarray(self.weights)[: self.training_length]]
        return out

    @property
    def training_length(self) -> int:
        """The number of lags the loss sees: 1 + the last lag with non-zero weight.

        This is k, also after [`padded_to`][gflow.objectives.PopulationLoss.padded_to]; the number of lags held is
        [`n_lags`][gflow.objectives.PopulationLoss.n_lags].
        """
        nonzero = np.flatnonzero(np.asarray(self.weights))
        return int(nonzero[-1]) + 1 if nonzero.size else 0

    def padded_to(self, k_max: int) -> "PopulationLoss":
        """The same loss over more lags, with zero weight beyond the training length.

        Losses of different training lengths padded to one ``k_max`` have one shape and can be batched
        ([`gflow.solve_flows`][]). The padded loss is built by the constructor from the response this loss holds (as a
        teacher whose impulse response is that table, zero beyond it), its training length and its weighting, so
        its ``target`` and ``weights`` are this loss's arrays followed by zeros.

        Args:
            k_max: The number of lags the padded loss holds; at least
                [`n_lags`][gflow.objectives.PopulationLoss.n_lags].

        Returns:
            A `PopulationLoss` with ``n_lags == k_max``, the same value, gradient and
            [`training_length`][gflow.objectives.PopulationLoss.training_length].

        Raises:
            GflowInputError: ``k_max`` is not a positive integer or is below ``n_lags``.
        """
        k_max = positive_int("k_max", k_max)
        if k_max < self.n_lags:
            raise GflowInputError(f"`k_max` ({k_max}) must be at least the {self.n_lags} lags the loss already holds "
                                  f"(training length k = {self.training_length})")
        held = _HeldResponse(self.target)
        if self.weighting == "custom":
            # the per-lag weights as given (before the convention's scale, a power of two: exact), zero-padded
            unscaled = self.weights / (0.5 if self.convention == "half" else 1.0)
            lag_weights = jnp.concatenate([unscaled, jnp.zeros(k_max - self.n_lags, unscaled.dtype)])
            return PopulationLoss(held, self.n_lags, lag_weights, self.convention, k_max=k_max)
        return PopulationLoss(held, self.training_length, self.weighting, self.convention, k_max=k_max)

    def _check_model(self, model):
        h_shape = self.target.shape[1:]
        m_shape = () if model.siso else (model.n_out, model.n_in)
        if h_shape != m_shape:
            raise GflowInputError(
                f"model output shape {m_shape or 'scalar (SISO)'} does not match the teacher's "
                f"{h_shape or 'scalar (SISO)'}"
            )

    def residuals(self, model) -> jax.Array:
        """The residuals r with L = ‖r‖²: r_j = √(scale·weight_j) (h_j − w_j), flattened.

        Args:
            model: A [`LinearRNN`][gflow.models.LinearRNN] whose output shape matches the teacher's.

        Returns:
            A vector of length ``n_lags`` × outputs × inputs.

        Raises:
            GflowInputError: The model's output shape differs from the teacher's.
        """
        self._check_model(model)
        diff = model.impulse_response(self.n_lags) - self.target
        w = jnp.sqrt(self.weights).reshape((-1,) + (1,) * (diff.ndim - 1))
        return (w * diff).reshape(-1)

    def residual_targets(self) -> jax.Array:
        """The labels inside the residuals: √(scale·weight_j) w_j, flattened as
        [`residuals`][gflow.objectives.PopulationLoss.residuals].

        Returns:
            A vector of the residuals' length.
        """
        w = jnp.sqrt(self.weights).reshape((-1,) + (1,) * (self.target.ndim - 1))
        return (w * self.target).reshape(-1)

    def curvature_units(self, model):
        """The residuals are affine in the impulse response, so they inherit its separability: for diagonal A,
        h_j = Σ_p C_p a_p^j B_p is a sum over the hidden units p of a function of (a_p, B_p, C_p)
        ([`LinearRNN.output_units`][gflow.models.LinearRNN.output_units]).

        Args:
            model: A [`LinearRNN`][gflow.models.LinearRNN].

        Returns:
            The model's output units (diagonal A), else None (also for a model that declares none).
        """
        self._check_model(model)
        output_units = getattr(model, "output_units", None)
        return None if output_units is None else output_units()

    def residual_jacobian(self, model):
        """∂r/∂θ in closed form, as a model whose trained leaves carry a leading axis of length m = len(r).

        With v_j = A^j B and u_j = (Aᵀ)^j Cᵀ (seed 001 eqs. 5–7 and 21–23): ∂h_j/∂B = u_j, ∂h_j/∂C = v_j and
        ∂h_j/∂A = Σ_{s<j} u_s v_{j−1−s}ᵀ, chained through the parameterization of A by a VJP. Costs O(k² d²) and no
        reverse passes; the stiff solver uses it for its Gauss–Newton matrix. For diagonal A (eigenvalues a) it is
        ∂h_j/∂a_p = j a_p^{j−1} C_p B_p, O(k d): a diagonal SSM of any width.

        Args:
            model: A [`LinearRNN`][gflow.models.LinearRNN].

        Returns:
            ``model`` with each trained layer replaced by its rows of ∂r/∂θ (shape (m,) + the layer's shape);
            [`Frozen`][gflow.models.Frozen] layers are left as they are: they are not coordinates of the flow.
        """
        self._check_model(model)
        k, d = self.n_lags, model.d
        a, B, C = model.layers()
        B = B.reshape(d, -1)  # (d, n_in)
        Ct = C.reshape(-1, d).T  # (d, n_out)
        if model.structure == "diagonal":
            powers = jnp.cumprod(jnp.concatenate([jnp.ones((1, d), a.dtype), jnp.tile(a, (k - 1, 1))]), axis=0)
            V, U = powers[:, :, None] * B, powers[:, :, None] * Ct  # (k, d, n_in), (k, d, n_out)
            previous = jnp.concatenate([jnp.zeros((1, d), a.dtype), powers[:-1]])  # a^{j-1}, 0 at j = 0
            dA = jnp.einsum("j,jp,po,pi->joip", jnp.arange(k, dtype=a.dtype), previous, Ct, B)  # (k, n_out, n_in, d)
        else:
            A = model.transition()
            V, U = krylov_sequence(A, B, k), krylov_sequence(A.T, Ct, k)  # (k, d, n_in), (k, d, n_out)
            j = jnp.arange(k)
            lag = j[None, :] - 1 - j[:, None]  # S[s, j] = V[j - 1 - s] where j - 1 - s >= 0
            S = jnp.where((lag >= 0)[:, :, None, None], V[jnp.clip(lag, 0)], 0.0)  # (k_s, k_j, d, n_in)
            dA = jnp.einsum("spo,sjqi->joipq", U, S)  # (k, n_out, n_in, d, d)
        eye_in, eye_out = jnp.eye(B.shape[1]), jnp.eye(Ct.shape[1])
        dB = jnp.einsum("jpo,iq->joipq", U, eye_in)  # ∂h_j[o,i]/∂B[p,q]
        dC = jnp.einsum("jpi,or->joirp", V, eye_out)  # ∂h_j[o,i]/∂C[r,p]
        m = dB.shape[0] * dB.shape[1] * dB.shape[2]
        scale = jnp.sqrt(self.weights)
        rows = lambda x: (scale.reshape((-1,) + (1,) * (x.ndim - 1)) * x).reshape((m,) + x.shape[3:])  # noqa: E731

        def raw_A(G):
            if model.structure == "diagonal":
                return G
            _, pullback = jax.vjp(lambda a: eqx.tree_at(lambda mm: mm.A, model, a).transition(), model.A)
            return pullback(G)[0]

        blocks = {"A": lambda: jax.vmap(raw_A)(rows(dA)), "B": lambda: rows(dB).reshape((m,) + model.B.shape),
                  "C": lambda: rows(dC).reshape((m,) + model.C.shape)}
        trained = model.trained
        return eqx.tree_at(lambda mm: tuple(getattr(mm, name) for name in trained), model,
                           tuple(blocks[name]() for name in trained))

    def residual_jacobian_operator(self, model):
        """∂r/∂θ as a matrix-free operator: J·b, Jᵀ·z and J Jᵀ in O(d²k + k⁴).

        Args:
            model: A [`LinearRNN`][gflow.models.LinearRNN].

        Returns:
            An [`ImpulseResponseJacobian`][gflow.objectives.ImpulseResponseJacobian] for a SISO model with A general
            or symmetric (``"restricted"``); None for other models, which use the materialized
            [`residual_jacobian`][gflow.objectives.PopulationLoss.residual_jacobian] (O(k d) for diagonal A).
        """
        self._check_model(model)
        supported = model.structure == "general" or (model.structure == "symmetric"
                                                     and model.parameterization == "restricted")
        if not (model.siso and supported):
            return None
        A = model.transition()
        _, B, C = model.layers()
        V = krylov_sequence(A, B, self.n_lags)
        U = krylov_sequence(A.T, C, self.n_lags)
        return ImpulseResponseJacobian(U, V, jnp.sqrt(self.weights), model, model.structure == "symmetric",
                                       model.trained)

    @property
    def time_unit(self) -> str:
        """How to read rates: under "L", ‖B ∓ Cᵀ‖ ∝ e^{∓2 w0 t}; under "half", the squared norms are."""
        return "L (no 1/2)" if self.convention == "L" else "L/2 (seed 000 appendix units)"
