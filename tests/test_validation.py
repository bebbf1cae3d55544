"""Check kinds, bootstrap decisions over seeds, the committed result files and VALIDATION.md built from
them (the committed VALIDATION.md must be exactly what studies/validation.py makes of validation/results/)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from gflow.study import (  # noqa: I001
    bootstrap_interval,
    check,
    decide,
    exit_code,
    IDENTITIES,
    load_results,
    over_seeds,
    PREDICTIONS,
    record_block,
    record_name,
    record_part,
    record_result,
    result_block,
    result_file_name,
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


TOY_REGISTRY = """
[preambles]
identity = "An identity: "

[[prediction]]
id = "T-1"
claim = "guarded only"
source = "s"
study = "memoryless"
kind = "prediction"

[[prediction]]
id = "T-2"
claim = "fails"
source = "s"
study = "memoryless"
kind = "prediction"

[[prediction]]
id = "T-3"
claim = "wide"
source = "s"
study = "memoryless"
kind = "prediction"

[[prediction]]
id = "T-4"
claim = "passes"
source = "s"
study = "memoryless"
kind = "prediction"
why_kind = "could come out otherwise"

[[prediction]]
id = "T-5"
claim = "identity shown"
source = "s"
study = "memoryless"
kind = "identity"
identity = "true by algebra, whatever the run does, so no run can refute it."

[[prediction]]
id = "T-6"
claim = "identity broken"
source = "s"
study = "memoryless"
kind = "identity"
identity = "true by algebra, whatever the run does, so no run can refute it."

[[prediction]]
id = "T-7"
claim = "planned elsewhere"
source = "s"
study = "extrapolation_phase"
kind = "prediction"

[[prediction]]
id = "T-8"
claim = "the figure's sentence"
source = "s"
study = "memoryless"
kind = "reproduction"
figure = "Fig. 9"
protocol = "Adam, 3 seeds"

[[prediction]]
id = "T-9"
claim = "an open question"
source = "s"
study = "memoryless"
kind = "finding"

[[prediction]]
id = "T-10"
claim = "an open question not yet measured"
source = "s"
study = "memory_cutoff"
kind = "finding"

[[prediction]]
id = "T-11"
claim = "decided by a check nobody registered"
source = "s"
study = "memoryless"
kind = "prediction"

[[prediction]]
id = "T-12"
claim = "decided by a check changed after the run"
source = "s"
study = "memoryless"
kind = "prediction"

[[check]]
id = "T-2.c"
prediction = "T-2"
study = "memoryless"
statistic = "value"
direction = ">="
threshold = 0.45
scope = "one number"
seeds = "0"

[[check]]
id = "T-3.c"
prediction = "T-3"
study = "memoryless"
statistic = "median"
direction = ">="
threshold = 0.45
scope = "five seeds"
seeds = "0-4"

[[check]]
id = "T-4.c"
prediction = "T-4"
study = "memoryless"
statistic = "value"
direction = "<="
threshold = 0.05
scope = "one number"
seeds = [0]
confirmatory_seeds = [100]

[[check]]
id = "T-8.c"
prediction = "T-8"
study = "memoryless"
statistic = "value"
direction = "<="
threshold = 0.05
scope = "one number"
seeds = "0"

