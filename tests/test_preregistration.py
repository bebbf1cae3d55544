"""Pre-registration that a machine enforces: every check that decides a prediction or a reproduction is a
``[[check]]`` of validation/registry.toml (statistic, direction, threshold, scope, seeds), and a recorded result
decided by anything else fails here. A check written or changed after its study had been run decides only on its
declared fresh confirmatory seeds. The negative controls build tampered records and show the checker catches them."""

import os
import re
import sys
import time

import numpy as np
import pytest

from gflow.study import (  # noqa: I001
    check,
    check_role,
    CHECKS,
    load_results,
    over_seeds,
    preregistration_problems,
    read_registry,
    recorded_seeds,
    REGISTERED,
    registered_check,
    result_file_name,
    study_code_hash,
)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "studies"))
import validation  # noqa: E402

BY_ID = {c.id: c for c in CHECKS}


def _record(study, checks, config=None):
    return {"study": study, "recorded": "2026-11-28", "code_hash": study_code_hash(study, validation.STUDIES),
            "wall_time_s": 1.0, "config": config or {}, "provenance": {"git": {"commit": "abc"}}, "checks": checks}


def _as_registered(reg, values=None, seeds=None, **changes):
    """A recorded entry of the registered check ``reg``, run as registered (then ``changes`` applied)."""
    seeds = list(reg.seeds) if seeds is None else seeds
    values = np.linspace(0.9, 1.1, len(seeds)) * (reg.threshold if reg.direction != "in" else 1.0) \
        if values is None else values
    kw = dict(threshold=reg.threshold, direction=reg.direction, statistic=reg.statistic)
    kw.update(changes)
    return over_seeds("as registered", "test", values, kw["threshold"], kw["direction"], statistic=kw["statistic"],
                      predictions=list(reg.predictions), check_id=reg.id, seeds=seeds)


# --- the registry ----------------------------------------------------------------------------------------------------


def test_registered_checks_decide_predictions_or_reproductions_and_name_their_seeds():
    assert len(BY_ID) == len(CHECKS) > 0
    for c in CHECKS:
        assert all(REGISTERED.kind(pid) in ("prediction", "reproduction") for pid in c.predictions), c.id
        assert c.seeds and len(c.scope) > 20, c.id
        if c.registered_after_run:
            assert c.changed and c.confirmatory_seeds and not set(c.confirmatory_seeds) & set(c.seeds), c.id


def test_the_registrations_read_off_todays_records_name_them():
    """Where a registered check was read off a record made before checks were registered (its ``match``, the start of
    the recorded claim), that record holds it: the match is not a typo, and it finds one check per study and
    reading."""
    records = load_results(validation.RESULTS)
    for reg in CHECKS:
        if not reg.match:
            continue
        per_file = [[(r, c) for c in r["checks"] if c["claim"].startswith(reg.match)
                     and reg.reading in (None, c.get("reading"))] for r in records if r["study"] == reg.study]
        per_file = [found for found in per_file if found]  # a study's exploratory file, and its block files
        assert per_file and all(len(found) == 1 for found in per_file), \
            f"{reg.id}: {[len(found) for found in per_file]} recorded checks start with {reg.match!r}"
        assert all(registered_check(*found[0], REGISTERED)[0] == reg for found in per_file)


def test_every_seed_000_prediction_and_reproduction_has_registered_checks():
    seed_000 = [p.id for p in REGISTERED.predictions if p.id.startswith("000-") and p.kind in ("prediction",
                                                                                              "reproduction")]
    run = {pid for c in CHECKS for pid in c.predictions}
    assert set(seed_000) - run <= {"000-P15"}  # Fig. 2 (part A) has not been run: its checks are registered at its run


@pytest.mark.parametrize("extra, message", [
    ('registered_after_run = true\n', "confirmatory_seeds"),
    ('registered_after_run = true\nchanged = "bar"\nconfirmatory_seeds = "5-14"\n', "fresh"),
    ('confirmatory_seeds = "9-19"\n', "fresh"),
])
def test_a_check_changed_after_its_run_declares_a_fresh_confirmatory_block(tmp_path, extra, message):
    path = tmp_path / "registry.toml"
    path.write_text('[[prediction]]\nid = "x"\nclaim = "c"\nsource = "s"\nstudy = "memoryless"\nkind = "prediction"\n\n'
                    '[[check]]\nid = "x.c"\nprediction = "x"\nstudy = "memoryless"\nstatistic = "median"\n'
                    'direction = ">="\nthreshold = 1.0\nscope = "ten seeds"\nseeds = "0-9"\n' + extra)
    with pytest.raises(ValueError, match=message):
        read_registry(str(path))


