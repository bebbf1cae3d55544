"""gflow.analysis diagnostics of Slutzky et al. (NeurIPS 2025): effective rank, top |eigenvalues|, the per-lag
gradient coefficients γ^(l) of Proposition 1 and the relative extrapolation error, each against numpy."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gflow
from gflow import analysis as an


def _diagonal(a, b=None, c=None, trained=("A", "B", "C")):
    a = np.asarray(a, dtype=np.float64)
    ones = np.ones_like(a)
    return gflow.LinearRNN(a, ones if b is None else b, ones if c is None else c, structure="diagonal",
                           trained=trained)


def _slutzky_teacher(d):
    """Their teacher: A* = diag(1, 0), B* = C*ᵀ = (1, √(d − 1)), so h*_0 = d and h*_j = 1 for j ≥ 1."""
    b = np.array([1.0, np.sqrt(d - 1.0)])
    return gflow.LinearRNN(np.array([1.0, 0.0]), b, b, structure="diagonal")


def _their_erank(magnitudes):
    """Slutzky et al.'s common/plotting.py effective rank, in numpy (L1-normalised magnitudes, natural log)."""
    p = np.asarray(magnitudes) / np.sum(magnitudes)
    p = p[p > 0]
    return float(np.exp(-np.sum(p * np.log(p))))


# --- effective rank ---------------------------------------------------------------------------------------------

def test_effective_rank_by_hand():
    d = 6
    assert float(an.effective_rank(_diagonal([1.0] + [0.0] * (d - 1)))) == 1.0
    assert float(an.effective_rank(_diagonal([0.3] * d))) == pytest.approx(d, rel=1e-14)
    assert float(an.effective_rank(_diagonal([0.5, -0.5]))) == pytest.approx(2.0, rel=1e-14)  # magnitudes
    # p = (1/2, 1/4, 1/4): H = (3/2) ln 2, erank = 2^{3/2}
    assert float(an.effective_rank(_diagonal([2.0, -1.0, 1.0, 0.0]))) == pytest.approx(2 ** 1.5, rel=1e-14)


def test_effective_rank_of_zero_transition_is_zero_not_nan():
    assert float(an.effective_rank(_diagonal(np.zeros(5)))) == 0.0
    general = gflow.LinearRNN(np.zeros((3, 3)), np.ones(3), np.ones(3))
    assert float(an.effective_rank(general)) == 0.0
    zero = _diagonal(np.zeros(4))
    g = jax.grad(lambda a: an.effective_rank(eqx.tree_at(lambda m: m.A, zero, a)))(jnp.zeros(4))
    assert np.all(np.isfinite(g))


def test_effective_rank_matches_their_code_on_random_vectors():
    rng = np.random.default_rng(0)
    for d in (3, 10, 50):
        a = rng.uniform(-1, 1, d) * rng.uniform(0, 1, d) ** 3
        assert float(an.effective_rank(_diagonal(a))) == pytest.approx(_their_erank(np.abs(a)), rel=1e-13)


def test_effective_rank_uses_singular_values_off_the_diagonal():
    rng = np.random.default_rng(1)
    S = rng.normal(size=(5, 5))
    S = S + S.T
    sym = gflow.LinearRNN(S, np.ones(5), np.ones(5), structure="symmetric")
    ref = _their_erank(np.abs(np.linalg.eigvalsh(S)))
    assert float(an.effective_rank(sym)) == pytest.approx(ref, rel=1e-12)
    assert ref == pytest.approx(_their_erank(np.linalg.svd(S, compute_uv=False)), rel=1e-12)
    G = rng.normal(size=(5, 5))
    general = gflow.LinearRNN(G, np.ones(5), np.ones(5))
    sv = _their_erank(np.linalg.svd(G, compute_uv=False))
    assert float(an.effective_rank(general)) == pytest.approx(sv, rel=1e-12)
    assert abs(sv - _their_erank(np.abs(np.linalg.eigvals(G)))) > 1e-3  # the |eigenvalue| reading differs
    nilpotent = gflow.LinearRNN(np.array([[0.0, 1.0], [0.0, 0.0]]), np.ones(2), np.ones(2))
    assert float(an.effective_rank(nilpotent)) == 1.0  # σ = (1, 0), while every eigenvalue is 0


