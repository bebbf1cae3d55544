"""Empirical squared loss on a finite set of Gaussian input sequences labelled by a teacher.

Seed 000 eqs. 3.2–3.3 (last-step labels) and App. D eq. D.1 (accumulating labels: every prefix is supervised):

    last step:     L_S = scale · (1/N) Σ_n ‖y_T(x⁽ⁿ⁾) − y⁽ⁿ⁾‖²
    accumulating:  L_S = scale · (1/N) Σ_n Σ_{t≤T} ‖y_t(x⁽ⁿ⁾) − y_t⁽ⁿ⁾‖²

with scale = 1 (convention ``"L"``) or 1/2 (``"half"``), as for :class:`gflow.PopulationLoss`, whose loss is the
N → ∞ limit for whitened inputs (E x = 0, E x xᵀ = I). For a linear student the residual of every sequence is
linear in r_j = h_j − w_j, so L_S is the quadratic form rᵀ Σ̂ r in the inputs' second moments (derived here from seed
001 eq. 3):
:meth:`EmpiricalLoss.quadratic_form` computes it that way, as a cross-check of the sequence-by-sequence loss.

:class:`FreshGaussianSequences` draws new N(0, 1) sequences at every step instead (online SGD, seed 000 App.
C.1: "data is sampled from a Gaussian with zero mean and scale of 1"); its full objective is the population loss.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._checks import as_float_array, GflowInputError, is_traced, one_of, positive_int, prng_key
from ..models._linear_rnn import LinearRNN
from ._abstract_objective import AbstractSumOfSquares
from ._population_loss import PopulationLoss

LABELINGS = ("last_step", "accumulating")
_WEIGHTING = {"last_step": "uniform", "accumulating": "accumulating"}  # PopulationLoss's name for each
SHUFFLES = ("epoch", "with_replacement")


def _response_of(teacher, length: int) -> jax.Array:
    if not callable(getattr(teacher, "impulse_response", None)):
        raise GflowInputError(f"`teacher` must have an impulse_response(n) method, got {type(teacher).__name__}")
    return jnp.asarray(teacher.impulse_response(length), dtype=jnp.float64)


def _sequence_outputs(response, x, labeling: str):
    """Outputs of the linear system with impulse response w on inputs x: y_t = Σ_{j<t} w_j x_{t−1−j}.

    ``response`` (T,) or (T, n_out, n_in); ``x`` (N, T) or (N, T, n_in). ``labeling="last_step"``: y_T only,
    (N,) or (N, n_out); ``"accumulating"``: y_1 .. y_T, (N, T) or (N, T, n_out).
    """
    siso = response.ndim == 1
    if labeling == "last_step":
        reversed_x = x[:, ::-1]  # x_{T−1−j} at position j
        return jnp.einsum("j,nj->n", response, reversed_x) if siso else jnp.einsum("joi,nji->no", response, reversed_x)
    T = x.shape[1]
    lag = np.subtract.outer(np.arange(T), np.arange(T))  # lag[t, s] = t − s
    toeplitz = jnp.where((lag >= 0).reshape(lag.shape + (1,) * (response.ndim - 1)), response[np.clip(lag, 0, None)],
                         0.0)  # (T, T[, n_out, n_in])
    return jnp.einsum("ts,ns->nt", toeplitz, x) if siso else jnp.einsum("tsoi,nsi->nto", toeplitz, x)


def gaussian_sequences(key, n: int, length: int, n_in: int | None = None, *, whiten: bool = False) -> jax.Array:
    """N standard Gaussian input sequences, shape (n, length) (SISO) or (n, length, n_in).

    ``whiten=True`` maps them linearly so that their empirical second moment (1/N) Σ_n vec(x⁽ⁿ⁾) vec(x⁽ⁿ⁾)ᵀ is
    exactly the identity (needs n ≥ length · n_in); the empirical loss then equals the population loss.

    Args:
        key: A JAX PRNG key.
        n: N, the number of sequences.
        length: T, their length.
        n_in: Inputs per step (None: scalar input).
        whiten: Make the empirical second moment exactly the identity.

    Returns:
        Shape (n, length) or (n, length, n_in).

    Raises:
        GflowInputError: A bad key or size, or ``whiten`` with fewer than length · n_in sequences.
    """
    key = prng_key("key", key)
    n, length = positive_int("n", n), positive_int("length", length)
    shape = (n, length) if n_in is None else (n, length, positive_int("n_in", n_in))
    x = jax.random.normal(key, shape, dtype=jnp.float64)
    if not whiten:
        return x
    flat = x.reshape(n, -1)
    if n < flat.shape[1]:
        raise GflowInputError(f"`whiten=True` needs at least length·n_in = {flat.shape[1]} sequences, got n = {n}")
    second = flat.T @ flat / n
    vals, vecs = jnp.linalg.eigh(second)
    return (flat @ (vecs / jnp.sqrt(vals)) @ vecs.T).reshape(shape)


class EmpiricalLoss(AbstractSumOfSquares):
    """L_S(model) = scale · (1/N) Σ_n (squared error of the model on sequence n), see the module docstring.

    ``inputs`` (N, T) or (N, T, n_in); ``labels`` (N,) / (N, n_out) for ``labeling="last_step"``, (N, T) /
    (N, T, n_out) for ``"accumulating"``. ``teacher_response`` (the teacher's w_0 .. w_{T−1}) is optional and
    enables :meth:`quadratic_form`. The model is any module mapping one sequence (T[, n_in]) to its outputs
    (T[, n_out]), ``vmap``-ed over the batch; a :class:`gflow.LinearRNN`'s outputs are computed as the
    convolution of the inputs with its impulse response h_0 .. h_{T−1} (the same numbers, without a scan).
    """

    inputs: jax.Array
    labels: jax.Array
    teacher_response: jax.Array | None
    labeling: str = eqx.field(static=True)
    convention: str = eqx.field(static=True)

    def __init__(self, inputs, labels, *, labeling: str = "last_step", convention: str = "L",
                 teacher_response=None):
        """Hold a fixed sample of sequences and their labels.

        Args:
            inputs: Shape (N, T) (scalar input) or (N, T, n_in).
            labels: (N,) / (N, n_out) for ``labeling="last_step"``; (N, T) / (N, T, n_out) for ``"accumulating"``.
            labeling: ``"last_step"`` (seed 000 eqs. 3.2–3.3, seed 001 eq. 3) or ``"accumulating"`` (a label at every
                step, seed 000 App. D).
            convention: ``"L"`` or ``"half"`` (L/2).
            teacher_response: The teacher's w_0 … w_{T−1}, which enables
                [`quadratic_form`][gflow.objectives.EmpiricalLoss.quadratic_form].

        Raises:
            GflowInputError: Shapes that do not match, or bad ``labeling`` / ``convention``.
        """
        self.labeling = one_of("labeling", labeling, LABELINGS)
        self.convention = one_of("convention", convention, ("L", "half"))
        x = as_float_array("inputs", inputs, ndim=(2, 3))
        y = as_float_array("labels", labels, ndim=(1, 2, 3))
        n, T = x.shape[:2]
        want = (n,) if labeling == "last_step" else (n, T)
        if y.shape[:len(want)] != want or y.ndim - len(want) not in (0, 1):
            raise GflowInputError(f"`labels` must have shape {want} (+ (n_out,) for MIMO) for labeling={labeling!r} "
                                  f"and inputs of shape {x.shape}, got {y.shape}")
        if (x.ndim == 2) != (y.ndim == len(want)):
            raise GflowInputError(f"`labels` {y.shape} and `inputs` {x.shape} must be both SISO or both MIMO")
        if teacher_response is not None:
            w = as_float_array("teacher_response", teacher_response, ndim=(1, 3))
            if w.shape[0] != T or (w.ndim == 1) != (x.ndim == 2):
                raise GflowInputError(f"`teacher_response` must hold w_0 .. w_{T - 1} matching the inputs' shape "
                                      f"{x.shape}, got {w.shape}")
            teacher_response = jnp.asarray(w)
        self.inputs, self.labels, self.teacher_response = jnp.asarray(x), jnp.asarray(y), teacher_response

    @classmethod
    def from_teacher(cls, key, teacher, n: int, length: int, *, labeling: str = "last_step", convention: str = "L",
                     whiten: bool = False) -> "EmpiricalLoss":
        """N Gaussian sequences of length T (see :func:`gaussian_sequences`) labelled by ``teacher``.

        Args:
            key: A JAX PRNG key.
            teacher: A linear teacher with ``impulse_response(n)``.
            n: N, the number of sequences.
            length: T, their length.
            labeling: ``"last_step"`` or ``"accumulating"``.
            convention: ``"L"`` or ``"half"``.
            whiten: Whiten the inputs (see [`gaussian_sequences`][gflow.objectives.gaussian_sequences]), so that the
                loss equals the [`PopulationLoss`][gflow.objectives.PopulationLoss].

        Returns:
            An `EmpiricalLoss` that also holds the teacher's response.
        """
        one_of("labeling", labeling, LABELINGS)
        w = _response_of(teacher, positive_int("length", length))
        n_in = None if w.ndim == 1 else w.shape[2]
        x = gaussian_sequences(key, n, length, n_in, whiten=whiten)
        return cls(x, _sequence_outputs(w, x, labeling), labeling=labeling, convention=convention, teacher_response=w)

    # ------------------------------------------------------------------------------------------------
    @property
    def n(self) -> int:
        return self.inputs.shape[0]

    @property
    def length(self) -> int:
        return self.inputs.shape[1]

    @property
    def scale(self) -> float:
        return 0.5 if self.convention == "half" else 1.0

    def description(self) -> dict:
        return {"convention": self.convention, "k": None, "weighting": None}

    @property
    def full_loss(self) -> "EmpiricalLoss":
        """The objective a minibatch estimates: the loss on the whole dataset (itself)."""
        return self

    def residuals(self, model) -> jax.Array:
        """r with L_S = ‖r‖²: √(scale/N) · (model output − label), flattened."""
        if isinstance(model, LinearRNN):
            y = _sequence_outputs(model.impulse_response(self.length), self.inputs, self.labeling)
        else:
            y = jax.vmap(model)(self.inputs)
            y = y[:, -1] if self.labeling == "last_step" else y
        if y.shape != self.labels.shape:
            raise GflowInputError(f"model outputs of shape {y.shape} do not match the labels' {self.labels.shape}")
        return (jnp.sqrt(self.scale / self.n) * (y - self.labels)).reshape(-1)

    def residual_targets(self) -> jax.Array:
        """√(scale/N) · labels, flattened as :meth:`residuals`."""
        return (jnp.sqrt(self.scale / self.n) * self.labels).reshape(-1)

    def quadratic_form(self, model) -> jax.Array:
        """L_S of a linear RNN as rᵀ Σ̂ r in r_j = h_j − w_j, from the impulse response alone (derived here from seed
        001
        eq. 3).

        With M[a, b] = (1/N) Σ_n x_a⁽ⁿ⁾ x_b⁽ⁿ⁾ᵀ: L_S = scale · Σ_{t supervised} Σ_{i,j≤t} tr(r_iᵀ r_j M[t−j, t−i]).
        Equals the loss when the labels are the teacher's noise-free outputs.

        Args:
            model: A [`LinearRNN`][gflow.models.LinearRNN].

        Returns:
            A scalar array.

        Raises:
            GflowInputError: The loss holds no ``teacher_response``.
        """
        if self.teacher_response is None:
            raise GflowInputError("quadratic_form needs `teacher_response` (build the loss with from_teacher)")
        T = self.length
        r = model.impulse_response(T) - self.teacher_response
        x = self.inputs if self.inputs.ndim == 3 else self.inputs[..., None]
        r = r if r.ndim == 3 else r[:, None, None]
        M = jnp.einsum("nai,nbj->abij", x, x) / self.n  # (T, T, n_in, n_in)
        t = np.arange(T) if self.labeling == "accumulating" else np.array([T - 1])
        lag = t[:, None] - np.arange(T)[None, :]  # t − i, negative where i > t
        mask = jnp.asarray(lag >= 0, dtype=r.dtype)
        lag = np.clip(lag, 0, None)
        M_t = M[lag[:, :, None], lag[:, None, :]]  # (n_t, T_j, T_i, n_in, n_in): M[t−j, t−i]
        # Σ_t Σ_{i,j} mask_ti mask_tj Σ_{o,p,q} r_i[o,p] r_j[o,q] M[t−j, t−i][q, p]
        rr = jnp.einsum("ti,iop->tiop", mask, r)
        return self.scale * jnp.einsum("tiop,tjoq,tjiqp->", rr, rr, M_t)

    # ------------------------------------------------------------------------------ minibatches (for SGD)
    def minibatch_init(self, key, batch_size: int, shuffle: str = "epoch"):
        """The sampler's state for :meth:`minibatch`; checks that ``batch_size`` fits the dataset.

        Args:
            key: A JAX PRNG key for the sampling.
            batch_size: Sequences per minibatch, at most N.
            shuffle: ``"epoch"`` or ``"with_replacement"`` (see
                [`minibatch`][gflow.objectives.EmpiricalLoss.minibatch]).

        Returns:
            The state, a dict of arrays.

        Raises:
            GflowInputError: A bad key, a batch larger than the dataset, or an unknown ``shuffle``.
        """
        key = prng_key("key", key)
        batch_size = positive_int("batch_size", batch_size)
        one_of("shuffle", shuffle, SHUFFLES)
        if batch_size > self.n:
            raise GflowInputError(f"`batch_size` ({batch_size}) is larger than the dataset (N = {self.n} sequences)")
        return {"key": key, "epoch": jnp.asarray(-1), "order": jnp.arange(self.n)}

    def minibatch(self, state, step, batch_size: int, shuffle: str = "epoch"):
        """(loss on the minibatch used at ``step``, new state). ``shuffle="epoch"``: a fresh permutation every
        ⌊N / batch⌋ steps, remainder dropped (torch DataLoader(shuffle=True, drop_last=True));
        ``"with_replacement"``: i.i.d. uniform indices at every step.

        Args:
            state: The sampler's state (from ``minibatch_init`` or the previous call).
            step: The step number (may be traced).
            batch_size: Sequences per minibatch.
            shuffle: ``"epoch"`` or ``"with_replacement"``.

        Returns:
            ``(batch, state)``: the loss on the minibatch's sequences, and the new state.
        """
        if shuffle == "with_replacement":
            idx = jax.random.randint(jax.random.fold_in(state["key"], step), (batch_size,), 0, self.n)
        else:
            per_epoch = self.n // batch_size
            epoch = step // per_epoch
            order = jax.lax.cond(epoch == state["epoch"], lambda: state["order"],
                                 lambda: jax.random.permutation(jax.random.fold_in(state["key"], epoch), self.n))
            state = {"key": state["key"], "epoch": epoch, "order": order}
            idx = jax.lax.dynamic_slice(order, ((step % per_epoch) * batch_size,), (batch_size,))
        batch = eqx.tree_at(lambda l: (l.inputs, l.labels), self, (self.inputs[idx], self.labels[idx]))
        return batch, state


class FreshGaussianSequences(eqx.Module):
    """An endless stream of N(0, 1) input sequences of length T labelled by a teacher: online SGD.

    Every minibatch is drawn anew from ``jax.random.fold_in(key, step)``; the objective it estimates without
    bias is the population loss (:attr:`full_loss`, a :class:`gflow.PopulationLoss` with the same labeling and
    convention). With ``k_max`` the sequences have length k_max and their first k_max − T inputs are zero, which for a
    linear RNN started at state 0 is a length-T sequence: streams of different T then share one shape and stack
    (as :class:`gflow.PopulationLoss`'s ``k_max``).
    """

    response: jax.Array
    mask: jax.Array | None
    full_loss: PopulationLoss
    labeling: str = eqx.field(static=True)
    convention: str = eqx.field(static=True)

    def __init__(self, teacher, length: int, *, labeling: str = "last_step", convention: str = "L",
                 k_max: int | None = None):
        """Label a stream of Gaussian sequences with ``teacher``.

        Args:
            teacher: A linear teacher with ``impulse_response(n)``.
            length: T, the training length (may be traced under vmap when ``k_max`` is given).
            labeling: ``"last_step"`` or ``"accumulating"``.
            convention: ``"L"`` or ``"half"``.
            k_max: Draw sequences of length k_max with k_max − T leading zeros (None: length T).

        Raises:
            GflowInputError: A bad ``length``, ``k_max`` (below T), ``labeling`` or ``convention``, or a teacher
                without ``impulse_response``.
        """
        self.labeling = one_of("labeling", labeling, LABELINGS)
        self.convention = one_of("convention", convention, ("L", "half"))
        if not is_traced(length):
            positive_int("length", length)
        self.full_loss = PopulationLoss(teacher, length, weighting=_WEIGHTING[labeling], convention=convention,
                                        k_max=k_max)
        n = self.full_loss.n_lags
        self.response = jax.lax.stop_gradient(_response_of(teacher, n))
        self.mask = None if k_max is None else (jnp.arange(n) >= n - length).astype(jnp.float64)

    @property
    def length(self) -> int:
        """The sequences' length: T, or k_max when padded."""
        return self.response.shape[0]

    def minibatch_init(self, key, batch_size: int, shuffle: str = "epoch"):
        key = prng_key("key", key)
        positive_int("batch_size", batch_size)
        return {"key": key}

    def minibatch(self, state, step, batch_size: int, shuffle: str = "epoch"):
        n_in = None if self.response.ndim == 1 else self.response.shape[2]
        shape = (batch_size, self.length) + (() if n_in is None else (n_in,))
        x = jax.random.normal(jax.random.fold_in(state["key"], step), shape, dtype=jnp.float64)
        if self.mask is not None:
            x = x * self.mask.reshape((1, -1) + (1,) * (x.ndim - 2))
        batch = object.__new__(EmpiricalLoss)  # built inside jit: skip the host-side validation of __init__
        for name, value in (("inputs", x), ("labels", _sequence_outputs(self.response, x, self.labeling)),
                            ("teacher_response", self.response), ("labeling", self.labeling),
                            ("convention", self.convention)):
            object.__setattr__(batch, name, value)
        return batch, state
