"""Check kinds, bootstrap decisions over seeds, the committed result files and VALIDATION.md built from
them (the committed VALIDATION.md must be exactly what studies/validation.py makes of validation/results/)."""

import json
import os
import sys

import numpy as np
import pytest

from gflow.study import (
    bootstrap_interval,
    check,
    decide,
    exit_code,
    IDENTITIES,
    load_results,
    over_seeds,
    PREDICTIONS,
    record_result,
    SCALING_NOTES,
    seeds_needed,
    study_code_hash,
    study_parser,
    UNTESTABLE,
)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "studies"))
import validation  # noqa: E402


def test_bootstrap_interval_is_reproducible_and_brackets_the_median():
    x = np.random.default_rng(1).normal(2.0, 1.0, size=10)
    lo, hi = bootstrap_interval(x, "median", seed=3)
    assert (lo, hi) == bootstrap_interval(x, "median", seed=3)
    assert lo <= np.median(x) <= hi and hi - lo > 0.1
    assert bootstrap_interval([5.0], "median") == (5.0, 5.0)
    with pytest.raises(ValueError, match="non-finite"):
        bootstrap_interval([1.0, np.nan])
    with pytest.raises(ValueError, match="statistic"):
        bootstrap_interval([1.0, 2.0], "mode")


@pytest.mark.parametrize("interval, threshold, direction, expected", [
    ((0.5, 0.7), 0.45, ">=", "pass"), ((0.3, 0.4), 0.45, ">=", "FAIL"), ((0.4, 0.5), 0.45, ">=", "inconclusive"),
    ((0.01, 0.02), 0.05, "<=", "pass"), ((0.06, 0.08), 0.05, "<=", "FAIL"), ((0.04, 0.06), 0.05, "<", "inconclusive"),
    ((0.9, 1.1), [0.8, 1.2], "in", "pass"), ((1.3, 1.4), [0.8, 1.2], "in", "FAIL"),
    ((1.1, 1.3), [0.8, 1.2], "in", "inconclusive"),
])
def test_decide_three_ways(interval, threshold, direction, expected):
    assert decide(interval, threshold, direction) == expected


def test_seeds_needed_grows_as_the_margin_shrinks():
    assert seeds_needed(10, 0.5, (0.3, 0.7), 0.45, ">=") > seeds_needed(10, 0.6, (0.4, 0.8), 0.45, ">=") > 10
    assert seeds_needed(10, 0.45, (0.3, 0.6), 0.45, ">=") is None


def test_over_seeds_passes_fails_and_is_inconclusive():
    rng = np.random.default_rng(0)
    tight = over_seeds("slope ≥ 0.45", "test", 0.6 + 0.01 * rng.normal(size=10), 0.45, ">=", predictions=["000-P4"])
    assert tight["status"] == "pass" and tight["passed"] and tight["n"] == 10 and tight["kind"] == "prediction"
    low = over_seeds("slope ≥ 0.45", "test", 0.2 + 0.01 * rng.normal(size=10), 0.45, ">=")
    assert low["status"] == "FAIL" and not low["passed"]
    wide = over_seeds("slope ≥ 0.45", "test", [0.1, 0.3, 0.5, 0.7, 0.9], 0.45, ">=")
    assert wide["status"] == "inconclusive" and wide["seeds_needed"] > 5
    assert wide["interval"][0] < 0.45 < wide["interval"][1]


def test_check_needs_a_kind_and_only_sanity_failures_make_a_study_fail():
    with pytest.raises(TypeError):
        check("x", "y", 1.0, 1.0, True)
    with pytest.raises(ValueError, match="kind"):
        check("x", "y", 1.0, 1.0, True, kind="evidence")
    prediction_failed = check("p", "s", 2.0, 1.0, False, kind="prediction")
    sanity_failed = check("s", "s", 2.0, 1.0, False, kind="sanity")
    assert exit_code([prediction_failed, check("s", "s", 0.0, 1.0, True, kind="sanity")]) == 0
    assert exit_code([prediction_failed, sanity_failed]) == 1


def _summary(study, checks):
    return {"study": study, "config": {"quick": False, "out": "o", "record": "r", "seeds": 3}, "wall_time_s": 61.0,
            "provenance": {"git": {"commit": "abc", "dirty": False}}, "checks": checks}


