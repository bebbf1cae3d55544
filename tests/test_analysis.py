"""gflow.analysis: balance measures, rates, fits, conserved quantities and extrapolation measures."""

import jax
import numpy as np
import pytest

import gflow
from gflow import analysis as an, initializers, teachers

# ---------------------------------------------------------------------------------------------- balance


def test_balance_measures_by_hand():
    B = np.array([3.0, 0.0])
    C = np.array([1.0, 0.0])
    m = gflow.LinearRNN(np.zeros((2, 2)), B, C)
    assert float(an.imbalance_norm(m)) == pytest.approx(2.0)
    assert float(an.balance_norm(m)) == pytest.approx(4.0)
    assert float(an.balance_ratio(m)) == pytest.approx(0.5)
    m2 = gflow.LinearRNN(np.array([[0.0, 6.0], [0.0, 0.0]]), B, C)
    assert float(an.transition_to_balance_ratio(m2)) == pytest.approx(1.5)


def test_balance_ratio_mimo():
    m = initializers.gaussian(jax.random.key(1), 3, scale=1.0, n_in=2, n_out=2)
    B, C = np.asarray(m.B), np.asarray(m.C)
    expected = np.linalg.norm(B - C.T) / np.linalg.norm(B + C.T)
    assert float(an.balance_ratio(m)) == pytest.approx(expected, rel=1e-14)


def test_balancing_time_conventions():
    eps, w0 = 1e-4, 0.8
    t_l = an.balancing_time(eps, w0, "L")
    t_half = an.balancing_time(eps, w0, "half")
    assert t_half == pytest.approx(2.0 * t_l, rel=1e-15)
    assert t_half == pytest.approx(np.log(1 / eps) / (4 * w0), rel=1e-15)  # seed 000, appendix units
    assert an.balancing_time(eps, w0) == t_l  # "L" is the default


def test_early_phase_rates():
    assert an.early_phase_rate("imbalance", 0.5, "L") == -1.0
    assert an.early_phase_rate("balance", 0.5, "L") == 1.0
    assert an.early_phase_rate("imbalance", 0.5, "half") == -0.5
    assert an.early_phase_rate("balance", 0.5, "half") == 0.5


def test_fit_exponential_rate_recovers_a_known_rate():
    ts = np.linspace(0.0, 5.0, 50)
    values = 3.0 * np.exp(-1.7 * ts)
    assert an.fit_exponential_rate(ts, values) == pytest.approx(-1.7, rel=1e-10)
    # a window: the rate changes at t = 2, and only the early part is fitted
    values = np.where(ts <= 2.0, np.exp(0.9 * ts), np.exp(0.9 * 2.0) * np.ones_like(ts))
    assert an.fit_exponential_rate(ts, values, t_max=2.0) == pytest.approx(0.9, rel=1e-10)
    assert an.fit_exponential_rate(ts, values, t_min=2.5) == pytest.approx(0.0, abs=1e-10)
    # non-positive and non-finite samples are ignored
    values = np.exp(0.3 * ts)
    values[[3, 7]] = [0.0, np.nan]
    assert an.fit_exponential_rate(ts, values) == pytest.approx(0.3, rel=1e-10)


def test_fit_power_law_recovers_a_known_exponent():
    xs = np.logspace(-5, -1, 9)
    assert an.fit_power_law(xs, 7.0 * xs**0.5) == pytest.approx(0.5, rel=1e-10)
    assert an.fit_power_law(xs, xs**-1.25) == pytest.approx(-1.25, rel=1e-10)


def test_fit_power_law_with_noise_is_close():
    rng = np.random.default_rng(0)
    xs = np.logspace(-4, 0, 40)
    ys = xs**0.75 * np.exp(0.01 * rng.standard_normal(40))
    assert an.fit_power_law(xs, ys) == pytest.approx(0.75, abs=0.01)


# ---------------------------------------------------------------------------------------------- conserved