@pytest.mark.parametrize("check_fields, message", [
    ('prediction = "i"\nstatistic = "median"\ndirection = ">="\nthreshold = 1.0\n', "not a prediction or reproduction"),
    ('prediction = "x"\nstatistic = "mode"\ndirection = ">="\nthreshold = 1.0\n', "statistic"),
    ('prediction = "x"\nstatistic = "median"\ndirection = "=="\nthreshold = 1.0\n', "direction"),
    ('prediction = "x"\nstatistic = "median"\ndirection = "in"\nthreshold = 1.0\n', "band"),
    ('prediction = "x"\nstatistic = "median"\ndirection = ">="\n', "lacks"),
])
def test_the_loader_rejects_malformed_registrations(tmp_path, check_fields, message):
    path = tmp_path / "registry.toml"
    path.write_text('[preambles]\nidentity = ""\n\n'
                    '[[prediction]]\nid = "x"\nclaim = "c"\nsource = "s"\nstudy = "memoryless"\nkind = "prediction"\n\n'
                    '[[prediction]]\nid = "i"\nclaim = "c"\nsource = "s"\nstudy = "memoryless"\nkind = "identity"\n'
                    'identity = "by algebra"\n\n'
                    '[[check]]\nid = "x.c"\nstudy = "memoryless"\nscope = "ten seeds"\nseeds = "0-9"\n' + check_fields)
    with pytest.raises(ValueError, match=message):
        read_registry(str(path))


# --- the checker and its negative controls ---------------------------------------------------------------------------


BASE = "002-P6.dl1-accuracy"  # registered before its run: median over seeds 0–9 (or 100–109) >= 0.75


def test_a_record_run_as_registered_conforms():
    reg = BY_ID[BASE]
    assert (reg.statistic, reg.direction, reg.threshold, reg.registered_after_run) == ("median", ">=", 0.75, False)
    for seeds in (list(reg.seeds), list(reg.confirmatory_seeds)):  # either declared block decides
        record = _record(reg.study, [_as_registered(reg, seeds=seeds)])
        assert preregistration_problems([record]) == []
        assert check_role(record, record["checks"][0], REGISTERED) == ("deciding", [])
        assert recorded_seeds(record, record["checks"][0]) == tuple(seeds)


def test_a_fraction_of_seeds_run_as_registered_conforms():
    from gflow.study import k_of_n

    reg = BY_ID["000-P4.balanced-seeds"]
    outcomes = {s: True for s in reg.confirmatory_seeds}
    entry = k_of_n("balanced seeds", "test", outcomes, reg.threshold, predictions=["000-P4"], check_id=reg.id)
    record = _record(reg.study, [entry])
    assert entry["statistic"] == reg.statistic == "clopper_pearson" and entry["status"] == "pass"
    assert preregistration_problems([record]) == [] and check_role(record, entry, REGISTERED)[0] == "deciding"
    entry = k_of_n("balanced seeds", "test", outcomes, 0.7, predictions=["000-P4"], check_id=reg.id)
    assert "threshold 0.7, registered 0.75" in preregistration_problems([_record(reg.study, [entry])])[0]
    entry = k_of_n("balanced seeds", "test", outcomes, 0.75, predictions=["000-P4"], check_id=reg.id,
                   registered_after_run=False)  # the study says the check predates its run; the registry does not
    assert "registered_after_run = False" in preregistration_problems([_record(reg.study, [entry])])[0]


@pytest.mark.parametrize("tamper, found", [
    (dict(threshold=0.2), "threshold 0.2, registered 0.75"),
    (dict(direction=">"), "direction '>', registered '>='"),
    (dict(statistic="mean"), "statistic 'mean', registered 'median'"),
    (dict(seeds=list(range(10, 20))), "decided on seeds 10–19, registered 0–9 (confirmatory 100–109)"),
    (dict(seeds=list(range(5))), "decided on seeds 0–4, registered 0–9"),
])
def test_negative_control_a_tampered_record_is_caught(tamper, found):
    """The same check with its statistic, direction, threshold or seeds changed after registration: the checker
    flags it, the test over the committed records would fail on it, and VALIDATION.md counts it as not registered."""
    reg = BY_ID[BASE]
    seeds = tamper.pop("seeds", None)
    record = _record(reg.study, [_as_registered(reg, seeds=seeds, **tamper)])
    problems = preregistration_problems([record])
    assert len(problems) == 1 and found in problems[0] and problems[0].startswith("regular_language: 002-P6: ")
    role, why = check_role(record, record["checks"][0], REGISTERED)
    assert role == "not registered" and found in why[0]
    text, _ = validation.render([record], {})
    row = [line for line in text.splitlines() if line.startswith("| 002-P6 |")][0]
    assert "| **not registered** (" in row and found in row
    assert found in text.split("## Pre-registration")[1]


