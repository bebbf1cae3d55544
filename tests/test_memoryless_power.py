"""Power of studies/memoryless.py's deciding checks, on synthetic numbers (no solves).

Each check that decides a claim of seed 001 and was written or changed after the study had been run (001-6 at every
σ, 001-13 at both init scales) is a pure function of the measured numbers. Here each one passes on data consistent
with the claim and FAILs (or is inconclusive) on a plausible alternative: tails that stay O(1) or fall too slowly
as L → 0, a run that stalls before the loss level read, an imbalance that stays O(1), a claim shown by 1 seed of 5.
The tails are evaluated in decimal arithmetic (float64 rounding exceeds them at ρ(A) > 1: checked against exact
rationals), the seed blocks (exploratory, confirmatory) are checked to be disjoint, and the identities of the study
to be sanity checks.
"""

from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pytest

import gflow
import memoryless as ml_study
from gflow import teachers
from gflow.problems import memoryless as memoryless_problem

LOSS = np.geomspace(1.0, 1e-18, 160)  # a run's loss at its saved times (power-law convergence reaches ~1e-18)
FLAT = np.full_like(LOSS, 5.0)  # a tail that stays O(1) as L falls


def run(tails, loss=LOSS):
    return ml_study.tail_vanishing(loss, tails)


# ------------------------------------------------------------------------------------------ 001-6: one run
def test_tail_falling_like_sqrt_loss_vanishes():
    """The bound |h_j| <= ρ^(j−2) √L with ρ settled: the tail falls like √L, three decades over six of L."""
    r = run(1e3 * np.sqrt(LOSS))
    assert r["reached"] and r["vanishes"]
    assert r["fall"] == pytest.approx(1e3, rel=0.2)
    assert r["loss_high"] <= ml_study.TAIL_LEVEL_HIGH and r["loss_low"] <= ml_study.TAIL_LEVEL_LOW


@pytest.mark.parametrize("name, tails", [
    ("stays O(1)", FLAT),
    ("falls, then plateaus at 1e-2 before the levels", np.maximum(np.sqrt(LOSS), 1e-2)),
    ("grows as L falls (ρ(A) growing)", 1e-6 / np.sqrt(LOSS)),
    ("the neighbouring rate L^(1/12): 10^0.5 over six decades", LOSS ** (1 / 12)),
    ("NaN (the run blew up)", np.full_like(LOSS, np.nan)),
])
def test_tail_alternatives_do_not_vanish(name, tails):
    assert not run(tails)["vanishes"], name


def test_tail_rate_at_the_bar_side_that_passes():
    """L^(1/4) falls 10^1.5 over six decades: passes the 10× bar, as does any rate above 1/6."""
    assert run(LOSS ** 0.25)["vanishes"]
    assert not run(LOSS ** 0.15)["vanishes"]  # 10^0.9 < 10


def test_tail_run_that_stalls_before_the_premise_does_not_count():
    stalled = np.geomspace(1.0, 1e-10, 160)  # never reaches TAIL_LEVEL_LOW = 1e-12
    r = ml_study.tail_vanishing(stalled, 1e3 * np.sqrt(stalled))
    assert not r["reached"] and not r["vanishes"] and r["tail_low"] is None


def test_tail_already_zero_counts_as_vanishing():
    """A tail at rounding level when L reaches the low level (ρ < 1, σ = 0.3) shows the claim; its ratio is noise."""
    assert run(np.full_like(LOSS, 1e-13))["vanishes"]
    assert not run(np.full_like(LOSS, 1e-11))["vanishes"]  # flat above TAIL_ZERO: not shown


def test_tail_vanishing_input_errors():
    with pytest.raises(ValueError):
        ml_study.tail_vanishing(LOSS, LOSS[:-1])


def exact_tail(A, B, C, k, H):
    """max_{k<=j<H} |C A^j B| in exact rational arithmetic from the float64 entries."""
    a = [[Fraction(float(v)) for v in row] for row in A]
    x, c = [Fraction(float(v)) for v in B], [Fraction(float(v)) for v in C]
    best = Fraction(0)
    for j in range(H):
        if j >= k:
            best = max(best, abs(sum(p * q for p, q in zip(c, x))))
        x = [sum(p * q for p, q in zip(row, x)) for row in a]
    return float(best)


@pytest.mark.parametrize("theta", [0.3, 0.7, 1.1])
def test_precise_tail_resolves_the_cancellation_float64_does_not(theta):
    """A = 3 uuᵀ with C = Bᵀ ⟂ u up to the rounding of the stored entries (the top mode's load ≈ 1e-17, as near the
    end of a σ >= 1 run): h_j = 3^j c̃² is a cancellation. The decimal tail equals the exact one; float64 is off."""
    u, v = np.array([np.cos(theta), np.sin(theta)]), np.array([-np.sin(theta), np.cos(theta)])
    model = gflow.LinearRNN(3.0 * np.outer(u, u), v, v)
    exact = exact_tail(np.asarray(model.transition()), v, v, 5, 60)
    assert ml_study.precise_tail(model, 5, 60) == pytest.approx(exact, rel=1e-12)
    float64 = float(np.max(np.abs(np.asarray(model.impulse_response(60))[5:])))
    assert abs(float64 - exact) > 0.3 * exact