def test_effective_rank_jit_vmap_and_no_dense_matrix():
    d = 4000
    a = np.random.default_rng(2).uniform(0, 1, d)
    model = _diagonal(a, trained=("A",))
    jaxpr = str(jax.make_jaxpr(lambda m: an.effective_rank(m))(model))
    assert f"{d},{d}" not in jaxpr
    assert float(eqx.filter_jit(an.effective_rank)(model)) == pytest.approx(_their_erank(a), rel=1e-12)
    As = np.random.default_rng(3).uniform(-1, 1, (4, 7))
    base = _diagonal(As[0])
    batched = jax.vmap(lambda x: an.effective_rank(eqx.tree_at(lambda m: m.A, base, x)))(jnp.asarray(As))
    np.testing.assert_allclose(batched, [_their_erank(np.abs(x)) for x in As], rtol=1e-13)


def test_effective_rank_refuses_other_models():
    elman = gflow.models.ElmanRNN(np.eye(2), np.ones((2, 1)), np.ones((1, 2)))
    with pytest.raises(gflow.GflowInputError, match="needs a gflow.LinearRNN"):
        an.effective_rank(elman)


# --- top |eigenvalues| --------------------------------------------------------------------------------------------

def test_top_eigenvalue_magnitudes_diagonal_symmetric_general():
    rng = np.random.default_rng(4)
    a = rng.uniform(-1, 1, 9)
    np.testing.assert_array_equal(an.top_eigenvalue_magnitudes(_diagonal(a), 4), np.sort(np.abs(a))[::-1][:4])
    S = rng.normal(size=(6, 6))
    S = S + S.T
    sym = gflow.LinearRNN(S, np.ones(6), np.ones(6), structure="symmetric")
    np.testing.assert_allclose(an.top_eigenvalue_magnitudes(sym, 3),
                               np.sort(np.abs(np.linalg.eigvalsh(S)))[::-1][:3], rtol=1e-12)
    G = rng.normal(size=(6, 6))
    general = gflow.LinearRNN(G, np.ones(6), np.ones(6))
    np.testing.assert_allclose(an.top_eigenvalue_magnitudes(general, 6),
                               np.sort(np.abs(np.linalg.eigvals(G)))[::-1], rtol=1e-12)


def test_top_eigenvalue_magnitudes_traceable_and_bad_k():
    a = np.random.default_rng(5).uniform(-1, 1, (3, 8))
    base = _diagonal(a[0], trained=("A",))
    top = jax.jit(jax.vmap(lambda x: an.top_eigenvalue_magnitudes(eqx.tree_at(lambda m: m.A, base, x), 2)))(a)
    np.testing.assert_array_equal(top, np.sort(np.abs(a), axis=1)[:, ::-1][:, :2])
    for k in (0, 9):
        with pytest.raises(gflow.GflowInputError, match="`k`"):
            an.top_eigenvalue_magnitudes(base, k)
    with pytest.raises(gflow.GflowInputError, match="integer"):
        an.top_eigenvalue_magnitudes(base, 2.0)


# --- γ^(l), Proposition 1 -----------------------------------------------------------------------------------------

def _losses(teacher):
    rng = np.random.default_rng(6)
    return [gflow.PopulationLoss(teacher, 6), gflow.PopulationLoss(teacher, 5, weighting="accumulating"),
            gflow.PopulationLoss(teacher, 5, convention="half"),
            gflow.PopulationLoss.at_lags(teacher, {6: 0.5, 1: 0.5}),
            gflow.PopulationLoss(teacher, 7, weighting=rng.uniform(0, 2, 7))]


@pytest.mark.parametrize("trained", [("A",), ("A", "B", "C")])
def test_gamma_gives_the_diagonal_gradient(trained):
    rng = np.random.default_rng(7)
    d = 5
    model = _diagonal(rng.uniform(-0.9, 0.9, d), rng.normal(size=d), rng.normal(size=d), trained=trained)
    a, b, c = (np.asarray(x) for x in model.layers())
    for loss in _losses(_slutzky_teacher(4)):
        grad = jax.grad(lambda x, f=loss: f(eqx.tree_at(lambda m: m.A, model, x)))(model.A)
        gamma = np.asarray(an.lag_gradient_coefficients(loss, model))
        assert gamma.shape == (loss.n_lags - 1,)
        poly = sum(g * a**lag for lag, g in enumerate(gamma))
        np.testing.assert_allclose(-np.asarray(grad), b * c * poly, rtol=1e-11, atol=1e-13)
        assert np.max(np.abs(gamma)) > 1e-3  # the identity is not 0 = 0


