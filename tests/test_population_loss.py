"""PopulationLoss in closed form against Monte-Carlo empirical losses and against the papers' formulas.

Seed 000 eq. 3.4 / Lemma E.1 and App. D (accumulating), seed 001 Lemma 3.1 / C.1. Inputs are i.i.d.
N(0, 1), so E x = 0 and E x xᵀ = I as the lemmas assume.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gflow
from gflow import initializers, teachers

N_MC = 200_000
N_SE = 4.0  # Monte-Carlo agreement within this many standard errors


@eqx.filter_jit
def _outputs(model, x):
    return jax.vmap(model)(x)


def _mc_errors(student, teacher, x, every_step=False):
    """Per-sample squared errors of the student against the teacher's labels (outputs y_1 .. y_k)."""
    y_s = _outputs(student, x)
    y_t = _outputs(teacher, x)
    diff = y_s - y_t
    if not every_step:
        diff = diff[:, -1]  # last-step labels y_k only
    sq = diff * diff
    return np.asarray(sq.reshape(sq.shape[0], -1).sum(axis=1))


def _assert_mc_agrees(errors, closed_form, factor=1.0):
    errors = factor * errors
    mean = float(np.mean(errors))
    se = float(np.std(errors, ddof=1) / np.sqrt(len(errors)))
    closed_form = float(closed_form)
    assert abs(mean - closed_form) <= N_SE * se, (mean, closed_form, se)
    # and the test has teeth: the standard error is small against the value being checked
    assert se < 0.02 * closed_form


def test_mc_siso_last_step(balanced_teacher):
    k = 5
    student = initializers.gaussian(jax.random.key(11), 4, scale=0.5)
    loss = gflow.PopulationLoss(balanced_teacher, k)
    x = jax.random.normal(jax.random.key(12), (N_MC, k), dtype=jnp.float64)
    _assert_mc_agrees(_mc_errors(student, balanced_teacher, x), loss(student))


def test_mc_mimo_last_step():
    k, n_in, n_out = 4, 2, 3
    teacher = initializers.gaussian(jax.random.key(21), 3, scale=0.6, n_in=n_in, n_out=n_out)
    student = initializers.gaussian(jax.random.key(22), 4, scale=0.6, n_in=n_in, n_out=n_out)
    loss = gflow.PopulationLoss(teacher, k)
    x = jax.random.normal(jax.random.key(23), (N_MC, k, n_in), dtype=jnp.float64)
    _assert_mc_agrees(_mc_errors(student, teacher, x), loss(student))


def test_mc_mimo_memoryless_teacher():
    """Seed 001 Lemma C.1: ‖CB − W*‖² + Σ_{j≥1} ‖C A^j B‖²."""
    k = 4
    W = np.array([[1.0, -0.5], [0.3, 0.8], [-0.2, 0.4]])
    teacher = teachers.memoryless(W)
    student = initializers.gaussian(jax.random.key(31), 4, scale=0.6, n_in=2, n_out=3)
    loss = gflow.PopulationLoss(teacher, k)
    x = jax.random.normal(jax.random.key(32), (N_MC, k, 2), dtype=jnp.float64)
    _assert_mc_agrees(_mc_errors(student, teacher, x), loss(student))


def test_mc_accumulating_weighting(balanced_teacher):
    """Labels at every prefix, summed over time steps (seed 000 App. D, eq. D.3): weights k − j."""
    k = 5
    student = initializers.gaussian(jax.random.key(41), 4, scale=0.5)
    loss = gflow.PopulationLoss(balanced_teacher, k, weighting="accumulating")
    x = jax.random.normal(jax.random.key(42), (N_MC, k), dtype=jnp.float64)
    _assert_mc_agrees(_mc_errors(student, balanced_teacher, x, every_step=True), loss(student))


def test_mc_half_convention(balanced_teacher):
    k = 5
    student = initializers.gaussian(jax.random.key(51), 4, scale=0.5)
    loss = gflow.PopulationLoss(balanced_teacher, k, convention="half")
    x = jax.random.normal(jax.random.key(52), (N_MC, k), dtype=jnp.float64)
    _assert_mc_agrees(_mc_errors(student, balanced_teacher, x), loss(student), factor=0.5)


# ----------------------------------------------------------------------------------------------------------
# exact formulas


def test_memoryless_siso_matches_lemma_3_1():
    """L = (CB − w*)² + Σ_{j=1}^{k-1} (C A^j B)² (seed 001 eq. 4), by numpy matrix powers."""
    w = 1.7
    k = 6
    student = initializers.gaussian(jax.random.key(61), 4, scale=0.6)
    A, B, C = (np.asarray(x) for x in (student.A, student.B, student.C))
    expected = (C @ B - w) ** 2 + sum((C @ np.linalg.matrix_power(A, j) @ B) ** 2 for j in range(1, k))
    loss = gflow.PopulationLoss(teachers.memoryless(w), k)
    np.testing.assert_allclose(float(loss(student)), expected, rtol=1e-12)


