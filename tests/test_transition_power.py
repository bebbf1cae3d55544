"""Power, shown: negative controls of seed 000's transition at k = 2d̂ (000-P10 on Fig. 1(a), 000-P12 on Fig. 3).

The deciding checks (studies/extrapolation_phase.py ``transition_checks``, per seed
gflow.problems.extrapolation.transition_by_seed) are run here on synthetic error-vs-k tables, on the study's own
full k grid and its confirmatory block of 20 seeds, with per-seed scatter drawn from a fixed numpy seed; no flow is
solved. The same function must PASS on a curve whose knee is at 2d̂ and must not pass (FAIL, or at worst be
inconclusive) on the plausible alternatives: (a) a smooth curve falling with k with no knee (gently, steeply, and
the Fig. 1 caption's gradual transition), (b) a knee at 2d̂ + 6, (c) the knee of a teacher of another d̂' judged
against 2d̂, (d) for fig3b, the all-zero solution. The below/above contrast that decided before
(``gflow.problems.extrapolation.contrast_by_seed``) passes (a) and (b) and the zero solution: it had no power.
"""

from __future__ import annotations

import numpy as np
import pytest

import extrapolation_phase as ep
from gflow.problems import extrapolation as xs

D_HAT = 5
KC = 2 * D_HAT
ARGS = ep.parse_args(["--seeds-block", "confirmatory"])
KS = np.array(ep.panel_ks("fig1a", ARGS))
SEEDS = ARGS.seed_list
SIZE = "fig1a_d100"  # a size repeat of fig1a: its panel checks are the contrast and the transition checks alone
PANELS = {SIZE: {**ep.PANELS["fig1a"], "d": 100, "size_of": "fig1a"}, "fig3b": ep.PANELS["fig3b"]}
SCATTER = 0.3  # decades: per-point scatter of log10 error between neighbouring k (per seed)
OFFSET = 0.5  # decades: per-seed offset of the whole curve (teachers of different scale)


def _table(log10_error, rng, zero=None, scatter=SCATTER):
    """A panel table (lowest level only) over KS × SEEDS: log10 error = ``log10_error(k, rng)`` per seed, plus a
    per-seed offset and per-point scatter; ``zero`` the all-zero solution's error per (seed, k) (default 1)."""
    k = np.tile(KS, len(SEEDS))
    seed = np.repeat(SEEDS, len(KS))
    y = np.concatenate([log10_error(KS, rng) + OFFSET * rng.standard_normal()
                        + scatter * rng.standard_normal(KS.size) for _ in SEEDS])
    zero = np.ones(k.size) if zero is None else np.asarray(zero, dtype=float)
    return {"error": (10.0 ** y)[None, :], "k": k, "seed": seed, "zero": zero}


def _knee_at(k_after):
    """High (≈ 0.3, drifting down slowly) below ``k_after``, 3 to 6 decades lower from it on."""
    def curve(ks, rng):
        depth = rng.uniform(3.0, 6.0)
        return np.where(ks < k_after, -0.5 - 0.02 * ks, -0.5 - depth - 0.03 * ks)
    return curve


def _smooth(rate):
    return lambda ks, rng: -rate * (ks - ks[0])


def _gradual(ks, rng):
    """The Fig. 1 caption's "gradual transition": 3 decades over a logistic of width 2 centred at 2d̂ + ½."""
    return -3.0 / (1.0 + np.exp(-(ks - KC - 0.5) / 2.0))


def _checks(table, name=SIZE):
    """(contrast, knee, C.3) entries of the study's panel checks on ``table``, confirmatory block."""
    checks, result = ep.panel_checks(name, table, ARGS, PANELS, [])
    return checks[0], checks[1], checks[2], result


def _status(table, name=SIZE):
    return _checks(table, name)[1]["status"]


def test_the_registered_setup():
    """The controls run the study's registered configuration: its full k grid (2d̂ ± 1 resolved) and the
    confirmatory block of 20 fresh seeds; 15 of 20 seeds pass a majority, 5 of 20 fail it."""
    assert list(KS) == [4, 6, 8, 9, 10, 11, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30]
    assert SEEDS == list(range(2000, 2020)) and ARGS.seeds_block == "confirmatory"
    judge = {m: ep.fraction_check("c", "s", {s: s < 2000 + m for s in SEEDS}, ep.TRANSITION_FRACTION)["status"]
             for m in (5, 6, 14, 15)}
    assert judge == {5: "FAIL", 6: "inconclusive", 14: "inconclusive", 15: "pass"}
    none = ep.fraction_check("c", "s", {}, ep.TRANSITION_FRACTION, predictions=["000-P12"])
    assert (none["status"], none["n"], none["seeds"], none["predictions"]) == ("inconclusive", 0, [], ["000-P12"])


