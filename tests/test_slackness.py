"""gflow.analysis.slackness: complementary slackness of seed 001 Thm 6.1 (symmetric, general, MIMO) and bounds."""

import jax
import numpy as np
import pytest

import gflow
from gflow import analysis as an, initializers


def _slack_point(w=2.0):
    """A = U diag(0, 0.7, −0.4) Uᵀ with c̃ = (√w, 0, 0): exactly complementary slack, zero loss for w* = w."""
    rng = np.random.default_rng(0)
    U, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    c_tilde = np.array([np.sqrt(w), 0.0, 0.0])
    A = U @ np.diag([0.0, 0.7, -0.4]) @ U.T
    c = U @ c_tilde
    return gflow.LinearRNN(A, c, c, structure="symmetric")


def test_residual_zero_at_exact_complementary_slack_point():
    model = _slack_point()
    modes = an.slackness_modes(model)
    assert float(np.max(modes.residual)) < 1e-15
    assert float(an.slackness_residual(model)) < 1e-15
    assert float(an.readout_slackness_residual(model)) < 1e-15
    # ... and it extrapolates a memoryless teacher: h_j = 0 for j >= 1 (Lemma 3.2)
    h = np.asarray(model.impulse_response(10))
    assert h[0] == pytest.approx(2.0) and np.max(np.abs(h[1:])) < 1e-15


def test_residual_positive_off_slackness_and_by_hand():
    c = np.array([1.0, 0.5])
    model = gflow.LinearRNN(np.diag([0.0, -0.8]), c, c, structure="symmetric")
    modes = an.slackness_modes(model)
    np.testing.assert_allclose(modes.eigenvalues, [-0.8, 0.0])
    np.testing.assert_allclose(modes.residual, [0.8 * 0.25, 0.0], atol=1e-16)
    np.testing.assert_allclose(modes.readout_residual, [0.8 * 0.5, 0.0], atol=1e-16)
    assert float(an.slackness_residual(model)) == pytest.approx(0.2)


def test_unbalanced_product_form():
    model = gflow.LinearRNN(np.array([0.5, 2.0]), np.array([1.0, 3.0]), np.array([-2.0, 0.1]), structure="diagonal")
    modes = an.slackness_modes(model)
    np.testing.assert_allclose(modes.residual, [0.5 * 2.0, 2.0 * 0.3], rtol=1e-15)
    np.testing.assert_allclose(modes.input_residual, [0.5, 6.0], rtol=1e-15)
    np.testing.assert_allclose(modes.readout_residual, [1.0, 0.2], rtol=1e-15)


def test_bound_holds_on_symmetric_class():
    """max_i |λ_i c̃_i| ≤ L^{1/4} at any balanced symmetric point, memoryless teacher, k ≥ 3 (derived here from seed
    001 Thm 6.1's argument)."""
    teacher = gflow.teachers.memoryless(1.0)
    for seed in range(5):
        model = initializers.balanced(jax.random.key(seed), 6, scale=0.6)
        for k in (3, 6):
            L = float(gflow.PopulationLoss(teacher, k)(model))
            assert float(an.readout_slackness_residual(model)) <= an.slackness_bound(L) * (1 + 1e-12)
            assert float(an.slackness_bound(L / 2, convention="half")) == pytest.approx(an.slackness_bound(L))
            rho = float(an.spectral_radius(model))
            h = np.abs(np.asarray(model.impulse_response(12)))
            j = np.arange(2, 12)
            assert np.all(h[2:] <= an.impulse_response_bound(L, rho, j) * (1 + 1e-12))


def test_bound_bad_input():
    with pytest.raises(gflow.GflowInputError, match="nonnegative"):
        an.slackness_bound(-1.0)
    with pytest.raises(gflow.GflowInputError, match="convention"):
        an.slackness_bound(1.0, convention="L2")
    with pytest.raises(gflow.GflowInputError, match="j >= 2"):
        an.impulse_response_bound(1.0, 0.5, 1)


def test_mimo_modes():
    """MIMO (seed 001 App. C, eq. 27): |λ_i|·‖C u_i‖ and |λ_i|·‖u_iᵀ B‖."""
    model = initializers.balanced(jax.random.key(2), 4, scale=0.7, n=2)
    modes = an.slackness_modes(model)
    A = np.asarray(model.transition())
    lam, U = np.linalg.eigh(A)
    Cu = np.linalg.norm(np.asarray(model.C) @ U, axis=0)
    uB = np.linalg.norm(U.T @ np.asarray(model.B), axis=1)
    np.testing.assert_allclose(modes.readout_residual, np.abs(lam) * Cu, rtol=1e-12)
    np.testing.assert_allclose(modes.input_residual, np.abs(lam) * uB, rtol=1e-12)
    np.testing.assert_allclose(modes.residual, np.abs(lam) * Cu * uB, rtol=1e-12)
    assert modes.readout_projection.shape == (4, 2)


def test_mimo_exact_slack_point():
    rng = np.random.default_rng(3)
    U, _ = np.linalg.qr(rng.normal(size=(4, 4)))
    lam = np.array([0.0, 0.0, 0.9, -1.3])
    Ct = np.zeros((4, 2))
    Ct[:2] = rng.normal(size=(2, 2))  # C u_i = 0 wherever λ_i ≠ 0
    C = (U @ Ct).T
    model = gflow.LinearRNN(U @ np.diag(lam) @ U.T, C.T, C, structure="symmetric")
    assert float(an.slackness_residual(model)) < 1e-14
    assert np.max(np.abs(np.asarray(model.impulse_response(6))[1:])) < 1e-14


