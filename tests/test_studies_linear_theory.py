"""Pieces of studies/moment_pairs.py and studies/memoryless.py, and the teacher constructors they use.

The two studies take longer than 30 s in quick mode (several compiled batched flows), so their pieces are tested
here instead of a full smoke run: the constructors (seed 000 Lemma A.1, Prop. 3), the loss-identity helper and its
student count, the Cayley–Hamilton bound of Theorem 4.1's proof, the Q-based prediction of ‖B − Cᵀ‖, the closed-form
Lemma 6.3 part (sanity checks), and the per-seed values the studies' over-seed predictions are decided on
(the Fig. 4 ε-exponents and the Monte-Carlo rates of Lemma 3.1).
"""


import jax
import numpy as np
import pytest

import gflow
import memoryless
import moment_pairs
from gflow import analysis as an, initializers, teachers
from gflow.problems import memoryless as memoryless_problem, moment_pairs as pairs_problem


# ------------------------------------------------------------------------------------ moment-matched pairs
def test_moment_matched_pair_is_the_spec_pair():
    """seed 000 Lemma A.1: Â = diag(−1/2, 1/2), B̂ = (√.5, √.5) and Â = diag(−1/4, 1), B̂ = (√.8, √.2)."""
    t1, t2 = teachers.moment_matched_pair()
    np.testing.assert_allclose(t1.A, [-0.5, 0.5])
    np.testing.assert_allclose(t2.A, [-0.25, 1.0])
    np.testing.assert_allclose(np.asarray(t1.B) ** 2, [0.5, 0.5], rtol=1e-14)
    np.testing.assert_allclose(np.asarray(t2.B) ** 2, [0.8, 0.2], rtol=1e-14)
    np.testing.assert_allclose(t1.impulse_response(4), [1, 0, 0.25, 0], atol=1e-15)
    np.testing.assert_allclose(t2.impulse_response(4), [1, 0, 0.25, 0.1875], atol=1e-15)
    for t in (t1, t2):
        assert t.structure == "diagonal" and np.array_equal(np.asarray(t.B), np.asarray(t.C))


@pytest.mark.parametrize("d_hat", [1, 3, 4])
def test_moment_matched_pair_general_d_hat(d_hat):
    t1, t2 = teachers.moment_matched_pair(d_hat)
    w1, w2 = np.asarray(t1.impulse_response(2 * d_hat + 2)), np.asarray(t2.impulse_response(2 * d_hat + 2))
    np.testing.assert_allclose(w1[: 2 * d_hat - 1], w2[: 2 * d_hat - 1], atol=1e-14)
    assert abs(w1[2 * d_hat - 1] - w2[2 * d_hat - 1]) > 1e-4
    assert w1[0] == pytest.approx(1.0) and w2[0] == pytest.approx(1.0)  # non-degenerate, Ĉ B̂ = 1
    assert t1.d == t2.d == d_hat and np.max(np.abs(t1.A)) <= 1 and np.max(np.abs(t2.A)) <= 1


def test_moment_matched_pair_bad_input():
    with pytest.raises(gflow.GflowInputError, match="2·d_hat"):
        teachers.moment_matched_pair(2, atoms=[0.1, 0.2, 0.3])
    with pytest.raises(gflow.GflowInputError, match="distinct"):
        teachers.moment_matched_pair(2, atoms=[0.1, 0.1, 0.3, 0.4])
    with pytest.raises(gflow.GflowInputError, match="stable"):
        teachers.moment_matched_pair(2, atoms=[0.1, 0.2, 0.3, 1.4])


# ------------------------------------------------------------------------------------ Vandermonde student
def test_vandermonde_student_zero_loss_and_prescribed_tail():
    teacher = teachers.balanced(jax.random.key(0), 3)
    k, d = 4, 9
    tail = np.linspace(-2.0, 2.0, d - k)
    student = teachers.vandermonde_student(teacher, k, d, tail_values=tail, key=jax.random.key(1))
    assert student.structure == "symmetric"
    assert float(gflow.PopulationLoss(teacher, k)(student)) < 1e-24
    np.testing.assert_allclose(np.asarray(student.impulse_response(d))[k:], tail, atol=1e-10)
    # default tail: the teacher's IR + 1
    default = teachers.vandermonde_student(teacher, k, d)
    err = np.asarray(default.impulse_response(d)) - np.asarray(teacher.impulse_response(d))
    np.testing.assert_allclose(err[k:], 1.0, atol=1e-10)
    np.testing.assert_allclose(err[:k], 0.0, atol=1e-12)