def test_gamma_matches_their_callback_on_the_special_sequence_design():
    """Slutzky et al. L = 7, d = 4: a baseline sequence (1 at t = 0) and a special one (1 at t = L − 2), last
    output labelled by the teacher, δ = y − ŷ from a numpy simulation, γ^(l) = (2(l+1)/n) Σ_i δ_i x_{i,L−2−l}."""
    L, d = 7, 4
    teacher = _slutzky_teacher(d)
    model = _diagonal([0.7, 0.5, 0.2, -0.1], trained=("A",))
    a = np.asarray(model.layers()[0])
    x = np.zeros((2, L))
    x[0, 0], x[1, L - 2] = 1.0, 1.0

    def last_output(A, B, C, seq):
        s = np.zeros(len(A))
        for xt in seq:
            s = A * s + B * xt
        return C @ s

    tb = np.array([1.0, np.sqrt(d - 1.0)])
    delta = np.array([last_output(np.array([1.0, 0.0]), tb, tb, s) - last_output(a, np.ones(d), np.ones(d), s)
                      for s in x])
    theirs = np.array([2 * (lag + 1) / 2 * np.sum(delta * x[:, L - 2 - lag]) for lag in range(L - 1)])
    ours = np.asarray(an.lag_gradient_coefficients(gflow.PopulationLoss.at_lags(teacher, {L - 1: 0.5, 1: 0.5}), model))
    np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=1e-15)
    assert theirs[0] != 0 and theirs[L - 2] != 0 and np.all(theirs[1:L - 2] == 0)
    assert ours[0] == pytest.approx(1.0 - np.sum(a), rel=1e-13)  # γ^(0) = (2/n)(h*_1 − h_1), n = 2


def test_gamma_general_reading_of_the_matrix_gradient():
    rng = np.random.default_rng(8)
    d = 4
    A, B, C = 0.4 * rng.normal(size=(d, d)), rng.normal(size=d), rng.normal(size=d)
    model = gflow.LinearRNN(A, B, C)
    loss = gflow.PopulationLoss(_slutzky_teacher(3), 5, weighting="accumulating")
    grad = np.asarray(eqx.filter_grad(loss)(model).A)
    gamma = np.asarray(an.lag_gradient_coefficients(loss, model))
    mp = np.linalg.matrix_power
    expected = sum(g / (lag + 1) * sum(np.outer(mp(A.T, s) @ C, mp(A, lag - s) @ B) for s in range(lag + 1))
                   for lag, g in enumerate(gamma))
    np.testing.assert_allclose(-grad, expected, rtol=1e-11, atol=1e-13)


def test_gamma_traceable_and_refusals():
    teacher = _slutzky_teacher(3)
    loss = gflow.PopulationLoss(teacher, 4)
    models = np.random.default_rng(9).uniform(-1, 1, (3, 3))
    base = _diagonal(models[0], trained=("A",))
    f = jax.jit(jax.vmap(lambda x: an.lag_gradient_coefficients(loss, eqx.tree_at(lambda m: m.A, base, x))))
    np.testing.assert_allclose(f(models)[1], an.lag_gradient_coefficients(loss, _diagonal(models[1])), rtol=1e-14)
    assert an.lag_gradient_coefficients(gflow.PopulationLoss(teacher, 1), base).shape == (0,)
    with pytest.raises(gflow.GflowInputError, match="PopulationLoss"):
        an.lag_gradient_coefficients(lambda m: 0.0, base)
    mimo_teacher = gflow.LinearRNN(np.eye(2), np.eye(2), np.eye(2))
    with pytest.raises(gflow.GflowInputError, match="SISO.*model is MIMO"):
        an.lag_gradient_coefficients(gflow.PopulationLoss(mimo_teacher, 3), mimo_teacher)
    with pytest.raises(gflow.GflowInputError, match="SISO.*teacher is MIMO"):
        an.lag_gradient_coefficients(gflow.PopulationLoss(mimo_teacher, 3), base)
    with pytest.raises(gflow.GflowInputError, match="LinearRNN"):
        an.lag_gradient_coefficients(loss, gflow.models.ElmanRNN(np.eye(2), np.ones((2, 1)), np.ones((1, 2))))


# --- relative extrapolation error ------------------------------------------------------------------------------

