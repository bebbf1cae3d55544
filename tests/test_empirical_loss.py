"""EmpiricalLoss and FreshGaussianSequences: labels, conventions, the quadratic form rᵀ Σ̂ r, minibatches."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gflow
from gflow import GflowInputError, initializers

N, T = 40, 5  # T = the k of the session's small population loss, so compiled losses are shared
WEIGHTING = {"last_step": "uniform", "accumulating": "accumulating"}


@eqx.filter_jit
def value(loss, model):
    return loss(model)


@eqx.filter_jit
def quadratic(loss, model):
    return loss.quadratic_form(model)


@pytest.fixture(scope="module")
def mimo_teacher():
    return gflow.LinearRNN(np.diag([0.5, 0.3, -0.2]), 0.5 * np.ones((3, 2)), np.arange(6.0).reshape(2, 3) / 5)


@pytest.fixture(scope="module")
def mimo_student():
    return initializers.gaussian(jax.random.key(3), 4, scale=0.4, n_in=2, n_out=2)


@pytest.mark.parametrize("labeling", ["last_step", "accumulating"])
@pytest.mark.parametrize("convention", ["L", "half"])
def test_whitened_dataset_gives_the_population_loss(balanced_teacher, general_start, labeling, convention):
    data = gflow.objectives.EmpiricalLoss.from_teacher(jax.random.key(2), balanced_teacher, N, T, labeling=labeling,
                                            convention=convention, whiten=True)
    x = np.asarray(data.inputs)
    np.testing.assert_allclose(x.T @ x / N, np.eye(T), atol=1e-12)  # exactly whitened second moment
    population = gflow.PopulationLoss(balanced_teacher, T, weighting=WEIGHTING[labeling], convention=convention)
    assert float(value(data, general_start)) == pytest.approx(float(value(population, general_start)), rel=1e-12)


@pytest.mark.parametrize("labeling", ["last_step", "accumulating"])
def test_loss_is_the_mean_squared_error_of_the_recurrence(balanced_teacher, general_start, labeling):
    """The convolution path of a LinearRNN equals running the model's own recurrence on every sequence."""
    data = gflow.objectives.EmpiricalLoss.from_teacher(jax.random.key(4), balanced_teacher, N, T, labeling=labeling)
    y_student = np.asarray(jax.vmap(general_start)(data.inputs))
    y_teacher = np.asarray(jax.vmap(balanced_teacher)(data.inputs))
    if labeling == "last_step":
        y_student, y_teacher = y_student[:, -1], y_teacher[:, -1]
    np.testing.assert_allclose(np.asarray(data.labels), y_teacher, rtol=1e-12, atol=1e-14)
    expected = np.mean(np.sum(((y_student - y_teacher) ** 2).reshape(N, -1), axis=1))
    assert float(value(data, general_start)) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("labeling", ["last_step", "accumulating"])
def test_quadratic_form_equals_the_loss_siso(balanced_teacher, general_start, labeling):
    """Seed 001 §2.6: L_S = rᵀ Σ̂ r for a linear student, on raw (not whitened) Gaussian inputs."""
    data = gflow.objectives.EmpiricalLoss.from_teacher(jax.random.key(5), balanced_teacher, 7, T, labeling=labeling,
                                            convention="half")
    assert float(quadratic(data, general_start)) == pytest.approx(float(value(data, general_start)), rel=1e-12)


@pytest.mark.parametrize("labeling", ["last_step", "accumulating"])
def test_quadratic_form_equals_the_loss_mimo(mimo_teacher, mimo_student, labeling):
    data = gflow.objectives.EmpiricalLoss.from_teacher(jax.random.key(6), mimo_teacher, 9, 4, labeling=labeling)
    assert data.inputs.shape == (9, 4, 2)
    assert data.labels.shape == ((9, 2) if labeling == "last_step" else (9, 4, 2))
    assert float(quadratic(data, mimo_student)) == pytest.approx(float(value(data, mimo_student)), rel=1e-12)
    y = np.asarray(jax.vmap(mimo_student)(data.inputs))
    y = y[:, -1] if labeling == "last_step" else y
    expected = np.mean(np.sum(((y - np.asarray(data.labels)) ** 2).reshape(9, -1), axis=1))
    assert float(value(data, mimo_student)) == pytest.approx(expected, rel=1e-12)