def test_vandermonde_student_bad_input():
    teacher = teachers.balanced(jax.random.key(0), 2)
    with pytest.raises(gflow.GflowInputError, match="d > k"):
        teachers.vandermonde_student(teacher, 5, 5)
    with pytest.raises(gflow.GflowInputError, match="tail_values"):
        teachers.vandermonde_student(teacher, 3, 6, tail_values=[1.0, 2.0])
    with pytest.raises(gflow.GflowInputError, match="distinct"):
        teachers.vandermonde_student(teacher, 3, 5, eigenvalues=[0.1, 0.1, 0.2, 0.3, 0.4])
    with pytest.raises(gflow.GflowInputError, match="SISO"):
        teachers.vandermonde_student(teachers.memoryless(np.eye(2)), 2, 4)


# ------------------------------------------------------------------------------------ study pieces
def test_pair_identity_helper():
    students = pairs_problem.random_students(jax.random.key(0), 6, 4)
    assert set(students) == set(pairs_problem.KINDS)
    worst, gap = pairs_problem.pair_identity(teachers.moment_matched_pair(), students, 2)
    assert worst <= 1e-12 and gap > 1e-6
    # App. D (000-P16): the accumulating loss (weights k − i) cannot tell the pair apart either
    worst_acc, gap_acc = pairs_problem.pair_identity(teachers.moment_matched_pair(), students, 2, "accumulating")
    assert worst_acc <= 1e-12 and gap_acc > 1e-6


@pytest.mark.parametrize("n", [3, 7, 200])
def test_random_students_count_is_exact(n):
    """The claim text names the number of students: it must be the number built (200, not 3·66 = 198)."""
    students = pairs_problem.random_students(jax.random.key(1), n, 3)
    sizes = [int(np.shape(students[kind].B)[0]) for kind in pairs_problem.KINDS]
    assert sum(sizes) == n and max(sizes) - min(sizes) <= 1


def test_mimo_teacher_is_symmetric_psd_and_memoryless():
    t = memoryless_problem.mimo_teacher(3, 11)
    W = np.asarray(t.C)
    np.testing.assert_allclose(W, W.T, atol=1e-15)
    np.testing.assert_allclose(np.sort(np.linalg.eigvalsh(W)), [0.5, 1.25, 2.0], rtol=1e-12)
    h = np.asarray(t.impulse_response(4))
    np.testing.assert_allclose(h[0], W, atol=1e-15)
    assert np.all(h[1:] == 0.0)


def test_study_argument_errors():
    with pytest.raises(SystemExit):
        moment_pairs.parse_args(["--prop3-d", "5", "--prop3-k", "6"])
    with pytest.raises(SystemExit):
        moment_pairs.parse_args(["--students", "2"])
    with pytest.raises(SystemExit):
        memoryless.parse_args(["--mc-draws", "1"])
    with pytest.raises(SystemExit):
        memoryless.parse_args(["--k", "2"])
    with pytest.raises(SystemExit):
        memoryless.parse_args(["--w", "-1"])
    args = memoryless.parse_args(["--quick"])
    assert args.seeds == 2 and args.t1 == 1e6 and args.fig4_eps == [0.1, 0.01]
    assert (args.mc_seeds, args.mc_draws) == (4, 5) and args.record is not None
    full = memoryless.parse_args([])  # 10 seeds where the paper gives none
    assert full.seeds == 10 and (full.mc_seeds, full.mc_draws) == (10, 10) and full.t1 == 1e8


def test_cayley_hamilton_bound_holds_and_is_exact_on_recursion():
    model = initializers.gaussian(jax.random.key(3), 4, scale=0.7)
    k, H = 6, 40
    tails, bound = memoryless_problem.cayley_hamilton_bound(model, k, H)
    assert tails.shape == bound.shape == (H - k,)
    assert np.all(tails <= bound * (1 + 1e-9))
    # one-dimensional A = a: the recursion is h_j = a h_{j−1}, so the bound is exact
    one = gflow.LinearRNN(np.array([[0.8]]), np.array([1.0]), np.array([2.0]))
    tails, bound = memoryless_problem.cayley_hamilton_bound(one, 3, 12)
    np.testing.assert_allclose(tails, bound, rtol=1e-13)


def test_predicted_balance_gap_is_an_identity():
    """‖B − Cᵀ‖ from h_0 = C B, tr(BBᵀ − CᵀC) and ‖BBᵀ − CᵀC‖_F (Q conserved, derived here) equals the direct value."""
    rng = np.random.default_rng(0)
    for _ in range(5):
        b = rng.normal(size=5)
        c = b + 0.1 * rng.normal(size=5)
        M = np.outer(b, b) - np.outer(c, c)
        pred = memoryless_problem.predicted_balance_gap(b @ c, np.trace(M), np.linalg.norm(M))
        assert pred == pytest.approx(np.linalg.norm(b - c), rel=1e-8)
    b = rng.normal(size=4)
    assert memoryless_problem.predicted_balance_gap(-(b @ b), 0.0, 0.0) == pytest.approx(0.0, abs=1e-7)  # B = −Cᵀ branch