def test_negative_control_unregistered_and_unnamed_checks_are_caught():
    reg = BY_ID[BASE]
    unknown = _as_registered(reg)
    unknown["check_id"] = "002-P6.made-up"
    no_seeds = _as_registered(reg)
    del no_seeds["seeds"]
    no_id = over_seeds("a new deciding check", "test", [1.0, 2.0], 0.5, ">=", predictions=["002-P6"], seeds=[0, 1])
    wrong_study = _as_registered(reg)
    other = _record("gd_vs_flow", [wrong_study])
    problems = preregistration_problems([_record("regular_language", [unknown, no_seeds, no_id]), other])
    assert len(problems) == 3
    assert "'002-P6.made-up' is not in the registry" in problems[0]
    assert "does not name the seeds" in problems[1]
    assert "no registered check" in problems[2]
    # a study that does not decide 002-P6 records a measurement, not a deciding check (as_measurements, which
    # preregistration_problems applies as VALIDATION.md does); the raw entry is not the registered one
    assert "recorded by gd_vs_flow, registered for regular_language" in check_role(other, wrong_study, REGISTERED)[1][0]


def test_checks_that_decide_nothing_need_no_registration():
    """Sanity checks, and checks of identities and findings, are shown, not decided: they need no registration."""
    record = _record("balance_limit", [
        check("a guard", "s", 0.0, 1.0, direction="<=", kind="sanity", predictions=["000-P4"]),
        check("an identity", "s", 0.0, 1.0, direction="<=", kind="prediction", predictions=["000-P3"]),
        check("a finding", "s", 0.0, 1.0, direction="<=", kind="prediction", predictions=["001-F2"]),
        check("untagged", "s", 0.0, 1.0, direction="<=", kind="prediction")])
    assert preregistration_problems([record]) == []
    assert {check_role(record, c, REGISTERED)[0] for c in record["checks"]} == {"not deciding"}


def test_a_check_registered_after_its_run_decides_only_on_its_confirmatory_seeds():
    reg = BY_ID["002-P6.parity-accuracy"]
    assert reg.registered_after_run and reg.confirmatory_seeds == tuple(range(100, 110))

    def record(seeds):
        return _record(reg.study, [_as_registered(reg, values=np.full(len(seeds), 20.0), seeds=seeds)])

    exploratory, confirmatory = record(list(reg.seeds)), record(list(reg.confirmatory_seeds))
    assert check_role(exploratory, exploratory["checks"][0], REGISTERED) == ("exploratory", [])
    assert check_role(confirmatory, confirmatory["checks"][0], REGISTERED) == ("deciding", [])
    assert preregistration_problems([exploratory, confirmatory]) == []  # neither is a problem; one does not decide
    mixed = record(list(range(5)) + list(range(100, 105)))
    assert "decided on seeds 0–4, 100–104" in preregistration_problems([mixed])[0]
    status = validation.prediction_statuses([dict(exploratory, _stale=False)])["002-P6"]
    assert status["status"] == "awaiting confirmation" and not status["checks"] and status["exploratory"]
    status = validation.prediction_statuses([dict(confirmatory, _stale=False)])["002-P6"]
    assert status["status"] == "pass" and status["checks"] and not status["exploratory"]


def test_seeds_of_a_record_made_before_registration_are_read_off_its_configuration():
    entry = over_seeds("x", "s", np.ones(10), 0.5, ">=")
    assert recorded_seeds({"config": {"seeds": 10}}, entry) == tuple(range(10))
    assert recorded_seeds({"config": {"seeds": 10, "first_seed": 242}}, entry) == tuple(range(242, 252))
    assert recorded_seeds({"config": {"seeds": 12}}, entry) is None  # n = 10 of 12: which ones is not said
    assert recorded_seeds({"config": {}}, check("x", "s", 1.0, 1.0, direction="<=", kind="prediction")) is None


def test_a_full_run_warns_when_a_deciding_check_is_not_as_registered(tmp_path, capsys):
    from gflow.study import write_summary

    reg = BY_ID[BASE]
    config = {"quick": False, "record": str(tmp_path / "results"), "seeds": 10}
    os.makedirs(tmp_path / "out")
    write_summary(str(tmp_path / "out"), reg.study, config, [_as_registered(reg, threshold=0.2)], {}, time.time())
    printed = capsys.readouterr().out
    assert "warning: not as registered" in printed and "threshold 0.2, registered 0.75" in printed


# --- the committed records -------------------------------------------------------------------------------------------


def _record_file(r):
    return result_file_name(r)


