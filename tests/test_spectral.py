"""gflow.analysis.spectral: eigenvalues, spectral measures, support size, W1, moments (seed 000 §4, Thm 8)."""

import jax
import numpy as np
import pytest

import gflow
from gflow import analysis as an, initializers, teachers


def _symmetric_model(seed, d, *, balanced=True):
    if balanced:
        return initializers.balanced(jax.random.key(seed), d, scale=0.5)
    return initializers.symmetric(jax.random.key(seed), d, scale=0.5)


def test_diagonal_teacher_measure_is_its_own_atoms_and_weights():
    teacher = teachers.balanced(jax.random.key(0), 4)
    mu = an.spectral_measure(teacher)
    order = np.argsort(np.asarray(teacher.A))
    np.testing.assert_allclose(mu.atoms, np.asarray(teacher.A)[order], rtol=0, atol=0)
    np.testing.assert_allclose(mu.weights, np.asarray(teacher.B)[order] ** 2, rtol=1e-15)
    assert float(np.sum(mu.weights)) == pytest.approx(1.0, rel=1e-14)  # Ĉ B̂ = 1


@pytest.mark.parametrize("balanced", [True, False])
def test_measure_moments_are_the_impulse_response(balanced):
    model = _symmetric_model(1, 6, balanced=balanced)
    mu = an.spectral_measure(model)
    h = np.asarray(model.impulse_response(8))
    moments = np.array([np.sum(np.asarray(mu.weights) * np.asarray(mu.atoms) ** j) for j in range(8)])
    np.testing.assert_allclose(moments, h, rtol=1e-12, atol=1e-14)
    assert np.all(np.diff(np.asarray(mu.atoms)) >= 0)
    if balanced:
        assert np.all(np.asarray(mu.weights) >= 0)


def test_normalized_measure_and_moments():
    model = _symmetric_model(2, 5)
    mu = an.spectral_measure(model, normalize=True)
    assert float(np.sum(mu.weights)) == pytest.approx(1.0, rel=1e-14)
    h = np.asarray(model.impulse_response(6))
    np.testing.assert_allclose(an.normalized_moments(model, 6), h / h[0], rtol=1e-14)
    np.testing.assert_allclose(an.normalized_moments(mu, 6), h / h[0], rtol=1e-11)


def test_measure_of_general_model_that_is_symmetric_and_symmetrize_option():
    sym = _symmetric_model(3, 4)
    general = gflow.LinearRNN(np.asarray(sym.transition()), sym.B, sym.C)
    np.testing.assert_allclose(an.spectral_measure(general).weights, an.spectral_measure(sym).weights, rtol=1e-12)
    skew = gflow.LinearRNN(np.asarray(sym.transition()) + np.triu(np.ones((4, 4)), 1), sym.B, sym.C)
    with pytest.raises(gflow.GflowInputError, match="symmetric"):
        an.spectral_measure(skew)
    an.spectral_measure(skew, symmetrize=True)  # accepted: sym(A) is used


def test_eigenvalues_symmetric_sorted_and_general_complex():
    sym = _symmetric_model(4, 5)
    lam = np.asarray(an.eigenvalues(sym))
    np.testing.assert_allclose(lam, np.linalg.eigvalsh(np.asarray(sym.transition())), rtol=1e-13, atol=1e-15)
    general = initializers.gaussian(jax.random.key(5), 5, scale=1.0)
    lam_g = np.asarray(an.eigenvalues(general))
    np.testing.assert_allclose(np.sort_complex(lam_g), np.sort_complex(np.linalg.eigvals(np.asarray(general.A))),
                               rtol=1e-12)
    assert float(an.spectral_radius(general)) == pytest.approx(np.max(np.abs(lam_g)), rel=1e-14)