def test_precise_tail_equals_float64_without_cancellation():
    model = memoryless_problem.symmetric_start(0, 6, 0.3, structure="general")  # ρ(A) ≈ 0.6: no cancellation
    h = np.abs(np.asarray(model.impulse_response(40)))
    assert ml_study.precise_tail(model, 5, 40) == pytest.approx(float(np.max(h[5:])), rel=1e-10)


def test_tails_at_levels_reads_only_the_two_level_points():
    m0 = memoryless_problem.symmetric_start(0, 4, 0.3, structure="general")
    loss = np.array([1.0, 1e-3, 5e-7, 1e-9, 2e-13, 1e-15])
    traj = SimpleNamespace(loss=loss, model_at=lambda i: m0)
    tails = ml_study.tails_at_levels(traj, 3, 20)
    assert np.isfinite(tails[[2, 4]]).all() and np.isnan(tails[[0, 1, 3, 5]]).all()
    assert ml_study.level_indices(loss, (1e-6, 1e-12, 1e-20)) == [2, 4, None]


# ------------------------------------------------------------------------------------------ 001-6: over seeds
def by_seed(good: int, n: int, *, bad=FLAT):
    seeds = range(1000, 1000 + n)
    return {s: run(1e3 * np.sqrt(LOSS) if i < good else bad) for i, s in enumerate(seeds)}


@pytest.mark.parametrize("good, n, status", [
    (20, 20, "pass"), (19, 20, "pass"),  # the claim: nearly every run (bar 0.75)
    (0, 20, "FAIL"), (10, 20, "FAIL"),  # tails that stay O(1) on every seed, on half the seeds
    (1, 5, "FAIL"),  # 1 of 5 seeds
    (14, 20, "inconclusive"), (10, 10, "inconclusive"),  # 10 of 10 gives [0.69, 1]: the exploratory block can't pass
])
def test_tail_checks_decide_k_of_n(good, n, status):
    (entry,) = ml_study.tail_checks({2.0: by_seed(good, n)}, "confirmatory", k=5, H=100)
    assert entry["status"] == status
    assert (entry["k"], entry["n"]) == (good, n)
    assert entry["kind"] == "prediction" and entry["predictions"] == ["001-6"]
    assert entry["registered_after_run"] is True and entry["check_id"] == "001-6_tail_vanishes_sigma2"
    assert entry["seeds"] == list(range(1000, 1000 + n)) and entry["statistic"] == "clopper_pearson"
    assert entry["threshold"] == ml_study.TAIL_FRACTION and entry["direction"] == ">="


def test_tail_checks_one_per_sigma():
    out = ml_study.tail_checks({0.3: by_seed(20, 20), 1.0: by_seed(20, 20), 2.0: by_seed(0, 20)}, "confirmatory",
                               k=5, H=100)
    assert [e["status"] for e in out] == ["pass", "pass", "FAIL"]  # a FAIL at σ = 2 is a result, not scoped away
    assert [e["check_id"] for e in out] == [f"001-6_tail_vanishes_sigma{s}" for s in ("0.3", "1", "2")]


def synthetic_rows(good_by_sigma: dict, n: int):
    rows = {}
    for sig, good in good_by_sigma.items():
        runs = by_seed(good, n)
        for s in range(1000, 1000 + n):
            for kk in (5, 2):
                vanish = runs[s]
                rows[f"k{kk}_sigma{sig:g}_s{s}"] = {
                    "k": kk, "sigma": sig, "seed": s, "max_ratio_to_bound": 0.99, "readout_residual": 1e-5,
                    "readout_residual_max": 1.0, "readout_residual_tight": 1e-5, "slope_residual_vs_loss": 0.25,
                    "A_norm": 1.0 + sig, "ir_bound_ratio": 0.5, "max_balance_defect": 1e-14, "final_loss": 1e-18,
                    "tail": 1e-11 if sig <= 0.3 else 4.0, "spectral_radius": 0.6 if sig <= 0.3 else 2.0,
                    "tail_vanishing": vanish, "tail_vanishing_tight": vanish}
    return rows


def test_theorem_6_1_checks_decide_only_by_the_tail_fall():
    """The residual's fall and the σ = 0.3 end tail are identities of the class (sanity); the per-σ k-of-n checks
    decide 001-6; the finite-loss tails are reported, not decided."""
    args = SimpleNamespace(k=5, horizon=100, sigmas=[0.3, 1.0, 2.0], extrapolation_threshold=1e-3,
                           seeds_block="confirmatory")
    checks, results = [], {}
    ml_study.theorem_6_1_checks(args, synthetic_rows({0.3: 20, 1.0: 20, 2.0: 3}, 20), checks, results)
    deciding = [c for c in checks if c["kind"] == "prediction" and "001-6" in c["predictions"]
                and c.get("registered_after_run")]
    assert [c["status"] for c in deciding] == ["pass", "pass", "FAIL"]
    sanity_001_6 = [c for c in checks if c["kind"] == "sanity" and "001-6" in c["predictions"]]
    assert len(sanity_001_6) == 3  # residual drop, residual slope, σ = 0.3 tail at the end
    assert all(c["status"] == "pass" for c in checks if c["kind"] == "sanity")
    assert set(results["theorem_6_1_finite_loss_tails"]) == {"0.3", "1", "2"}
    assert results["theorem_6_1_finite_loss_tails"]["2"]["median_tail_end"] == 4.0