@pytest.mark.parametrize("weighting,convention", [("uniform", "L"), ("accumulating", "L"),
                                                  ("uniform", "half"), ("accumulating", "half")])
def test_closed_form_weights(balanced_teacher, ir_ref, weighting, convention):
    k = 7
    student = initializers.gaussian(jax.random.key(71), 3, scale=0.8)
    loss = gflow.PopulationLoss(balanced_teacher, k, weighting=weighting, convention=convention)
    h = ir_ref(student.A, student.B, student.C, k)
    w = ir_ref(np.diag(np.asarray(balanced_teacher.A)), balanced_teacher.B, balanced_teacher.C, k)
    weights = np.ones(k) if weighting == "uniform" else k - np.arange(k)
    scale = 0.5 if convention == "half" else 1.0
    expected = scale * np.sum(weights * (h - w) ** 2)
    np.testing.assert_allclose(float(loss(student)), expected, rtol=1e-12)
    r = np.asarray(loss.residuals(student))
    assert r.shape == (k,)
    np.testing.assert_allclose(np.sum(r * r), expected, rtol=1e-12)


def test_mimo_residuals_are_flattened():
    teacher = initializers.gaussian(jax.random.key(81), 3, scale=0.5, n_in=2, n_out=3)
    student = initializers.gaussian(jax.random.key(82), 4, scale=0.5, n_in=2, n_out=3)
    loss = gflow.PopulationLoss(teacher, 5)
    r = np.asarray(loss.residuals(student))
    assert r.shape == (5 * 3 * 2,)
    np.testing.assert_allclose(np.sum(r * r), float(loss(student)), rtol=1e-13)


def test_loss_is_zero_at_the_teacher_and_positive_elsewhere(balanced_teacher):
    loss = gflow.PopulationLoss(balanced_teacher, 8)
    assert float(loss(balanced_teacher)) == 0.0
    other = gflow.LinearRNN(balanced_teacher.A, balanced_teacher.B, 1.01 * balanced_teacher.C,
                            structure="diagonal")
    assert float(loss(other)) > 0.0


def test_half_is_exactly_half(balanced_teacher):
    student = initializers.gaussian(jax.random.key(91), 4, scale=0.5)
    full = gflow.PopulationLoss(balanced_teacher, 5)
    half = gflow.PopulationLoss(balanced_teacher, 5, convention="half")
    assert float(half(student)) == pytest.approx(0.5 * float(full(student)), rel=1e-15)
    assert "L/2" in half.time_unit and "no 1/2" in full.time_unit


def test_loss_is_jittable_and_differentiable(balanced_teacher):
    loss = gflow.PopulationLoss(balanced_teacher, 5)
    student = initializers.gaussian(jax.random.key(92), 4, scale=0.5)
    value = jax.jit(lambda l, m: l(m))(loss, student)
    np.testing.assert_allclose(float(value), float(loss(student)), rtol=1e-15)
    assert loss(student).dtype == jnp.float64


@pytest.mark.parametrize("weighting", ["uniform", "accumulating", "custom"])
@pytest.mark.parametrize("convention", ["L", "half"])
@pytest.mark.parametrize("k_max", [None, 7])
def test_padded_to_holds_the_same_arrays_followed_by_zeros(balanced_teacher, weighting, convention, k_max):
    """padded_to goes through the constructor and gives back this loss's target and weights, zero-padded."""
    mimo = gflow.LinearRNN(np.eye(3) * 0.5, np.ones((3, 2)), np.ones((2, 3)))
    for teacher in (balanced_teacher, mimo):
        given = [0.0, 0.3, 0.0, 1.7, 0.0] + [0.0] * ((k_max or 5) - 5) if weighting == "custom" else weighting
        loss = gflow.PopulationLoss(teacher, 5, given, convention, k_max=k_max)
        for size in (loss.n_lags, 12):
            padded = loss.padded_to(size)
            pad = size - loss.n_lags
            assert type(padded) is gflow.PopulationLoss and padded.n_lags == size
            assert (padded.weighting, padded.convention) == (loss.weighting, loss.convention)
            np.testing.assert_array_equal(padded.target[: loss.n_lags], loss.target)
            np.testing.assert_array_equal(padded.target[loss.n_lags:], np.zeros((pad,) + loss.target.shape[1:]))
            np.testing.assert_array_equal(padded.weights, np.concatenate([loss.weights, np.zeros(pad)]))
            assert padded.training_length == loss.training_length == (4 if weighting == "custom" else 5)
            assert padded.description() == loss.description()