def test_record_round_trip_and_stale_code(tmp_path):
    path = record_result(str(tmp_path), _summary("balance_limit", [check("a", "b", 1.0, 2.0, True, kind="sanity")]),
                         validation.STUDIES)
    [loaded] = load_results(str(tmp_path))
    assert path.endswith("balance_limit.json") and loaded["study"] == "balance_limit"
    assert "out" not in loaded["config"] and loaded["config"]["seeds"] == 3
    assert loaded["code_hash"] == study_code_hash("balance_limit", validation.STUDIES)
    studies = tmp_path / "studies"
    studies.mkdir()
    (studies / "s.py").write_text("import helper\n")
    (studies / "helper.py").write_text("x = 1\n")
    before = study_code_hash("s", str(studies))
    (studies / "helper.py").write_text("x = 2\n")
    assert study_code_hash("s", str(studies)) != before
    assert study_code_hash("missing", str(studies)) is None


def test_a_result_records_the_code_it_started_with(tmp_path, monkeypatch):
    """A file edited while a study runs must make its result stale: the hash noted as the run starts (by its
    parser) is the one recorded, not the hash of the edited code."""
    studies = tmp_path / "studies"
    studies.mkdir()
    script = studies / "tiny_study.py"
    script.write_text("x = 1\n")
    monkeypatch.setattr(sys.modules["__main__"], "__file__", str(script), raising=False)
    study_parser("doc", "out", "help", "quick")  # the run starts
    at_start = study_code_hash("tiny_study", str(studies))
    script.write_text("x = 2\n")  # edited during the run
    record_result(str(tmp_path / "results"), _summary("tiny_study", [check("a", "b", 1.0, 2.0, True, kind="sanity")]),
                  str(studies))
    [loaded] = load_results(str(tmp_path / "results"))
    assert loaded["code_hash"] == at_start != study_code_hash("tiny_study", str(studies))


def _result(study, checks, code_hash=None):
    return {"study": study, "recorded": "2026-11-25", "code_hash": code_hash or study_code_hash(study, validation.STUDIES),
            "wall_time_s": 60.0, "config": {}, "provenance": {"git": {"commit": "abc"}}, "checks": checks}


def test_render_decides_predictions_by_prediction_checks_only():
    results = [_result("memoryless", [
        check("sanity only", "s", 1.0, 1.0, True, kind="sanity", predictions=["001-6"]),
        check("fails", "s", 0.1, 0.45, False, kind="prediction", predictions=["001-8"]),
        over_seeds("wide", "s", [0.1, 0.3, 0.5, 0.7, 0.9], 0.45, ">=", predictions=["001-10"]),
        check("passes", "s", 0.0, 0.05, True, kind="prediction", predictions=["001-11"]),
        check("identity shown", "s", 0.0, 1e-12, True, kind="prediction", predictions=["001-3"]),
        check("identity broken", "s", 1.0, 1e-12, False, kind="sanity", predictions=["001-5"]),
    ], code_hash="old")]
    text, missing = validation.render(results, {"001-8": "Because."})
    row = {line.split(" | ")[0][2:]: line for line in text.splitlines() if line.startswith("| 0")}
    assert "**not checked**" in row["001-6"] and "1/1 pass" in row["001-6"]
    assert "[**FAIL**](#x-001-8) (stale)" in row["001-8"]
    assert "[inconclusive](#x-001-10) (stale)" in row["001-10"] and "seeds to decide" in row["001-10"]
    assert "| pass (stale) |" in row["001-11"]
    assert "| [not run](#x-000-p6) |" in row["000-P6"]  # extrapolation_phase has no result here
    assert "001-10" in missing and "000-P6" in missing and "001-8" not in missing  # not run needs a reason too
    assert "**explanation missing**" in text and "Because." in text
    assert "| memoryless | 2026-11-25 | abc | 1.0 min | 6 | **stale** |" in text
    # identities: counted apart, verified by any check tagged with them, a failed one shown as our bug
    assert "[identity: verified](#x-001-3) (stale)" in row["001-3"]
    assert "[**identity: check failed**](#x-001-5) (stale)" in row["001-5"]
    predictions_table = text.split("## Predictions")[1].split("## Identities")[0]
    assert "| 001-3 |" not in predictions_table and "| 001-6 |" in predictions_table
    n_identities = len(validation.IDENTITIES)
    assert f"**Predictions ({len(PREDICTIONS) - n_identities}): 1 pass, 1 FAIL, 1 inconclusive" in text
    assert f"**Identities, counted apart ({n_identities}): 1 verified, 1 check failed" in text


