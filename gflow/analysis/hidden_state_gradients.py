"""Seed 003 (Cayci & Eryilmaz) Proposition 1: the BPTT gradients of the hidden state of the diagonal-W Elman RNN,
written out as the paper's sums instead of by automatic differentiation,

    ∂H_t⁽ⁱ⁾/∂U_i   = Σ_{k=0}^{t−1} W_iiᵏ X_{t−k−1}   I_{i,t−1} I_{i,t−2} ⋯ I_{i,t−k−1},
    ∂H_t⁽ⁱ⁾/∂W_ii  = Σ_{k=0}^{t−1} W_iiᵏ H_{t−k−1}⁽ⁱ⁾ I_{i,t−1} ⋯ I_{i,t−k−1},     I_{i,s} = σ'(W_ii H_s⁽ⁱ⁾ + U_iᵀ X_s),

and ∂H_t⁽ʲ⁾/∂Θ_i = 0 for j ≠ i (the Jacobian is block-diagonal across neurons). In gflow's indexing the paper's
X_s is ``x[s]`` (0-based) and H_s is ``hidden_states(x)[s − 1]``. :func:`sample_loss_gradient` chains them into
the gradient of a :class:`gflow.objectives.SampleLoss`, an independent check of the autodiff gradient (prediction
003-P2), and :func:`hidden_state_gradient_norms` gives ‖∂_{Θ_i} H_t⁽ⁱ⁾‖ (predictions 003-P3, 003-P11(b)).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .._checks import check_sequence, GflowInputError
from ..models._elman_rnn import ElmanRNN
from ..models._frozen import unfrozen


def _check_diagonal(model):
    if not isinstance(model, ElmanRNN) or model.structure != "diagonal":
        raise GflowInputError("Proposition 1 is stated for the diagonal-W Elman RNN of seed 003 "
                              f"(gflow.models.elman_cayci_eryilmaz), got {type(model).__name__}"
                              + (f" with a {model.structure} W" if isinstance(model, ElmanRNN) else ""))


def hidden_state_gradients(model: ElmanRNN, x) -> tuple[jax.Array, jax.Array]:
    """(∂H_t⁽ⁱ⁾/∂W_ii, ∂H_t⁽ⁱ⁾/∂U_i) for t = 1 … T by the sums of Proposition 1 (module docstring): shapes (T, m)
    and (T, m, d) ((T, m) for scalar inputs). ``x`` one input sequence, (T,) or (T, d).

    Args:
        model: An [`ElmanRNN`][gflow.models.ElmanRNN].
        x: One input sequence, (T,) or (T, d).

    Returns:
        ``(dH_dW, dH_dU)``, shapes (T, m) and (T, m, d) ((T, m) for scalar inputs).
    """
    _check_diagonal(model)
    x = check_sequence(x, model.n_in, model.scalar_input)
    xs = x[:, None] if model.scalar_input else x  # (T, d): the paper's X_0 … X_{T−1}
    g, h = model._scan(x)  # g[s] = W H_s + U X_s (produces H_{s+1}), h[s] = H_{s+1}
    slope = jax.vmap(jax.vmap(jax.grad(model.sigma.fn)))(g)  # I_{·,s} = σ'(g[s]), (T, m)
    W = unfrozen(model.W)
    T, m = h.shape
    h_before = jnp.concatenate([jnp.zeros((1, m), h.dtype), h[:-1]])  # H_s for s = 0 … T−1 (H_0 = 0)
    powers = jnp.cumprod(jnp.concatenate([jnp.ones((1, m), W.dtype), jnp.broadcast_to(W, (T - 1, m))]), axis=0)
    # Row r ↔ t = r + 1, column j ↔ k = t − 1 − j (the term with X_j, H_j): all T sums at once.
    r, j = np.arange(T)[:, None], np.arange(T)[None, :]
    inside = jnp.asarray(j <= r)
    factors = jnp.where(inside[..., None], slope[None, :, :], 1.0)  # (T, T, m): I_j for j <= r, else 1
    chain = jnp.cumprod(factors[:, ::-1], axis=1)[:, ::-1]  # chain[r, j] = I_r I_{r−1} ⋯ I_j
    coefficient = jnp.where(inside[..., None], powers[np.clip(r - j, 0, None)] * chain, 0.0)  # W^k I_{t−1} ⋯ I_{t−k−1}
    d_u = jnp.einsum("rjm,jd->rmd", coefficient, xs)  # Σ_k W^k X_{t−k−1} ∏ I
    d_w = jnp.einsum("rjm,jm->rm", coefficient, h_before)  # Σ_k W^k H_{t−k−1} ∏ I
    return d_w, (d_u[..., 0] if model.scalar_input else d_u)


def hidden_state_gradient_norms(model: ElmanRNN, x) -> jax.Array:
    """‖∂_{Θ_i} H_t⁽ⁱ⁾‖₂ = √((∂H/∂W_ii)² + ‖∂H/∂U_i‖²) for t = 1 … T and every neuron, shape (T, m).

    Args:
        model: An [`ElmanRNN`][gflow.models.ElmanRNN].
        x: One input sequence, (T,) or (T, d).

    Returns:
        Shape (T, m).
    """
    d_w, d_u = hidden_state_gradients(model, x)
    d_u = d_u[..., None] if model.scalar_input else d_u
    return jnp.sqrt(d_w**2 + jnp.sum(d_u**2, axis=-1))


def sample_loss_gradient(model: ElmanRNN, loss) -> tuple[jax.Array, jax.Array]:
    """∇_W R and ∇_U R of a :class:`gflow.objectives.SampleLoss` R = scale·(1/N) Σ_n Σ_t w_t (F_t − Y_t)² (seed 003 eq. (1)
    with scale 1 and every step supervised), by the chain rule through Proposition 1:

        ∂R/∂Θ_i = scale·(2/N) Σ_n Σ_t w_t (F_t − Y_t) λ c_i ∂H_t⁽ⁱ⁾/∂Θ_i,     F_t = λ Σ_i c_i H_t⁽ⁱ⁾, λ = 1/√m.

    Scalar outputs only. Returns arrays shaped like ``model.W`` (m,) and ``model.A``.

    Args:
        model: An [`ElmanRNN`][gflow.models.ElmanRNN].
        loss: A :class:`~gflow.objectives.SampleLoss` with scalar outputs.

    Returns:
        ``(grad_W, grad_U)``, shaped like ``model.W`` and ``model.A``.
    """
    _check_diagonal(model)
    if not model.scalar_output:
        raise GflowInputError("sample_loss_gradient needs a scalar-output model (seed 003's readout c ∈ ℝᵐ)")
    residual = jax.vmap(model)(loss.inputs) - loss.labels  # (N, T)
    weight = 2.0 * loss.scale * loss.step_weights[None, :] * residual / loss.n  # (N, T)
    d_w, d_u = jax.vmap(lambda x: hidden_state_gradients(model, x))(loss.inputs)  # (N, T, m), (N, T, m[, d])
    readout = model.output_scale.value * unfrozen(model.B)  # λ c_i
    grad_w = readout * jnp.einsum("nt,ntm->m", weight, d_w)
    grad_u = jnp.einsum("nt,ntm...->m...", weight, d_u)
    grad_u = grad_u * (readout if model.scalar_input else readout[:, None])
    return grad_w, grad_u
