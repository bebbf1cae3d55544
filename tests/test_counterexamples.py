"""Constructions from seed 001: Proposition 5.1 (cyclic shift) and Lemma 6.3 (symmetric near-minimizers)."""

import numpy as np
import pytest

import gflow
from gflow import analysis as an, teachers


def cyclic_shift_model(d, w):
    """A = d × d cyclic permutation, B = e_1, C = w* e_1ᵀ (seed 001 Prop. 5.1)."""
    A = np.roll(np.eye(d), 1, axis=0)
    e1 = np.eye(d)[0]
    return gflow.LinearRNN(A, e1, w * e1)


@pytest.mark.parametrize("d,w", [(3, 1.0), (6, -2.5)])
def test_cyclic_shift_interpolates_for_k_up_to_d(d, w):
    model = cyclic_shift_model(d, w)
    teacher = teachers.memoryless(w)
    for k in (1, d):
        assert float(gflow.PopulationLoss(teacher, k)(model)) == 0.0  # exactly
    # ... and the loss is not zero for k > d: training on longer sequences sees the failure (Thm 4.1)
    assert float(gflow.PopulationLoss(teacher, d + 1)(model)) == pytest.approx(w**2)


@pytest.mark.parametrize("d,w", [(3, 1.0), (6, -2.5)])
def test_cyclic_shift_does_not_extrapolate(d, w):
    model = cyclic_shift_model(d, w)
    teacher = teachers.memoryless(w)
    h = np.asarray(model.impulse_response(4 * d + 1))
    expected = np.where(np.arange(4 * d + 1) % d == 0, w, 0.0)  # periodic: h_{md} = w*
    np.testing.assert_array_equal(h, expected)
    for q in (d + 1, 2 * d + 1):
        m = (q - 1) // d  # number of nonzero wrong lags j = d, 2d, ... below q
        lq = float(an.loss_at_length(model, teacher, q))
        assert lq >= w**2
        assert lq == pytest.approx(m * w**2)
    assert not an.extrapolates(model, teacher, 0.5 * abs(w), d + 1)
    assert an.extrapolates(model, teacher, 0.0, d)


def test_cyclic_shift_mimo_padded():
    """MIMO version: pad B and C with zeros (seed 001 Prop. 5.1)."""
    d, k = 4, 4
    W = np.array([[2.0, 0.0], [0.0, 0.0]])  # W* with a single nonzero entry
    A = np.roll(np.eye(d), 1, axis=0)
    B = np.zeros((d, 2))
    B[0, 0] = 1.0
    C = np.zeros((2, d))
    C[0, 0] = 2.0
    model = gflow.LinearRNN(A, B, C)
    teacher = teachers.memoryless(W)
    assert float(gflow.PopulationLoss(teacher, k)(model)) == 0.0
    assert float(an.loss_at_length(model, teacher, d + 1)) == pytest.approx(4.0)


def test_symmetric_near_minimizer_family_lemma_6_3():
    """A = diag(0, λ), C = (√w*, δ), B = Cᵀ: L_k = δ⁴ (λ^{2k} − 1)/(λ² − 1), small for small δ, but L_q → ∞."""
    w, lam, delta, k = 1.0, 1.5, 0.05, 3
    C = np.array([np.sqrt(w), delta])
    model = gflow.LinearRNN(np.diag([0.0, lam]), C, C, structure="symmetric")
    teacher = teachers.memoryless(w)

    def closed_form(q):
        return delta**4 * (lam ** (2 * q) - 1) / (lam**2 - 1)

    assert float(gflow.PopulationLoss(teacher, k)(model)) == pytest.approx(closed_form(k), rel=1e-12)
    assert closed_form(k) < 1e-4
    for q in (10, 40):
        assert float(an.loss_at_length(model, teacher, q)) == pytest.approx(closed_form(q), rel=1e-10)
    assert float(an.loss_at_length(model, teacher, 40)) > 1e8
    assert float(an.balance_ratio(model)) == 0.0  # it is on the balanced, symmetric manifold

