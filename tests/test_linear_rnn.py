"""LinearRNN: impulse response, forward pass, structures and parameterizations (seed 000 eq. 3.1, seed 001 eq. 1/19)."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gflow
from gflow import initializers


def _random(key, *shapes):
    keys = jax.random.split(key, len(shapes))
    return [np.asarray(jax.random.normal(k, s, dtype=jnp.float64)) for k, s in zip(keys, shapes)]


def test_siso_impulse_response_matches_matrix_powers(ir_ref):
    A, B, C = _random(jax.random.key(1), (4, 4), (4,), (4,))
    A = 0.5 * A
    model = gflow.LinearRNN(A, B, C)
    h = np.asarray(model.impulse_response(12))
    assert h.shape == (12,)
    np.testing.assert_allclose(h, ir_ref(A, B, C, 12), rtol=1e-12, atol=1e-14)


def test_mimo_impulse_response_matches_matrix_powers(ir_ref):
    A, B, C = _random(jax.random.key(2), (4, 4), (4, 2), (3, 4))
    A = 0.5 * A
    model = gflow.LinearRNN(A, B, C)
    assert (model.d, model.n_in, model.n_out, model.siso) == (4, 2, 3, False)
    h = np.asarray(model.impulse_response(9))
    assert h.shape == (9, 3, 2)
    np.testing.assert_allclose(h, ir_ref(A, B, C, 9), rtol=1e-12, atol=1e-14)


def test_siso_properties():
    model = gflow.LinearRNN(np.eye(3), np.ones(3), np.ones(3))
    assert (model.d, model.n_in, model.n_out, model.siso) == (3, 1, 1, True)


@pytest.mark.parametrize("parameterization", ["restricted", "triangular"])
def test_symmetric_structure_uses_symmetric_transition(ir_ref, parameterization):
    S, B, C = _random(jax.random.key(3), (4, 4), (4,), (4,))
    A = 0.3 * (S + S.T)
    model = gflow.LinearRNN(A, B, C, structure="symmetric", parameterization=parameterization)
    T = np.asarray(model.transition())
    np.testing.assert_allclose(T, T.T, atol=0)
    np.testing.assert_allclose(T, A, rtol=1e-15, atol=1e-15)
    if parameterization == "triangular":
        assert model.A.shape == (4 * 5 // 2,)
    else:
        assert model.A.shape == (4, 4)
    np.testing.assert_allclose(np.asarray(model.impulse_response(10)), ir_ref(A, B, C, 10), rtol=1e-12, atol=1e-14)


def test_restricted_symmetric_transition_is_symmetric_part_of_stored_matrix():
    """The restricted parameterization uses sym(A) = (A + Aᵀ)/2 even if A is moved off the manifold."""
    model = gflow.LinearRNN(np.eye(3), np.ones(3), np.ones(3), structure="symmetric")
    M = np.arange(9.0).reshape(3, 3)
    moved = eqx.tree_at(lambda m: m.A, model, jnp.asarray(M))
    np.testing.assert_allclose(np.asarray(moved.transition()), 0.5 * (M + M.T))


def test_triangular_vector_can_be_passed_directly():
    v = np.arange(1.0, 7.0)  # d = 3 -> 6 upper-triangular entries
    model = gflow.LinearRNN(v, np.ones(3), np.ones(3), structure="symmetric", parameterization="triangular")
    rows, cols = np.triu_indices(3)
    T = np.asarray(model.transition())
    np.testing.assert_array_equal(T[rows, cols], v)
    np.testing.assert_array_equal(T, T.T)


def test_diagonal_structure(ir_ref):
    a, B, C = _random(jax.random.key(4), (5,), (5,), (5,))
    a = 0.5 * a
    model = gflow.LinearRNN(a, B, C, structure="diagonal")
    np.testing.assert_array_equal(np.asarray(model.transition()), np.diag(a))
    np.testing.assert_allclose(np.asarray(model.impulse_response(8)), ir_ref(np.diag(a), B, C, 8),
                               rtol=1e-12, atol=1e-14)


def test_diagonal_mimo_impulse_response(ir_ref):
    a, B, C = _random(jax.random.key(5), (3,), (3, 2), (2, 3))
    model = gflow.LinearRNN(0.5 * a, B, C, structure="diagonal")
    np.testing.assert_allclose(np.asarray(model.impulse_response(6)), ir_ref(np.diag(0.5 * a), B, C, 6),
                               rtol=1e-12, atol=1e-14)


def test_siso_forward_pass_is_convolution_with_impulse_response():
    """y_t (t = 1..T) = Σ_{j<t} h_j x_{t-1-j}: every prefix output, not only the last."""
    A, B, C, x = _random(jax.random.key(6), (3, 3), (3,), (3,), (7,))
    model = gflow.LinearRNN(0.5 * A, B, C)
    y = np.asarray(model(jnp.asarray(x)))
    h = np.asarray(model.impulse_response(7))
    expected = np.array([sum(h[j] * x[t - 1 - j] for j in range(t)) for t in range(1, 8)])
    assert y.shape == (7,)
    np.testing.assert_allclose(y, expected, rtol=1e-12, atol=1e-13)


def test_mimo_forward_pass_is_convolution_with_impulse_response():
    A, B, C, x = _random(jax.random.key(7), (4, 4), (4, 2), (3, 4), (6, 2))
    model = gflow.LinearRNN(0.5 * A, B, C)
    y = np.asarray(model(jnp.asarray(x)))
    h = np.asarray(model.impulse_response(6))
    expected = np.array([sum(h[j] @ x[t - 1 - j] for j in range(t)) for t in range(1, 7)])
    assert y.shape == (6, 3)
    np.testing.assert_allclose(y, expected, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("structure", ["general", "symmetric", "diagonal"])
def test_unit_impulse_through_call_equals_impulse_response_siso(structure):
    model = initializers.gaussian(jax.random.key(8), 4, scale=0.7, structure=structure)
    n = 9
    impulse = jnp.zeros(n).at[0].set(1.0)
    np.testing.assert_allclose(np.asarray(model(impulse)), np.asarray(model.impulse_response(n)),
                               rtol=1e-13, atol=1e-15)


def test_unit_impulse_through_call_equals_impulse_response_mimo():
    model = initializers.gaussian(jax.random.key(9), 4, scale=0.7, n_in=2, n_out=3)
    n = 7
    h = np.asarray(model.impulse_response(n))
    for i in range(2):
        impulse = jnp.zeros((n, 2)).at[0, i].set(1.0)
        np.testing.assert_allclose(np.asarray(model(impulse)), h[:, :, i], rtol=1e-13, atol=1e-15)


def test_model_is_a_pytree_that_jits_and_vmaps():
    model = initializers.gaussian(jax.random.key(10), 3, scale=0.5)
    h_jit = eqx.filter_jit(lambda m: m.impulse_response(6))(model)
    np.testing.assert_allclose(np.asarray(h_jit), np.asarray(model.impulse_response(6)), rtol=1e-15)
    xs = jax.random.normal(jax.random.key(11), (5, 4), dtype=jnp.float64)
    ys = jax.vmap(model)(xs)
    assert ys.shape == (5, 4)
    np.testing.assert_allclose(np.asarray(ys[2]), np.asarray(model(xs[2])), rtol=1e-15)


def test_outputs_are_float64():
    model = gflow.LinearRNN(np.zeros((2, 2)), [1, 0], [0, 1])  # integer input is promoted to float
    assert model.B.dtype == jnp.float64
    assert model.impulse_response(3).dtype == jnp.float64


def test_impulse_response_is_stable_for_long_horizons():
    """Repeated mat-vec, not matrix powers: a contraction's response decays to exactly representable values."""
    model = gflow.LinearRNN(0.5 * np.eye(2), np.ones(2), np.ones(2))
    h = np.asarray(model.impulse_response(60))
    np.testing.assert_allclose(h, 2.0 * 0.5 ** np.arange(60), rtol=1e-14)
