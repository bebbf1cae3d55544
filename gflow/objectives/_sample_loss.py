"""The population loss of a nonlinear RNN, estimated on a fixed sample of input sequences.

For a model F and a teacher F* (both map one input sequence to outputs at every step),

    L(model) = scale · E_x Σ_t w_t ‖F_t(x) − F*_t(x)‖²  ≈  scale · (1/N) Σ_n Σ_t w_t ‖F_t(x⁽ⁿ⁾) − F*_t(x⁽ⁿ⁾)‖²,

with x⁽¹⁾ … x⁽ᴺ⁾ drawn once (seeded) and kept for the whole run, so the flow integrates one smooth objective
(the papers' squared losses: seed 003 eq. (1) sums every step, seed 002 uses the last one, seed 004 steps
3 … L). ``scale`` is 1 (convention ``"L"``) or 1/2 (``"half"``), as for :class:`gflow.PopulationLoss`.
:meth:`SampleLoss.standard_error` is the Monte-Carlo standard error of the estimate; a finite training set of
the papers is the same object with its N sequences.
"""

from __future__ import annotations

from typing import Callable

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._checks import as_float_array, GflowInputError, one_of, positive_int, prng_key
from ._abstract_objective import AbstractSumOfSquares
from ._empirical_loss import EmpiricalLoss, gaussian_sequences

CONVENTIONS = ("L", "half")


def _step_weights(steps, length: int) -> np.ndarray:
    """w_t, t = 1 … T: ``"all"``, ``"last"``, or the supervised steps (1-based, e.g. ``range(3, L + 1)``)."""
    if isinstance(steps, str):
        one_of("steps", steps, ("all", "last"))
        w = np.ones(length) if steps == "all" else np.zeros(length)
        w[-1] = 1.0
        return w
    try:
        chosen = np.asarray(list(steps))
    except TypeError:
        raise GflowInputError(f"`steps` must be 'all', 'last' or a sequence of steps in 1 … {length}, "
                              f"got {steps!r}") from None
    if chosen.size == 0 or not np.issubdtype(chosen.dtype, np.integer) or chosen.min() < 1 or chosen.max() > length \
            or len(np.unique(chosen)) != chosen.size:
        raise GflowInputError(f"`steps` must be distinct integer steps in 1 … {length}, got {steps!r}")
    w = np.zeros(length)
    w[chosen - 1] = 1.0
    return w


