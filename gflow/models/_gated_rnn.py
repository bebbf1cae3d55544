"""What the GRU and the LSTM share: gate matrices stacked as in ``torch.nn.GRU`` / ``torch.nn.LSTM``, a linear
readout y_t = C h_t + c₀, and their random initializations (seed 000 §5.3 / App. C.2.3, seed 001 §7).

The papers do not write the equations out (seed 000 §5.3, seed 001 §7); we use PyTorch's, with scalar input and
a linear readout. Initializations:

- ``"torch"`` (default): every weight and bias U(−1/√d, 1/√d), PyTorch's default for the cell and for
  ``nn.Linear(d, n_out)`` (seed 000 presumably used PyTorch).
- ``"xavier"``: Glorot-uniform input, recurrent and readout matrices, zero biases (seed 001: "Xavier
  initialization"; Keras, whose optimizer defaults the paper names, would make the recurrent matrix orthogonal).

``scale`` multiplies every array: seed 000 App. C.2.3's GRU teacher starts at "initialization scale 10⁻⁶", which
we read as 10⁻⁶ × the default initialization.
"""

from __future__ import annotations

import math
from typing import ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from .._checks import check_sequence, GflowInputError, one_of, positive_float, positive_int, prng_key
from ._abstract_rnn import AbstractRNN
from ._linear_rnn import _check_finite

INITS = ("torch", "xavier")


class GatedRNN(AbstractRNN):
    """Gated recurrent network with ``n_gates`` stacked gates of width d (subclasses: :class:`gflow.models.GRU`,
    :class:`gflow.models.LSTM`).

    ``W_i`` (G·d,) for scalar inputs x of shape (T,) or (G·d, n_in); ``W_h`` (G·d, d); ``b_i``, ``b_h`` (G·d,);
    readout ``C`` (d,) and ``c0`` () for scalar outputs y of shape (T,), or (n_out, d) and (n_out,).
    """

    W_i: jax.Array
    W_h: jax.Array
    b_i: jax.Array
    b_h: jax.Array
    C: jax.Array
    c0: jax.Array
    n_gates: ClassVar[int]

    def __init__(self, W_i, W_h, b_i, b_h, C, c0):
        """Build and check the network.

        Args:
            W_i: The input weights, (G·d,) or (G·d, n_in).
            W_h: The recurrent weights, (G·d, d).
            b_i: The input biases, (G·d,).
            b_h: The recurrent biases, (G·d,).
            C: The readout, (d,) or (n_out, d).
            c0: The readout bias, () or (n_out,).

        Raises:
            GflowInputError: Shapes that do not fit the gate count, or non-finite entries.
        """
        arrays = {name: jnp.asarray(x, dtype=jnp.result_type(float))
                  for name, x in zip(("W_i", "W_h", "b_i", "b_h", "C", "c0"), (W_i, W_h, b_i, b_h, C, c0))}
        for name, x in arrays.items():
            _check_finite(name, x)
        W_h = arrays["W_h"]
        G = self.n_gates
        if W_h.ndim != 2 or W_h.shape[0] != G * W_h.shape[1]:
            raise GflowInputError(f"`W_h` must have shape ({G}·d, d) ({type(self).__name__} has {G} gates), "
                                  f"got {W_h.shape}")
        d = W_h.shape[1]
        W_i = arrays["W_i"]
        if W_i.ndim not in (1, 2) or W_i.shape[0] != G * d:
            raise GflowInputError(f"`W_i` must have shape ({G * d},) (scalar input) or ({G * d}, n_in), "
                                  f"got {W_i.shape}")
        for name in ("b_i", "b_h"):
            if arrays[name].shape != (G * d,):
                raise GflowInputError(f"`{name}` must have shape ({G * d},), got {arrays[name].shape}")
        C, c0 = arrays["C"], arrays["c0"]
        if not (C.shape == (d,) and c0.shape == ()) and not (C.ndim == 2 and C.shape[1] == d
                                                               and c0.shape == (C.shape[0],)):
            raise GflowInputError(f"readout `C` must have shape ({d},) with a scalar `c0`, or (n_out, {d}) with `c0` "
                                  f"of shape (n_out,); got {C.shape} and {c0.shape}")
        for name, x in arrays.items():
            setattr(self, name, x)

    @property
    def hidden_size(self) -> int:
        return self.W_h.shape[1]

    @property
    def scalar_input(self) -> bool:
        return self.W_i.ndim == 1

    @property
    def n_in(self) -> int:
        return 1 if self.scalar_input else self.W_i.shape[1]

    @property
    def scalar_output(self) -> bool:
        return self.C.ndim == 1

    @property
    def n_out(self) -> int:
        return 1 if self.scalar_output else self.C.shape[0]

    def _gates(self, h, x_drive):
        """The G pre-activation blocks (W_i x + b_i) and (W_h h + b_h), each split into G pieces of width d."""
        d = self.hidden_size
        return x_drive.reshape(self.n_gates, d), (self.W_h @ h + self.b_h).reshape(self.n_gates, d)

    def _initial_carry(self):
        raise NotImplementedError

    def _cell(self, carry, gi, gh):
        """One step: (carry, input blocks, recurrent blocks) → (carry, h)."""
        raise NotImplementedError

    def hidden_states(self, x) -> jax.Array:
        """h_1 … h_T, shape (T, d)."""
        x = check_sequence(x, self.n_in, self.scalar_input)
        drive = (x[:, None] * self.W_i[None, :] if self.scalar_input else x @ self.W_i.T) + self.b_i

        def step(carry, a):
            gi, gh = self._gates(self._hidden(carry), a)
            return self._cell(carry, gi, gh)

        _, h = jax.lax.scan(step, self._initial_carry(), drive)
        return h

    @staticmethod
    def _hidden(carry):
        return carry[0] if isinstance(carry, tuple) else carry

    def __call__(self, x) -> jax.Array:
        """Outputs y_1 … y_T = C h_t + c₀ for inputs x of shape (T,) or (T, n_in)."""
        return self.hidden_states(x) @ self.C.T + self.c0


