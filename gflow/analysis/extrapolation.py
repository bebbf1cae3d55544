"""Extrapolation measures of seed 000 Def. 2 / App. C.3 and seed 001 Lemma 3.2.

- ε-extrapolation with horizon q (seed 000 Def. 2): |h_j − w_j| ≤ ε for every j < q (:func:`extrapolates`), and
  the longest such horizon (:func:`extrapolation_horizon`);
- the length-q loss L_q = Σ_{j<q} ‖h_j − w_j‖² (derived here: the loss at test length q, as in seed 001 Lemma 6.3) and
  its curve over q (:func:`loss_curve`),
  for a model or along a trajectory (:func:`loss_curves_along`);
- the experimental extrapolation error of seed 000 Sec. 5.1 / App. C.3, the ℓ∞ distance on the tail [k, horizon)
  (:func:`tail_error`), the all-zero baseline (:func:`zero_solution_error`) and the "non-extrapolating" flag;
- Slutzky et al.'s (NeurIPS 2025) extrapolation error, max_{j<20} |h_j − w_j| / max_{j<20} |w_j|
  (:func:`relative_extrapolation_error`);
- the error when the training loss first reaches given levels (:func:`first_below`), for the sharpening of the
  transition as L → 0 (seed 000 Fig. 1a).

The tail window [k, horizon) and the default horizon are ours: the papers do not state them.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._checks import as_float_array, GflowInputError, is_traced, positive_int
from ..models._flatten import flatten, unflatten

DEFAULT_HORIZON = 100


def _window(k, horizon):
    k = positive_int("k", k)
    horizon = positive_int("horizon", horizon)
    if horizon <= k:
        raise GflowInputError(f"`horizon` ({horizon}) must exceed the training length k ({k})")
    return k, horizon


def _abs_diff(model, teacher, horizon):
    h = model.impulse_response(horizon)
    w = teacher.impulse_response(horizon)
    return jnp.abs(h - w).reshape(horizon, -1).max(axis=1), jnp.abs(w).reshape(horizon, -1).max(axis=1)


def tail_error(model, teacher, k: int, horizon: int = DEFAULT_HORIZON):
    """ℓ∞ distance of the impulse responses on the tail j ∈ [k, horizon) (seed 000 Sec. 5.1).

    Args:
        model: A [`LinearRNN`][gflow.models.LinearRNN].
        teacher: A model with ``impulse_response(n)`` (a teacher of :mod:`gflow.objectives.teachers`).
        k: The training length: the tail starts at lag k.
        horizon: H, the tail's end (exclusive).

    Returns:
        A scalar array.

    See also: [`zero_solution_error`][gflow.analysis.zero_solution_error], [`tail_errors`][gflow.analysis.tail_errors].
    """
    k, horizon = _window(k, horizon)
    diff, _ = _abs_diff(model, teacher, horizon)
    return diff[k:].max()


def relative_extrapolation_error(model, teacher, horizon: int = 20):
    """max_{j<horizon} |h_j − w_j| / max_{j<horizon} |w_j|: the extrapolation error of Slutzky et al. (NeurIPS 2025,
    §5; their notebook's lags h_0 … h_19, normalised by max|h*| = h*_0 = d), ℓ∞ over every entry of a MIMO response.

    Every lag counts, the trained ones too. A teacher with w_j = 0 for all j < horizon raises, or gives inf under a
    trace (where its values cannot be checked). Traceable.

    Args:
        model: A [`LinearRNN`][gflow.models.LinearRNN].
        teacher: A model with ``impulse_response(n)`` (a teacher of :mod:`gflow.objectives.teachers`).
        horizon: The number of lags compared.

    Returns:
        A scalar array.

    Raises:
        GflowInputError: The teacher's response is zero on every lag compared.
    """
    horizon = positive_int("horizon", horizon)
    diff, size = _abs_diff(model, teacher, horizon)
    scale = size.max()
    if not is_traced(scale) and not (np.isfinite(float(scale)) and float(scale) > 0):
        raise GflowInputError(f"the teacher's impulse response is zero (or not finite) on lags 0 … {horizon - 1}: "
                              f"the relative extrapolation error divides by max|w_j| = {float(scale)!r}")
    positive = scale > 0
    return jnp.where(positive, diff.max() / jnp.where(positive, scale, 1.0), jnp.inf)


def zero_solution_error(teacher, k: int, horizon: int = DEFAULT_HORIZON):
    """The baseline of seed 000 App. C.3: the tail error of the all-zero impulse response, max |w_j|.

    Args:
        teacher: A model with ``impulse_response(n)`` (a teacher of :mod:`gflow.objectives.teachers`).
        k: The training length: the tail starts at lag k.
        horizon: H, the tail's end (exclusive).

    Returns:
        A scalar array.
    """
    k, horizon = _window(k, horizon)
    w = teacher.impulse_response(horizon)
    return jnp.abs(w).reshape(horizon, -1).max(axis=1)[k:].max()


def loss_at_length(model, teacher, q: int):
    """L_q = Σ_{j<q} ‖h_j − w_j‖² (derived here; seed 001 Lemma 6.3 uses it); nondecreasing in q, L_k is the training
    loss.

    Args:
        model: A [`LinearRNN`][gflow.models.LinearRNN].
        teacher: A model with ``impulse_response(n)`` (a teacher of :mod:`gflow.objectives.teachers`).
        q: The test length.

    Returns:
        A scalar array.
    """
    return loss_curve(model, teacher, positive_int("q", q))[-1]


def _eps(eps) -> float:
    try:
        e = float(eps)
    except (TypeError, ValueError):
        raise GflowInputError(f"`eps` must be a number >= 0, got {eps!r}") from None
    if not np.isfinite(e) or e < 0:
        raise GflowInputError(f"`eps` must be a finite number >= 0, got {eps!r}")
    return e


def extrapolates(model, teacher, eps: float, q: int) -> bool:
    """ε-extrapolation with horizon q (seed 000 Def. 2): |h_j − w_j| ≤ ε for all j < q.

    "ε-extrapolates" (every q) cannot be checked in finitely many steps for ε > 0; :func:`extrapolation_horizon`
    gives the longest horizon that holds up to a bound.

    Args:
        model: A [`LinearRNN`][gflow.models.LinearRNN].
        teacher: A model with ``impulse_response(n)`` (a teacher of :mod:`gflow.objectives.teachers`).
        eps: ε ≥ 0.
        q: The horizon.

    Returns:
        Whether it holds.
    """
    eps = _eps(eps)
    q = positive_int("q", q)
    diff, _ = _abs_diff(model, teacher, q)
    return bool(diff.max() <= eps)


def extrapolation_horizon(model, teacher, eps: float, max_q: int = DEFAULT_HORIZON) -> int:
    """The largest q ≤ ``max_q`` for which the model ε-extrapolates with horizon q (seed 000 Def. 2): the number
    of leading lags with |h_j − w_j| ≤ ε. 0 if already |h_0 − w_0| > ε; ``max_q`` means "at least max_q".

    Args:
        model: A [`LinearRNN`][gflow.models.LinearRNN].
        teacher: A model with ``impulse_response(n)`` (a teacher of :mod:`gflow.objectives.teachers`).
        eps: ε ≥ 0.
        max_q: The longest horizon checked.

    Returns:
        q, an integer in [0, max_q].
    """
    eps = _eps(eps)
    max_q = positive_int("max_q", max_q)
    diff, _ = _abs_diff(model, teacher, max_q)
    bad = np.flatnonzero(~(np.asarray(diff) <= eps))  # NaN counts as a miss
    return int(bad[0]) if bad.size else max_q


def non_extrapolating(model, teacher, k: int, horizon: int = DEFAULT_HORIZON) -> bool:
    """seed 000 App. C.3: a model is non-extrapolating if its tail error is worse than the all-zero solution's.

    Args:
        model: A [`LinearRNN`][gflow.models.LinearRNN].
        teacher: A model with ``impulse_response(n)`` (a teacher of :mod:`gflow.objectives.teachers`).
        k: The training length.
        horizon: H, the tail's end (exclusive).

    Returns:
        Whether the model is non-extrapolating.
    """
    return bool(tail_error(model, teacher, k, horizon) > zero_solution_error(teacher, k, horizon))


def loss_curve(model, teacher, max_q: int = DEFAULT_HORIZON):
    """(L_1, …, L_max_q) with L_q = Σ_{j<q} ‖h_j − w_j‖² (the loss at test length q), from one impulse response.

    Nondecreasing in q; entry k − 1 is the training loss at length k ("uniform" weighting, convention "L").
    Traceable, so it can be evaluated along a trajectory (:func:`loss_curves_along`).

    Args:
        model: A [`LinearRNN`][gflow.models.LinearRNN].
        teacher: A model with ``impulse_response(n)`` (a teacher of :mod:`gflow.objectives.teachers`).
        max_q: The longest test length.

    Returns:
        Shape (max_q,).
    """
    max_q = positive_int("max_q", max_q)
    diff = model.impulse_response(max_q) - teacher.impulse_response(max_q)
    return jnp.cumsum(jnp.sum((diff * diff).reshape(max_q, -1), axis=1))


def loss_curves_along(traj, teacher, max_q: int = DEFAULT_HORIZON) -> np.ndarray:
    """L_q for q = 1..max_q at every saved point of a trajectory: shape (saved times, max_q).

    Args:
        traj: A :class:`~gflow.results.Trajectory` of linear RNNs.
        teacher: A model with ``impulse_response(n)`` (a teacher of :mod:`gflow.objectives.teachers`).
        max_q: The longest test length.

    Returns:
        Shape (saved times, max_q).
    """
    h = impulse_responses_along(traj, max_q)
    diff = h - np.asarray(teacher.impulse_response(max_q), dtype=np.float64)
    return np.cumsum((diff * diff).reshape(h.shape[0], max_q, -1).sum(axis=2), axis=1)


def impulse_responses_along(traj, horizon: int = DEFAULT_HORIZON) -> np.ndarray:
    """h_0 .. h_{horizon−1} at every saved point of a trajectory: shape (saved times, horizon[, n_out, n_in]).

    Compiled once per model shape and horizon (the trajectory and teacher are data, not constants).

    Args:
        traj: A :class:`~gflow.results.Trajectory` of linear RNNs.
        horizon: The number of lags.

    Returns:
        Shape (saved times, horizon[, n_out, n_in]).
    """
    horizon = positive_int("horizon", horizon)
    return np.asarray(_responses(traj.final, jnp.asarray(traj.params), horizon))


@eqx.filter_jit
def _responses(template, params, horizon: int):
    _, static, unravel = flatten(template)
    return jax.vmap(lambda y: unflatten(y, static, unravel).impulse_response(horizon))(params)


def tail_errors(responses, target, k: int) -> np.ndarray:
    """ℓ∞ tail error max_{k ≤ j < H} |h_j − w_j| of each impulse response in ``responses`` (…, H[, out, in])
    against ``target`` (H[, out, in]): numpy, for responses already computed (e.g. along a trajectory).

    Args:
        responses: Impulse responses, shape (…, H[, out, in]).
        target: The teacher's, shape (H[, out, in]).
        k: The training length: the tail starts at lag k.

    Returns:
        Shape (…,).
    """
    responses = np.asarray(responses, dtype=np.float64)
    target = np.asarray(target, dtype=np.float64)
    horizon = target.shape[0]
    k, horizon = _window(k, horizon)
    lead = responses.ndim - target.ndim
    if lead < 0 or responses.shape[lead:] != target.shape:
        raise GflowInputError(f"`responses` of shape {responses.shape} must end with the target's shape {target.shape}")
    diff = np.abs(responses - target).reshape(responses.shape[:lead] + (horizon, -1)).max(axis=-1)
    return diff[..., k:].max(axis=-1)


def first_below(loss, levels) -> np.ndarray:
    """For each level, the index of the first saved point with loss ≤ level; −1 where the loss never gets there.

    Reading a run at these indices gives the model "trained to loss level ℓ" along one gradient-flow path (the
    state when early stopping at ℓ would have stopped, up to the saving grid).

    Args:
        loss: The loss at every saved time.
        levels: The loss levels ℓ.

    Returns:
        One index per level (an integer array).
    """
    loss = np.asarray(loss, dtype=np.float64).reshape(-1)
    levels = as_float_array("levels", levels, ndim=(0, 1))
    below = loss[None, :] <= np.atleast_1d(levels)[:, None]  # NaN losses are never below
    idx = np.where(below.any(axis=1), below.argmax(axis=1), -1)
    return idx if levels.ndim else idx[0]