# ------------------------------------------------------------------------------------------ 001-13
def imbalances(good: int, n: int, *, start=1.4, end_good=0.01, end_bad=0.8):
    return {s: (start, end_good if i < good else end_bad) for i, s in enumerate(range(1000, 1000 + n))}


def test_imbalance_outcome_per_run():
    assert ml_study.imbalance_outcome(1.4, 0.01)
    assert not ml_study.imbalance_outcome(1.4, 0.8)  # stays O(1) (unit-scale B_0, C_0: Q_0 = O(1))
    assert not ml_study.imbalance_outcome(0.2, 0.01)  # a start already near-balanced shows nothing "becoming" small


@pytest.mark.parametrize("good, n, status", [
    (20, 20, "pass"), (15, 20, "pass"),  # majority ("we often see")
    (0, 20, "FAIL"), (5, 20, "FAIL"),  # imbalance that stays O(1)
    (1, 5, "inconclusive"), (10, 20, "inconclusive"),
])
def test_imbalance_checks_decide_k_of_n(good, n, status):
    (entry,) = ml_study.imbalance_checks({"unit": imbalances(good, n)}, "confirmatory", eps=0.01)
    assert entry["status"] == status
    assert entry["kind"] == "prediction" and entry["predictions"] == ["001-13"]
    assert entry["check_id"] == "001-13_imbalance_unit_init" and entry["registered_after_run"] is True
    assert entry["reading"] == "identity" and entry["seeds"] == list(range(1000, 1000 + n))
    assert entry["threshold"] == ml_study.IMBALANCE_FRACTION


def test_imbalance_checks_both_scales():
    out = ml_study.imbalance_checks({"small": imbalances(20, 20), "unit": imbalances(0, 20)}, "confirmatory",
                                    eps=0.01)
    assert [(e["scale"], e["status"]) for e in out] == [("small", "pass"), ("unit", "FAIL")]


# ------------------------------------------------------------------------------------------ seeds and starts
def test_seed_blocks_are_disjoint_and_fresh():
    quick = ml_study.parse_args(["--quick"])
    assert quick.seeds == 2 and quick.block_seeds == [0, 1]
    full = ml_study.parse_args([])
    conf = ml_study.parse_args(["--seeds-block", "confirmatory"])
    assert full.block_seeds == list(range(10)) and conf.seeds == ml_study.CONFIRMATORY_SEEDS
    conf_quick = ml_study.parse_args(["--seeds-block", "confirmatory", "--quick"])
    assert conf_quick.block_seeds == [ml_study.CONFIRMATORY_FIRST_SEED, ml_study.CONFIRMATORY_FIRST_SEED + 1]

    # the keys the block's starts draw from: symmetric = seed, Fig. 4 = 100 + seed; the exploratory runs also drew
    # MIMO = 300 + seed and Xavier / residual = seed
    block_keys = {k for s in conf.block_seeds for k in (s, 100 + s)}
    assert not block_keys & {k for s in range(full.seeds) for k in (s, 100 + s, 300 + s)}
    assert not block_keys & {1000, 1001, 1100, 1101}  # a --quick integration run while the code was written
    with pytest.raises(ValueError):
        ml_study.block_seeds("other", 3)


def test_fig4_jobs_unit_scale_is_the_same_draw_rescaled():
    args = ml_study.parse_args(["--quick", "--seeds-block", "confirmatory", "--d", "6"])
    jobs = {name: m for name, _, m in ml_study.fig4_jobs(args, teachers.memoryless(1.0))}
    eps = min(args.fig4_eps)
    s = args.block_seeds[0]
    small, unit = jobs[ml_study.fig4_name("identity", eps, s)], jobs[ml_study.fig4_name("identity", eps, s, "unit")]
    np.testing.assert_allclose(np.asarray(unit.B), np.asarray(small.B) / eps, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(unit.A), np.asarray(small.A), rtol=0)
    assert np.linalg.norm(np.asarray(unit.B)) > 1.0 > np.linalg.norm(np.asarray(small.B))
    assert len(jobs) == (2 * len(args.fig4_eps) + 1) * len(args.block_seeds)


def test_first_seed_renamed_for_the_figures():
    runs = {"k5_sigma1_s1000": 1, "k5_sigma1_s1001": 2, "residual_s0": 3, "inv_sigma1_s0_seeded1e-12": 4}
    view = ml_study._first_seed_as_s0(runs, 1000)
    assert view == {"k5_sigma1_s0": 1, "k5_sigma1_s1001": 2, "residual_s0": 3, "inv_sigma1_s0_seeded1e-12": 4}
    assert ml_study._first_seed_as_s0(runs, 0) is runs
