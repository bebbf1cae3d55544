"""Initializers: shapes, structure, scale conventions, and the two symmetric parameterizations."""

import jax
import numpy as np
import pytest

import gflow
from conftest import REF_SAVES, REF_T1
from gflow import initializers

KEY = jax.random.key(17)


@pytest.mark.parametrize("init", ["gaussian", "symmetric", "xavier"])
def test_siso_and_mimo_shapes(init):
    kwargs = {} if init == "xavier" else {"scale": 0.1}
    f = getattr(initializers, init)
    siso = f(KEY, 5, **kwargs)
    assert (siso.A.shape, siso.B.shape, siso.C.shape) == ((5, 5), (5,), (5,))
    assert siso.siso
    mimo = f(KEY, 5, n_in=2, n_out=3, **kwargs)
    assert (mimo.A.shape, mimo.B.shape, mimo.C.shape) == ((5, 5), (5, 2), (3, 5))
    assert (mimo.n_in, mimo.n_out) == (2, 3)


@pytest.mark.parametrize("init", ["balanced", "residual"])
def test_balanced_shapes(init):
    siso = getattr(initializers, init)(KEY, 4, scale=0.1)
    assert (siso.A.shape, siso.B.shape, siso.C.shape) == ((4, 4), (4,), (4,))
    mimo = getattr(initializers, init)(KEY, 4, scale=0.1, n=3)
    assert (mimo.B.shape, mimo.C.shape) == ((4, 3), (3, 4))
    np.testing.assert_array_equal(np.asarray(mimo.B), np.asarray(mimo.C).T)


@pytest.mark.parametrize("structure", ["symmetric", "diagonal", "general"])
def test_balanced_gives_b_equal_c_transpose(structure):
    m = initializers.balanced(KEY, 6, scale=0.2, structure=structure)
    assert m.structure == structure
    np.testing.assert_array_equal(np.asarray(m.B), np.asarray(m.C).T)
    assert float(gflow.analysis.balance_ratio(m)) == 0.0


@pytest.mark.parametrize("init", ["symmetric", "balanced"])
@pytest.mark.parametrize("parameterization", ["restricted", "triangular"])
def test_symmetric_structure_gives_symmetric_transition(init, parameterization):
    m = getattr(initializers, init)(KEY, 5, scale=0.3, parameterization=parameterization)
    assert m.structure == "symmetric" and m.parameterization == parameterization
    T = np.asarray(m.transition())
    np.testing.assert_array_equal(T, T.T)
    assert np.max(np.abs(T)) > 0.0


def test_symmetric_initializer_is_unbalanced():
    m = initializers.symmetric(KEY, 5, scale=0.3)
    assert float(gflow.analysis.balance_ratio(m)) > 0.1


@pytest.mark.parametrize("structure", ["symmetric", "general", "diagonal"])
def test_residual_gives_identity_transition(structure):
    m = initializers.residual(KEY, 4, scale=0.1, structure=structure)
    np.testing.assert_array_equal(np.asarray(m.transition()), np.eye(4))
    np.testing.assert_array_equal(np.asarray(m.B), np.asarray(m.C).T)


@pytest.mark.parametrize("eps", [1e-1, 1e-3])
def test_scale_conventions(eps):
    """"entries": every entry ε·N(0, 1), so ‖B‖ ≈ ε√d and ‖A‖_F ≈ ε d; "normal": N(0, ε²/n), so ‖·‖ ≈ ε."""
    d = 200
    ent = initializers.gaussian(KEY, d, scale=eps, convention="entries")
    nor = initializers.gaussian(KEY, d, scale=eps, convention="normal")
    for m in (ent, nor):
        assert float(np.linalg.norm(np.asarray(m.C))) > 0
    np.testing.assert_allclose(np.linalg.norm(np.asarray(ent.B)), eps * np.sqrt(d), rtol=0.2)
    np.testing.assert_allclose(np.linalg.norm(np.asarray(ent.C)), eps * np.sqrt(d), rtol=0.2)
    np.testing.assert_allclose(np.linalg.norm(np.asarray(ent.A)), eps * d, rtol=0.05)
    np.testing.assert_allclose(np.linalg.norm(np.asarray(nor.B)), eps, rtol=0.2)
    np.testing.assert_allclose(np.linalg.norm(np.asarray(nor.C)), eps, rtol=0.2)
    np.testing.assert_allclose(np.linalg.norm(np.asarray(nor.A)), eps, rtol=0.05)
    # the same draws, rescaled: the conventions differ only by the factor √n per parameter
    np.testing.assert_allclose(np.asarray(nor.B) * np.sqrt(d), np.asarray(ent.B), rtol=1e-12)


def test_balanced_scale_conventions():
    d, eps = 200, 1e-2
    ent = initializers.balanced(KEY, d, scale=eps, convention="entries")
    nor = initializers.balanced(KEY, d, scale=eps, convention="normal")
    np.testing.assert_allclose(np.linalg.norm(np.asarray(ent.B)), eps * np.sqrt(d), rtol=0.2)
    np.testing.assert_allclose(np.linalg.norm(np.asarray(nor.B)), eps, rtol=0.2)


def test_xavier_bounds():
    d = 50
    m = initializers.xavier(KEY, d, n_in=2, n_out=3)
    assert np.max(np.abs(np.asarray(m.A))) <= np.sqrt(6.0 / (2 * d))
    assert np.max(np.abs(np.asarray(m.B))) <= np.sqrt(6.0 / (2 + d))
    assert np.max(np.abs(np.asarray(m.C))) <= np.sqrt(6.0 / (d + 3))
    assert np.max(np.abs(np.asarray(m.A))) > 0.5 * np.sqrt(6.0 / (2 * d))


def test_same_key_same_model_different_key_different_model():
    a = initializers.gaussian(jax.random.key(1), 4, scale=0.1)
    b = initializers.gaussian(jax.random.key(1), 4, scale=0.1)
    c = initializers.gaussian(jax.random.key(2), 4, scale=0.1)
    np.testing.assert_array_equal(np.asarray(a.A), np.asarray(b.A))
    assert not np.array_equal(np.asarray(a.A), np.asarray(c.A))


@pytest.mark.slow
def test_triangular_and_restricted_same_response_different_flows(small_loss):
    """Same model, two parameterizations: identical impulse response, different ODEs (seed 000 eq. 3.1: the symmetric
    parameterization)."""
    restricted = initializers.symmetric(jax.random.key(5), 4, scale=0.3, parameterization="restricted")
    triangular = initializers.symmetric(jax.random.key(5), 4, scale=0.3, parameterization="triangular")
    np.testing.assert_array_equal(np.asarray(restricted.transition()), np.asarray(triangular.transition()))
    np.testing.assert_array_equal(np.asarray(restricted.impulse_response(20)),
                                  np.asarray(triangular.impulse_response(20)))
    ts = np.linspace(0.0, REF_T1, REF_SAVES)
    a = gflow.solve_flow(small_loss, restricted, REF_T1, save_at=ts)
    b = gflow.solve_flow(small_loss, triangular, REF_T1, save_at=ts)
    assert a.status == b.status == "completed"
    assert a.config["parameterization"] == "restricted" and b.config["parameterization"] == "triangular"
    ha = np.asarray(a.final.impulse_response(20))
    hb = np.asarray(b.final.impulse_response(20))
    assert np.max(np.abs(ha - hb)) > 1e-4  # far above the solver tolerance: the flows differ
    assert abs(a.loss[2] - b.loss[2]) > 1e-6