@pytest.mark.parametrize("name", sorted(_record_file(r) for r in load_results(validation.RESULTS)))
def test_committed_results_were_decided_as_registered(name):
    """A current result (``<study>.json``, or ``<study>.<block>.json`` of a run on another seed block) must conform to
    the registry. A stale one (its study's code changed since it was recorded) predates the registered checks and is
    rerun before it counts: its problems are shown in VALIDATION.md, and the test expects them to fail here (xfail)
    only while the result stays stale. The record is judged as VALIDATION.md judges it (validation.as_measurements):
    a check recorded for a claim that another study decides is a measurement, not a deciding check."""
    [record] = validation.as_measurements([r for r in load_results(validation.RESULTS) if _record_file(r) == name])
    study = record["study"]
    problems = preregistration_problems([record])  # as VALIDATION.md judges it (another study's claims: measured)
    stale = record.get("code_hash") != study_code_hash(study, validation.STUDIES)
    if problems and stale:
        pytest.xfail(f"{study}: the result is stale (recorded before its deciding checks were registered); "
                     f"{len(problems)} deciding check(s) not as registered, e.g. {problems[0]}")
    assert not problems, "\n".join(problems)


# --- the four studies whose deciding checks were written after their runs: fresh confirmatory records ----------------
# Each builds a record of a confirmatory run from the study's own check functions (synthetic measurements, no flow
# solved) and shows that it conforms to the registry and decides. A registration that drifts from its study (a
# threshold, a seed block, a reading) fails here before any run is spent on it.


def _confirmatory(study, entries, seeds):
    record = _record(study, entries, {"seeds_block": "confirmatory", "seed_list": list(seeds)})
    record["seeds_block"] = "confirmatory"
    return record


def _assert_decides(record, ids):
    assert preregistration_problems([record]) == [], preregistration_problems([record])
    roles = {c["check_id"]: check_role(record, c, REGISTERED)[0] for c in record["checks"] if c.get("check_id")}
    assert {i: roles.get(i) for i in ids} == {i: "deciding" for i in ids}
    for i in ids:
        assert BY_ID[i].registered_after_run and BY_ID[i].study == record["study"]


def _study_ids(study):
    return {c.id for c in CHECKS if c.study == study and not c.match}


def test_balance_limit_confirmatory_record_decides():
    import balance_limit as bl

    args = bl.parse_args(["--seeds-block", "confirmatory"])
    assert args.seed_list == list(BY_ID[bl.CHECK_ID].confirmatory_seeds) == list(range(1000, 1060))
    eps = np.array([1e-2, 1e-3, 1e-4, 1e-5])
    ones = np.ones((1, len(args.seed_list)))
    entry = bl.balanced_seeds_check(eps, np.sqrt(eps)[:, None] * ones, eps[:, None] ** 0.25 * ones, args.seed_list,
                                    block=args.seeds_block)
    record = _confirmatory("balance_limit", [entry], args.seed_list)
    _assert_decides(record, _study_ids("balance_limit"))
    assert entry["status"] == "pass" and entry["k"] == 60
    exploratory = _record("balance_limit", [bl.balanced_seeds_check(
        eps, np.sqrt(eps)[:, None] * np.ones((1, 10)), eps[:, None] ** 0.25 * np.ones((1, 10)), range(10),
        block="exploratory")])
    assert check_role(exploratory, exploratory["checks"][0], REGISTERED) == ("exploratory", [])


def test_memoryless_confirmatory_record_decides():
    import memoryless as ml

    args = ml.parse_args(["--seeds-block", "confirmatory"])
    seeds = args.block_seeds
    assert seeds == list(range(1200, 1220))
    loss = np.geomspace(1.0, 1e-18, 160)
    run = ml.tail_vanishing(loss, 1e3 * np.sqrt(loss))
    entries = ml.tail_checks({sig: {s: run for s in seeds} for sig in args.sigmas}, args.seeds_block, k=args.k,
                             H=args.horizon)
    entries += ml.imbalance_checks({scale: {s: (1.0, 0.01) for s in seeds} for scale in ("small", "unit")},
                                   args.seeds_block, eps=min(args.fig4_eps))
    record = _confirmatory("memoryless", entries, seeds)
    _assert_decides(record, _study_ids("memoryless"))
    assert {c["status"] for c in entries} == {"pass"}