def test_half_convention_halves_the_loss_and_residuals_square_to_it(balanced_teacher, general_start):
    full = gflow.objectives.EmpiricalLoss.from_teacher(jax.random.key(7), balanced_teacher, N, T)
    half = gflow.objectives.EmpiricalLoss(full.inputs, full.labels, convention="half")
    assert float(value(half, general_start)) == pytest.approx(0.5 * float(value(full, general_start)), rel=1e-14)
    r = np.asarray(full.residuals(general_start))
    assert r.shape == (N,)
    assert np.sum(r**2) == pytest.approx(float(value(full, general_start)), rel=1e-12)


def test_epoch_minibatches_visit_every_sequence_once(balanced_teacher):
    data = gflow.objectives.EmpiricalLoss.from_teacher(jax.random.key(8), balanced_teacher, 12, T)
    state = data.minibatch_init(jax.random.key(0), 4)
    sample = jax.jit(lambda st, s: data.minibatch(st, s, 4))
    rows = {tuple(np.asarray(x)) for x in np.asarray(data.inputs)}
    seen, epochs = [], []
    for step in range(6):  # two epochs of three batches
        batch, state = sample(state, jnp.asarray(step))
        seen.append([tuple(np.asarray(x)) for x in np.asarray(batch.inputs)])
        epochs.append(int(state["epoch"]))
    first, second = sum(seen[:3], []), sum(seen[3:], [])
    assert set(first) == set(second) == rows and len(set(first)) == 12  # a permutation per epoch
    assert first != second  # reshuffled
    assert epochs == [0, 0, 0, 1, 1, 1]


def test_fresh_sequences_are_reproducible_and_estimate_the_population_loss(balanced_teacher, general_start):
    stream = gflow.objectives.FreshGaussianSequences(balanced_teacher, T, labeling="accumulating")
    assert isinstance(stream.full_loss, gflow.PopulationLoss) and stream.full_loss.weighting == "accumulating"
    state = stream.minibatch_init(jax.random.key(1), 100)

    @jax.jit
    def batch_loss(step):
        return stream.minibatch(state, step, 100)[0](general_start)

    a, b, c = (float(batch_loss(jnp.asarray(s))) for s in (3, 3, 4))
    assert a == b and a != c
    mean = np.mean([float(batch_loss(jnp.asarray(s))) for s in range(200)])  # 20 000 sequences
    assert mean == pytest.approx(float(value(stream.full_loss, general_start)), rel=0.05)


# -------------------------------------------------------------------------------------------- bad input
def test_bad_input(balanced_teacher, general_start):
    data = gflow.objectives.EmpiricalLoss.from_teacher(jax.random.key(9), balanced_teacher, 10, T)
    with pytest.raises(GflowInputError, match="larger than the dataset"):
        data.minibatch_init(jax.random.key(0), 11)
    with pytest.raises(GflowInputError, match="`batch_size`"):
        data.minibatch_init(jax.random.key(0), 0)
    with pytest.raises(GflowInputError, match="`shuffle`"):
        data.minibatch_init(jax.random.key(0), 2, shuffle="sometimes")
    with pytest.raises(GflowInputError, match="`labels`"):
        gflow.objectives.EmpiricalLoss(np.zeros((10, T)), np.zeros(9))
    with pytest.raises(GflowInputError, match="`labels`"):
        gflow.objectives.EmpiricalLoss(np.zeros((10, T)), np.zeros(10), labeling="accumulating")
    with pytest.raises(GflowInputError, match="`labeling`"):
        gflow.objectives.EmpiricalLoss(np.zeros((10, T)), np.zeros(10), labeling="every")
    with pytest.raises(GflowInputError, match="`inputs`"):
        gflow.objectives.EmpiricalLoss(np.full((10, T), np.nan), np.zeros(10))
    with pytest.raises(GflowInputError, match="`whiten=True`"):
        gflow.objectives.EmpiricalLoss.from_teacher(jax.random.key(0), balanced_teacher, 3, T, whiten=True)
    with pytest.raises(GflowInputError, match="teacher_response"):
        gflow.objectives.EmpiricalLoss(data.inputs, data.labels).quadratic_form(general_start)
    with pytest.raises(GflowInputError, match="`teacher`"):
        gflow.objectives.FreshGaussianSequences(object(), T)
    with pytest.raises(GflowInputError, match="`length`"):
        gflow.objectives.FreshGaussianSequences(balanced_teacher, 0)
    with pytest.raises(GflowInputError, match="`k_max`"):
        gflow.objectives.FreshGaussianSequences(balanced_teacher, T, k_max=T - 1)