def test_eigenvalues_traceable_as_diagnostic():
    sym = _symmetric_model(6, 3)
    lam = jax.jit(an.eigenvalues)(sym)
    np.testing.assert_allclose(lam, an.eigenvalues(sym), rtol=1e-14)
    g = jax.jit(lambda m: an.spectral_measure(m).weights)(sym)
    np.testing.assert_allclose(g, an.spectral_measure(sym).weights, rtol=1e-13)


def test_wasserstein_closed_forms():
    mu = an.DiscreteMeasure(np.array([0.1, 0.7]), np.array([0.3, 0.7]))
    assert an.wasserstein1(mu, mu) == 0.0
    x, y, w = -0.4, 0.9, 2.5
    point_x = an.DiscreteMeasure(np.array([x]), np.array([w]))
    point_y = an.DiscreteMeasure(np.array([y]), np.array([w]))
    assert an.wasserstein1(point_x, point_y, normalize=False) == pytest.approx(abs(x - y) * w, rel=1e-15)
    assert an.wasserstein1(point_x, point_y) == pytest.approx(abs(x - y), rel=1e-15)
    # splitting a unit mass in half between 0 and 1 against all of it at 0: W1 = 1/2
    half = an.DiscreteMeasure(np.array([0.0, 1.0]), np.array([0.5, 0.5]))
    zero = an.DiscreteMeasure(np.array([0.0]), np.array([1.0]))
    assert an.wasserstein1(half, zero) == pytest.approx(0.5)
    assert an.wasserstein1(half, zero) == pytest.approx(an.wasserstein1(zero, half))


def test_wasserstein_matches_scipy_for_probability_measures():
    from scipy.stats import wasserstein_distance

    rng = np.random.default_rng(0)
    xa, xb = rng.normal(size=5), rng.normal(size=7)
    wa, wb = rng.uniform(0.1, 1, 5), rng.uniform(0.1, 1, 7)
    ours = an.wasserstein1(an.DiscreteMeasure(xa, wa), an.DiscreteMeasure(xb, wb))
    assert ours == pytest.approx(wasserstein_distance(xa, xb, wa, wb), rel=1e-12)


def test_wasserstein_signed_measure_is_kantorovich_rubinstein_norm():
    # μ − ν = δ_0 − 2δ_1 + δ_2 (zero mass): sup over 1-Lipschitz f of f(0) − 2f(1) + f(2) = 2 (f = |x − 1|)
    mu = an.DiscreteMeasure(np.array([0.0, 2.0, 5.0]), np.array([1.0, 1.0, -1.0]))
    nu = an.DiscreteMeasure(np.array([1.0, 5.0]), np.array([2.0, -1.0]))
    assert an.wasserstein1(mu, nu, normalize=False) == pytest.approx(2.0)


def test_wasserstein_bad_input():
    a = an.DiscreteMeasure(np.array([0.0]), np.array([1.0]))
    b = an.DiscreteMeasure(np.array([0.0]), np.array([2.0]))
    with pytest.raises(gflow.GflowInputError, match="equal total masses"):
        an.wasserstein1(a, b, normalize=False)
    with pytest.raises(gflow.GflowInputError, match="total mass"):
        an.wasserstein1(an.DiscreteMeasure(np.array([0.0, 1.0]), np.array([1.0, -1.0])), a)
    with pytest.raises(gflow.GflowInputError, match="as many weights as atoms"):
        an.wasserstein1(an.DiscreteMeasure(np.array([0.0, 1.0]), np.array([1.0])), a)
    with pytest.raises(gflow.GflowInputError, match="DiscreteMeasure"):
        an.wasserstein1("teacher", a)


def test_wasserstein_between_models():
    teacher = teachers.balanced(jax.random.key(0), 3)
    assert an.wasserstein1(teacher, teacher) == 0.0
    a, b = teachers.moment_matched_pair()
    assert an.wasserstein1(a, b) > 0.1