@pytest.mark.parametrize("k_after", [KC, KC + 1])
def test_a_knee_at_2d_passes(k_after):
    """PASS: every seed's error falls 3 to 6 decades between 2d̂ − 1 and 2d̂ (or 2d̂ and 2d̂ + 1), with per-seed
    scatter of 0.3 decades per point and offsets of 0.5 decades."""
    contrast, knee, c3, result = _checks(_table(_knee_at(k_after), np.random.default_rng(0)))
    assert knee["status"] == "pass" and knee["k"] == knee["n"] == 20 and knee["predictions"] == ["000-P10"]
    assert knee["registered_after_run"] and knee["seeds_block"] == "confirmatory" and knee["seeds"] == SEEDS
    assert all(v["k_after"] == k_after for v in result["transition_by_seed"].values())
    assert contrast["status"] == "pass" and contrast["predictions"] == []  # shown beside, decides nothing


@pytest.mark.parametrize("curve,why", [
    (_smooth(0.1), "smooth: 0.1 decade per unit k"),
    (_smooth(0.3), "smooth: 0.3 decade per unit k"),
    (_smooth(1.0), "smooth: a decade per unit k"),
    (_gradual, "the Fig. 1 caption's gradual transition"),
], ids=["gentle", "medium", "steep", "gradual"])
def test_a_smooth_fall_without_a_knee_fails(curve, why):
    """(a) An error falling with k at an even rate (or a gradual logistic centred at 2d̂) has no knee: FAIL. The old
    contrast passes it (the median error below 2d̂ is ≥ 5× that above whatever the rate)."""
    contrast, knee, _, result = _checks(_table(curve, np.random.default_rng(1)))
    assert knee["status"] == "FAIL", (why, knee["k"], knee["interval"])
    assert knee["k"] <= 5  # seeds whose scatter happens to make a knee at 2d̂; 5 of 20 is still a FAIL
    assert any(v["located"] for v in result["transition_by_seed"].values())  # location alone would not do
    assert contrast["status"] == "pass", why


def test_a_knee_at_2d_plus_6_fails():
    """(b) A sharp knee, but at 2d̂ + 6 = 16: FAIL; the old contrast passes it."""
    contrast, knee, _, result = _checks(_table(_knee_at(KC + 6), np.random.default_rng(2)))
    assert knee["status"] == "FAIL" and knee["k"] == 0
    assert all(v["k_after"] == KC + 6 and v["sharp"] for v in result["transition_by_seed"].values())
    assert contrast["status"] == "pass"


@pytest.mark.parametrize("other", [2, 3, 4, 6, 7])
def test_the_knee_of_a_teacher_of_another_dimension_fails(other):
    """(c) The transition of a teacher with d̂' ≠ d̂ (knee at 2d̂' + 1), judged against 2d̂ = 10: FAIL. The old
    contrast passes d̂' = 4, 6, 7 (and d̂' = 3 on most draws)."""
    contrast, knee, _, _ = _checks(_table(_knee_at(2 * other + 1), np.random.default_rng(3)))
    assert knee["status"] == "FAIL" and knee["k"] == 0
    if other >= 4:
        assert contrast["status"] == "pass"


def _fig3b_zero(seeds=SEEDS, decay=None):
    """App. C.2.2's random unbalanced teachers (d̂ = 5, key = seed): the all-zero solution's error per (seed, k),
    relative to max|w| (the study's ``zero``); with ``decay``, a synthetic teacher whose tail falls ``decay`` decades
    per unit k from j = 4, resolved well past 2d̂."""
    out = []
    for s in seeds:
        if decay is None:
            w = np.abs(np.asarray(xs.make_teacher("random_unbalanced", D_HAT, s).impulse_response(100)))
        else:
            j = np.arange(100)
            w = np.where(j >= D_HAT - 1, 10.0 ** (-decay * (j - D_HAT + 1)), 0.0)
        out.append([w[k:].max() / w.max() for k in KS])
    return np.concatenate(out)