def test_general_path_agrees_with_symmetric_path():
    sym = initializers.symmetric(jax.random.key(4), 5, scale=0.8)  # symmetric A, unbalanced B, C
    general = gflow.LinearRNN(np.asarray(sym.transition()), sym.B, sym.C)
    ref = np.asarray(an.slackness_modes(sym).residual)
    for method in ("auto", "eig", "schur"):
        res = an.general_slackness(general, method=method)
        assert res.multiplicities.tolist() == [1] * 5
        np.testing.assert_allclose(np.real(res.centers), np.asarray(an.eigenvalues(sym)), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(res.residual, ref, rtol=1e-9, atol=1e-14)
    assert an.general_slackness(general).method == "eig"


def _reconstruct(res, n):
    from math import comb

    return np.array([np.real(sum(sum(comb(j, m) * c ** (j - m) * ms[m] for m in range(min(j + 1, len(ms))))
                                 for c, ms in zip(res.centers, res.moments))) for j in range(n)])


@pytest.mark.parametrize("mimo", [False, True])
def test_general_moments_reconstruct_impulse_response(mimo):
    kw = dict(n_in=2, n_out=3) if mimo else {}
    model = initializers.gaussian(jax.random.key(5), 6, scale=0.5, **kw)
    h = np.asarray(model.impulse_response(9))
    for method in ("eig", "schur"):
        res = an.general_slackness(model, method=method)
        np.testing.assert_allclose(_reconstruct(res, 9), h, atol=1e-12)


def test_schur_fallback_on_defective_matrix():
    """A Jordan block has no eigenvector basis: the Schur path takes over and gives finite, exact numbers."""
    lam = 0.5
    model = gflow.LinearRNN(np.array([[lam, 1.0], [0.0, lam]]), np.array([0.0, 1.0]), np.array([1.0, 0.0]))
    res = an.general_slackness(model)
    assert res.method == "schur" and res.condition > 1e6
    assert res.multiplicities.tolist() == [2]
    assert np.all(np.isfinite(res.residual))
    # h_j = j λ^{j−1}: μ_0 = C B = 0, μ_1 = C N B = 1, so the residual is |λ|·0 + 1 = 1
    assert abs(res.residues[0]) < 1e-15
    assert res.residual[0] == pytest.approx(1.0, rel=1e-12)
    np.testing.assert_allclose(_reconstruct(res, 8), np.asarray(model.impulse_response(8)), atol=1e-12)


def test_schur_fallback_mixed_defective_and_simple():
    rng = np.random.default_rng(6)
    J = np.array([[0.5, 1, 0, 0], [0, 0.5, 1, 0], [0, 0, 0.5, 0.3], [0, 0, 0, -0.2]])
    Q, _ = np.linalg.qr(rng.normal(size=(4, 4)))
    model = gflow.LinearRNN(Q @ J @ Q.T, rng.normal(size=4), rng.normal(size=4))
    # rounding splits a triple eigenvalue by ~ε^(1/3) ≈ 1e-5 (1.08e-5 with one LAPACK build, below 1e-5 with
    # another), so the default cluster_tol = 1e-5 sits on the edge: give the cluster room
    res = an.general_slackness(model, cluster_tol=1e-4)
    assert res.method == "schur"
    assert sorted(res.multiplicities.tolist()) == [1, 3]
    np.testing.assert_allclose(_reconstruct(res, 10), np.asarray(model.impulse_response(10)), atol=1e-11)


def test_general_slackness_zero_on_nilpotent_extrapolating_model():
    """A ≠ 0 yet C A^j B = 0 for j ≥ 1: A nilpotent with B in its kernel (λ = 0 cluster, μ_m = 0 for m ≥ 1)."""
    A = np.array([[0.0, 1.0], [0.0, 0.0]])
    model = gflow.LinearRNN(A, np.array([1.0, 0.0]), np.array([2.0, 0.0]))
    res = an.general_slackness(model)
    assert res.residual[0] < 1e-15
    assert np.max(np.abs(np.asarray(model.impulse_response(5))[1:])) == 0.0


def test_slackness_rejects_non_symmetric_and_bad_options():
    general = initializers.gaussian(jax.random.key(7), 3, scale=1.0)
    with pytest.raises(gflow.GflowInputError, match="symmetric"):
        an.slackness_modes(general)
    an.slackness_modes(general, symmetrize=True)
    with pytest.raises(gflow.GflowInputError, match="method"):
        an.general_slackness(general, method="qr")
    with pytest.raises(gflow.GflowInputError, match="cluster_tol"):
        an.general_slackness(general, cluster_tol=0.0)


@pytest.mark.slow
def test_slackness_as_flow_diagnostic():
    model0 = initializers.balanced(jax.random.key(8), 3, scale=0.3)
    loss = gflow.PopulationLoss(gflow.teachers.memoryless(1.0), 4)
    traj = gflow.solve_flow(loss, model0, 5.0, save_at=10, solver="tsit5",
                            diagnostics={"cs": an.readout_slackness_residual})
    assert np.all(traj.diagnostics["cs"] <= an.slackness_bound(traj.loss) * (1 + 1e-9))
