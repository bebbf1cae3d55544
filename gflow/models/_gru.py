"""The GRU student and teacher of seed 000 §5.3 / App. C.2.3 and seed 001 §7, with scalar input and a linear readout.

PyTorch's ``nn.GRU`` cell (gates r, z, n stacked in that order; seed 000 §5.3 does not write the equations):

    r = σ(W_ir x + b_ir + W_hr h + b_hr),   z = σ(W_iz x + b_iz + W_hz h + b_hz),
    n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn)),   h' = (1 − z) ⊙ n + z ⊙ h,    y = C h' + c₀.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ._gated_rnn import gated_arrays, GatedRNN


class GRU(GatedRNN):
    """A GRU with a linear readout; arrays as :class:`gflow.models.GatedRNN` with G = 3 gates (r, z, n)."""

    n_gates = 3

    def _initial_carry(self):
        return jnp.zeros(self.hidden_size, self.W_h.dtype)

    def _cell(self, h, gi, gh):
        r = jax.nn.sigmoid(gi[0] + gh[0])
        z = jax.nn.sigmoid(gi[1] + gh[1])
        n = jnp.tanh(gi[2] + r * gh[2])
        h = (1.0 - z) * n + z * h
        return h, h


def gru(key, hidden_size: int, *, n_in: int | None = None, n_out: int | None = None, init: str = "torch",
        scale: float = 1.0) -> GRU:
    """A GRU at PyTorch's or Glorot's initialization, times ``scale``.

    Args:
        key: A JAX PRNG key.
        hidden_size: The hidden size.
        n_in: Inputs per step (None: scalar input).
        n_out: Outputs per step (None: scalar output).
        init: ``"torch"`` (every weight and bias U(−1/√d, 1/√d)) or ``"xavier"`` (Glorot-uniform matrices, zero
            biases).
        scale: Multiplies every array (seed 000 App. C.2.3's teacher: ``scale=1e-6``).

    Returns:
        A [`GRU`][gflow.models.GRU].
    """
    return GRU(*gated_arrays(key, GRU.n_gates, hidden_size, n_in, n_out, init, scale))
