"""How lazy a training run was: how far the weights moved from initialization and how well the linearization at
initialization (the NTK / "pseudo-network" model) still describes the network.

Pure functions of (model0, model[, inputs]); ``model`` is ``model0`` after training (same structure, same frozen
layers), ``inputs`` a batch (N, T[, n_in]) of sequences. Only the trained arrays count as parameters θ.

- :func:`neuron_movement`: √m · max_i ‖Θ_i − Θ_i(0)‖ (seed 003 P9; bounded by ‖ρ‖ under projected GD).
- :func:`movement`, :func:`relative_movement`: ‖θ − θ0‖ and ‖θ − θ0‖/‖θ0‖ (seed 004 P1: √m ‖W_t‖_F ≈ const).
- :func:`linearization_error`: |F(θ) − F^Lin(θ)|, F^Lin(θ) = F(θ0) + ⟨∇F(θ0), θ − θ0⟩ (a JVP at init): seed 003
  Prop. 4, seed 002 §3.1 (pseudo-network), seed 004 Lemma 6.1 (coupling). O(‖θ − θ0‖²).
- :func:`activation_flips`: fraction of ReLU patterns D_t = diag(1[g_t ≥ 0]) that changed (seed 004 Lemma F, P3).
- :func:`hidden_state_drift`: ‖h_t(θ) − h_t(θ0)‖ (seed 004 forward stability, P2).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .._checks import GflowInputError
from ..models._flatten import flatten, unflatten


def _thetas(model0, model):
    theta0, static, unravel = flatten(model0)
    theta = flatten(model)[0]
    if theta.shape != theta0.shape:
        raise GflowInputError(f"`model` ({theta.shape[0]} trained parameters) is not `model0` "
                              f"({theta0.shape[0]}) after training")
    return theta0, theta, static, unravel


def movement(model0, model):
    """‖θ − θ0‖₂ over the trained parameters (the Frobenius norm of the displacement).

    Args:
        model0: The model at initialization (an [`ElmanRNN`][gflow.models.ElmanRNN] or any model).
        model: The trained model, of the same structure.

    Returns:
        A scalar array.
    """
    theta0, theta, _, _ = _thetas(model0, model)
    return jnp.linalg.norm(theta - theta0)


def relative_movement(model0, model):
    """‖θ − θ0‖ / ‖θ0‖ over the trained parameters (prediction 003-P9: falls like 1/√m in the lazy regime).

    Args:
        model0: The model at initialization (an [`ElmanRNN`][gflow.models.ElmanRNN] or any model).
        model: The trained model, of the same structure.

    Returns:
        A scalar array.
    """
    theta0, theta, _, _ = _thetas(model0, model)
    return jnp.linalg.norm(theta - theta0) / jnp.linalg.norm(theta0)


def neuron_movement(model0, model):
    """√m · max_i ‖Θ_i − Θ_i(0)‖ with Θ_i the trained parameters of neuron i (``model.neuron_parameters()``:
    seed 003's [W_ii, U_i]; row i of W and A for a full Elman RNN).

    Args:
        model0: The model at initialization (an [`ElmanRNN`][gflow.models.ElmanRNN] or any model).
        model: The trained model, of the same structure.

    Returns:
        A scalar array.
    """
    if not callable(getattr(model, "neuron_parameters", None)):
        raise GflowInputError(f"`model` must provide neuron_parameters() (gflow.models.ElmanRNN), got {type(model).__name__}")
    delta = model.neuron_parameters() - model0.neuron_parameters()
    return jnp.sqrt(model.width) * jnp.max(jnp.linalg.norm(delta, axis=1))


def linearized_outputs(model0, model, inputs):
    """F^Lin(θ) = F(θ0) + ⟨∇_θ F(θ0), θ − θ0⟩ on every sequence and step, shape (N, T[, n_out]) (a JVP at θ0).

    Args:
        model0: The model at initialization (an [`ElmanRNN`][gflow.models.ElmanRNN] or any model).
        model: The trained model, of the same structure.
        inputs: Input sequences, shape (N, T[, n_in]).

    Returns:
        Shape (N, T[, n_out]).
    """
    theta0, theta, static, unravel = _thetas(model0, model)
    outputs = lambda th: jax.vmap(unflatten(th, static, unravel))(inputs)  # noqa: E731
    f0, df = jax.jvp(outputs, (theta0,), (theta - theta0,))
    return f0 + df


def linearization_error(model0, model, inputs):
    """|F(θ) − F^Lin(θ)| on every sequence and step, shape (N, T[, n_out]).

    Args:
        model0: The model at initialization (an [`ElmanRNN`][gflow.models.ElmanRNN] or any model).
        model: The trained model, of the same structure.
        inputs: Input sequences, shape (N, T[, n_in]).

    Returns:
        Shape (N, T[, n_out]).

    See also: [`linearized_outputs`][gflow.analysis.linearized_outputs].
    """
    return jnp.abs(jax.vmap(model)(inputs) - linearized_outputs(model0, model, inputs))


def _states(model, inputs, which: str):
    method = getattr(model, which, None)
    if not callable(method):
        raise GflowInputError(f"`model` must provide {which}(x) (gflow.models.ElmanRNN), got {type(model).__name__}")
    return jax.vmap(method)(inputs)


def activation_flips(model0, model, inputs):
    """The fraction of neurons whose ReLU pattern 1[g_t ≥ 0] differs from initialization, shape (N, T).

    Args:
        model0: The model at initialization (a ReLU [`ElmanRNN`][gflow.models.ElmanRNN]).
        model: The trained model, of the same structure.
        inputs: Input sequences, shape (N, T[, n_in]).

    Returns:
        Shape (N, T).
    """
    changed = (_states(model, inputs, "preactivations") >= 0) != (_states(model0, inputs, "preactivations") >= 0)
    return jnp.mean(changed.astype(jnp.float64), axis=-1)


def hidden_state_drift(model0, model, inputs):
    """‖h_t(θ) − h_t(θ0)‖₂ over the hidden neurons, shape (N, T).

    Args:
        model0: The model at initialization (an [`ElmanRNN`][gflow.models.ElmanRNN]).
        model: The trained model, of the same structure.
        inputs: Input sequences, shape (N, T[, n_in]).

    Returns:
        Shape (N, T).
    """
    drift = _states(model, inputs, "hidden_states") - _states(model0, inputs, "hidden_states")
    return jnp.linalg.norm(drift, axis=-1)
