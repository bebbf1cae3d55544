"""What every recurrent network of gflow exposes, declared once (equinox style: an abstract module).

A model acts on ONE input sequence x, of shape (T,) when ``scalar_input`` or (T, n_in) otherwise, and returns its
outputs y_1 … y_T, of shape (T,) when ``scalar_output`` or (T, n_out); a sample of sequences is batched by
``jax.vmap``. Losses, analysis and the studies rely on nothing else about a model, except where a function says
it needs a particular class (the closed-form population loss needs a :class:`gflow.models.LinearRNN`).
"""

from __future__ import annotations

import abc

import equinox as eqx
import jax


class AbstractRNN(eqx.Module):
    """A recurrent network h_t = f(h_{t−1}, x_t), y_t = g(h_t): :class:`LinearRNN`, :class:`ElmanRNN`,
    :class:`GatedRNN` (:class:`GRU`, :class:`LSTM`)."""

    @property
    @abc.abstractmethod
    def hidden_size(self) -> int:
        """Dimension of the hidden state (d of the linear papers, m, the width, of the nonlinear ones)."""

    @property
    @abc.abstractmethod
    def scalar_input(self) -> bool:
        """True when an input sequence is one number per step, x of shape (T,)."""

    @property
    @abc.abstractmethod
    def scalar_output(self) -> bool:
        """True when the output is one number per step, y of shape (T,)."""

    @property
    @abc.abstractmethod
    def n_in(self) -> int:
        """Input dimension per step (1 for a scalar input)."""

    @property
    @abc.abstractmethod
    def n_out(self) -> int:
        """Output dimension per step (1 for a scalar output)."""

    @abc.abstractmethod
    def __call__(self, x) -> jax.Array:
        """The outputs y_1 … y_T on one input sequence x_0 … x_{T−1}."""

    def description(self) -> dict:
        """What a trajectory records about the model besides its class: which structure and parameterization of
        the recurrence (None where the model has no choice)."""
        return {"structure": None, "parameterization": None}
