"""The residual Jacobian J = ∂r/∂θ as a linear operator: J·b, Jᵀ·z and the Gram matrix J Jᵀ.

The stiff solver needs only these three (Woodbury, :class:`gflow.flow.GaussNewtonRosenbrock`). For a SISO linear RNN
they have a structure that avoids the m × n matrix altogether (seed 001 eqs. 5–7, Matrix Cookbook eq. 91): with u_s =
(Aᵀ)^s Cᵀ and v_l = A^l B stacked as the rows of U, V (k × d),

    ∂h_j/∂A = Σ_{s+l=j−1} u_s v_lᵀ = Uᵀ E_j V,    ∂h_j/∂B = u_j,    ∂h_j/∂C = v_j,

with E_j the k × k Hankel selector of the anti-diagonal s + l = j − 1. Hence

    J·b        = antidiagonal sums of U dA Vᵀ, + U dB + V dC                  O(d²k)
    Jᵀ·z       = (Uᵀ H(z) V, Uᵀ z, Vᵀ z),  H(z)_{sl} = z_{s+l+1} (Hankel)        O(d²k)
    (J Jᵀ)_jj' = tr(E_j UUᵀ E_j' VVᵀ) + (UUᵀ)_jj' + (VVᵀ)_jj'           O(k²d + k² log k)

instead of O(k²d²) to materialize J and O(k²d²) for J Jᵀ. The first Gram term is a 2-D convolution of UUᵀ
with VVᵀ, done by FFT. For A restricted to symmetric matrices the A-block is projected,
sym(X) = (X + Xᵀ)/2, and ⟨X_j, sym X_j'⟩ adds tr(E_j M E_j' M)/2 with M = U Vᵀ (a convolution of M with Mᵀ).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from ..models._linear_rnn import LinearRNN


class DenseResidualJacobian(eqx.Module):
    """J as an m × n matrix (any model; built in closed form or by reverse-mode autodiff)."""

    matrix: jax.Array

    def mv(self, b):
        """J·b.

        Args:
            b: A vector of length n.

        Returns:
            A vector of length m.
        """
        return self.matrix @ b

    def rmv(self, z):
        """Jᵀ·z.

        Args:
            z: A vector of length m.

        Returns:
            A vector of length n.
        """
        return self.matrix.T @ z

    def gram(self):
        """J Jᵀ.

        Returns:
            An (m, m) array.
        """
        return self.matrix @ self.matrix.T


def _antidiagonal_selector(k: int) -> np.ndarray:
    """E with E[(s, l), j] = 1 iff s + l + 1 = j, as a (k², k) matrix."""
    s, l = np.meshgrid(np.arange(k), np.arange(k), indexing="ij")
    return (np.add(s, l)[..., None] + 1 == np.arange(k)).reshape(k * k, k).astype(np.float64)


def _anti_diagonal_gram(pairs, k: int):
    """G[j, j'] = Σ_(P, Q) tr(E_j P E_j' Qᵀ) for k × k matrices: with x = j − 1, y = j' − 1 this is the 2-D
    linear convolution Σ P[a, b] Q[x − a, y − b], computed by FFT in O(k² log k). Its rounding error
    (≈ 1e-16 of the largest entry) only perturbs the W-matrix, which a W-method tolerates."""
    n = 2 * k
    spectrum = sum(jnp.fft.rfft2(P, (n, n)) * jnp.fft.rfft2(Q, (n, n)) for P, Q in pairs)
    conv = jnp.fft.irfft2(spectrum, (n, n))[: k - 1, : k - 1]
    return jnp.pad(conv, ((1, 0), (1, 0)))


class ImpulseResponseJacobian(eqx.Module):
    """J of r_j = √weight_j (C A^j B − w_j) for a SISO linear RNN with A general or symmetric ("restricted"
    parameterization), applied through the Krylov rows U, V without forming J (module docstring)."""

    U: jax.Array  # (k, d): u_s = (Aᵀ)^s Cᵀ
    V: jax.Array  # (k, d): v_l = A^l B
    sqrt_weights: jax.Array  # (k,)
    model: LinearRNN  # the point of linearization; rmv returns cotangents in its trained layers of (A, B, C)
    symmetric: bool = eqx.field(static=True)
    trained: tuple[str, ...] = eqx.field(static=True, default=("A", "B", "C"))  # the others are Frozen: no columns

    def _selector(self):
        return jnp.asarray(_antidiagonal_selector(self.U.shape[0]))

    def mv(self, tangent):
        """J·b for a tangent model b (same structure as the model; its frozen layers are ignored).

        Args:
            tangent: A model of the linearization point's structure.

        Returns:
            A vector of length k.
        """
        dh = jnp.zeros(self.U.shape[0], self.U.dtype)
        if "A" in self.trained:
            dA = tangent.A
            if self.symmetric:
                dA = 0.5 * (dA + dA.T)
            P = self.U @ dA @ self.V.T  # u_sᵀ dA v_l
            dh = dh + P.reshape(-1) @ self._selector()
        if "B" in self.trained:
            dh = dh + self.U @ tangent.B.reshape(-1)
        if "C" in self.trained:
            dh = dh + self.V @ tangent.C.reshape(-1)
        return self.sqrt_weights * dh

    def rmv(self, z):
        """Jᵀ·z as a model of cotangents (its trained layers replaced).

        Args:
            z: A vector of length k.

        Returns:
            The model with its trained layers replaced by the cotangents.
        """
        zw = self.sqrt_weights * z
        m = self.model

        def cotangent_A():
            k = self.U.shape[0]
            H = (self._selector() @ zw).reshape(k, k)  # H[s, l] = zw[s + l + 1]
            gA = self.U.T @ H @ self.V
            return 0.5 * (gA + gA.T) if self.symmetric else gA

        blocks = {"A": cotangent_A, "B": lambda: (self.U.T @ zw).reshape(m.B.shape),
                  "C": lambda: (self.V.T @ zw).reshape(m.C.shape)}
        return eqx.tree_at(lambda mm: tuple(getattr(mm, name) for name in self.trained), m,
                           tuple(blocks[name]() for name in self.trained))

    def gram(self):
        """J Jᵀ (k × k): a sum over the trained layers.

        Returns:
            A (k, k) array.
        """
        UU, VV = self.U @ self.U.T, self.V @ self.V.T
        G = jnp.zeros_like(UU)
        if "A" in self.trained:
            if self.symmetric:  # ⟨X_j, sym X_j'⟩ = (⟨X_j, X_j'⟩ + ⟨X_j, X_j'ᵀ⟩)/2
                M = self.U @ self.V.T
                G = G + _anti_diagonal_gram([(0.5 * UU, VV), (0.5 * M, M.T)], self.U.shape[0])
            else:
                G = G + _anti_diagonal_gram([(UU, VV)], self.U.shape[0])
        if "B" in self.trained:
            G = G + UU
        if "C" in self.trained:
            G = G + VV
        return jnp.outer(self.sqrt_weights, self.sqrt_weights) * G
