"""bench/_versus.py (python bench/run.py --versus): the matched-accuracy rule, the ratios, and its scipy runner (which
must integrate the SSM flow exactly as bench/_ssm.py's odeint run does). No timing assertions."""

import argparse

import numpy as np
import pytest

import _ssm as S
import _versus as V


def test_matches_and_the_loosest_matching_rung():
    assert V.matches(1e-9, 2e-9) and not V.matches(3e-9, 2e-9)
    assert V.matches(5e-11, 1e-12)  # both below the floor count as equal
    assert not V.matches(None, 1e-6) and not V.matches(float("nan"), 1e-6) and not V.matches(1e-9, None)
    rungs = [{"rtol": 1e-6, "status": "completed", "error": 1e-5},
             {"rtol": 1e-8, "status": "failed", "error": None},
             {"rtol": 1e-10, "status": "completed", "error": 1e-9},
             {"rtol": 1e-12, "status": "completed", "error": 1e-11}]
    assert V.pick_matched(rungs, 2e-9)["rtol"] == 1e-10
    assert V.pick_matched(rungs, 1e-4)["rtol"] == 1e-6
    assert V.pick_matched(rungs, 1e-13)["rtol"] == 1e-12  # 1e-11 is below the floor: as accurate as the target
    assert V.pick_matched(rungs[:3], 1e-13) is None
    assert V.pick_matched([{"rtol": 1e-6, "status": "cap", "error": None}], 1.0) is None


def test_ratios_and_tolerance_order():
    assert V.ratio({"status": "completed", "wall_s": 3.0}, 1.5) == {"value": 2.0, "lower_bound": False}
    assert V.ratio({"status": "cap", "wall_s": 120.0}, 2.0) == {"value": 60.0, "lower_bound": True}
    assert V.ratio({"status": "not run", "wall_s": None}, 2.0) is None
    assert V.fmt_ratio({"value": 60.0, "lower_bound": True}) == ">60×"
    assert V.fmt_ratio({"value": 0.5, "lower_bound": False}) == "0.5×" and V.fmt_ratio(None) == "—"
    assert V.tighter_or_equal((1e-8, 1e-10), (1e-6, 1e-8)) and not V.tighter_or_equal((1e-3, 1e-6), (1e-6, 1e-8))
    assert V.extra_runs(0.01) == 5 and V.extra_runs(1.0) == 3 and V.extra_runs(30.0) == 0


def test_problem_names():
    assert V.ssm_dim("ssm100") == 100 and V.ssm_dim("R1") is None and V.ssm_dim("ssmx") is None
    assert V.check_problem_names(["ssm10", "R1", "batch"]) == ["ssm10", "R1", "batch"]
    with pytest.raises(argparse.ArgumentTypeError):
        V.check_problem_names(["R2"])
    assert V.rel_err([1.0, 2.0], [1.0, 4.0]) == 0.5 and V.rel_err([np.nan], [1.0]) is None


def test_scipy_runner_is_the_ssm_odeint_run_and_stops_at_the_cap():
    d = 10
    lag_weights, t1 = S.DESIGNS["baseline"]
    case = V.Case("ssm10", "", None, None, t1, S.initial_a(d), lambda: S.Field(d, lag_weights), None)
    ours = V.scipy_run("lsoda", case, 1e-8, 1e-10, cap_s=600.0)
    theirs = S.odeint_run(d, "baseline", 1e-8, 1e-10, True, cap_s=600.0)
    assert ours["status"] == theirs["status"] == "completed"
    np.testing.assert_array_equal(ours["theta"], theirs["a"])
    assert ours["steps"] == theirs["steps"]
    radau = V.scipy_run("radau", case, 1e-6, 1e-9, cap_s=600.0)
    assert radau["status"] == "completed" and V.rel_err(radau["theta"], ours["theta"]) < 1e-4
    stopped = V.scipy_run("bdf", case, 1e-8, 1e-10, cap_s=0.0)
    assert stopped["status"] == "cap" and stopped["theta"] is None


def test_markdown_table_marks_lower_bounds():
    g = {"wall_s": 0.05, "error": 3e-9, "first_call_s": 1.0, "fresh_process": {"empty_cache": {"process_s": 3.0}}}
    row = {"method": "lsoda", "matched": {"status": "cap", "wall_s": 120.0, "rtol": 1e-6, "ratio":
                                         {"value": 2400.0, "lower_bound": True}},
           "defaults": {"status": "completed", "wall_s": 0.01, "rtol": 1.49012e-8, "error": 1e-5,
                        "ratio": {"value": 0.2, "lower_bound": False}}}
    md = V.markdown([{"problem": "ssm10", "n_params": 10, "gflow": g, "rows": [row]}], 120.0)
    assert ">2.4e+03× (> 120 s; rtol 1e-06)" in md and "0.2× (0.01 s; rtol 1.49012e-08; err 1.0e-05)" in md
    assert "| ssm10 | 1 (3) |" in md


def test_flows_one_after_another_until_the_cap():
    d = 10
    lag_weights, t1 = S.DESIGNS["baseline"]

    def flow(i):
        return V.Case(f"flow {i}", "", None, None, t1, S.initial_a(d, seed=S.SEED + i), lambda: S.Field(d, lag_weights),
                      None, S.impulse)

    refs = [V.Ref(flow(i), V.scipy_run("radau", flow(i), 1e-9, 1e-13, cap_s=600.0)["theta"]) for i in range(2)]
    done = V.batch_baseline("lsoda", flow, 3, refs, (1e-8, 1e-10), cap_s=600.0, kv5=None)
    assert done["status"] == "completed" and done["flows_completed"] == 3 and done["error_flows"] == 2
    assert done["error"] < 1e-5 and done["h_error"] < 1e-5
    stopped = V.batch_baseline("lsoda", flow, 3, refs, (1e-8, 1e-10), cap_s=0.0, kv5=None)
    assert stopped["status"] == "cap" and stopped["flows_completed"] == 0 and stopped["error"] is None
