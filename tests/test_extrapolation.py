"""gflow.analysis.extrapolation: ε-extrapolation horizons, L_q curves, tail errors along trajectories, loss levels."""

import jax
import numpy as np
import pytest

import gflow
from gflow import analysis as an, initializers, teachers


def scaled_delay(d, scale):
    """The delay teacher with its single non-zero response value w_{d−1} scaled."""
    return gflow.LinearRNN(np.eye(d, k=1), scale * np.eye(d)[:, -1], np.eye(d)[0])


def test_extrapolation_horizon_counts_leading_lags_within_eps():
    teacher = teachers.delay(6)  # w = e_5
    assert an.extrapolation_horizon(teacher, teacher, 0.0, 40) == 40
    half = scaled_delay(6, 0.5)  # error 0.5 at j = 5 only
    assert an.extrapolation_horizon(half, teacher, 0.1, 40) == 5
    assert an.extrapolation_horizon(half, teacher, 0.5, 40) == 40
    assert an.extrapolates(half, teacher, 0.1, 5) and not an.extrapolates(half, teacher, 0.1, 6)
    memoryless = teachers.memoryless(2.0)
    assert an.extrapolation_horizon(teachers.memoryless(1.0), memoryless, 0.5, 10) == 0


def test_extrapolation_horizon_is_consistent_with_the_predicate():
    teacher = teachers.balanced(jax.random.key(0), 3)
    model = initializers.gaussian(jax.random.key(2), 5, scale=0.6)
    for eps in (0.05, 0.3, 1.0):
        q = an.extrapolation_horizon(model, teacher, eps, 30)
        assert q == 30 or not an.extrapolates(model, teacher, eps, q + 1)
        assert q == 0 or an.extrapolates(model, teacher, eps, q)


def test_loss_curve_is_cumulative_and_matches_loss_at_length():
    teacher = teachers.balanced(jax.random.key(0), 3)
    model = initializers.gaussian(jax.random.key(4), 4, scale=0.5)
    curve = np.asarray(an.loss_curve(model, teacher, 12))
    h, w = np.asarray(model.impulse_response(12)), np.asarray(teacher.impulse_response(12))
    np.testing.assert_allclose(curve, np.cumsum((h - w) ** 2), rtol=1e-13)
    assert np.all(np.diff(curve) >= 0)  # nondecreasing in q (seed 001 §2.5)
    for q in (1, 5, 12):
        assert curve[q - 1] == pytest.approx(float(an.loss_at_length(model, teacher, q)), rel=1e-14)
        assert curve[q - 1] == pytest.approx(float(gflow.PopulationLoss(teacher, q)(model)), rel=1e-13)


def test_loss_curve_mimo():
    teacher = gflow.LinearRNN(np.diag([0.5, -0.3]), np.eye(2), np.array([[1.0, 0.0], [0.5, 1.0]]))
    model = initializers.gaussian(jax.random.key(5), 3, scale=0.4, n_in=2, n_out=2)
    curve = np.asarray(an.loss_curve(model, teacher, 6))
    diff = np.asarray(model.impulse_response(6)) - np.asarray(teacher.impulse_response(6))
    np.testing.assert_allclose(curve, np.cumsum((diff ** 2).sum(axis=(1, 2))), rtol=1e-13)


@pytest.fixture(scope="module")
def flow():
    teacher = teachers.balanced(jax.random.key(0), 3)
    model0 = initializers.gaussian(jax.random.key(1), 4, scale=0.3)
    return teacher, gflow.solve_flow(gflow.PopulationLoss(teacher, 5), model0, 10.0, save_at=25, progress=False)


def test_curves_along_a_trajectory(flow):
    teacher, traj = flow
    responses = an.impulse_responses_along(traj, 20)
    curves = an.loss_curves_along(traj, teacher, 20)
    assert responses.shape == (len(traj.ts), 20) and curves.shape == (len(traj.ts), 20)
    for i in (0, 7, len(traj.ts) - 1):
        model = traj.model_at(i)
        np.testing.assert_allclose(responses[i], np.asarray(model.impulse_response(20)), rtol=1e-13, atol=1e-300)
        np.testing.assert_allclose(curves[i], np.asarray(an.loss_curve(model, teacher, 20)), rtol=1e-12)
        assert curves[i, 4] == pytest.approx(traj.loss[i], rel=1e-10)  # L_k is the training loss
    errors = an.tail_errors(responses, teacher.impulse_response(20), 5)
    assert errors.shape == (len(traj.ts),)
    for i in (0, len(traj.ts) - 1):
        assert errors[i] == pytest.approx(float(an.tail_error(traj.model_at(i), teacher, 5, 20)), rel=1e-13)


def test_non_extrapolating_compares_with_the_zero_solution():
    teacher = teachers.delay(6)
    zero = gflow.LinearRNN(np.zeros((2, 2)), np.zeros(2), np.zeros(2))
    assert not an.non_extrapolating(zero, teacher, 3, 10)  # equal to the baseline is not worse
    assert an.non_extrapolating(scaled_delay(6, 2.5), teacher, 3, 10)  # error 1.5 > baseline 1
    assert not an.non_extrapolating(scaled_delay(6, 1.5), teacher, 3, 10)


def test_first_below():
    loss = np.array([1.0, 0.5, 1e-3, 2e-3, 1e-6, np.nan])
    np.testing.assert_array_equal(an.first_below(loss, [2.0, 0.5, 1e-3, 1e-5, 1e-9]), [0, 1, 2, 4, -1])
    assert an.first_below(loss, 1e-4) == 4
    with pytest.raises(gflow.GflowInputError, match="levels"):
        an.first_below(loss, [[1.0]])


def test_bad_input():
    teacher = teachers.delay(3)
    with pytest.raises(gflow.GflowInputError, match="eps"):
        an.extrapolates(teacher, teacher, -0.1, 5)
    with pytest.raises(gflow.GflowInputError, match="eps"):
        an.extrapolation_horizon(teacher, teacher, float("nan"))
    with pytest.raises(gflow.GflowInputError, match="max_q"):
        an.loss_curve(teacher, teacher, 0)
    with pytest.raises(gflow.GflowInputError, match="horizon"):
        an.tail_errors(np.zeros((3, 10)), np.zeros(10), 10)
    with pytest.raises(gflow.GflowInputError, match="responses"):
        an.tail_errors(np.zeros((3, 9)), np.zeros(10), 4)