def test_balance_matrix_by_hand():
    A = np.array([[1.0, 2.0], [0.0, 3.0]])
    B = np.array([1.0, 2.0])
    C = np.array([0.5, -1.0])
    m = gflow.LinearRNN(A, B, C)
    Q = A @ A.T - A.T @ A + np.outer(B, B) - np.outer(C, C)
    np.testing.assert_allclose(np.asarray(an.balance_matrix(m)), Q, rtol=1e-15)
    assert float(an.norm_difference(m)) == pytest.approx(np.trace(Q))
    scale = sum(np.linalg.norm(M) for M in (A @ A.T, A.T @ A, np.outer(B, B), np.outer(C, C)))
    assert float(an.balance_matrix_scale(m)) == pytest.approx(scale, rel=1e-14)


def test_balance_matrix_is_invariant_under_orthogonal_change_of_basis_only_when_it_should_be():
    """Q(GAG⁻¹, GB, CG⁻¹) = G Q Gᵀ for orthogonal G (and the impulse response is unchanged)."""
    m = initializers.gaussian(jax.random.key(2), 4, scale=0.7)
    G, _ = np.linalg.qr(np.asarray(jax.random.normal(jax.random.key(3), (4, 4))))
    A, B, C = (np.asarray(x) for x in (m.A, m.B, m.C))
    m2 = gflow.LinearRNN(G @ A @ G.T, G @ B, C @ G.T)
    np.testing.assert_allclose(np.asarray(m2.impulse_response(6)), np.asarray(m.impulse_response(6)),
                               rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(np.asarray(an.balance_matrix(m2)), G @ np.asarray(an.balance_matrix(m)) @ G.T,
                               atol=1e-13)


def test_drift_and_relative_drift():
    values = np.array([[1.0, 0.0], [1.0, 3.0], [1.0, -4.0], [np.nan, 0.0]])
    assert an.drift(values) == 4.0  # the non-finite row is skipped
    assert an.relative_drift(values, np.array([1.0, 8.0, 2.0, np.nan])) == 0.5
    assert an.drift(np.ones((5, 3, 3))) == 0.0


# ---------------------------------------------------------------------------------------------- extrapolation


def test_loss_at_length_matches_population_loss_at_training_length(balanced_teacher):
    m = initializers.gaussian(jax.random.key(4), 4, scale=0.5)
    lq = []
    for q in (2, 7):
        lq.append(float(an.loss_at_length(m, balanced_teacher, q)))
        assert lq[-1] == pytest.approx(float(gflow.PopulationLoss(balanced_teacher, q)(m)), rel=1e-14)
    assert lq[0] < lq[1]  # nondecreasing in q (the length-q loss), here strictly


def test_tail_error_and_zero_solution_error():
    teacher = teachers.delay(6)  # w_5 = 1
    zero = gflow.LinearRNN(np.zeros((2, 2)), np.zeros(2), np.zeros(2))
    assert float(an.zero_solution_error(teacher, 4, horizon=10)) == 1.0
    assert float(an.zero_solution_error(teacher, 6, horizon=10)) == 0.0
    assert float(an.tail_error(zero, teacher, 4, horizon=10)) == 1.0
    assert float(an.tail_error(teacher, teacher, 4, horizon=10)) == 0.0
    half = gflow.LinearRNN(np.eye(6, k=1), 0.5 * np.eye(6)[:, -1], np.eye(6)[0])
    assert float(an.tail_error(half, teacher, 2, horizon=10)) == pytest.approx(0.5)


def test_extrapolates():
    teacher = teachers.memoryless(1.0)
    close = gflow.LinearRNN(np.array([[0.1]]), np.array([1.0]), np.array([1.0]))  # h = 0.1^j
    assert an.extrapolates(close, teacher, 0.11, 50)
    assert not an.extrapolates(close, teacher, 0.09, 50)
    assert an.extrapolates(teacher, teacher, 0.0, 100)
