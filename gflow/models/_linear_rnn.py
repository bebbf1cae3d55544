"""The linear RNN (linear dynamical system) of seed 000 eq. 3.1 and seed 001 eq. (1)/(19).

    s_{t+1} = A s_t + B x_t,    y_{t+1} = C s_{t+1},    s_0 = 0,

so after reading x_0 .. x_{k-1} the output is  y_k = sum_j C A^{k-1-j} B x_j = sum_j h_j x_{k-1-j}
with the impulse response h_j = C A^j B (seed 000 Def. 1). Any subset of A, B, C can be trained (``trained=``); the
others are stored :class:`gflow.models.Frozen`, as in the diagonal SSM of Slutzky et al. (NeurIPS 2025, §3: A
trained, B = C = 1 fixed).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._checks import GflowInputError, is_traced, one_of
from ._abstract_rnn import AbstractRNN
from ._frozen import Frozen, trained_layers, unfrozen
from ._impulse_response import dense_impulse_response, diagonal_impulse_response

STRUCTURES = ("general", "symmetric", "diagonal")
LAYERS = ("A", "B", "C")
SYMMETRIC_PARAMETERIZATIONS = ("restricted", "triangular")


def _parameter(name: str, x) -> jax.Array:
    """``x`` as a float64 array; a PRNG key (the arguments of an initializer) or a non-numeric value is refused by
    name."""
    if isinstance(x, (jax.Array, np.ndarray)) and jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
        raise GflowInputError(f"`{name}` is a JAX PRNG key: LinearRNN(A, B, C) takes the arrays themselves; draw a "
                              "random model with gflow.initializers (e.g. initializers.gaussian(key, d, scale=0.1))")
    try:
        return jnp.asarray(x, dtype=jnp.result_type(float))
    except (TypeError, ValueError):
        raise GflowInputError(f"`{name}` must be a real array, got {type(x).__name__}") from None


def _check_finite(name, x):
    if not is_traced(x) and not bool(np.all(np.isfinite(np.asarray(x)))):
        raise GflowInputError(f"`{name}` contains non-finite values (NaN or inf)")


def _triangular_indices(d: int):
    return np.triu_indices(d)


def _vector_to_symmetric(v, d: int):
    rows, cols = _triangular_indices(d)
    upper = jnp.zeros((d, d), v.dtype).at[rows, cols].set(v)
    return upper + upper.T - jnp.diag(jnp.diag(upper))


class LinearRNN(AbstractRNN):
    """A linear RNN with transition A, input map B and readout C.

    ``structure`` chooses what A is, and with it which gradient flow is integrated (seed 000 eq. 3.1 and
    Lemma E.3, seed 001 §6 (the symmetric class): these are different ODEs):

    - ``"general"``: A is a dense (d, d) matrix; the flow is the plain gradient on (A, B, C).
    - ``"symmetric"`` with ``parameterization="restricted"`` (default): A is stored as a (d, d) matrix and
      the model uses sym(A) = (A + Aᵀ)/2, so the flow on A is the full-space field projected onto the
      symmetric matrices, (G + Gᵀ)/2. From a balanced start (B = Cᵀ) this is exactly what GD on (A, B, C)
      started on the manifold does.
    - ``"symmetric"`` with ``parameterization="triangular"``: A is stored as the d(d+1)/2 upper-triangular
      entries (seed 000 §3's theory setting); off-diagonal entries then receive G_pq + G_qp.
    - ``"diagonal"``: A is a length-d vector of eigenvalues (seed 000 Lemma E.3, Sec. 5.1 student).

    SISO: B and C of shape (d,). MIMO: B of shape (d, n_in), C of shape (n_out, d).

    ``trained`` names the layers gradient flow and the discrete runners move (default: all three); the others are
    stored :class:`gflow.models.Frozen`. An argument passed as ``Frozen(x)`` is frozen too (then ``trained``, if
    given, must not name it). Freezing keeps the closed-form and matrix-free residual Jacobians.
    """

    A: jax.Array | Frozen
    B: jax.Array | Frozen
    C: jax.Array | Frozen
    structure: str = eqx.field(static=True, default="general")
    parameterization: str = eqx.field(static=True, default="full")

    def __init__(self, A, B, C, structure: str = "general", parameterization: str | None = None, *,
                 trained=None):
        """Build and check the model.

        Args:
            A: The transition: a (d, d) matrix (``"general"``, ``"symmetric"``), a length-d vector of eigenvalues
                (``"diagonal"``), or the d(d+1)/2 upper-triangular entries (``"symmetric"``, ``"triangular"``).
            B: The input map: shape (d,) (SISO) or (d, n_in) (MIMO).
            C: The readout: shape (d,) (SISO) or (n_out, d) (MIMO).
            structure: ``"general"``, ``"symmetric"`` or ``"diagonal"``.
            parameterization: For ``"symmetric"``: ``"restricted"`` (default) or ``"triangular"``; the others have one
                each (``"full"``, ``"diagonal"``), the default.
            trained: The layers gradient flow and the discrete runners move, a subset of ``("A", "B", "C")``; default:
                every layer not passed as [`Frozen`][gflow.models.Frozen].

        Raises:
            GflowInputError: Shapes that do not fit together or the structure, non-finite entries, a non-symmetric A
                for ``"symmetric"``, or ``trained`` naming a layer passed frozen.
        """
        one_of("structure", structure, STRUCTURES)
        passed_frozen = tuple(name for name, x in zip(LAYERS, (A, B, C)) if isinstance(x, Frozen))
        if trained is None:
            trained = tuple(name for name in LAYERS if name not in passed_frozen)
        trained = trained_layers(trained, LAYERS)
        if set(trained) & set(passed_frozen):
            raise GflowInputError(f"`trained` names {sorted(set(trained) & set(passed_frozen))}, passed as Frozen")
        A, B, C = _parameter("A", unfrozen(A)), _parameter("B", unfrozen(B)), _parameter("C", unfrozen(C))
        for name, x in (("A", A), ("B", B), ("C", C)):
            _check_finite(name, x)
        if B.ndim not in (1, 2):
            raise GflowInputError(f"`B` must have shape (d,) (SISO) or (d, n_in) (MIMO), got {B.shape}")
        d = B.shape[0]
        if B.ndim == 1 and C.shape != (d,):
            raise GflowInputError(f"SISO model: `C` must have shape ({d},) to match B {B.shape}, got {C.shape}")
        if B.ndim == 2 and (C.ndim != 2 or C.shape[1] != d):
            raise GflowInputError(f"MIMO model: `C` must have shape (n_out, {d}) to match B {B.shape}, got {C.shape}")
        if structure == "diagonal":
            if A.shape != (d,):
                raise GflowInputError(f"diagonal structure: `A` must be the length-{d} vector of eigenvalues, got {A.shape}")
            parameterization = one_of("parameterization", parameterization or "diagonal", ("diagonal",))
        elif structure == "general":
            if A.shape != (d, d):
                raise GflowInputError(f"general structure: `A` must have shape ({d}, {d}) (d = {d} from B {B.shape}), "
                                      f"got {A.shape}")
            parameterization = one_of("parameterization", parameterization or "full", ("full",))
        else:
            parameterization = one_of(
                "parameterization", parameterization or "restricted", SYMMETRIC_PARAMETERIZATIONS
            )
            if A.shape == (d * (d + 1) // 2,) and parameterization == "triangular":
                pass  # already the stored vector
            elif A.shape != (d, d):
                raise GflowInputError(f"symmetric structure: `A` must have shape ({d}, {d}), got {A.shape}")
            else:
                if not is_traced(A):
                    An = np.asarray(A)
                    asym = np.max(np.abs(An - An.T), initial=0.0)
                    if asym > 1e-10 * max(1.0, float(np.max(np.abs(An), initial=0.0))):
                        raise GflowInputError(
                            f"symmetric structure: `A` must be symmetric, max |A - Aᵀ| = {asym:.3g}"
                        )
                A = 0.5 * (A + A.T)
                if parameterization == "triangular":
                    A = A[_triangular_indices(d)]
        self.A, self.B, self.C = (x if name in trained else Frozen(x) for name, x in zip(LAYERS, (A, B, C)))
        self.structure = structure
        self.parameterization = parameterization

    # ----------------------------------------------------------------------------------------------
    @property
    def hidden_size(self) -> int:
        return self.B.shape[0]

    def description(self) -> dict:
        out = {"structure": self.structure, "parameterization": self.parameterization}
        if self.trained != LAYERS:  # only then: descriptions (and sweep identities) of fully trained models unchanged
            out["trained"] = list(self.trained)
        return out

    @property
    def trained(self) -> tuple[str, ...]:
        """The layers that are trained (not :class:`gflow.models.Frozen`)."""
        return tuple(name for name in LAYERS if not isinstance(getattr(self, name), Frozen))

    def layers(self) -> tuple[jax.Array, jax.Array, jax.Array]:
        """The three layers as arrays, frozen or not.

        Returns:
            ``(A, B, C)``, A as stored (see [`transition`][gflow.models.LinearRNN.transition] for the matrix).
        """
        return unfrozen(self.A), unfrozen(self.B), unfrozen(self.C)

    @property
    def d(self) -> int:
        """The hidden size in the linear papers' notation (:attr:`hidden_size`)."""
        return self.B.shape[0]

    @property
    def scalar_input(self) -> bool:
        return self.B.ndim == 1

    @property
    def scalar_output(self) -> bool:
        return self.B.ndim == 1  # SISO or MIMO: B and C are vectors together

    @property
    def siso(self) -> bool:
        """Single input, single output: B and C are vectors."""
        return self.B.ndim == 1

    @property
    def n_in(self) -> int:
        return 1 if self.siso else self.B.shape[1]

    @property
    def n_out(self) -> int:
        return 1 if self.siso else self.C.shape[0]

    def output_units(self):
        """For diagonal A, the hidden unit of every trained parameter: the output (the impulse response h_j =
        Σ_p C_p a_p^j B_p, and every output y_t) is a sum over the units p of a function of (a_p, B_p, C_p) alone
        (seed 000 Lemma E.3), so the curvature of anything affine in it is block-diagonal over the units.

        Returns:
            This model with each trained layer replaced by a numpy array of its shape holding each entry's unit p
            (as float; frozen layers left as they are), or None for a non-diagonal A.
        """
        if self.structure != "diagonal":
            return None
        d = self.d
        units = {"A": np.arange(d, dtype=float),
                 "B": np.broadcast_to(np.arange(d, dtype=float).reshape((d,) + (1,) * (self.B.ndim - 1)),
                                      self.B.shape).copy(),
                 "C": np.broadcast_to(np.arange(d, dtype=float), self.C.shape).copy()}
        trained = self.trained
        return eqx.tree_at(lambda mm: tuple(getattr(mm, name) for name in trained), self,
                           tuple(units[name] for name in trained))

    def transition(self) -> jax.Array:
        """The dense (d, d) transition matrix the model uses (sym(A) for ``"restricted"``, diag(a) for ``"diagonal"``).

        Returns:
            A (d, d) array.
        """
        A = unfrozen(self.A)
        if self.structure == "diagonal":
            return jnp.diag(A)
        if self.parameterization == "triangular":
            return _vector_to_symmetric(A, self.d)
        if self.structure == "symmetric":
            return 0.5 * (A + A.T)
        return A

    def _step(self):
        """The map s -> A s, by mat-vec (or elementwise for diagonal A); never a matrix power."""
        if self.structure == "diagonal":
            a = unfrozen(self.A)
            return lambda s: (a * s.T).T
        A = self.transition()
        return lambda s: A @ s

    def impulse_response(self, n: int) -> jax.Array:
        """The impulse response h_j = C A^j B for j = 0 … n − 1, by repeated mat-vec (never matrix powers).

        Args:
            n: The number of lags, ≥ 1.

        Returns:
            Shape (n,) for SISO, (n, n_out, n_in) for MIMO.
        """
        n = int(n)
        if n < 1:
            raise GflowInputError(f"`n` must be >= 1, got {n}")
        a, B, C = self.layers()
        if self.structure == "diagonal":  # elementwise powers: autodiff through the scan is cheap
            return diagonal_impulse_response(a, B, C, n)
        h = dense_impulse_response(self.transition(), B.reshape(self.d, -1), C.reshape(-1, self.d), n)
        return h[:, 0, 0] if self.siso else h

    def __call__(self, x: jax.Array) -> jax.Array:
        """The outputs y_1 … y_T for inputs x_0 … x_{T−1} (s_0 = 0, s_{t+1} = A s_t + B x_t, y = C s; seed 000 eq. 3.1).

        Args:
            x: The input sequence: shape (T,) (SISO) or (T, n_in) (MIMO).

        Returns:
            Shape (T,) (SISO) or (T, n_out) (MIMO).

        Raises:
            GflowInputError: ``x`` has the wrong shape.
        """
        x = jnp.asarray(x)
        expected = 1 if self.siso else 2
        if x.ndim != expected or (not self.siso and x.shape[1] != self.n_in):
            want = "(T,)" if self.siso else f"(T, {self.n_in})"
            raise GflowInputError(f"input sequence `x` must have shape {want}, got {x.shape}")
        step = self._step()
        _, B, C = self.layers()

        def body(s, xt):
            s = step(s) + B * xt if self.siso else step(s) + B @ xt
            return s, C @ s

        s0 = jnp.zeros((self.d,), B.dtype)
        _, y = jax.lax.scan(body, s0, x)
        return y
