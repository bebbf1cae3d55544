"""Teachers of the nonlinear papers against their defining formulas; the GRU teacher fit; adversarial labels."""

import functools

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gflow
from gflow import GflowInputError
from gflow.objectives import nonlinear_teachers as nt

key = jax.random.key
L, D, EPS = 5, 4, 0.2
call = eqx.filter_jit(lambda f, *args: f(*args))  # one compiled call instead of many eager operations


@pytest.fixture(scope="module")
def tokens():
    return gflow.objectives.normalized_token_sequences(key(0), 3, L, D, eps_x=EPS)


def test_normalized_sequences_follow_definition_3_1(tokens):
    x = np.asarray(tokens)
    np.testing.assert_array_equal(x[:, 0], [[0, 0, 0, 1]] * 3)
    np.testing.assert_array_equal(x[:, -1], [[0, 0, 0, 1]] * 3)
    bar = np.asarray(jax.vmap(lambda s: gflow.objectives.true_tokens(s, EPS))(tokens))
    np.testing.assert_allclose(np.linalg.norm(bar, axis=-1), 1.0, rtol=1e-14)
    np.testing.assert_allclose(bar[..., -1], 0.5, rtol=1e-14)
    np.testing.assert_array_equal(x[:, 1:-1, -1], 0.0)
    np.testing.assert_array_equal(gflow.objectives.null_sequence(L, D)[1:-1], 0.0)


def test_token_sum_teacher_is_a_sum_over_earlier_tokens(tokens):
    teacher = nt.token_sum_teacher(key(1), L, D, eps_x=EPS, p=2, phi=jnp.sin)
    w, b = np.asarray(teacher.w), np.asarray(teacher.b)
    bar = np.asarray(gflow.objectives.true_tokens(tokens[0], EPS))
    expected = np.zeros(L)
    for j in range(3, L + 1):  # 1-based output position
        for i in range(2, j):  # 1-based true-token position
            expected[j - 1] += np.sum(b[i - 2, j - 1, :, 0] * np.sin(w[i - 2, j - 1, :, 0] @ bar[i - 2]))
    np.testing.assert_allclose(call(teacher, tokens[0]), expected, rtol=1e-13, atol=1e-15)


def test_sequence_concept_teacher_acts_on_the_concatenated_sequence(tokens):
    teacher = nt.sequence_concept_teacher(key(2), L, D, eps_x=EPS, p=3, n_out=2)
    bar = np.asarray(gflow.objectives.true_tokens(tokens[1], EPS)).reshape(-1)
    w, b = np.asarray(teacher.w), np.asarray(teacher.b)
    np.testing.assert_allclose(np.linalg.norm(w, axis=-1), 1.0, rtol=1e-14)
    y = np.asarray(call(teacher, tokens[1]))
    assert y.shape == (L, 2) and np.all(y[:-1] == 0)
    np.testing.assert_allclose(y[-1], np.sum(b * (w @ bar) ** 2, axis=0), rtol=1e-13)


def test_transport_teacher_is_the_monte_carlo_mean_of_equation_8():
    teacher = nt.transport_teacher(key(3), 2, alpha=0.6, n_samples=6)
    x = np.asarray(gflow.objectives.unit_ball_sequences(key(4), 1, 4, 2)[0])
    w0, u0 = np.asarray(teacher.network.W), np.asarray(teacher.network.A)
    vw, vu = np.asarray(teacher.v_w), np.asarray(teacher.v_u)
    y = np.zeros(4)
    for n in range(6):  # Z_t of seed 003 eq. (8) with h⁰, I⁰ of the scalar recurrence
        g, h = np.zeros(5), np.zeros(5)  # g[s], h[s]: step s = 1 … 4 (h[0] = 0)
        for s in range(1, 5):
            g[s] = w0[n] * h[s - 1] + u0[n] @ x[s - 1]
            h[s] = np.tanh(g[s])
        for t in range(1, 5):
            for k in range(t):
                chain = np.prod([1 - np.tanh(g[t - s]) ** 2 for s in range(k + 1)])
                y[t - 1] += w0[n] ** k * (vu[n] @ x[t - k - 1] + vw[n] * h[t - k - 1]) * chain / 6
    np.testing.assert_allclose(call(teacher, x), y, rtol=1e-12, atol=1e-15)
    assert set(np.abs(w0)) == {0.6} and np.all(np.linalg.norm(vu, axis=1) <= 1.0 + 1e-12)
    assert gflow.analysis.transport_error_bound(teacher, 4) > 0


def test_gru_teacher_fits_its_impulse_response():
    target = nt.damped_oscillation(12)
    teacher = gflow.discrete.fit_gru_teacher(key(5), 3, target=target, steps=300, lr=1e-2)
    start = gflow.models.gru(key(5), 3, scale=1e-6)
    fit = gflow.objectives.SampleLoss(gflow.objectives.impulse(12)[None], target[None])
    assert float(call(fit, teacher)) < 1e-2 * float(call(fit, start))


def test_adversarial_late_labels_agree_up_to_k():
    memoryless = gflow.teachers.memoryless(2.0)
    adversarial = nt.AdversarialLateLabels(memoryless, 3, late_response=[0.5, -1.0])
    x = jnp.arange(1.0, 8.0)
    y, clean = np.asarray(call(adversarial, x)), np.asarray(call(memoryless, x))
    np.testing.assert_array_equal(y[:3], clean[:3])
    late = np.array([0.5 * x[t - 3] + (-1.0 * x[t - 4] if t >= 4 else 0.0) for t in range(3, 7)])
    np.testing.assert_allclose(y[3:], clean[3:] + late, rtol=1e-14)
    np.testing.assert_array_equal(adversarial(x[:3]), memoryless(x[:3]))  # a length-k sequence: no change


def test_teachers_label_a_sample_loss(tokens):
    teacher = nt.token_sum_teacher(key(6), L, D, eps_x=EPS)
    sampler = functools.partial(gflow.objectives.normalized_token_sequences, d=D, eps_x=EPS)
    loss = gflow.objectives.SampleLoss.from_teacher(key(7), teacher, 3, L, sampler=sampler, steps=range(3, L + 1))
    assert loss.inputs.shape == (3, L, D) and float(loss.step_weights[:2].sum()) == 0.0


def test_bad_teachers():
    with pytest.raises(GflowInputError, match="`phi`"):
        nt.token_sum_teacher(key(0), L, D, eps_x=EPS, phi=jnp.cos)
    with pytest.raises(GflowInputError, match="`d`"):
        nt.sequence_concept_teacher(key(0), L, 2, eps_x=EPS)
    with pytest.raises(GflowInputError, match="`v_w`"):
        nt.transport_teacher(key(0), alpha=0.5, n_samples=4, nu_w=0.1, v_w=[0.5, 0.0])
    with pytest.raises(GflowInputError, match="`v_u`"):
        nt.transport_teacher(key(0), alpha=0.5, n_samples=4, v_u=lambda u: 3.0 * jnp.ones_like(u))
    with pytest.raises(GflowInputError, match="`k`"):
        nt.AdversarialLateLabels(gflow.teachers.memoryless(1.0), 0)
    with pytest.raises(GflowInputError, match="`eps_x`"):
        gflow.objectives.normalized_token_sequences(key(0), 2, L, D, eps_x=0.0)