def test_lazy_width_confirmatory_record_decides():
    import lazy_width as lw

    args = lw.parse_args(["--seeds-block", "confirmatory"])
    assert args.seed_list == list(BY_ID["lazy_width_004_forward_stability"].confirmatory_seeds)
    widths = np.asarray(args.widths)
    n = len(args.seed_list)
    movement = (widths[:, None] ** -0.5) * np.ones((1, n))
    drift = movement * np.log(widths)[:, None] ** 6 * widths[:, None] ** -0.2  # within the bound: exponent −0.2
    entry = lw.drift_bound_check(drift, movement, widths, args.seed_list, block=args.seeds_block, tau=args.tau)
    beside = lw.drift_bound_check(drift, movement, widths, args.seed_list, rho_power=0, block=args.seeds_block,
                                  predictions=(), beside="reported beside")
    gap = lw.gap_check("004", np.zeros((len(widths), n)), 1.0, widths, args.seed_list, block=args.seeds_block)
    record = _confirmatory("lazy_width", [entry, beside, gap], args.seed_list)
    _assert_decides(record, _study_ids("lazy_width"))
    assert entry["status"] == "inconclusive" and not entry["power"]  # the registered power guard, at these widths
    # the gap decides nothing: 004-P6 and 002-P5 are findings, measured
    assert check_role(record, gap, REGISTERED)[0] == "not deciding" == check_role(record, beside, REGISTERED)[0]
    for reg in (BY_ID[i] for i in ("004-P5.linearization-exponent", "004-P3.flips-exponent",
                                   "003-P5.linearization-exponent")):
        assert reg.confirmatory_seeds == reg_block(lw)  # registered before the run: the study's block decides too


def reg_block(study_module):
    return tuple(study_module.CONFIRMATORY_BLOCK)


def test_extrapolation_phase_transition_checks_are_measurements_of_000_f1():
    """Seed 000's figures are reproductions decided by reproduce_000 (Adam, App. C.1); the exact-flow transition
    checks that extrapolation_phase records for 000-P10 and 000-P12 (on any seed block) decide nothing and are shown
    as measurements of the finding 000-F1, with no registration needed."""
    import extrapolation_phase as ep

    args = ep.parse_args(["--seeds-block", "confirmatory"])
    seeds = args.seed_list
    entries = []
    for name, p in ep.PANELS.items():
        if name not in ep.PANEL_PREDICTIONS or name == "fig1b":
            continue
        panels = [(name, p)] + ([(f"{name}_d{d}", {**p, "d": d, "size_of": name}) for d in (100, 200)]
                                if p.get("reading") else [])
        for panel, settings in panels:
            ks = np.array(sorted(ep.panel_ks(name, args)))
            kc = 2 * settings["teacher_dim"]
            k = np.tile(ks, len(seeds))
            error = np.concatenate([np.where(ks <= kc, 0.3, 1e-5) for _ in seeds])
            zero = np.ones(k.size)
            table = {"error": error[None, :], "k": k, "seed": np.repeat(seeds, ks.size), "zero": zero}
            preds = ["000-P10"] if settings.get("size_of") else ep.PANEL_PREDICTIONS[name]
            checks, _ = ep.transition_checks(panel, table, args, settings, "test", preds)
            entries += ep.with_reading(checks, settings.get("reading"))
    tagged = [c for c in entries if c["predictions"]]
    assert tagged and {pid for c in tagged for pid in c["predictions"]} <= {"000-P10", "000-P12", "000-P6", "000-P7"}
    assert not _study_ids("extrapolation_phase") and not _study_ids("init_scale")  # no exact-flow registration
    assert {REGISTERED.kind(pid) for pid in ("000-P10", "000-P12")} == {"reproduction"}
    deciders = {pid: next(p for p in REGISTERED.predictions if p.id == pid).study
                for pid in ("000-P10", "000-P11", "000-P12", "000-P13", "000-P14")}
    assert all(deciders[pid] == "reproduce_000, reproduce_000_transition, reproduce_000_sentence"
               for pid in ("000-P10", "000-P11", "000-P12"))
    assert deciders["000-P13"] == deciders["000-P14"] == "reproduce_000"
    raw = _confirmatory("extrapolation_phase", entries, seeds)
    # preregistration_problems reads the raw record as VALIDATION.md does (the harness calls it on the raw record)
    assert preregistration_problems([raw]) == []
    [record] = validation.as_measurements([raw])
    assert preregistration_problems([record]) == []
    for c in record["checks"]:
        if c.get("check_id") in {e.get("check_id") for e in tagged}:
            assert "000-F1" in c["predictions"] and not {"000-P10", "000-P12"} & set(c["predictions"])
            assert "is decided by reproduce_000" in c["claim"] and "a measurement here" in c["claim"]
            assert check_role(record, c, REGISTERED)[0] == "not deciding"
    status = validation.prediction_statuses([dict(record, _stale=False)])
    assert status["000-F1"]["status"] == "measured" and status["000-F1"]["checks"]
    assert status["000-P10"]["status"] == status["000-P12"]["status"] == "not run"  # reproduce_000 has no record


