"""Lazy-regime analysis on known cases: zero at initialization, the linearization error is O(‖Δθ‖²), flips and
drift of a hand-made ReLU network, the empirical NTK as J Jᵀ over the trained layers, memory functions."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gflow
from gflow import analysis as an, GflowInputError

key = jax.random.key
M, D, T, N = 6, 3, 5, 4  # the sizes of the other nonlinear tests: each new shape costs compilations


@pytest.fixture(scope="module")
def model0():
    return gflow.models.elman_cayci_eryilmaz(key(0), M, D, alpha=0.6)


@pytest.fixture(scope="module")
def inputs():
    return jnp.asarray(np.random.default_rng(1).uniform(-1, 1, (N, T, D)) / np.sqrt(D))


def displaced(model, scale, seed=2):
    """model0 + scale · (a fixed random direction) in its trained arrays."""
    rng = np.random.default_rng(seed)
    return eqx.tree_at(lambda m: (m.W, m.A), model, (model.W + scale * rng.normal(size=model.W.shape),
                                                     model.A + scale * rng.normal(size=model.A.shape)))


@eqx.filter_jit
def measures(model0, model, inputs):
    """Every lazy measure in one compiled call (pure functions of (model0, model, inputs), so they jit)."""
    return {"movement": an.movement(model0, model), "relative": an.relative_movement(model0, model),
            "neuron": an.neuron_movement(model0, model), "linearization": an.linearization_error(model0, model, inputs),
            "flips": an.activation_flips(model0, model, inputs), "drift": an.hidden_state_drift(model0, model, inputs)}


def test_everything_is_zero_at_initialization(model0, inputs):
    values = measures(model0, model0, inputs)
    assert values["linearization"].shape == values["drift"].shape == (N, T)
    assert all(np.all(np.asarray(v) == 0.0) for v in values.values())


def test_movement_measures(model0):
    model = eqx.tree_at(lambda m: m.W, model0, model0.W.at[3].add(0.01))
    assert float(an.neuron_movement(model0, model)) == pytest.approx(np.sqrt(M) * 0.01, rel=1e-10)
    theta0 = np.concatenate([np.asarray(model0.W), np.asarray(model0.A).ravel()])
    assert float(an.relative_movement(model0, model)) == pytest.approx(0.01 / np.linalg.norm(theta0), rel=1e-10)


def test_linearization_error_is_second_order(model0, inputs):
    errors = [float(jnp.max(measures(model0, displaced(model0, s), inputs)["linearization"])) for s in (1e-2, 2e-2)]
    assert errors[1] / errors[0] == pytest.approx(4.0, rel=0.1)
    lin = an.linearized_outputs(model0, displaced(model0, 1e-2), inputs)
    assert lin.shape == (N, T) and float(jnp.max(jnp.abs(lin))) > 10 * errors[0]  # F^Lin carries the first order


def test_flips_and_drift_on_a_hand_made_relu_network():
    A = jnp.asarray([1.0, 2.0, -1.0, 0.5])
    model0 = gflow.models.ElmanRNN(jnp.zeros((4, 4)), A, jnp.ones(4), trained=("A",))  # W = 0: h_t = relu(A x_t)
    model = eqx.tree_at(lambda m: m.A, model0, A * jnp.asarray([-1.0, -1.0, 1.0, 1.0]))
    x = jnp.asarray([[1.0, -2.0, 3.0]])
    np.testing.assert_array_equal(an.activation_flips(model0, model, x), [[0.5, 0.5, 0.5]])
    drift = np.linalg.norm(np.maximum(np.asarray(model.A)[None] * x[0, :, None], 0)
                           - np.maximum(np.asarray(A)[None] * x[0, :, None], 0), axis=1)
    np.testing.assert_allclose(an.hidden_state_drift(model0, model, x)[0], drift, rtol=1e-14)


def test_empirical_ntk_is_j_jt_over_the_trained_layers(inputs):
    model = gflow.models.elman_allen_zhu_li(key(3), M, D)  # only W is trained
    K = np.asarray(eqx.filter_jit(an.empirical_ntk)(model, inputs))
    assert K.shape == (T, N, N)
    outputs_of_W = jax.jacfwd(lambda W: jax.vmap(eqx.tree_at(lambda m: m.W, model, W))(inputs))  # (N, T, M, M)
    J = np.asarray(jax.jit(outputs_of_W)(model.W)).reshape(N, T, -1)
    np.testing.assert_allclose(K, np.einsum("atp,btp->tab", J, J), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(K, np.swapaxes(K, 1, 2), rtol=1e-14)


def test_memory_functions_and_regime(model0):
    z, t = 0.5, 10
    assert float(an.memory_function_0(z, t)) == pytest.approx((1 - z ** t) / (1 - z), rel=1e-14)
    assert float(an.memory_function_1(z, t)) == pytest.approx((1 - (t + 1) * z ** t + t * z ** (t + 1)) / (1 - z) ** 2,
                                                              rel=1e-13)
    assert float(an.memory_function_0(1.0, t)) == t and float(an.memory_function_1(1.0, t)) == t * (t + 1) / 2
    assert [an.memory_regime(v) for v in (0.5, 1.0, 1.1)] == ["short", "critical", "long"]
    assert float(an.memory_argument(model0)) == pytest.approx(0.6, rel=1e-14)  # α σ₁, σ₁ = 1 for tanh
    logistic = gflow.models.elman_cayci_eryilmaz(key(0), M, D, alpha=2.0, activation="logistic")
    assert float(an.memory_argument(logistic)) == pytest.approx(0.5, rel=1e-14)
    full = gflow.models.elman_panigrahi_goyal(key(0), M, D)
    assert float(an.memory_argument(full)) == pytest.approx(np.linalg.norm(np.asarray(full.W), 2), rel=1e-12)


def test_bad_input(model0):
    with pytest.raises(GflowInputError, match="`model`"):
        an.neuron_movement(gflow.models.gru(key(0), 2), gflow.models.gru(key(0), 2))
    with pytest.raises(GflowInputError, match="`model`"):
        an.movement(model0, gflow.models.elman_cayci_eryilmaz(key(0), M, alpha=0.6))
    with pytest.raises(GflowInputError, match="`z`"):
        an.memory_regime(-1.0)
    with pytest.raises(GflowInputError, match="`model`"):
        an.memory_argument(gflow.models.gru(key(0), 2))
