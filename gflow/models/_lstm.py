"""The LSTM student of seed 001 §7 (Figs. 1, 2, 5), with scalar input and a linear readout.

PyTorch's ``nn.LSTM`` cell (gates i, f, g, o stacked in that order; seed 001 does not write the equations):

    i = σ(·), f = σ(·), g = tanh(·), o = σ(·)   of (W_i x + b_i + W_h h + b_h) per gate,
    c' = f ⊙ c + i ⊙ g,   h' = o ⊙ tanh(c'),    y = C h' + c₀.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ._gated_rnn import gated_arrays, GatedRNN


class LSTM(GatedRNN):
    """An LSTM with a linear readout; arrays as :class:`gflow.models.GatedRNN` with G = 4 gates (i, f, g, o)."""

    n_gates = 4

    def _initial_carry(self):
        zeros = jnp.zeros(self.hidden_size, self.W_h.dtype)
        return zeros, zeros  # (h, c)

    def _cell(self, carry, gi, gh):
        _, c = carry
        pre = gi + gh
        i, f, o = jax.nn.sigmoid(pre[0]), jax.nn.sigmoid(pre[1]), jax.nn.sigmoid(pre[3])
        c = f * c + i * jnp.tanh(pre[2])
        h = o * jnp.tanh(c)
        return (h, c), h


def lstm(key, hidden_size: int, *, n_in: int | None = None, n_out: int | None = None, init: str = "torch",
         scale: float = 1.0) -> LSTM:
    """An LSTM at PyTorch's or Glorot's initialization, times ``scale``.

    Args:
        key: A JAX PRNG key.
        hidden_size: The hidden size.
        n_in: Inputs per step (None: scalar input).
        n_out: Outputs per step (None: scalar output).
        init: ``"torch"`` (every weight and bias U(−1/√d, 1/√d)) or ``"xavier"`` (Glorot-uniform matrices, zero
            biases).
        scale: Multiplies every array.

    Returns:
        An [`LSTM`][gflow.models.LSTM].
    """
    return LSTM(*gated_arrays(key, LSTM.n_gates, hidden_size, n_in, n_out, init, scale))