def test_the_committed_exact_flow_records_decide_no_seed_000_figure():
    """In VALIDATION.md the figures 000-P10 … 000-P14 are reproductions decided by reproduce_000 (the paper's Adam
    protocol) and, for the transition (000-P10, P11, P12), by the repaired knee of reproduce_000_transition and the
    sentence of reproduce_000_sentence (the same training, on fresh seeds); what extrapolation_phase and init_scale
    recorded for them is shown under 000-F1."""
    results = load_results(validation.RESULTS)
    status = validation.prediction_statuses([dict(r, _stale=False) for r in results])
    for pid in ("000-P10", "000-P11", "000-P12", "000-P13", "000-P14"):
        st = status[pid]
        assert st["kind"] == "reproduction", pid
        shown = st["checks"] + st["exploratory"] + st["unregistered"] + st["guards"]
        deciders = {"reproduce_000"} | ({"reproduce_000_transition", "reproduce_000_sentence"}
                                         if pid in ("000-P10", "000-P11", "000-P12") else set())
        assert {r["study"] for r, _ in shown} <= deciders, (pid, {r["study"] for r, _ in shown})
        assert (st["status"] == "not run") == (not st["checks"]), (pid, st["status"])
        assert {c.study for c in CHECKS if pid in c.predictions} == deciders
    measured = {r["study"] for r, _ in status["000-F1"]["checks"]}
    assert status["000-F1"]["status"] == "measured" and measured <= {"transition_depth", "extrapolation_phase", "init_scale"}


@pytest.mark.parametrize("study", ["balance_limit", "extrapolation_phase", "lazy_width", "memoryless"])
def test_registered_check_ids_are_in_the_study_source(study):
    """Every check registered for the study without a ``match`` is recorded under its id: the id is written in the
    study's source, or built there from the names that make it (panel, curve, σ, scale)."""
    with open(os.path.join(REPO, "studies", f"{study}.py")) as f:
        source = f.read()
    templates = {"extrapolation_phase": ['f"{name}_transition_{kind_of_curve}"'],
                 "memoryless": ['check_id=f"001-6_tail_vanishes_sigma{sig:g}"',
                                'check_id=f"001-13_imbalance_{scale}_init"'],
                 "balance_limit": ['CHECK_ID = "000-P4.balanced-seeds"'],
                 "lazy_width": ['check_id="lazy_width_004_forward_stability"']}[study]
    assert all(t in source for t in templates), study
    for cid in _study_ids(study):
        assert cid in source or any(re.fullmatch(_pattern(t), cid) for t in templates), cid


def _pattern(template):
    """A regular expression of the ids an f-string template in a study's source builds."""
    body = template.split('"')[1]
    return re.sub(r"\\\{[^}]*\\\}", ".+", re.escape(body))


# --- the studies whose deciding checks record their registered ids and seeds -----------------------------------------


def _memoryless_rows(seeds, sigmas=(0.3, 1.0, 2.0)):
    import memoryless as ml

    loss = np.geomspace(1.0, 1e-18, 160)
    vanish = ml.tail_vanishing(loss, 1e3 * np.sqrt(loss))
    return {f"k{kk}_sigma{sig:g}_s{s}": {
        "k": kk, "sigma": sig, "seed": s, "max_ratio_to_bound": 0.99, "readout_residual": 1e-5,
        "readout_residual_max": 1.0, "readout_residual_tight": 1e-5, "slope_residual_vs_loss": 0.25,
        "A_norm": 1.0 + sig, "ir_bound_ratio": 0.5, "max_balance_defect": 1e-14, "final_loss": 1e-18,
        "tail": 1e-11 if sig <= 0.3 else 4.0 + s % 3, "spectral_radius": 0.6 if sig <= 0.3 else 2.0,
        "tail_vanishing": vanish, "tail_vanishing_tight": vanish} for sig in sigmas for s in seeds for kk in (5, 2)}


def test_memoryless_finite_loss_tails_are_recorded_as_the_finding_001_f2():
    """001-F2 (the tail at the end of the run at each σ) is recorded as a measurement tagged with the finding: it
    decides nothing, needs no registration, and VALIDATION.md shows it measured, without a bar."""
    from types import SimpleNamespace

    import memoryless as ml

    seeds = list(range(1200, 1220))
    args = SimpleNamespace(k=5, horizon=100, sigmas=[0.3, 1.0, 2.0], extrapolation_threshold=1e-3,
                           seeds_block="confirmatory")
    checks, results = [], {}
    ml.theorem_6_1_checks(args, _memoryless_rows(seeds), checks, results)
    found = [c for c in checks if c["predictions"] == ["001-F2"]]
    assert len(found) == 3 and [c["seeds"] for c in found] == [seeds] * 3
    for c, sig in zip(found, ("0.3", "1", "2")):
        assert c["value"] == results["theorem_6_1_finite_loss_tails"][sig]["median_tail_end"]
        assert c["threshold"] is None and c["kind"] == "prediction" and "direction" not in c
    assert found[2]["value"] == 5.0
    record = _confirmatory("memoryless", checks, seeds)
    assert preregistration_problems([record]) == []
    assert {check_role(record, c, REGISTERED)[0] for c in found} == {"not deciding"}
    status = validation.prediction_statuses([dict(record, _stale=False)])["001-F2"]
    assert status["status"] == "measured"
    # beside the three tails, memoryless's checks of 001-6 (spectral_tail decides it): measurements of 001-F2
    moved = [c for _, c in status["checks"] if c["claim"] not in {f["claim"] for f in found}]
    assert len(status["checks"]) == 3 + len(moved) and len(moved) == sum("001-6" in c["predictions"] for c in checks)
    assert all("(recorded for 001-6; 001-6 is decided by spectral_tail: a measurement here)" in c["claim"]
               for c in moved)
    text, _ = validation.render([record], {})
    row = [line for line in text.splitlines() if line.startswith("| 001-F2 |")][0]
    assert "| measured |" in row and "vs" not in row.split("| measured |")[1]