class SampleLoss(AbstractSumOfSquares):
    """L(model) = scale · (1/N) Σ_n Σ_t w_t ‖model(x⁽ⁿ⁾)_t − y⁽ⁿ⁾_t‖² = ‖r‖² on a fixed sample (module docstring).

    ``inputs`` (N, T) or (N, T, n_in); ``labels`` (N, T) or (N, T, n_out), the target at every step (values at
    unsupervised steps are ignored); ``steps`` which steps are supervised. Build it from a teacher with
    :meth:`from_teacher`. Works with :func:`gflow.solve_flow` (``residuals``), the discrete runners, and
    :func:`gflow.discrete.run_sgd` (minibatches of its sequences, sampled as for :class:`gflow.objectives.EmpiricalLoss`).
    """

    inputs: jax.Array
    labels: jax.Array
    convention: str = eqx.field(static=True)
    supervised: tuple[int, ...] = eqx.field(static=True)  # 0-based supervised steps

    def __init__(self, inputs, labels, *, steps="all", convention: str = "L"):
        """Hold a fixed sample of sequences and their labels.

        Args:
            inputs: Shape (N, T) (scalar input) or (N, T, n_in).
            labels: The target at every step: shape (N, T) or (N, T, n_out); values at unsupervised steps are ignored.
            steps: Which steps are supervised: ``"all"``, ``"last"``, or distinct 1-based steps in 1 … T (e.g.
                ``range(3, T + 1)``).
            convention: ``"L"`` or ``"half"`` (L/2).

        Raises:
            GflowInputError: Shapes that do not match, non-finite values, or bad ``steps`` / ``convention``.
        """
        self.convention = one_of("convention", convention, CONVENTIONS)
        x = as_float_array("inputs", inputs, ndim=(2, 3))
        y = as_float_array("labels", labels, ndim=(2, 3))
        if y.shape[:2] != x.shape[:2]:
            raise GflowInputError(f"`labels` must hold a target for every sequence and step, shape {x.shape[:2]} "
                                  f"(+ (n_out,)), got {y.shape}")
        self.inputs, self.labels = jnp.asarray(x), jnp.asarray(y)
        self.supervised = tuple(int(t) for t in np.flatnonzero(_step_weights(steps, x.shape[1])))

    @classmethod
    def from_teacher(cls, key, teacher: Callable, n: int, length: int, *, sampler: Callable | None = None,
                     n_in: int | None = None, steps="all", convention: str = "L") -> "SampleLoss":
        """N sequences of length T from ``sampler(key, n, length)`` (default: N(0, 1) entries, shape (n, T) or
        (n, T, n_in), :func:`gflow.objectives.gaussian_sequences`) labelled by ``teacher`` (a callable on one sequence,
        e.g. a model or a teacher of ``gflow.objectives.nonlinear_teachers``).

        Args:
            key: A JAX PRNG key for the sampler.
            teacher: A callable mapping one input sequence to its outputs.
            n: N, the number of sequences.
            length: T, their length.
            sampler: ``sampler(key, n, length)`` returning the inputs, shape (n, T[, n_in]).
            n_in: Inputs per step for the default sampler (None: scalar input).
            steps: The supervised steps, as for the constructor.
            convention: ``"L"`` or ``"half"``.

        Returns:
            A `SampleLoss` with the teacher's outputs as labels.

        Raises:
            GflowInputError: A bad key, size, teacher or sampler output.
        """
        key = prng_key("key", key)
        n, length = positive_int("n", n), positive_int("length", length)
        if not callable(teacher):
            raise GflowInputError(f"`teacher` must map one input sequence to its outputs, got {type(teacher).__name__}")
        x = gaussian_sequences(key, n, length, n_in) if sampler is None else jnp.asarray(sampler(key, n, length))
        if x.shape[:2] != (n, length):
            raise GflowInputError(f"`sampler` must return an array of shape ({n}, {length}[, n_in]), got {x.shape}")
        y = jax.lax.stop_gradient(jax.vmap(teacher)(x))
        return cls(x, y, steps=steps, convention=convention)

    @property
    def step_weights(self) -> jax.Array:
        """w_t, t = 1 … T: 1 at the supervised steps, 0 elsewhere."""
        return jnp.zeros(self.length).at[np.asarray(self.supervised)].set(1.0)

    # The dataset's bookkeeping is EmpiricalLoss's (n, length, scale; full_loss is the loss itself).
    n = EmpiricalLoss.n
    length = EmpiricalLoss.length
    scale = EmpiricalLoss.scale
    full_loss = EmpiricalLoss.full_loss
    description = EmpiricalLoss.description

    def _errors(self, model) -> jax.Array:
        """√(scale·w_t) (F_t(x⁽ⁿ⁾) − y⁽ⁿ⁾_t), shape (N, T[, n_out])."""
        y = jax.vmap(model)(self.inputs)
        if y.shape != self.labels.shape:
            raise GflowInputError(f"model outputs of shape {y.shape} do not match the labels' {self.labels.shape}")
        w = jnp.sqrt(self.scale * self.step_weights).reshape((1, -1) + (1,) * (y.ndim - 2))
        return w * (y - self.labels)

    def residuals(self, model) -> jax.Array:
        """r with L = ‖r‖²: √(scale/N) (F_t(x⁽ⁿ⁾) − y⁽ⁿ⁾_t) at the supervised steps t only, flattened
        (N · #steps · n_out entries, sequence-major)."""
        idx = np.asarray(self.supervised)
        return (self._errors(model)[:, idx].reshape(-1)) / jnp.sqrt(self.n)

    def residual_targets(self) -> jax.Array:
        """The labels at the supervised steps in r's units, flattened as :meth:`residuals`."""
        idx = np.asarray(self.supervised)
        w = jnp.sqrt(self.scale * self.step_weights).reshape((1, -1) + (1,) * (self.labels.ndim - 2))
        return ((w * self.labels)[:, idx].reshape(-1)) / jnp.sqrt(self.n)

    def residual_jacobian(self, model):
        """∂r/∂θ one sequence at a time, as a model whose trained leaves carry a leading axis of length len(r).

        Row n of r depends on sequence n only, so a per-sequence reverse pass (batched over the sample) builds J
        for the cost of about #steps · n_out batched backward passes, instead of len(r) passes through the whole
        sample (``jax.jacrev`` of :meth:`residuals`). The stiff solver uses it for its Gauss–Newton matrix.
        """
        idx = np.asarray(self.supervised)
        params, static = eqx.partition(model, eqx.is_inexact_array)
        factor = jnp.sqrt(self.scale / self.n)

        def outputs(p, x):
            return factor * eqx.combine(p, static)(x)[idx]  # (#steps[, n_out]); the labels do not depend on θ

        # in chunks of 64 sequences: a reverse pass keeps every recurrent step's cotangents, per sequence
        rows = jax.lax.map(lambda x: jax.jacrev(outputs)(params, x), self.inputs, batch_size=min(self.n, 64))
        m = self.n * idx.size * int(np.prod(self.labels.shape[2:], dtype=int))
        return jax.tree_util.tree_map(lambda leaf: leaf.reshape((m,) + leaf.shape[self.labels.ndim:]), rows)

    def per_sequence(self, model) -> jax.Array:
        """ℓ_n = scale Σ_t w_t ‖F_t(x⁽ⁿ⁾) − y⁽ⁿ⁾_t‖², shape (N,); the loss is their mean."""
        e = self._errors(model)
        return jnp.sum(e.reshape(self.n, -1) ** 2, axis=1)

    def standard_error(self, model) -> jax.Array:
        """The Monte-Carlo standard error of the loss as an estimate of the population loss: std(ℓ_n)/√N (sample
        standard deviation, ddof = 1; needs N ≥ 2). It falls like N^{−1/2}."""
        if self.n < 2:
            raise GflowInputError("the standard error needs at least two sequences")
        return jnp.std(self.per_sequence(model), ddof=1) / jnp.sqrt(self.n)

    # Minibatches for gflow.discrete.run_sgd: the sampler of EmpiricalLoss (epoch shuffles or with replacement), which
    # slices `inputs` and `labels` and keeps everything else.
    minibatch_init = EmpiricalLoss.minibatch_init
    minibatch = EmpiricalLoss.minibatch