@pytest.mark.parametrize("decay", [None, 0.3], ids=["app_c22_teachers", "slowly_decaying"])
def test_fig3b_the_zero_solution_never_passes(decay):
    """(d) fig3b: the all-zero response (error = the zero solution's on every k). App. C.3's transition check,
    which decides there, FAILs on it (ratio 1 on every k: no drop, and it does not beat itself); with App. C.2.2's
    own teachers the k past 2d̂ whose zero error is resolved are few, so it may be inconclusive, never a pass. The
    knee of the raw error (reported beside on fig3b) fails too: the teacher's tail falls smoothly. The old contrast
    passes the zero solution."""
    zero = _fig3b_zero(decay=decay)
    table = {"error": zero[None, :].copy(), "k": np.tile(KS, len(SEEDS)), "seed": np.repeat(SEEDS, len(KS)),
             "zero": zero}
    contrast, knee, c3, result = _checks(table, "fig3b")
    assert c3["predictions"] == ["000-P12"] and knee["predictions"] == []
    assert c3["status"] != "pass" and knee["status"] != "pass"
    assert all(not v["beats_zero"] and v["drop"] == pytest.approx(1.0) for v in result["c3_transition_by_seed"].values())
    if decay is not None:
        assert c3["status"] == "FAIL" and c3["n"] == 20 and knee["status"] == "FAIL"
    assert contrast["status"] == "pass"


def test_fig3b_a_student_that_extrapolates_past_2d_passes():
    """fig3b's PASS: a student no better than the zero solution below 2d̂ (ratio ≈ 1 with scatter) and 3 to 6
    decades better from 2d̂ + 1 on, on a teacher whose tail is resolved past 2d̂."""
    zero = _fig3b_zero(decay=0.3)
    table = _table(lambda ks, rng: np.zeros(ks.size), np.random.default_rng(4), scatter=0.0)  # only for k, seed
    rng = np.random.default_rng(5)
    ratio = np.concatenate([np.where(KS <= KC, 0.2 * rng.standard_normal(KS.size),
                                     -rng.uniform(3.0, 6.0) + 0.3 * rng.standard_normal(KS.size)) for _ in SEEDS])
    table.update(error=(zero * 10.0 ** ratio)[None, :], zero=zero)
    _, _, c3, result = _checks(table, "fig3b")
    assert c3["status"] == "pass" and c3["k"] == 20, result["c3_transition_by_seed"]


def test_knee_of_simple_curves():
    """The knee is the steepest fall per unit k; sharpness compares it with the median |rate| of the other steps."""
    ks = [4, 8, 9, 10, 11, 12, 20]
    info = xs.knee(ks, [1.0, 1.0, 1.0, 1.0, 1e-4, 1e-4, 1e-4])
    assert (info["k_before"], info["k_after"], info["points"]) == (10, 11, 7)
    assert info["drop"] == pytest.approx(1e4) and info["sharpness"] == np.inf
    assert xs.knee_at(info, KC) == {"located": True, "sharp": True, "transition": True}
    even = xs.knee(ks, 10.0 ** (-0.5 * np.array(ks, dtype=float)))
    assert even["sharpness"] == pytest.approx(1.0) and not xs.knee_at(even, KC)["sharp"]
    assert xs.knee([4, 10], [1.0, 1e-3]) is None and xs.knee_at(None, KC)["transition"] is False
    # a fall spread over a gap wider than KNEE_MAX_STEP is not located, even if it straddles 2d̂
    wide = xs.knee([4, 6, 8, 11, 14], [1.0, 1.0, 1.0, 1e-5, 1e-5])
    assert wide["k_after"] == 11 and not xs.knee_at(wide, KC)["located"]
    # errors at 0 count as RATIO_FLOOR; NaNs are left out
    assert xs.knee([4, 9, 11, 12], [1.0, 1.0, 0.0, np.nan])["drop"] == pytest.approx(1 / xs.RATIO_FLOOR)


def test_transition_by_seed_leaves_out_what_cannot_show_it():
    """A seed needs three read k, some on each side of 2d̂; with ``zero`` only the k whose zero error is resolved
    are read."""
    errors = np.array([1.0, 1.0, 1e-6, 1.0, 1.0, 1e-6, 1.0, 1e-6])
    ks = np.array([8, 9, 11, 8, 9, 11, 8, 11])
    seeds = np.array([0, 0, 0, 1, 1, 1, 2, 2])  # seed 2: two k only
    zero = np.array([1.0, 1.0, 1e-3, 1.0, 1.0, 1e-9, 1.0, 1.0])  # seed 1's k = 11 unresolved
    plain = xs.transition_by_seed(errors, ks, seeds, KC)
    assert set(plain) == {0, 1} and plain[0]["transition"] and plain[0]["ks"] == [8, 9, 11]
    assert xs.transition_by_seed(errors[:3], ks[:3], seeds[:3], 8) == {}  # no k below 2d̂ = 8
    c3 = xs.transition_by_seed(errors, ks, seeds, KC, zero=zero)
    assert set(c3) == {0} and c3[0]["median_ratio_above"] == pytest.approx(1e-3) and c3[0]["beats_zero"]
    assert c3[0]["transition"] and (c3[0]["k_before"], c3[0]["k_after"]) == (9, 11)