def test_starts_of_the_memoryless_study():
    sym = memoryless_problem.symmetric_start(0, 6, 1.0, structure="general")
    assert sym.structure == "general"
    assert float(an.symmetry_defect(sym)) == 0.0 and float(an.balance_defect(sym)) == 0.0
    ident = memoryless_problem.fig4_start("identity", 0.01, 0, 6)
    assert np.linalg.norm(np.asarray(ident.A) - np.eye(6)) < 0.1
    iid = memoryless_problem.fig4_start("iid", 0.01, 0, 6)
    assert np.linalg.norm(np.asarray(iid.A)) < 0.1 and float(an.balance_defect(iid)) > 0.1


def test_relative_imbalance_of_001_13():
    """‖B − Cᵀ‖ / min(‖B‖, ‖C‖): 0 on the balanced class, scale-free, and O(1) at the Fig. 4 starts (the
    old ‖·‖/‖A‖ measure was already below its bar at t = 0 because ‖A_0‖ ≈ √d)."""
    b = np.array([1.0, 2.0, 0.0])
    assert memoryless_problem.relative_imbalance(gflow.LinearRNN(np.eye(3), b, b)) == 0.0
    c = np.array([0.0, 0.0, 3.0])
    assert memoryless_problem.relative_imbalance(gflow.LinearRNN(np.eye(3), b, c)) == pytest.approx(np.sqrt(14 / 5))
    assert memoryless_problem.relative_imbalance(gflow.LinearRNN(np.eye(3), 1e-3 * b, 1e-3 * c)) == pytest.approx(
        np.sqrt(14 / 5))
    for s in range(10):  # the study's seeds: the precondition of the 001-13 check holds at every start
        m = memoryless_problem.fig4_start("identity", 0.01, s, 10)
        assert memoryless_problem.relative_imbalance(m) >= memoryless.IMBALANCE_START
        assert np.linalg.norm(np.asarray(m.A) - np.asarray(m.A).T) / np.linalg.norm(np.asarray(m.A)) < 0.1


def test_lemma63_part_checks_pass():
    args = memoryless.parse_args(["--quick"])
    checks, results = [], {}
    memoryless.part_lemma63(args, teachers.memoryless(args.w), checks, results)
    assert len(checks) == 4
    failed = [c["claim"] for c in checks if not c["passed"]]
    assert not failed, failed
    # the Lemma 6.3 family is a construction: its checks are sanity checks, guards of 001-9, never evidence
    assert all(c["kind"] == "sanity" and c["status"] == "pass" and "001-9" in c["predictions"] for c in checks)
    assert results["lemma63"]["growth_rate"] == pytest.approx(2 * np.log(args.lemma63_lambda), rel=1e-3)


def test_fig4_exponents_are_per_seed_fits():
    """‖B − Cᵀ‖/‖B‖ = c_s ε² exactly gives exponent 2 for every seed, whatever each seed's scale c_s."""
    eps = [0.1, 0.03, 0.01]
    rows = {f"fig4_iid_eps{e:g}_s{s}": {"BC_gap": (s + 1) * 3.0 * e**2 * (2.0 + s), "B_norm": 2.0 + s}
            for e in eps for s in range(3)}
    rows["fig4_iid_eps0.01_s2"]["BC_gap"] *= 10.0  # seed 2 bends: its own fit, not the others'
    p = memoryless_problem.fig4_exponents(rows, eps, 3)
    np.testing.assert_allclose(p[:2], [2.0, 2.0], rtol=1e-12)
    assert p[2] < 1.9
    from gflow.study import over_seeds

    c = over_seeds("exponent", "test", p[:2], [1.5, 2.5], "in")
    assert c["status"] == "pass" and c["kind"] == "prediction" and c["n"] == 2


def test_monte_carlo_rates_tiny_case():
    """Each experiment's exponent is the fit of its own rms column; the pooled rms is the mean over experiments."""
    teacher = teachers.memoryless(1.0)
    student = memoryless_problem.symmetric_start(0, 4, 1.0, structure="general")
    ns = np.array([40, 160, 640])
    rms, slopes, pooled = memoryless_problem.monte_carlo_rates(teacher, student, 3, ns, 2, 3)
    assert rms.shape == (3, 2) and np.all(rms > 0) and len(slopes) == 2
    for s in range(2):
        assert slopes[s] == pytest.approx(an.fit_power_law(ns, rms[:, s]), rel=1e-12)
    assert pooled == pytest.approx(an.fit_power_law(ns, np.sqrt(np.mean(rms**2, axis=1))), rel=1e-12)
    # the draws of different experiments and sizes are independent: no two rms values coincide
    assert len(np.unique(np.round(rms, 12))) == rms.size
