"""The Elman RNN of the three lazy-regime papers, without biases:

    h_0 = 0,   g_t = W h_{t−1} + A x_t,   h_t = σ(g_t),   y_t = λ B h_t,    t = 1 … T,

seed 002 Def. 3.2 (eq. 1), seed 004's RNN and seed 003 eqs. (2)–(3) (there W is diagonal, A is called U, B is the
readout c and λ = 1/√m; its input X_{t−1} drives H_t, which is our x_t with the sequence indexed from 1).
Which of W, A, B are trained differs between the papers: the others are stored :class:`gflow.models.Frozen`, so
:func:`gflow.solve_flow` and the discrete runners never move them (the paper settings are
:func:`gflow.models.elman_panigrahi_goyal`, :func:`gflow.models.elman_allen_zhu_li` and
:func:`gflow.models.elman_cayci_eryilmaz`).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp

from .._checks import check_sequence, GflowInputError
from ._abstract_rnn import AbstractRNN
from ._activations import Activation, activation as _activation
from ._frozen import Frozen, trained_layers, unfrozen
from ._linear_rnn import _check_finite

LAYERS = ("W", "A", "B")


def _as_float(name, x):
    x = jnp.asarray(unfrozen(x), dtype=jnp.result_type(float))
    _check_finite(name, x)
    return x


def paired_sum(terms: jax.Array) -> jax.Array:
    """Σ_i terms[..., i], adding neuron i and neuron i + m/2 first when m is even, so that a readout over the paired
    neurons of seed 003's symmetric initialization (Def. 1: equal states, opposite signs) is exactly zero.

    Args:
        terms: An array whose last axis runs over the m neurons.

    Returns:
        The sum over that axis.
    """
    m = terms.shape[-1]
    if m % 2 == 0:  # an explicit add of the two halves: XLA may reorder a reduction, never this addition
        terms = terms[..., : m // 2] + terms[..., m // 2:]
    return terms.sum(axis=-1)


class ElmanRNN(AbstractRNN):
    """An Elman RNN (see the module docstring) with ``activation`` ``"relu"``, ``"tanh"``, ``"logistic"`` or
    ``"gaussian"``.

    - ``W``: (m, m), or (m,) for the diagonal recurrence of seed 003 (``structure == "diagonal"``).
    - ``A``: (m,) for scalar inputs x of shape (T,), or (m, n_in) for x of shape (T, n_in).
    - ``B``: (m,) for scalar outputs y of shape (T,), or (n_out, m) for y of shape (T, n_out).
    - ``output_scale``: λ (seed 002/004's small output factor; 1/√m in seed 003). Never trained.
    - ``trained``: the layers gradient flow moves; the others are stored :class:`gflow.models.Frozen`.
    """

    W: jax.Array | Frozen
    A: jax.Array | Frozen
    B: jax.Array | Frozen
    output_scale: Frozen
    activation: str = eqx.field(static=True)

    def __init__(self, W, A, B, *, activation: str = "relu", output_scale: float = 1.0, trained=LAYERS):
        """Build and check the model.

        Args:
            W: The recurrence, (m, m) or (m,) (diagonal).
            A: The input map, (m,) or (m, n_in).
            B: The readout, (m,) or (n_out, m).
            activation: ``"relu"``, ``"tanh"``, ``"logistic"`` or ``"gaussian"``.
            output_scale: λ.
            trained: The layers that are trained, a subset of ``("W", "A", "B")``.

        Raises:
            GflowInputError: Shapes that do not fit together, or a bad activation, scale or ``trained``.
        """
        _activation(activation)
        trained = trained_layers(trained, LAYERS)
        W, A, B = _as_float("W", W), _as_float("A", A), _as_float("B", B)
        if A.ndim not in (1, 2):
            raise GflowInputError(f"`A` must have shape (m,) (scalar input) or (m, n_in), got {A.shape}")
        m = A.shape[0]
        if W.shape not in ((m, m), (m,)):
            raise GflowInputError(f"`W` must have shape ({m}, {m}) or ({m},) (diagonal) to match A {A.shape}, "
                                  f"got {W.shape}")
        if not (B.shape == (m,) or (B.ndim == 2 and B.shape[1] == m)):
            raise GflowInputError(f"`B` must have shape ({m},) (scalar output) or (n_out, {m}), got {B.shape}")
        scale = _as_float("output_scale", output_scale)
        if scale.shape != ():
            raise GflowInputError(f"`output_scale` must be a number, got shape {scale.shape}")
        self.W, self.A, self.B = (x if name in trained else Frozen(x) for name, x in zip(LAYERS, (W, A, B)))
        self.output_scale = Frozen(scale)
        self.activation = activation

    # ----------------------------------------------------------------------------------------------
    @property
    def hidden_size(self) -> int:
        return self.A.shape[0]

    def description(self) -> dict:
        return {"structure": self.structure, "parameterization": None}

    @property
    def width(self) -> int:
        """m, the number of hidden neurons: the hidden size in the nonlinear papers' notation."""
        return self.A.shape[0]

    @property
    def structure(self) -> str:
        return "diagonal" if len(self.W.shape) == 1 else "full"

    @property
    def scalar_input(self) -> bool:
        return len(self.A.shape) == 1

    @property
    def scalar_output(self) -> bool:
        return len(self.B.shape) == 1

    @property
    def n_in(self) -> int:
        return 1 if self.scalar_input else self.A.shape[1]

    @property
    def n_out(self) -> int:
        return 1 if self.scalar_output else self.B.shape[0]

    @property
    def trained(self) -> tuple[str, ...]:
        return tuple(name for name in LAYERS if not isinstance(getattr(self, name), Frozen))

    @property
    def sigma(self) -> Activation:
        """The activation with its constants σ₀, σ₁, σ₂ (seed 003 eq. 4)."""
        return _activation(self.activation)

    # ----------------------------------------------------------------------------------------------
    def _scan(self, x):
        x = check_sequence(x, self.n_in, self.scalar_input)
        W, A = unfrozen(self.W), unfrozen(self.A)
        drive = x[:, None] * A[None, :] if self.scalar_input else x @ A.T  # (T, m): A x_t
        recur = (lambda h: W * h) if self.structure == "diagonal" else (lambda h: W @ h)
        sigma = self.sigma.fn

        def step(h, a):
            g = recur(h) + a
            h = sigma(g)
            return h, (g, h)

        _, (g, h) = jax.lax.scan(step, jnp.zeros(self.width, drive.dtype), drive)
        return g, h

    def preactivations(self, x) -> jax.Array:
        """g_1 … g_T, shape (T, m); ReLU's activation pattern is D_t = diag(1[g_t ≥ 0])."""
        return self._scan(x)[0]

    def hidden_states(self, x) -> jax.Array:
        """h_1 … h_T, shape (T, m)."""
        return self._scan(x)[1]

    def readout(self, h) -> jax.Array:
        """y = λ B h for hidden states h of shape (T, m): (T,) or (T, n_out)."""
        B = unfrozen(self.B)
        B = B[None, :] if self.scalar_output else B
        y = self.output_scale.value * paired_sum(h[:, None, :] * B[None])
        return y[:, 0] if self.scalar_output else y

    def __call__(self, x) -> jax.Array:
        """Outputs y_1 … y_T for inputs x_1 … x_T: x of shape (T,) or (T, n_in); y of shape (T,) or (T, n_out)."""
        return self.readout(self.hidden_states(x))

    def neuron_parameters(self) -> jax.Array:
        """Θ_i, the trained parameters of each neuron i as rows of an (m, p) matrix: W's row i (W_ii if diagonal),
        A's row i and B's column i, for the layers that are trained (seed 003's notation: Θ_i = [W_ii, U_i])."""
        m = self.width
        parts = {"W": lambda w: w.reshape(m, -1), "A": lambda a: a.reshape(m, -1),
                 "B": lambda b: b.reshape(-1, m).T}
        return jnp.concatenate([parts[name](getattr(self, name)) for name in self.trained], axis=1)
