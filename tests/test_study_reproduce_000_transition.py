"""studies/reproduce_000_transition.py: seed 000's transition judged by the repaired (saturated) knee.

The repaired check passes on Fig. 1b's shape as reproduce_000's first run measured it (explosions below 2d̂, then the
fall through 2d̂), where reproduce_000's registered knee is captured by the explosions; it FAILs on an even fall, on a
knee away from 2d̂, on a curve that is not low after its knee or not high before it, and on the end of exploded
responses with students still worse than the zero response (reproduce_000's one registered pass, Fig. 3b); its
window guard reads a growing teacher's window, not its far tail; its entries decide only on the fresh seeds."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import reproduce_000_transition as study
from gflow.study import check_role, preregistration_problems, REGISTERED

KS_1B = [4, 6, 8, 10, 12, 14, 16, 18, 19, 20, 21, 22, 24, 26, 28, 30]
KS_1A = [4, 6, 8, 9, 10, 11, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30]
# Fig. 1b at d = 50 as reproduce_000's first run measured it (seed-mean ℓ∞ tail errors, max|w| = 1): the zero
# solution for k ≤ 8, students exploding beyond their window for k = 10 … 16, the fall through 2d̂ = 20
FIG1B_MEASURED = {4: 1.0, 6: 1.0, 8: 1.0, 10: 1e38, 12: 1e30, 14: 1e11, 16: 1e11, 18: 1e2, 19: 0.35, 20: 0.013,
                  21: 1e-3, 22: 1e-4, 24: 1e-6, 26: 1e-6, 28: 1e-6, 30: 1e-6}


def _spec(panel="fig1b", ref="teacher"):
    return {"fig1b": dict(panel="fig1b", prediction="000-P11", check_id="000-P11.saturated-knee-d50", what="fig1b",
                          reading=None, ref="teacher", select={"d": 50, "scale": 1e-3}),
            "fig3b": dict(panel="fig3b", prediction="000-P12", check_id="000-P12.saturated-knee-3b-c3", what="fig3b",
                          reading=None, ref="zero", select={"scale": 1e-3})}[panel]


def _rows(errors: dict, spec, seeds=(100, 101, 102), scatter=0.05):
    """Synthetic members with the given tail error per k (scattered by ±``scatter`` decades per seed), each fitting
    its window."""
    rng = np.random.default_rng(0)
    return [study.synthetic_member(k, s, e * 10 ** rng.uniform(-scatter, scatter), spec) for s in seeds
            for k, e in errors.items()]


def _judge(errors, spec=None, **kw):
    spec = spec or _spec()
    entries, numbers = study.judge_curve(spec, _rows(errors, spec, **kw), "confirmatory")
    return entries[0], numbers, entries[2]


def test_the_transition_through_explosions_passes_where_the_registered_knee_was_captured():
    entry, numbers, old = _judge(FIG1B_MEASURED)
    assert entry["status"] == "pass" and entry["value"] == 19.5, numbers["knee"]
    assert numbers["knee"]["high_before"] and numbers["knee"]["low_after"]
    # reproduce_000's knee (unsaturated) sits in the explosions, k = 12 → 14, and FAILs on the same students
    assert old["status"] == "FAIL" and old["knee"]["k_before"] == 12 and old["knee"]["k_after"] == 14


def test_an_even_fall_fails():
    entry, numbers, _ = _judge({k: 10.0 ** (-0.15 * (k - 4)) for k in KS_1B})
    assert entry["status"] == "FAIL" and not numbers["knee"]["sharp"]


def test_a_knee_away_from_2dhat_fails():
    entry, numbers, _ = _judge({k: 1.0 if k <= 26 else 1e-4 for k in KS_1B})
    assert entry["status"] == "FAIL" and numbers["knee"]["sharp"] and not numbers["knee"]["located"]


def test_not_low_after_the_knee_fails():
    errors = {**FIG1B_MEASURED, 26: 0.5, 28: 0.5, 30: 0.5}  # extrapolates at 20 … 24, not from 26 on
    entry, numbers, _ = _judge(errors)
    assert entry["status"] == "FAIL" and numbers["knee"]["transition"] and not numbers["knee"]["low_after"]


def test_not_high_before_the_knee_fails():
    errors = {**FIG1B_MEASURED, 4: 1e-3, 6: 1e-3}  # extrapolating at k = 4, 6, far below 2d̂
    entry, numbers, _ = _judge(errors)
    assert entry["status"] == "FAIL" and numbers["knee"]["transition"] and not numbers["knee"]["high_before"]


def test_the_end_of_explosions_is_no_transition_on_app_c3s_ratio():
    """reproduce_000's one registered pass (Fig. 3b, knee at 8.5): App. C.3's ratio 1e23 → 999 at the end of the
    explosions, then students worse than the zero response (ratio 6 … 2 369). Saturated, there is no knee."""
    errors = {k: 1e23 if k < 9 else 999.0 if k == 9 else 6.0 + 10 * (k - 10) for k in KS_1A}
    entry, numbers, old = _judge(errors, _spec("fig3b"))
    assert old["status"] == "pass" and old["value"] == 8.5
    assert entry["status"] == "FAIL" and not numbers["knee"]["sharp"]
    assert np.allclose(numbers["mean"], 1.0)


def test_the_window_guard_reads_the_window_of_a_growing_teacher():
    """A teacher growing to 30× its window's largest response: a student 0.1 off in its window fits by
    reproduce_000's guard (0.01 × the far tail = 0.3) but not by the window's (0.01 × 1); a knee of such students is
    inconclusive."""
    w = np.concatenate([np.ones(30), np.linspace(1.0, 30.0, 70)])
    row = {"k": 10, "window": 0.1, "w": w, "scale_w": 30.0}
    assert not study.fits_window(row)
    assert study.fits_window({**row, "window": 0.005})
    from gflow.problems import reproduce_000 as rp

    assert rp.fits_window(row)  # the horizon-wide guard it replaces
    spec = _spec()
    rows = [{**m, "window": 0.5} for m in _rows(FIG1B_MEASURED, spec)]
    entry = study.judge_curve(spec, rows, "confirmatory")[0][0]
    assert entry["status"] == "inconclusive" and entry["fit_fraction"] == 0.0


def test_a_window_of_zero_targets_is_read_against_the_whole_response():
    w = np.zeros(100)
    w[9] = 1.0  # the delay teacher d̂ = 10: k ≤ 9 trains on zero targets
    assert study.fits_window({"k": 8, "window": 0.005, "w": w})
    assert not study.fits_window({"k": 8, "window": 0.05, "w": w})


def test_entries_decide_on_the_fresh_seeds_only():
    entry = _judge(FIG1B_MEASURED)[0]
    config = {"seeds": 3, "seed_list": [100, 101, 102], "seeds_block": "confirmatory"}
    record = {"study": study.STUDY, "config": config, "checks": [entry]}
    assert preregistration_problems([record]) == []
    assert check_role(record, entry, REGISTERED) == ("deciding", [])
    spec = _spec()
    seen = study.judge_curve(spec, _rows(FIG1B_MEASURED, spec, seeds=(0, 1, 2)), "exploratory")[0][0]
    record = {"study": study.STUDY, "config": {**config, "seed_list": [0, 1, 2], "seeds_block": "exploratory"},
              "checks": [seen]}
    assert check_role(record, seen, REGISTERED) == ("exploratory", [])  # reproduce_000's seeds decide nothing here


def test_every_registered_check_has_a_spec_and_fails_its_control():
    registered = {c.id for c in REGISTERED.checks if c.study == study.STUDY}
    controls = study.negative_controls()
    assert {c[0] for c in controls} == registered and len(registered) == 12
    assert all(c[2]["status"] == "FAIL" for c in controls)


def test_parser_defaults_and_errors():
    import reproduce_000

    args = study.parse_args(["--out", "unused"])
    assert args.seed_list == [100, 101, 102] and args.seeds_block == "confirmatory"
    base = reproduce_000.parse_args(["--out", "unused", "--record", ""])
    assert all(getattr(args, f) == getattr(base, f) for f in study.PROTOCOL)
    assert study.parse_args(["--seeds-block", "exploratory"]).seed_list == [0, 1, 2]
    for bad in (["--seeds", "4"], ["--seeds", "0"], ["--panels", "fig4"]):
        with pytest.raises(SystemExit):
            study.parse_args(bad)


def test_quick_run_end_to_end(tmp_path):
    out = tmp_path / "out"
    assert study.main(["--quick", "--out", str(out), "--record", "", "--panels", "fig1b", "fig3b"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    ids = {c.get("check_id") for c in summary["checks"]}
    assert {"000-P11.saturated-knee-d24", "000-P12.saturated-knee-3b-c3"} <= ids
    assert all(c["seeds"] == [100, 101] for c in summary["checks"] if c.get("check_id"))
    assert os.path.getsize(out / "transition.png") > 0