[[check]]
id = "T-12.c"
prediction = "T-12"
study = "memoryless"
statistic = "value"
direction = "<="
threshold = 0.05
scope = "one number"
seeds = "0"
registered_after_run = true
changed = "the bar, after a run"
confirmatory_seeds = "100"
"""


def _toy_registry(tmp_path):
    from gflow.study import read_registry

    path = tmp_path / "registry.toml"
    path.write_text(TOY_REGISTRY)
    return read_registry(str(path))


def test_render_counts_the_four_kinds_apart_and_decides_by_registered_checks_only(tmp_path):
    registry = _toy_registry(tmp_path)
    results = [_result("memoryless", [
        check("sanity only", "s", 1.0, 1.0, True, kind="sanity", predictions=["T-1"]),
        check("fails", "s", 0.1, 0.45, direction=">=", kind="prediction", predictions=["T-2"], check_id="T-2.c",
              seeds=[0]),
        over_seeds("wide", "s", [0.1, 0.3, 0.5, 0.7, 0.9], 0.45, ">=", predictions=["T-3"], check_id="T-3.c",
                   seeds=[0, 1, 2, 3, 4]),
        check("passes", "s", 0.0, 0.05, direction="<=", kind="prediction", predictions=["T-4"], check_id="T-4.c",
              seeds=[0]),
        check("identity shown", "s", 0.0, 1e-12, True, kind="prediction", predictions=["T-5"]),
        check("identity broken", "s", 1.0, 1e-12, False, kind="sanity", predictions=["T-6"]),
        check("reproduced", "s", 0.01, 0.05, direction="<=", kind="prediction", predictions=["T-8"], check_id="T-8.c",
              seeds=[0]),
        check("measured", "s", 0.123, 0.5, direction="<=", kind="prediction", predictions=["T-9"]),
        check("unregistered", "s", 0.0, 0.05, direction="<=", kind="prediction", predictions=["T-11"], seeds=[0]),
        check("after the run", "s", 0.0, 0.05, direction="<=", kind="prediction", predictions=["T-12"],
              check_id="T-12.c", seeds=[0]),
    ], code_hash="old")]
    text, missing = validation.render(results, {"T-2": "Because."}, registry)
    row = {line.split(" | ")[0][2:]: line for line in text.splitlines() if line.startswith("| T-")}
    assert "**not checked**" in row["T-1"] and "1/1 pass" in row["T-1"]
    assert "[**FAIL**](#x-t-2) (stale)" in row["T-2"]
    assert "[inconclusive](#x-t-3) (stale)" in row["T-3"] and "seeds to decide" in row["T-3"]
    assert "| pass (stale) |" in row["T-4"] and "(Why prediction: could come out otherwise)" in row["T-4"]
    assert "| [not run](#x-t-7) |" in row["T-7"]  # extrapolation_phase has no result here
    assert "T-3" in missing and "T-7" in missing and "T-2" not in missing  # not run needs a reason too
    assert "**explanation missing**" in text and "Because." in text
    assert "| memoryless | `memoryless.json` | 2026-11-25 | abc | 1.0 min | 10 | **stale** |" in text
    # identities: counted apart, verified by any check tagged with them, a failed one shown as our bug
    assert "[identity: verified](#x-t-5) (stale)" in row["T-5"]
    assert "[**identity: check failed**](#x-t-6) (stale)" in row["T-6"]
    # reproductions: decided as predictions, counted apart, with the figure and the paper's protocol
    assert "| T-8 | Fig. 9 | the figure's sentence | Adam, 3 seeds | pass (stale) |" in row["T-8"]
    # findings: measured values, no threshold, no pass/fail
    assert "| measured (stale) | measured: 0.123 (memoryless) |" in row["T-9"] and "0.5" not in row["T-9"]
    assert "| not measured | — (study: memory_cutoff) |" in row["T-10"]
    # pre-registration: an unregistered check decides nothing; a check changed after the run awaits its fresh seeds
    assert "| **not registered** (stale) |" in row["T-11"] and "no registered check" in row["T-11"]
    assert "| awaiting confirmation (stale) |" in row["T-12"] and "exploratory (0;" in row["T-12"]
    assert "- T-12 `T-12.c`: exploratory seeds 0, confirmatory 100. Changed: the bar, after a run" in text
    sections = {name: text.split(f"## {name}")[1].split("\n## ")[0]
                for name in ("Predictions", "Reproductions", "Identities", "Findings", "Pre-registration")}
    assert "| T-5 |" not in sections["Predictions"] and "| T-4 |" in sections["Predictions"]
    assert "| T-8 |" in sections["Reproductions"] and "| T-8 |" not in sections["Predictions"]
    assert "| T-9 |" in sections["Findings"] and "| T-5 |" in sections["Identities"]
    assert "memoryless: T-11: 'unregistered'" in sections["Pre-registration"]
    assert ("**Predictions (7): 1 pass, 1 FAIL, 1 inconclusive, 1 awaiting confirmation, 1 not registered, "
            "1 not run, 1 not checked.**") in text
    assert "**reproductions (1): 1 pass**; **identities (2): 1 verified, 1 check failed**; " \
           "**findings (2): 1 measured, 1 not measured**" in text


def test_a_finding_with_many_measurements_lists_each_with_what_it_measures(tmp_path):
    """Beyond FINDING_INLINE measurements, the findings table links to a list under it, one line per measurement
    with its claim; a bare list of numbers in the row would not say which number is which."""
    registry = _toy_registry(tmp_path)
    claims = [f"quantity {i} at level {i}" for i in range(5)]
    results = [_result("memoryless", [check(c, "s", 0.1 * (i + 1), 1.0, direction="<=", kind="prediction",
                                            predictions=["T-9"]) for i, c in enumerate(claims)], code_hash="old")]
    text, _ = validation.render(results, {}, registry)
    [row] = [line for line in text.splitlines() if line.startswith("| T-9 |")]
    assert "5 measurements" in row and "(#x-t-9)" in row and "0.3" not in row
    listed = text.split('<a id="x-t-9"></a>')[1].split("\n\n", 2)[1].splitlines()
    assert listed == [f"- {c}: {v} (memoryless)" for c, v in zip(claims, ("0.1", "0.2", "0.3", "0.4", "0.5"))]


def test_readings_that_disagree_decide_nothing(tmp_path):
    """A prediction is decided only where every reading of an ambiguous setup agrees."""
    def c(status, reading=None):
        entry = check("x", "s", 1.0, 1.0, status == "pass", kind="prediction", predictions=["T-2"],
                      **({"reading": reading} if reading else {}))
        entry["status"] = status
        return (None, entry)

    assert validation.decided([c("pass", "grid"), c("pass", "iid")]) == "pass"
    assert validation.decided([c("FAIL", "grid"), c("FAIL", "iid"), c("pass")]) == "FAIL"
    assert validation.decided([c("pass", "grid"), c("FAIL", "iid")]) == "depends on the reading"
    assert validation.decided([c("pass", "grid"), c("pass", "iid"), c("inconclusive")]) == "inconclusive"
    assert validation.decided([c("pass"), c("FAIL")]) == "FAIL"  # no readings: as before
    registry = _toy_registry(tmp_path)
    results = [_result("memoryless", [
        check("grid one", "s", 0.5, 0.45, direction=">=", kind="prediction", predictions=["T-2"], check_id="T-2.c",
              seeds=[0], reading="grid"),
        check("iid one", "s", 0.4, 0.45, direction=">=", kind="prediction", predictions=["T-2"], check_id="T-2.c",
              seeds=[0], reading="iid")])]
    text, missing = validation.render(results, {}, registry)
    row = [line for line in text.splitlines() if line.startswith("| T-2 |")][0]
    assert "[depends on the reading](#x-t-2)" in row and "[grid reading]" in row and "[iid reading]" in row
    assert "T-2" in missing  # needs its explanation, as a FAIL does


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
    from gflow.study import KINDS, KINDS_OF_RESULT

    ids = [p.id for p in PREDICTIONS]
    assert len(ids) == len(set(ids)) and set(UNTESTABLE) <= set(ids)
    assert all(p.kind in KINDS_OF_RESULT and KINDS[p.id] == p.kind for p in PREDICTIONS)
    assert {p.id for p in PREDICTIONS if p.kind == "identity"} == set(IDENTITIES)
    assert all(p.figure and p.protocol for p in PREDICTIONS if p.kind == "reproduction")
    assert {"000-F1", "000-F2", "001-F1", "001-F2"} <= {p.id for p in PREDICTIONS if p.kind == "finding"}
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
        name = result_file_name(r)
        assert os.path.getsize(os.path.join(validation.RESULTS, name)) < 400_000
        assert all(c["kind"] in ("prediction", "sanity") for c in r["checks"]), r["study"]
        json.dumps(r)


def _git(*args) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", REPO, *args], capture_output=True, text=True)


def test_every_committed_record_names_a_commit_that_holds_its_study():
    """A record's provenance names the commit it was made on, and that commit holds the study's script: a run on a
    machine whose copy of the checkout carried an older .git (the GPU machine's, once) would name a commit without
    it. Where the checkout has no history to read (no git, a shallow clone), nothing is checked."""
    shallow = _git("rev-parse", "--is-shallow-repository")
    if shallow.returncode != 0 or shallow.stdout.strip() != "false":
        pytest.skip("not a full git checkout")
    lacking = []
    for r in load_results(validation.RESULTS):
        commit = r["provenance"]["git"]["commit"]
        if _git("cat-file", "-e", f"{commit}:studies/{r['study']}.py").returncode != 0:
            lacking.append(f"{result_file_name(r)}: {commit[:10]}")
    assert not lacking, f"records whose commit has no studies/<study>.py: {lacking}"


def test_the_claims_registry_is_data_beside_validation(tmp_path):
    from gflow.study import load_registry

    assert os.path.isfile(os.path.join(REPO, "validation", "registry.toml"))
    predictions, identities, untestable, notes = load_registry()
    assert predictions == PREDICTIONS and identities == IDENTITIES and untestable == UNTESTABLE
    assert notes == SCALING_NOTES and identities["000-P1"].startswith("An identity or construction")
    assert untestable["002-P4"].startswith("An existence statement") and not untestable["004-P13"].startswith("An ")
    bad = tmp_path / "registry.toml"
    row = '[[prediction]]\nid = "x"\nclaim = "c"\nsource = "s"\nstudy = "—"\n'
    bad.write_text((row + 'kind = "prediction"\n') * 2)
    with pytest.raises(ValueError, match="duplicate"):
        load_registry(str(bad))
    bad.write_text('[[prediction]]\nid = "x"\nclaim = "c"\n')
    with pytest.raises(ValueError, match="lacks"):
        load_registry(str(bad))
    for extra, message in (('kind = "guess"\n', "kind must be one of"),
                           ('kind = "identity"\n', "gives its reason"),
                           ('kind = "prediction"\nidentity = "because"\n', "gives its reason"),
                           ('kind = "reproduction"\nfigure = "Fig. 1"\n', "protocol"),
                           ('kind = "finding"\nfigure = "Fig. 1"\n', "only a reproduction"),
                           ('kind = "finding"\nuntestable = "why"\n', "only a prediction")):
        bad.write_text(row + extra)
        with pytest.raises(ValueError, match=message):
            load_registry(str(bad))


# --- seed blocks: a confirmatory run records beside the exploratory one ------------------------------------------------


def _block_summary(study, checks, block):
    summary = _summary(study, checks)
    if block is not None:
        summary["config"]["seeds_block"] = block
    return summary


def test_a_run_on_another_seed_block_records_its_own_file(tmp_path):
    """``<study>.json`` for the exploratory block (or a study without blocks), ``<study>.<block>.json`` for any other:
    a confirmatory run never overwrites the exploratory record; both load, the exploratory one first."""
    entry = [check("a", "b", 1.0, 2.0, True, kind="sanity")]
    paths = [record_result(str(tmp_path), _block_summary("memoryless", entry, block), validation.STUDIES)
             for block in ("confirmatory", "exploratory", None)]
    assert [os.path.basename(p) for p in paths] == ["memoryless.confirmatory.json", "memoryless.json",
                                                     "memoryless.json"]
    exploratory, confirmatory = load_results(str(tmp_path))
    assert result_block(exploratory) is None and "seeds_block" not in exploratory  # the last run had no block
    assert confirmatory["seeds_block"] == "confirmatory" and result_block(confirmatory) == "confirmatory"
    assert record_block({"seeds_block": "exploratory"}) is None and record_block({}) is None
    with pytest.raises(ValueError, match="seeds_block"):
        record_block({"seeds_block": "../x"})
    # a block file that does not say its block (written by hand) gets it from its name
    (tmp_path / "balance_limit.confirmatory.json").write_text(json.dumps(_result("balance_limit", [])))
    assert [result_block(r) for r in load_results(str(tmp_path))] == ["confirmatory", None, "confirmatory"]


def test_the_parts_of_a_study_record_side_by_side(tmp_path):
    """A study run in parts (config ``record_part``) records ``<study>.part-<part>.json`` per part, with its block
    before the part: parts run on different days neither overwrite one another nor the whole study's record, and each
    loads back with its part and its own file name."""
    entry = [check("a", "b", 1.0, 2.0, True, kind="sanity")]
    runs = [("main", None), ("fig1b-d100", None), (None, None), ("main", "confirmatory")]
    paths = []
    for part, block in runs:
        summary = _block_summary("reproduce_000", entry, block)
        if part is not None:
            summary["config"]["record_part"] = part
        paths.append(record_result(str(tmp_path), summary, validation.STUDIES))
    assert [os.path.basename(p) for p in paths] == ["reproduce_000.part-main.json", "reproduce_000.part-fig1b-d100.json",
                                                     "reproduce_000.json", "reproduce_000.confirmatory.part-main.json"]
    loaded = load_results(str(tmp_path))
    assert [(r.get("record_part"), result_block(r)) for r in loaded] == [
        (None, None), ("fig1b-d100", None), ("main", None), ("main", "confirmatory")]
    assert sorted(result_file_name(r) for r in loaded) == sorted(os.path.basename(p) for p in paths)
    assert record_part({}) is None and record_part({"record_part": "fig1b-d200"}) == "fig1b-d200"
    with pytest.raises(ValueError, match="record_part"):
        record_part({"record_part": "a/b"})
    # a part file that does not say its part (written by hand) gets it from its name, not a seed block
    (tmp_path / "lazy_width.part-x.json").write_text(json.dumps(_result("lazy_width", [])))
    (hand,) = [r for r in load_results(str(tmp_path)) if r["study"] == "lazy_width"]
    assert hand["record_part"] == "x" and result_block(hand) is None


def _two_blocks(exploratory_hash=None, confirmatory_hash=None):
    """An exploratory record (seeds 0) and a confirmatory one (seeds 100) of the same study and checks: T-12.c was
    registered after its run (decides on 100 only), T-4.c before (declares 100 too: either block decides)."""
    def entries(seed, t4, t12):
        return [check("passes", "s", t4, 0.05, direction="<=", kind="prediction", predictions=["T-4"],
                      check_id="T-4.c", seeds=[seed]),
                check("after the run", "s", t12, 0.05, direction="<=", kind="prediction", predictions=["T-12"],
                      check_id="T-12.c", seeds=[seed], registered_after_run=True)]
    exploratory = _result("memoryless", entries(0, 0.5, 0.0), code_hash=exploratory_hash)
    confirmatory = dict(_result("memoryless", entries(100, 0.0, 0.5), code_hash=confirmatory_hash),
                        seeds_block="confirmatory", config={"seeds_block": "confirmatory"})
    return [exploratory, confirmatory]


def test_the_confirmatory_record_decides_and_the_exploratory_one_is_shown_beside(tmp_path):
    registry = _toy_registry(tmp_path)
    text, _ = validation.render(_two_blocks(exploratory_hash="old"), {"T-12": "Because."}, registry)
    row = {line.split(" | ")[0][2:]: line for line in text.splitlines() if line.startswith("| T-")}
    # T-12 (registered after the run): the confirmatory FAIL decides, the exploratory pass is shown beside
    assert "| [**FAIL**](#x-t-12) |" in row["T-12"] and "fail: 0.5 vs <=0.05 (memoryless, confirmatory block)" \
        in row["T-12"].replace("FAIL:", "fail:")
    assert "exploratory (0; registered after the run, decides on its confirmatory seeds): pass" in row["T-12"]
    # T-4 (registered before, declaring the block): the confirmatory run decides alone, the exploratory FAIL beside
    assert "| pass |" in row["T-4"] and "exploratory (0; the run on the confirmatory block decides): FAIL" in row["T-4"]
    assert "awaiting confirmation" not in row["T-12"] + row["T-4"]
    assert "**Awaiting confirmation**" not in text
    # both files in the results table; staleness is per file (only the exploratory one's code changed)
    assert "| memoryless | `memoryless.json` | 2026-11-25 | abc | 1.0 min | 2 | **stale** |" in text
    assert "| memoryless | `memoryless.confirmatory.json` | 2026-11-25 | abc | 1.0 min | 2 | current |" in text
    assert "(stale)" not in row["T-12"] + row["T-4"]  # the deciding (confirmatory) record is current
    text, _ = validation.render(_two_blocks(confirmatory_hash="old"), {"T-12": "Because."}, registry)
    row = [line for line in text.splitlines() if line.startswith("| T-12 |")][0]
    assert "[**FAIL**](#x-t-12) (stale)" in row
    assert "| memoryless | `memoryless.confirmatory.json` | 2026-11-25 | abc | 1.0 min | 2 | **stale** |" in text


def test_a_part_record_decides_over_the_whole_study_record_of_its_block(tmp_path):
    """Where the whole study's record and a part's record (the later run) hold the same registered check, the part
    decides and the whole record's entry is shown beside; a check only the whole record holds still decides."""
    registry = _toy_registry(tmp_path)

    def t4(value):
        return check("passes", "s", value, 0.05, direction="<=", kind="prediction", predictions=["T-4"],
                     check_id="T-4.c", seeds=[0])

    whole = _result("memoryless", [t4(0.5)])  # a stale FAIL in the whole record
    part = dict(_result("memoryless", [t4(0.0)]), record_part="main", config={"record_part": "main"})
    status = validation.prediction_statuses([dict(r, _stale=False) for r in (whole, part)], registry)
    assert status["T-4"]["status"] == "pass"
    assert [r.get("record_part") for r, _ in status["T-4"]["checks"]] == ["main"]
    assert [r.get("record_part") for r, _ in status["T-4"]["exploratory"]] == [None]
    status = validation.prediction_statuses([dict(whole, _stale=False)], registry)
    assert status["T-4"]["status"] == "FAIL"
    with pytest.raises(ValueError, match="part-"):
        record_block({"seeds_block": "part-main"})


def test_without_its_confirmatory_record_a_check_registered_after_the_run_awaits_it(tmp_path):
    registry = _toy_registry(tmp_path)
    exploratory, _ = _two_blocks()
    status = validation.prediction_statuses([dict(exploratory, _stale=False)], registry)
    assert status["T-12"]["status"] == "awaiting confirmation" and status["T-12"]["awaiting"]
    assert status["T-4"]["status"] == "FAIL"  # registered before its run: the exploratory block decides
    text, _ = validation.render([exploratory], {"T-4": "Because."}, registry)
    assert "- T-12 `T-12.c`: exploratory seeds 0, confirmatory 100." in text


def test_a_default_balance_limit_run_records_as_its_confirmatory_block(tmp_path):
    """balance_limit's full run defaults to its confirmatory block (the README runs it on its defaults): it records
    ``balance_limit.confirmatory.json``, and its 000-P4 check decides there (not flagged, not awaiting)."""
    import balance_limit as bl

    args = bl.parse_args(["--out", str(tmp_path / "out")])
    assert not args.quick and args.seeds_block == "confirmatory" and args.seed_list == list(range(1000, 1060))
    assert record_name("balance_limit", record_block(vars(args))) == "balance_limit.confirmatory.json"
    eps = np.array([1e-2, 1e-3, 1e-4, 1e-5])
    rho = np.sqrt(eps)[:, None] * np.ones((1, 60))
    entry = bl.balanced_seeds_check(eps, rho, eps[:, None] ** 0.25 * np.ones((1, 60)), args.seed_list,
                                    block=args.seeds_block)
    config = {**vars(args), "quick": False, "record": str(tmp_path / "results")}
    summary = {**_summary("balance_limit", [entry]), "config": config}
    path = record_result(config["record"], summary, validation.STUDIES)
    assert os.path.basename(path) == "balance_limit.confirmatory.json"
    [record] = load_results(config["record"])
    assert record["seeds_block"] == "confirmatory" and record["code_hash"] is not None
    status = validation.prediction_statuses([dict(record, _stale=False)])["000-P4"]
    assert status["status"] == "pass" and status["checks"] and not status["awaiting"] and not status["unregistered"]