def test_relative_extrapolation_error_by_hand_and_numpy():
    d = 10
    teacher = _slutzky_teacher(d)
    # a = (1, 0.1, 0, …): h_0 = d = h*_0, h_j = 1 + 0.1^j, so the error is 0.1 at lag 1, over max|h*| = d
    student = _diagonal([1.0, 0.1] + [0.0] * (d - 2), trained=("A",))
    assert float(an.relative_extrapolation_error(student, teacher)) == pytest.approx(0.1 / d, rel=1e-14)
    a = np.random.default_rng(10).uniform(-0.5, 1.0, d)
    h = np.array([np.sum(a**j) for j in range(20)])
    h_star = np.array([d] + [1.0] * 19)
    ref = np.max(np.abs(h - h_star)) / d
    assert float(an.relative_extrapolation_error(_diagonal(a), teacher)) == pytest.approx(ref, rel=1e-12)
    assert float(an.relative_extrapolation_error(_diagonal(a), teacher, horizon=3)) == pytest.approx(
        np.max(np.abs(h - h_star)[:3]) / d, rel=1e-12)


def test_relative_extrapolation_error_mimo_and_traced():
    rng = np.random.default_rng(11)
    A, B, C = 0.5 * rng.normal(size=(3, 3)), rng.normal(size=(3, 2)), rng.normal(size=(2, 3))
    teacher, student = gflow.LinearRNN(A, B, C), gflow.LinearRNN(A + 0.01, B, C)
    mp = np.linalg.matrix_power
    h = np.stack([C @ mp(A + 0.01, j) @ B for j in range(8)])
    w = np.stack([C @ mp(A, j) @ B for j in range(8)])
    ref = np.max(np.abs(h - w)) / np.max(np.abs(w))
    assert float(an.relative_extrapolation_error(student, teacher, 8)) == pytest.approx(ref, rel=1e-12)
    jitted = eqx.filter_jit(lambda m, t: an.relative_extrapolation_error(m, t, 8))
    assert float(jitted(student, teacher)) == pytest.approx(ref, rel=1e-12)


def test_relative_extrapolation_error_zero_teacher():
    zero = gflow.LinearRNN(np.zeros(2), np.zeros(2), np.ones(2), structure="diagonal")
    student = _diagonal([0.5, 0.1])
    with pytest.raises(gflow.GflowInputError, match="teacher's impulse response is zero"):
        an.relative_extrapolation_error(student, zero)
    assert float(eqx.filter_jit(an.relative_extrapolation_error)(student, zero)) == np.inf
    with pytest.raises(gflow.GflowInputError, match="horizon"):
        an.relative_extrapolation_error(student, _slutzky_teacher(2), horizon=0)


# --- as solve_flow diagnostics ---------------------------------------------------------------------------------

def test_all_four_as_solve_flow_diagnostics():
    d, L = 4, 5
    teacher = _slutzky_teacher(d)
    loss = gflow.PopulationLoss.at_lags(teacher, {L - 1: 0.5, 1: 0.5})
    model0 = _diagonal([0.3, 0.25, 0.1, 0.05], trained=("A",))
    diagnostics = {"erank": an.effective_rank, "top": lambda m: an.top_eigenvalue_magnitudes(m, 2),
                   "gamma": lambda m: an.lag_gradient_coefficients(loss, m),
                   "ext": lambda m: an.relative_extrapolation_error(m, teacher)}
    traj = gflow.solve_flow(loss, model0, 20.0, save_at=np.array([0.0, 1.0, 20.0]), diagnostics=diagnostics,
                            progress=False)
    assert traj.diagnostics["gamma"].shape == (3, L - 1) and traj.diagnostics["top"].shape == (3, 2)
    assert traj.loss[-1] < 1e-3 * traj.loss[0]
    for i in range(3):
        a = np.asarray(traj.params[i])  # B, C frozen: θ = a
        np.testing.assert_allclose(traj.diagnostics["erank"][i], _their_erank(np.abs(a)), rtol=1e-12)
        np.testing.assert_array_equal(traj.diagnostics["top"][i], np.sort(np.abs(a))[::-1][:2])
        h = np.array([np.sum(a**j) for j in range(20)])
        np.testing.assert_allclose(traj.diagnostics["ext"][i],
                                   np.max(np.abs(h - np.array([d] + [1.0] * 19))) / d, rtol=1e-12)
        r = h[:L] - np.array([d] + [1.0] * (L - 1))
        gamma = np.zeros(L - 1)
        gamma[0], gamma[L - 2] = -2 * 1 * 0.5 * r[1], -2 * (L - 1) * 0.5 * r[L - 1]
        np.testing.assert_allclose(traj.diagnostics["gamma"][i], gamma, rtol=1e-10, atol=1e-14)
    assert traj.diagnostics["erank"][-1] < traj.diagnostics["erank"][0]  # training concentrates the spectrum