def test_readings_that_disagree_decide_nothing():
    """A prediction is decided only where every reading of an ambiguous setup agrees."""
    def c(status, reading=None):
        entry = check("x", "s", 1.0, 1.0, status == "pass", kind="prediction", predictions=["000-P10"],
                      **({"reading": reading} if reading else {}))
        entry["status"] = status
        return (None, entry)

    assert validation.decided([c("pass", "grid"), c("pass", "iid")]) == "pass"
    assert validation.decided([c("FAIL", "grid"), c("FAIL", "iid"), c("pass")]) == "FAIL"
    assert validation.decided([c("pass", "grid"), c("FAIL", "iid")]) == "depends on the reading"
    assert validation.decided([c("pass", "grid"), c("pass", "iid"), c("inconclusive")]) == "inconclusive"
    assert validation.decided([c("pass"), c("FAIL")]) == "FAIL"  # no readings: as before
    results = [_result("extrapolation_phase", [c("pass", "grid")[1], c("FAIL", "iid")[1]])]
    text, missing = validation.render(results, {})
    row = [line for line in text.splitlines() if line.startswith("| 000-P10 |")][0]
    assert "[depends on the reading](#x-000-p10)" in row and "[grid reading]" in row and "[iid reading]" in row
    assert "000-P10" in missing  # needs its explanation, as a FAIL does


def test_a_study_run_in_parts_decides_only_the_predictions_of_the_parts_it_ran():
    by_id = {p.id: p for p in PREDICTIONS}
    assert validation.planned_runs(by_id["000-P15"]) == [("gru_extrapolation", "A")]
    assert validation.planned_runs(by_id["000-P2"]) == [("balance_limit", None), ("gd_vs_flow", None)]
    part_b = _result("gru_extrapolation", [])
    part_b["config"] = {"parts": ["B"]}
    status = validation.prediction_statuses([part_b])
    assert status["000-P15"]["status"] == "not run"  # part A decides it, and only part B ran
    assert status["001-15"]["status"] == "not checked"  # part B ran but checked nothing: a defect, shown as such
    part_b["config"] = {"parts": ["A", "B"]}
    assert validation.prediction_statuses([part_b])["000-P15"]["status"] == "not checked"
    text, _ = validation.render([dict(part_b, config={"parts": ["B"]})], {})
    assert "`gru_extrapolation` (part A)" in text and "`gru_extrapolation` (part B)" not in text


def test_explanations_file_sections(tmp_path):
    f = tmp_path / "e.md"
    f.write_text("# Title\n\nintro\n\n## 000-P11 (k = 18)\nFirst paragraph.\n\nSecond.\n## 000-P14\nThird.\n")
    assert validation.load_explanations(str(f)) == {"000-P11": "First paragraph.\n\nSecond.", "000-P14": "Third."}


def test_registry_ids_are_unique_and_untestable_ones_are_known():
    ids = [p.id for p in PREDICTIONS]
    assert len(ids) == len(set(ids)) and set(UNTESTABLE) <= set(ids)
    assert all(len(reason) > 80 for reason in UNTESTABLE.values())
    assert set(IDENTITIES) <= set(ids) and not set(IDENTITIES) & set(UNTESTABLE)
    assert all(len(reason) > 80 for reason in IDENTITIES.values()) and set(SCALING_NOTES) <= set(ids)


def test_committed_validation_md_is_what_the_committed_results_give():
    results = load_results(validation.RESULTS)
    text, missing = validation.render(results, validation.load_explanations())
    with open(validation.OUTPUT) as f:
        committed = f.read()
    assert committed == text, "VALIDATION.md is out of date: run python studies/validation.py"
    assert not missing, f"FAIL/inconclusive predictions without an explanation: {missing}"
    assert "**not checked**" not in text
    for r in results:  # small files, no trajectories
        assert os.path.getsize(os.path.join(validation.RESULTS, f"{r['study']}.json")) < 400_000
        assert all(c["kind"] in ("prediction", "sanity") for c in r["checks"]), r["study"]
        json.dumps(r)


def test_the_claims_registry_is_data_beside_validation(tmp_path):
    from gflow.study import load_registry

    assert os.path.isfile(os.path.join(REPO, "validation", "registry.toml"))
    predictions, identities, untestable, notes = load_registry()
    assert predictions == PREDICTIONS and identities == IDENTITIES and untestable == UNTESTABLE
    assert notes == SCALING_NOTES and identities["000-P1"].startswith("An identity or construction")
    assert untestable["002-P4"].startswith("An existence statement") and not untestable["004-P13"].startswith("An ")
    bad = tmp_path / "registry.toml"
    bad.write_text('[[prediction]]\nid = "x"\nclaim = "c"\nsource = "s"\nstudy = "—"\n' * 2)
    with pytest.raises(ValueError, match="duplicate"):
        load_registry(str(bad))
    bad.write_text('[[prediction]]\nid = "x"\nclaim = "c"\n')
    with pytest.raises(ValueError, match="lacks"):
        load_registry(str(bad))