def _regular_language_checks(argv):
    import regular_language as rl_study

    args = rl_study.parse_args(argv)
    n = len(args.seed_list)
    accuracy = {"train": np.ones(n), "test": np.linspace(0.85, 0.95, n), "test_seen_in_train": np.zeros(n)}

    def per_seed(lang, m, key, split="iid"):
        return accuracy[key]

    return args, rl_study.make_checks(args, per_seed)


def test_regular_language_parity_decides_002_p6_on_its_confirmatory_seeds():
    """PARITY (named by seed 002) counts under 002-P6: its check, registered after a run, decides on the declared
    block 100–109 only; the pre-registered D_L1 and substring checks decide on either block."""
    args, checks = _regular_language_checks(["--seeds-block", "confirmatory"])
    reg = BY_ID["002-P6.parity-accuracy"]
    assert args.seed_list == list(reg.confirmatory_seeds) == list(range(100, 110))
    record = _confirmatory("regular_language", checks, args.seed_list)
    assert preregistration_problems([record]) == [], preregistration_problems([record])
    roles = {c["check_id"]: check_role(record, c, REGISTERED)[0] for c in checks if c.get("check_id")}
    assert roles == {i: "deciding" for i in _registered_ids("regular_language")}
    _, checks = _regular_language_checks(["--seeds-block", "exploratory"])
    record = _record("regular_language", checks, {"seeds_block": "exploratory", "seed_list": list(range(10))})
    assert preregistration_problems([record]) == []
    roles = {c["check_id"]: check_role(record, c, REGISTERED)[0] for c in checks if c.get("check_id")}
    assert roles.pop("002-P6.parity-accuracy") == "exploratory" and set(roles.values()) == {"deciding"}


def _registered_ids(study):
    return {c.id for c in CHECKS if c.study == study}


# The two checks of 003-P11 at initialization (bounded gradients below the cutoff, their growth above it) are
# identities of the contraction and of the linear recursion (the registry's why_kind): memory_cutoff records them as
# sanity checks, which decide nothing. Their [[check]] registrations are to be removed together with a rebuild of
# VALIDATION.md (which counts the registered checks); until then they are the registrations no study records.
def test_memory_cutoff_deciding_checks_record_their_ids_and_seeds(monkeypatch):
    """Parts E, G and H of memory_cutoff on synthetic measurements (no training): every deciding check carries its
    registered id and the seeds it was decided on, and conforms; the checks at initialization decide nothing; the
    plain-GD step-size comparison is the finding 003-F1."""
    import memory_cutoff as mcs

    args = mcs.parse_args(["--out", "/nonexistent"])
    seeds = list(range(args.seeds))
    rows = [{"regime": regime, "T": T, "seed": s, "relative_best": (0.01 if regime == "short" else 0.01 * T),
             "excess": 0.0, "averaged_ratio": 0.9} for regime in ("short", "long") for T in args.lengths
            for s in seeds]
    monkeypatch.setattr(mcs.mc, "projected_gd_runs", lambda a: (rows, None, None))
    flows = [{"seed": s, "max_excess": -1e-3, "radius_needed": 1.0, "max_ratio": 0.5, "max_excess_rtol_1e-10": -1e-3}
             for s in seeds]
    widths = np.asarray(args.p6_widths, dtype=float)
    monkeypatch.setattr(mcs.mc, "transport_runs", lambda a, rtol: (
        np.ones((len(seeds), 1)) / widths, np.full(len(seeds), -1.0), 0.5, flows, None))
    sizes = len(args.p10_sizes)
    monkeypatch.setattr(mcs.mc, "sample_size_runs", lambda a: (
        np.full((len(seeds), sizes), 0.01), np.full((len(seeds), sizes), 0.02), np.ones((len(seeds), sizes))))
    checks, results = [], {}
    mcs.part_e(args, checks, results)
    mcs.part_g(args, checks, results)
    mcs.part_h(args, checks, results)
    record = _record("memory_cutoff", checks, {"seeds": args.seeds})
    assert preregistration_problems([record]) == [], preregistration_problems([record])
    roles = {c["check_id"]: check_role(record, c, REGISTERED)[0] for c in checks if c.get("check_id")}
    assert roles == {i: "deciding" for i in _registered_ids("memory_cutoff")}
    assert all(c["seeds"] == seeds for c in checks if c.get("check_id"))
    ts_curves = []
    mcs.part_d(args, ts_curves, {})  # at initialization only: cheap
    init = [c for c in ts_curves if "003-P11" in c["predictions"]]
    assert len(init) == 2 and {c["kind"] for c in init} == {"sanity"}
    assert {check_role(record, c, REGISTERED)[0] for c in init} == {"not deciding"}


