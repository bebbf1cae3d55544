"""Teachers of seed 000 App. C.2 and seed 001 Lemma 3.1 (the memoryless teacher)."""

import jax
import numpy as np
import pytest

from gflow import teachers


@pytest.mark.parametrize("d", [1, 2, 5, 10])
def test_delay_teacher_impulse_response_is_exact(d):
    h = np.asarray(teachers.delay(d).impulse_response(3 * d + 2))
    expected = np.zeros(3 * d + 2)
    expected[d - 1] = 1.0
    np.testing.assert_array_equal(h, expected)  # exactly, not approximately


def test_delay_teacher_structure():
    t = teachers.delay(4)
    np.testing.assert_array_equal(np.asarray(t.A), np.eye(4, k=1))
    assert t.structure == "general"
    assert teachers.first_markov_parameter(t) == 0.0


@pytest.mark.parametrize("w", [1.5, -0.7])
def test_memoryless_siso(w):
    t = teachers.memoryless(w)
    h = np.asarray(t.impulse_response(6))
    np.testing.assert_array_equal(h, [w, 0, 0, 0, 0, 0])
    assert t.siso
    assert teachers.first_markov_parameter(t) == w


def test_memoryless_mimo():
    W = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    t = teachers.memoryless(W)
    assert (t.n_out, t.n_in) == (3, 2)
    h = np.asarray(t.impulse_response(4))
    assert h.shape == (4, 3, 2)
    np.testing.assert_array_equal(h[0], W)
    np.testing.assert_array_equal(h[1:], 0.0)


@pytest.mark.parametrize("placement", ["random", "grid"])
def test_balanced_teacher(placement):
    t = teachers.balanced(jax.random.key(3), 5, placement=placement)
    assert t.structure == "diagonal"
    eig = np.asarray(t.A)
    assert np.all((eig >= 0.6) & (eig <= 1.05))
    if placement == "grid":
        np.testing.assert_allclose(eig, np.linspace(0.6, 1.05, 5))
    else:
        assert len(np.unique(eig)) == 5
    np.testing.assert_array_equal(np.asarray(t.B), np.asarray(t.C))  # balanced: Ĉ = B̂ᵀ
    assert teachers.first_markov_parameter(t) == pytest.approx(1.0, abs=1e-14)  # w0 = Ĉ B̂ = 1
    h = np.asarray(t.impulse_response(30))
    np.testing.assert_allclose(h, [np.sum(eig**j * np.asarray(t.B) ** 2) for j in range(30)], rtol=1e-12)


def test_balanced_teacher_custom_range_and_seeds():
    a = teachers.balanced(jax.random.key(1), 4, eigenvalue_range=(-0.5, 0.5))
    b = teachers.balanced(jax.random.key(1), 4, eigenvalue_range=(-0.5, 0.5))
    c = teachers.balanced(jax.random.key(2), 4, eigenvalue_range=(-0.5, 0.5))
    assert np.all(np.abs(np.asarray(a.A)) <= 0.5)
    np.testing.assert_array_equal(np.asarray(a.A), np.asarray(b.A))
    assert not np.array_equal(np.asarray(a.A), np.asarray(c.A))


@pytest.mark.parametrize("d", [1, 3, 5])
def test_random_unbalanced_teacher(d):
    t = teachers.random_unbalanced(jax.random.key(4), d)
    A = np.asarray(t.A)
    np.testing.assert_array_equal(np.triu(np.tril(A, 1), 0), A)  # upper bidiagonal
    h = np.asarray(t.impulse_response(2 * d + 3))
    np.testing.assert_array_equal(h[: d - 1], 0.0)  # zero before the reveal at j = d - 1
    np.testing.assert_allclose(h[d - 1], np.prod(np.diag(A, 1)), rtol=1e-14)
    if d > 1:
        sup = np.diag(A, 1)
        assert np.all(np.abs(sup - 0.7) < 0.5)
    assert h[d] != 0.0


def test_from_model_passes_models_through():
    t = teachers.delay(3)
    assert teachers.from_model(t) is t