def test_effective_support_size():
    mu = an.DiscreteMeasure(np.array([0.1, 0.1 + 1e-5, 0.5, 0.9, -0.3]), np.array([0.4, 0.3, 0.3, 1e-8, 0.0]))
    assert an.effective_support_size(mu) == 2  # the close pair merges; the 1e-8 and 0 weights do not count
    assert an.effective_support_size(mu, cluster_tol=1e-6) == 3
    assert an.effective_support_size(mu, weight_threshold=1e-12) == 3
    teacher = teachers.balanced(jax.random.key(1), 5, placement="grid")
    assert an.effective_support_size(teacher) == 5
    assert an.effective_support_size(an.DiscreteMeasure(np.zeros(2), np.zeros(2))) == 0


def test_normalized_moments_bad_input():
    zero_h0 = teachers.delay(3)  # C B = 0
    with pytest.raises(gflow.GflowInputError, match="h_0"):
        an.normalized_moments(zero_h0, 4)
    with pytest.raises(gflow.GflowInputError, match=">= 1"):
        an.normalized_moments(teachers.balanced(jax.random.key(0), 2), 0)


def test_spectral_measure_rejects_mimo():
    m = initializers.balanced(jax.random.key(0), 3, scale=1.0, n=2)
    with pytest.raises(gflow.GflowInputError, match="SISO"):
        an.spectral_measure(m)


def test_eigenvalue_paths_symmetric_and_general():
    rng = np.random.default_rng(1)
    S = rng.normal(size=(4, 4))
    S = S + S.T
    mats = np.stack([S * s for s in np.linspace(1.0, 2.0, 5)])
    paths = an.eigenvalue_paths(mats)
    assert paths.dtype == np.float64 and paths.shape == (5, 4)
    np.testing.assert_allclose(paths[-1], 2.0 * paths[0], rtol=1e-12)
    # general: a rotation-like matrix whose eigenvalues move continuously; columns must follow them
    thetas = np.linspace(0.1, 0.5, 6)
    gen = np.stack([np.block([[np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]]), np.zeros((2, 1))],
                              [np.zeros((1, 2)), np.array([[0.3 + t]])]]) for t in thetas])
    p = an.eigenvalue_paths(gen)
    assert p.dtype == np.complex128
    steps = np.abs(np.diff(p, axis=0))
    assert np.max(steps) < 0.1  # matched: no column jumps between conjugates or to the real eigenvalue
    with pytest.raises(gflow.GflowInputError, match="square"):
        an.eigenvalue_paths(np.zeros((2, 3, 4)))


def test_eigenvalue_paths_of_a_trajectory(reference_flow):
    p = an.eigenvalue_paths(reference_flow)
    assert p.shape == (len(reference_flow.ts), 4)
    A0 = np.asarray(reference_flow.model_at(0).transition())
    np.testing.assert_allclose(np.sort_complex(p[0]), np.sort_complex(np.linalg.eigvals(A0)), rtol=1e-12)


def test_clustered_atoms_merges_chains_and_sums_weights():
    from gflow.analysis import clustered_atoms

    mu = clustered_atoms([0.5, 0.0, 0.009, 0.018, 1.0], [1.0, 2.0, 0.0, 2.0, -1.0], 0.01)
    # 0, 0.009, 0.018 chain into one cluster (single linkage), located at their |g|-weighted mean
    np.testing.assert_allclose(mu.atoms, [0.009, 0.5, 1.0])
    np.testing.assert_allclose(mu.weights, [4.0, 1.0, -1.0])
    assert clustered_atoms([0.2, 0.3], [0.0, 0.0], 0.5).atoms.tolist() == [0.25]  # zero weights: plain mean
    assert clustered_atoms([], [], 0.1).atoms.size == 0
    with pytest.raises(gflow.GflowInputError):
        clustered_atoms([0.0, 1.0], [1.0], 0.1)
    with pytest.raises(gflow.GflowInputError):
        clustered_atoms([0.0], [1.0], -1.0)