def _ssm_batch(errors, ranks):
    from types import SimpleNamespace

    return [SimpleNamespace(loss=[1.0, 1e-22], status="completed",
                            diagnostics={"extrapolation_error": [1.0, e], "effective_rank": [1.0, r]})
            for e, r in zip(errors, ranks)]


def test_ssm_poisoning_deciding_checks_record_their_ids_and_seeds():
    """Slutzky et al.'s two lengths on synthetic flows (no solve): every deciding check carries its registered id
    and the study's seeds (242 … 253 at L = 7, 342 … 353 at L = 9), and conforms to the registry."""
    import ssm_poisoning as sps

    args = sps.parse_args(["--no-referee"])
    checks = []
    for L in (7, 9):
        setting = sps.sp.SETTINGS[L]
        seeds = list(range(setting.first_seed, setting.first_seed + args.seeds))
        n = len(seeds)
        base, special = np.full(n, 1e-3), np.full(n, 1e-2)
        r = {"seeds": seeds, "baseline": _ssm_batch(base, np.ones(n)), "special": _ssm_batch(special, 2 * np.ones(n)),
             "baseline_tight": _ssm_batch(base, np.ones(n)), "special_tight": _ssm_batch(special, 2 * np.ones(n)),
             "special_long": _ssm_batch(special, 2 * np.ones(n))}
        checks += sps.length_checks(L, r, args)
    deciding = [c for c in checks if c.get("check_id")]
    assert {tuple(c["seeds"]) for c in deciding} == {tuple(range(242, 254)), tuple(range(342, 354))}
    record = _record("ssm_poisoning", checks, {"seeds": args.seeds})
    assert preregistration_problems([record]) == [], preregistration_problems([record])
    roles = {c["check_id"]: check_role(record, c, REGISTERED)[0] for c in deciding}
    assert roles == {i: "deciding" for i in _registered_ids("ssm_poisoning")}
    assert all(c["status"] == "pass" for c in deciding)


@pytest.mark.parametrize("study", ["regular_language", "memory_cutoff", "ssm_poisoning"])
def test_registered_check_ids_of_the_seed_002_003_005_studies_are_in_their_source(study):
    """Every check registered for the study (with or without a ``match``) is recorded under its id, written in the
    study's source; the registry's ids of memoryless's 001-F2 finding need none (a finding decides nothing)."""
    with open(os.path.join(REPO, "studies", f"{study}.py")) as f:
        source = f.read()
    templates = {"ssm_poisoning": ['check_id=f"005-P1.L{L}"', 'check_id=f"005-P2.ratio-L{L}"',
                                   'check_id=f"005-P2.every-seed-L{L}"', 'check_id=f"005-P3.rank-L{L}"']}.get(study, [])
    assert all(t in source for t in templates), study
    ids = _registered_ids(study)
    assert ids
    assert {i for i in ids if f'"{i}"' not in source and not any(re.fullmatch(_pattern(t), i) for t in templates)} \
        == set()


def test_a_full_run_does_not_warn_for_a_claim_another_study_decides(tmp_path, capsys):
    """extrapolation_phase records checks for 000-P10, which reproduce_000 decides: they are measurements of 000-F1
    (as VALIDATION.md shows them), so its run prints no warning; the same unregistered check recorded by
    reproduce_000 itself is a deciding check and does (the control)."""
    from gflow.study import write_summary

    config = {"quick": False, "record": str(tmp_path / "results"), "seeds": 3}
    entry = over_seeds("fig1a knee at 2d̂ (exact flow)", "src", np.ones(3), 0.5, ">=", predictions=["000-P10"])
    for study, warned in (("extrapolation_phase", False), ("reproduce_000", True)):
        os.makedirs(tmp_path / study)
        write_summary(str(tmp_path / study), study, config, [entry], {}, time.time())
        assert ("warning: not as registered" in capsys.readouterr().out) is warned, study
