"""Nonlinear models: the Elman RNNs of seeds 002/003/004 (fixed layers, exact zero output at the symmetric init,
Prop. 1 gradients), GRU and LSTM; shapes, vmap batching, bad input."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gflow
from gflow import flatten, GflowInputError

key = jax.random.key
rng = np.random.default_rng(0)
M, D, T, N, H = 6, 3, 5, 4, 3  # one set of sizes for every test: each new shape costs compilations
X_SCALAR = rng.uniform(-1, 1, (N, T))  # numpy inputs (every new jax.random shape compiles a generator)
X_VECTOR = rng.uniform(-1, 1, (N, T, D)) / np.sqrt(D)


@eqx.filter_jit
def outputs(model, x):
    """The model on a batch of sequences, compiled once per model and shape (eager scans compile piece by piece)."""
    return jax.vmap(model)(x)


# ------------------------------------------------------------------------------------------------ Elman RNN


@pytest.mark.parametrize("d,n_out", [(None, None), (D, 2)])
def test_elman_shapes_and_vmap_batching(d, n_out):
    model = gflow.models.elman_panigrahi_goyal(key(0), M, d, n_out=n_out)
    x = X_SCALAR if d is None else X_VECTOR
    y = outputs(model, x)
    assert y.shape == ((N, T) if n_out is None else (N, T, n_out))
    np.testing.assert_allclose(y[2], model(x[2]), rtol=1e-14, atol=1e-15)
    assert model.hidden_states(x[0]).shape == model.preactivations(x[0]).shape == (T, M)
    assert model.width == M and model.structure == "full" and model.trained == ("W", "A")


def test_elman_forward_matches_the_recursion():
    model = gflow.models.elman_panigrahi_goyal(key(2), M, D, n_out=2, output_scale=0.3)
    W, A, B = np.asarray(model.W), np.asarray(model.A), np.asarray(model.B.value)
    x = X_VECTOR[0]
    h, ys = np.zeros(M), []
    for t in range(T):
        h = np.maximum(W @ h + A @ x[t], 0.0)
        ys.append(0.3 * B @ h)
    np.testing.assert_allclose(outputs(model, X_VECTOR)[0], np.stack(ys), rtol=1e-13, atol=1e-15)


def test_paper_settings_train_the_papers_layers():
    azl = gflow.models.elman_allen_zhu_li(key(0), M, D)
    pg = gflow.models.elman_panigrahi_goyal(key(0), M, D)
    ce = gflow.models.elman_cayci_eryilmaz(key(0), M, D, alpha=0.5)
    assert azl.trained == ("W",) and pg.trained == ("W", "A") and ce.trained == ("W", "A")
    assert [flatten(m)[0].size for m in (azl, pg, ce)] == [36, 36 + 18, 6 + 18]
    assert ce.structure == "diagonal" and float(ce.output_scale.value) == pytest.approx(6 ** -0.5)
    assert isinstance(azl.A, gflow.models.Frozen) and isinstance(pg.B, gflow.models.Frozen) and isinstance(ce.B, gflow.models.Frozen)
    # Seed 004 draws B ~ N(0, 1/d_out), seed 002 N(0, 2/d_out): same draw, variances 1 and 2.
    np.testing.assert_allclose(pg.B.value, np.sqrt(2.0) * azl.B.value, rtol=1e-14)
    assert gflow.models.theory_output_scale(0.1, 10, 1024) == pytest.approx(0.1 / (10 * 10 * 100 * 10 * np.log(1024)))


def test_frozen_round_trips_bit_for_bit_and_stops_gradients():
    x = jnp.asarray([1.5, -2.0, 1e-300, 3.0e300])
    f = gflow.models.Frozen(x)
    assert not eqx.is_inexact_array(f.bits)
    np.testing.assert_array_equal(f.value, x)
    assert float(jax.grad(lambda s: jnp.sum(s * gflow.models.Frozen(s).value))(2.0)) == 2.0  # only the unfrozen factor


@pytest.mark.parametrize("d,activation", [(None, "logistic"), (D, "tanh")])
def test_symmetric_initialization_gives_exactly_zero_output(d, activation):
    model = gflow.models.elman_cayci_eryilmaz(key(1), M, d, alpha=0.7, activation=activation)
    x = X_SCALAR if d is None else X_VECTOR
    y = np.asarray(outputs(model, x))
    assert np.all(y == 0.0)  # exactly, seed 003 Def. 1 / P1
    moved = eqx.tree_at(lambda mm: mm.W, model, model.W.at[0].add(1e-3))
    assert np.max(np.abs(np.asarray(outputs(moved, x)))) > 0


def test_symmetric_initialization_is_definition_1():
    m = M
    model = gflow.models.elman_cayci_eryilmaz(key(4), m, D, alpha=0.3)
    c, W, U = np.asarray(model.B.value), np.asarray(model.W), np.asarray(model.A)
    np.testing.assert_array_equal(c[m // 2:], -c[: m // 2])
    np.testing.assert_array_equal(np.abs(c), 1.0)
    np.testing.assert_array_equal(np.abs(W), 0.3)
    np.testing.assert_array_equal(W[m // 2:], W[: m // 2])
    np.testing.assert_array_equal(U[m // 2:], U[: m // 2])


def _proposition_1(W, U, x, sigma_prime, g, h):
    """dH_t^(i)/dU_i and dH_t^(i)/dW_ii by seed 003 Prop. 1 (our step t is the paper's t with X_{t−1} = x_t)."""
    T, m = h.shape
    dU, dW = np.zeros((T, m, x.shape[1])), np.zeros((T, m))
    h_prev = np.vstack([np.zeros(m), h])  # h_prev[s] = h_s, h_0 = 0
    for t in range(1, T + 1):
        for i in range(m):
            for k in range(t):
                chain = np.prod([sigma_prime(g[t - s - 1, i]) for s in range(k + 1)])  # σ'(g_t) … σ'(g_{t−k})
                dU[t - 1, i] += W[i] ** k * x[t - k - 1] * chain
                dW[t - 1, i] += W[i] ** k * h_prev[t - k - 1, i] * chain
    return dU, dW


def test_autodiff_gradients_match_proposition_1():
    model = gflow.models.elman_cayci_eryilmaz(key(5), M, D, alpha=0.8)
    model = eqx.tree_at(lambda mm: mm.W, model, model.W * jnp.linspace(0.9, 1.2, M))  # break the pairing
    x = jnp.asarray(X_VECTOR[0])
    g, h = np.asarray(model.preactivations(x)), np.asarray(model.hidden_states(x))
    dU, dW = _proposition_1(np.asarray(model.W), np.asarray(model.A), np.asarray(x),
                            lambda z: 1.0 - np.tanh(z) ** 2, g, h)

    def states(W, A):
        return eqx.tree_at(lambda mm: (mm.W, mm.A), model, (W, A)).hidden_states(x)

    jac_W, jac_A = jax.jacrev(states, argnums=(0, 1))(model.W, model.A)  # (T, m, m), (T, m, m, d)
    np.testing.assert_allclose(np.einsum("tii->ti", jac_W), dW, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(np.einsum("tiid->tid", jac_A), dU, rtol=1e-12, atol=1e-14)
    off = ~np.eye(M, dtype=bool)  # dH^(j)/dΘ_i = 0 for i ≠ j: block-diagonal across neurons
    assert np.all(np.asarray(jac_W)[:, off] == 0) and np.all(np.asarray(jac_A)[:, off] == 0)


def test_relu_derivative_is_the_activation_pattern_at_zero():
    assert float(jax.grad(gflow.models.ACTIVATIONS["relu"].fn)(0.0)) == 1.0
    assert float(jax.grad(gflow.models.ACTIVATIONS["relu"].fn)(-1e-300)) == 0.0
    tanh = gflow.models.ACTIVATIONS["tanh"]
    assert (tanh.sigma0, tanh.sigma1) == (1.0, 1.0) and tanh.smooth and not gflow.models.ACTIVATIONS["relu"].smooth


# ------------------------------------------------------------------------------------------------ GRU, LSTM


@pytest.mark.parametrize("make", [gflow.models.gru, gflow.models.lstm])
def test_gated_shapes_vmap_and_readout(make):
    model = make(key(0), H)
    y = outputs(model, X_SCALAR)
    assert y.shape == (N, T) and model.hidden_states(X_SCALAR[0]).shape == (T, H)
    np.testing.assert_allclose(y[1], model.hidden_states(X_SCALAR[1]) @ model.C + model.c0, rtol=1e-14)
    vector = make(key(0), H, n_in=D, n_out=2, init="xavier")
    assert outputs(vector, X_VECTOR).shape == (N, T, 2)
    assert np.all(np.asarray(vector.b_h) == 0)  # Xavier: zero biases
    bound = 1 / np.sqrt(H)  # torch: U(−1/√d, 1/√d) for everything
    assert all(np.max(np.abs(np.asarray(a))) <= bound for a in (model.W_i, model.W_h, model.b_i, model.C))


def test_gru_matches_the_torch_cell_equations():
    model = gflow.models.gru(key(2), H)
    x = X_SCALAR[0]
    sig = lambda z: 1 / (1 + np.exp(-z))  # noqa: E731
    Wi, Wh, bi, bh = (np.asarray(a) for a in (model.W_i, model.W_h, model.b_i, model.b_h))
    h, ys = np.zeros(3), []
    for t in range(T):
        gi, gh = Wi * x[t] + bi, Wh @ h + bh
        r, z = sig(gi[:3] + gh[:3]), sig(gi[3:6] + gh[3:6])
        n = np.tanh(gi[6:] + r * gh[6:])
        h = (1 - z) * n + z * h
        ys.append(np.asarray(model.C) @ h + float(model.c0))
    np.testing.assert_allclose(outputs(model, X_SCALAR)[0], ys, rtol=1e-13)


@pytest.mark.parametrize("make", [gflow.models.gru, gflow.models.lstm])
def test_small_initialization_scales_every_array(make):
    small, default = make(key(4), H, scale=1e-6), make(key(4), H)
    for a, b in zip(jax.tree_util.tree_leaves(small), jax.tree_util.tree_leaves(default)):
        np.testing.assert_allclose(a, 1e-6 * b, rtol=1e-15)
    assert np.max(np.abs(np.asarray(outputs(small, X_SCALAR)))) < 1e-5


# ------------------------------------------------------------------------------------------------ bad input


def raises_naming(name):
    return pytest.raises(GflowInputError, match=f"`{name}`")


@pytest.mark.parametrize("kwargs,name", [
    ({"W": np.eye(3), "A": np.ones(4), "B": np.ones(4)}, "W"),
    ({"W": np.eye(4), "A": np.ones((4, 2, 1)), "B": np.ones(4)}, "A"),
    ({"W": np.eye(4), "A": np.ones(4), "B": np.ones(3)}, "B"),
    ({"W": np.eye(4), "A": np.ones(4), "B": np.ones(4), "trained": ("W", "C")}, "trained"),
    ({"W": np.eye(4), "A": np.ones(4), "B": np.ones(4), "trained": ()}, "trained"),
    ({"W": np.eye(4), "A": np.ones(4), "B": np.ones(4), "activation": "softplus"}, "activation"),
    ({"W": np.eye(4) * np.nan, "A": np.ones(4), "B": np.ones(4)}, "W"),
    ({"W": np.eye(4), "A": np.ones(4), "B": np.ones(4), "output_scale": np.ones(2)}, "output_scale"),
])
def test_elman_rejects_bad_arrays(kwargs, name):
    kwargs = dict(kwargs)
    with raises_naming(name):
        gflow.models.ElmanRNN(kwargs.pop("W"), kwargs.pop("A"), kwargs.pop("B"), **kwargs)


def test_bad_sequences_and_settings():
    model = gflow.models.elman_panigrahi_goyal(key(0), M, D)
    with raises_naming("x"):
        model(jnp.ones(5))
    with raises_naming("x"):
        gflow.models.gru(key(0), 3)(jnp.ones((5, 2)))
    with raises_naming("hidden_size"):
        gflow.models.elman_cayci_eryilmaz(key(0), 5, alpha=0.5)
    with raises_naming("alpha"):
        gflow.models.elman_cayci_eryilmaz(key(0), 4, alpha=-1.0)
    with raises_naming("init"):
        gflow.models.gru(key(0), 3, init="orthogonal")
    with raises_naming("W_h"):
        gflow.models.LSTM(np.ones(12), np.ones((9, 3)), np.ones(12), np.ones(12), np.ones(3), 0.0)
    with raises_naming("C"):
        gflow.models.GRU(np.ones(9), np.ones((9, 3)), np.ones(9), np.ones(9), np.ones(4), 0.0)
