"""SampleLoss: the population loss of a nonlinear RNN on a fixed sample: equals the direct mean, residuals give
L = ‖r‖², its Monte-Carlo standard error falls like N^{-1/2}, supervised steps, SGD minibatches, bad input."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gflow
from gflow import GflowInputError

key = jax.random.key
T, H, N = 5, 3, 40  # the sizes of the other nonlinear tests: each new shape costs compilations


@pytest.fixture(scope="module")
def student():
    return gflow.models.gru(key(0), H)


@pytest.fixture(scope="module")
def teacher():
    return gflow.models.gru(key(1), H)


def test_loss_is_the_direct_mean_of_squared_errors(student, teacher):
    loss = gflow.objectives.SampleLoss.from_teacher(key(2), teacher, N, T, steps=[2, 5], convention="half")
    x = gflow.objectives.gaussian_sequences(key(2), N, T)  # the default sampler with the same key
    np.testing.assert_array_equal(loss.inputs, x)
    err = np.asarray(jax.vmap(student)(x) - jax.vmap(teacher)(x))
    direct = 0.5 * np.mean(err[:, 1] ** 2 + err[:, 4] ** 2)
    assert float(loss(student)) == pytest.approx(direct, rel=1e-13)
    r = loss.residuals(student)
    assert r.shape == (N * 2,) and float(r @ r) == pytest.approx(direct, rel=1e-13)  # supervised steps only
    assert float(jnp.mean(loss.per_sequence(student))) == pytest.approx(direct, rel=1e-13)
    assert float(loss(teacher)) == 0.0


def test_standard_error_shrinks_like_one_over_root_n(student, teacher):
    loss = gflow.objectives.SampleLoss.from_teacher(key(3), teacher, 1600, T)
    parts = [eqx.tree_at(lambda l: (l.inputs, l.labels), loss, (loss.inputs[i::16], loss.labels[i::16]))
             for i in range(16)]  # 16 disjoint samples of 100
    standard_error = eqx.filter_jit(lambda part, model: part.standard_error(model))  # compiled once per size
    small = np.mean([float(standard_error(part, student)) for part in parts])
    assert small / float(standard_error(loss, student)) == pytest.approx(4.0, rel=0.25)  # √(1600/100)


def test_standard_error_is_the_sample_std_over_root_n(student, teacher):
    loss = gflow.objectives.SampleLoss.from_teacher(key(3), teacher, N, T, steps="last")
    per = np.asarray(loss.per_sequence(student))
    assert float(loss.standard_error(student)) == pytest.approx(np.std(per, ddof=1) / np.sqrt(N), rel=1e-12)


def test_steps_select_the_supervised_outputs():
    x = np.zeros((2, 4))
    assert list(gflow.objectives.SampleLoss(x, x, steps="last").step_weights) == [0, 0, 0, 1]
    assert list(gflow.objectives.SampleLoss(x, x, steps=range(3, 5)).step_weights) == [0, 0, 1, 1]
    assert list(gflow.objectives.SampleLoss(x, x).step_weights) == [1, 1, 1, 1]


def test_minibatches_for_sgd(student, teacher):
    loss = gflow.objectives.SampleLoss.from_teacher(key(4), teacher, N, T)
    state = loss.minibatch_init(key(5), 4)
    batch, _ = loss.minibatch(state, 0, 4)
    assert isinstance(batch, gflow.objectives.SampleLoss) and batch.n == 4 and loss.full_loss is loss
    traj = gflow.discrete.run_sgd(loss, student, lr=0.05, steps=20, batch_size=4, key=key(6), save_at=np.arange(21), progress=False)
    assert traj.status == "completed" and traj.loss[-1] < traj.loss[0]


def raises_naming(name):
    return pytest.raises(GflowInputError, match=f"`{name}`")


def test_bad_input(student, teacher):
    x = np.zeros((3, 4))
    with raises_naming("labels"):
        gflow.objectives.SampleLoss(x, np.zeros((3, 5)))
    with raises_naming("steps"):
        gflow.objectives.SampleLoss(x, x, steps=[0, 2])
    with raises_naming("steps"):
        gflow.objectives.SampleLoss(x, x, steps="first")
    with raises_naming("convention"):
        gflow.objectives.SampleLoss(x, x, convention="mean")
    with raises_naming("teacher"):
        gflow.objectives.SampleLoss.from_teacher(key(0), 3.0, 4, 4)
    with raises_naming("sampler"):
        gflow.objectives.SampleLoss.from_teacher(key(0), teacher, 4, 4, sampler=lambda k, n, t: jnp.zeros((n, t + 1)))
    vector = gflow.objectives.SampleLoss(x, np.zeros((3, 4, 2)))
    with pytest.raises(GflowInputError, match="do not match"):
        vector(eqx.tree_at(lambda m: m.c0, student, student.c0))


@pytest.mark.parametrize("steps, n_out, constructor", [("last", None, gflow.models.elman_panigrahi_goyal),
                                                        ("all", None, gflow.models.elman_allen_zhu_li),
                                                        (range(2, 5), 2, gflow.models.elman_panigrahi_goyal)])
@pytest.mark.slow
def test_residual_jacobian_per_sequence_equals_autodiff(steps, n_out, constructor):
    """The per-sequence residual Jacobian (what the stiff solver's Gauss–Newton matrix uses) equals jacrev of the
    residuals, which hold the supervised steps only; fixed layers (Frozen) get no columns."""
    from gflow import flatten
    from gflow.flow import GradientFlowTerm

    teacher = constructor(jax.random.key(1), 5, activation="tanh", n_out=n_out)
    loss = gflow.objectives.SampleLoss.from_teacher(jax.random.key(2), teacher, 7, 4, steps=steps)
    model = constructor(jax.random.key(3), 6, activation="tanh", n_out=n_out)
    theta, static, unravel = flatten(model)
    term = GradientFlowTerm(loss, static, unravel)
    r = term.residuals(theta)
    n_steps = {"last": 1, "all": 4}.get(steps, 3)
    assert r.shape == (7 * n_steps * (n_out or 1),)
    np.testing.assert_allclose(float(jnp.sum(r * r)), float(loss(model)), rtol=1e-14)
    J = term.residual_jacobian(theta)
    np.testing.assert_allclose(J, jax.jacrev(term.residuals)(theta), rtol=0, atol=1e-14)


@pytest.mark.slow
def test_sample_loss_flow_uses_the_gauss_newton_solver():
    """The default (stiff) solver and Tsit5 agree on a small Elman flow."""
    teacher = gflow.models.elman_panigrahi_goyal(jax.random.key(1), 4, activation="tanh", output_scale=0.5)
    loss = gflow.objectives.SampleLoss.from_teacher(jax.random.key(2), teacher, 16, 5, steps="last")
    model0 = gflow.models.elman_panigrahi_goyal(jax.random.key(3), 8, activation="tanh", output_scale=8 ** -0.5)
    stiff = gflow.solve_flow(loss, model0, 5.0, rtol=1e-9, save_at=3, progress=False)
    explicit = gflow.solve_flow(loss, model0, 5.0, rtol=1e-9, save_at=3, solver="tsit5", progress=False)
    assert stiff.config["solver"] == "rosenbrock"
    assert stiff.loss[-1] < 0.5 * stiff.loss[0]
    np.testing.assert_allclose(stiff.params[-1], explicit.params[-1], rtol=0, atol=1e-6)