def gated_arrays(key, n_gates: int, d: int, n_in: int | None, n_out: int | None, init: str, scale: float):
    """(W_i, W_h, b_i, b_h, C, c0) of a gated RNN drawn as described in the module docstring.

    Args:
        key: A JAX PRNG key.
        n_gates: G, the number of stacked gates (3 for a GRU, 4 for an LSTM).
        d: The hidden size.
        n_in: Inputs per step (None: scalar input).
        n_out: Outputs per step (None: scalar output).
        init: ``"torch"`` or ``"xavier"``.
        scale: Multiplies every array.

    Returns:
        ``(W_i, W_h, b_i, b_h, C, c0)``.
    """
    key = prng_key("key", key)
    d = positive_int("hidden_size", d)
    one_of("init", init, INITS)
    scale = positive_float("scale", scale)
    shape_i = (n_gates * d,) if n_in is None else (n_gates * d, positive_int("n_in", n_in))
    shape_c, shape_c0 = ((d,), ()) if n_out is None else ((positive_int("n_out", n_out), d), (n_out,))
    fan_in = 1 if n_in is None else n_in
    fan_out = 1 if n_out is None else n_out
    shapes = (shape_i, (n_gates * d, d), (n_gates * d,), (n_gates * d,), shape_c, shape_c0)
    if init == "torch":
        bounds = (1.0 / math.sqrt(d),) * 6
    else:  # Glorot-uniform matrices, zero biases
        bounds = (math.sqrt(6.0 / (fan_in + n_gates * d)), math.sqrt(6.0 / (d + n_gates * d)), 0.0, 0.0,
                  math.sqrt(6.0 / (d + fan_out)), 0.0)
    sizes = [math.prod(shape) for shape in shapes]
    draws = jax.random.uniform(key, (sum(sizes),), minval=-1.0, maxval=1.0, dtype=jnp.float64)  # one draw
    pieces = jnp.split(draws, np.cumsum(sizes)[:-1])
    return tuple(scale * bound * piece.reshape(shape) for piece, bound, shape in zip(pieces, bounds, shapes))
