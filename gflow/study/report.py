"""VALIDATION.md from the committed result files ``validation/results/<study>.json`` (``<study>.<block>.json`` for a
run on a seed block other than the exploratory one, ``.part-<part>`` before ``.json`` for a part of a study) and the claims registry (``validation/registry.toml``): every claim's kind of result (identity, reproduction, prediction, finding; counted
apart), the status of each prediction and reproduction as decided by its registered checks, the findings as
measurements, the pre-registration problems, and the notes beside them. The rules are those of
``studies/validation.py``'s docstring; that script is :func:`main`."""

from __future__ import annotations

import argparse
import os
import re
import sys

from ..results import write_text_atomic
from ..results._provenance import PACKAGE_DIR
from ._controls import controls_by_check, NegativeControl
from ._record import load_results, result_block, result_file_name, study_code_hash
from ._registry import (  # noqa: F401 (as_measurements, planned_runs, STUDY_PARTS: read through this module too)
    as_measurements,
    check_role,
    deciding_ids,
    DECIDING_KINDS,
    format_seeds,
    IDENTITIES as IDENTITIES,
    KINDS_OF_RESULT as KINDS_OF_RESULT,
    planned_runs,
    PREDICTIONS as PREDICTIONS,
    preregistration_problems,
    recorded_seeds,
    REGISTERED,
    registered_check,
    Registry,
    SCALING_NOTES as SCALING_NOTES,
    STUDY_PARTS,
    UNTESTABLE as UNTESTABLE,
)

ROOT = os.path.dirname(PACKAGE_DIR)  # the checkout
STUDIES = os.path.join(ROOT, "studies")
RESULTS = os.path.join(ROOT, "validation", "results")
EXPLANATIONS = os.path.join(ROOT, "validation", "explanations.md")
OUTPUT = os.path.join(ROOT, "VALIDATION.md")
STATUS_ORDER = ("pass", "FAIL", "inconclusive", "depends on the reading", "awaiting confirmation", "not registered",
                "not testable", "not run", "not checked")
IDENTITY_ORDER = ("identity: verified", "identity: check failed", "identity: inconclusive", "identity: by proof",
                  "identity: not run")
FINDING_ORDER = ("measured", "not measured")
RULE = ("**What counts.** Every claim has one of four kinds of result, counted apart. A *prediction* is a claim of a "
        "theory about what training does that could have come out otherwise; only predictions make the headline. A "
        "*reproduction* is an experimental figure or table of a paper, to be run with the paper's own protocol "
        "(named beside it) and judged against what the paper writes about it. An *identity* (algebra, an invariance "
        "of the exact dynamics, a proven bound on every state, a property of the initialization, a central-limit "
        "rate, a value fixed by a scaling we chose, a construction) is verified and shown; why each is one is under "
        "[Identities](#identities). A *finding* is a question the papers leave open, reported as a measurement "
        "without pass/fail. *Not testable* keeps its reasons. **Pre-registration.** A prediction or reproduction is "
        "decided only by its *registered* checks (validation/registry.toml: statistic, direction, threshold, scope, "
        "seeds), as registered; a recorded check that differs, or that no registration names, is shown as *not "
        "registered* and decides nothing. A check written or changed after its study had been run decides only on "
        "its declared fresh block of confirmatory seeds, whose run is recorded in its own file "
        "(`validation/results/<study>.<block>.json`); its exploratory numbers are shown beside, not counted.")
EXPLAINED = ("FAIL", "inconclusive", "depends on the reading", "not run")  # need an explanation paragraph


def load_explanations(path: str = EXPLANATIONS) -> dict[str, str]:
    """The ``## <id>`` sections of the explanations file.

    Args:
        path: the markdown file (default: validation/explanations.md).

    Returns:
        id → paragraph text; empty when the file does not exist.
    """
    if not os.path.isfile(path):
        return {}
    with open(path) as f:
        text = f.read()
    parts = re.split(r"^## +(\S+)[^\n]*\n", text, flags=re.M)
    return {parts[i]: parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}


def _ran(results_by_study: dict, study: str, part: str | None) -> bool:
    """Whether ``study`` (and ``part`` of it, when named) has a recorded full run, on any seed block
    (``results_by_study``: study → its records)."""
    return any(part is None or part in (r.get("config") or {}).get("parts", [part])
               for r in results_by_study.get(study, []))


def _by_study(results: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for r in results:
        out.setdefault(r["study"], []).append(r)
    return out


def _label(r: dict) -> str:
    """A record's study, with its seed block when it is not the exploratory one."""
    block = result_block(r)
    return r["study"] if block is None else f"{r['study']}, {block} block"


def _precedence(r: dict) -> tuple[bool, bool]:
    """How a record ranks where several hold the same registered check: a declared block's record above the
    exploratory one's, and within a block a part's record above the whole study's (a part is the later run)."""
    return result_block(r) is not None, r.get("record_part") is not None


def _superseded(deciding: list, registry: Registry) -> tuple[list, list]:
    """Split deciding (result, check) pairs: where a registered check decides in records of different rank
    (:func:`_precedence`: a declared block's record over the exploratory one's, a part's over the whole study's),
    only the highest-ranked decide; its occurrences in the others are shown beside.

    Returns:
        (deciding, beside).
    """
    ids = [registered_check(r, c, registry)[0].id for r, c in deciding]
    top: dict = {}
    for i, (r, _) in zip(ids, deciding):
        top[i] = max(top.get(i, (False, False)), _precedence(r))
    keep = [(r, c) for i, (r, c) in zip(ids, deciding) if _precedence(r) == top[i]]
    beside = [(r, c) for i, (r, c) in zip(ids, deciding) if _precedence(r) != top[i]]
    return keep, beside


def prediction_statuses(results: list[dict], registry: Registry | None = None) -> dict[str, dict]:
    """The status of every claim of the registry.

    A prediction or reproduction is decided by its *deciding* checks only (:func:`check_role`: registered, as
    registered, and for a check registered after its run, on its confirmatory seeds); its *exploratory* checks
    (registered after the run, recorded on the exploratory seeds; or a check that also decides in the record of a
    declared seed block, ``<study>.<block>.json``, which then decides alone) and its *not registered* ones are kept
    beside.

    Args:
        results: the recorded result files (:func:`load_results`), each with ``_stale`` set (:func:`render` sets it).
        registry: the registry (default: the one of this checkout).

    Returns:
        id → {"status", "kind", "checks" (deciding prediction checks; every tagged check for an identity or a
        finding), "exploratory" (shown beside), "awaiting" (those of them whose registered check has no deciding
        record yet), "unregistered" ((result, check, problems) triples), "unrun" (ids of its registered checks that
        no record has run; predictions and reproductions only), "guards" (sanity checks), "stale" (a record of its
        deciding checks, or where none decides of any tagged check, is stale)}.
    """
    results = as_measurements(results, registry)
    registry = registry or REGISTERED
    tagged: dict[str, list] = {}
    for r in results:
        for c in r["checks"]:
            for pid in c.get("predictions") or []:
                tagged.setdefault(pid, []).append((r, c))
    recorded = _by_study(results)
    out = {}
    for p in registry.predictions:
        ran = all(_ran(recorded, study, part) for study, part in planned_runs(p))
        checks = [(r, c) for r, c in tagged.get(p.id, []) if c["kind"] == "prediction"]
        guards = [(r, c) for r, c in tagged.get(p.id, []) if c["kind"] == "sanity"]
        entry = {"kind": p.kind, "exploratory": [], "awaiting": [], "unregistered": []}
        if p.kind in ("identity", "finding"):  # every tagged check shows it, whatever its kind; none decides
            every = checks + guards
            if p.kind == "finding":
                status = "measured" if every else "not measured"
            elif every:
                statuses = {c["status"] for _, c in every}
                status = ("identity: check failed" if "FAIL" in statuses else "identity: inconclusive"
                          if "inconclusive" in statuses else "identity: verified")
            else:
                status = "identity: by proof" if ran else "identity: not run"
            out[p.id] = {**entry, "status": status, "checks": every, "guards": [],
                         "stale": any(r["_stale"] for r, _ in every)}
            continue
        deciding = []
        for r, c in checks:
            role, problems = check_role(r, c, registry)
            if role == "deciding":
                deciding.append((r, c))
            elif role == "exploratory":
                entry["exploratory"].append((r, c))
            else:
                entry["unregistered"].append((r, c, problems))
        deciding, beside = _superseded(deciding, registry)
        entry["exploratory"] += beside
        confirmed = {registered_check(r, c, registry)[0].id for r, c in deciding}
        entry["awaiting"] = [(r, c) for r, c in entry["exploratory"]
                             if registered_check(r, c, registry)[0].id not in confirmed]
        recorded_ids = {reg.id for r, c in checks for reg in [registered_check(r, c, registry)[0]] if reg}
        entry["unrun"] = [c.id for c in registry.checks if p.id in c.predictions and c.id not in recorded_ids]
        if deciding:
            status = decided(deciding)
        elif p.id in registry.untestable:
            status = "not testable"
        elif entry["exploratory"]:
            status = "awaiting confirmation"
        elif entry["unregistered"]:
            status = "not registered"
        elif not ran:
            status = "not run"
        else:
            status = "not checked"
        out[p.id] = {**entry, "status": status, "checks": deciding, "guards": guards,  # stale: what decides
                     "stale": any(r["_stale"] for r, _ in (deciding or checks))}
    return out


def _decide(statuses: set) -> str:
    return "FAIL" if "FAIL" in statuses else "inconclusive" if "inconclusive" in statuses else "pass"


def decided(checks) -> str:
    """A prediction's status from its prediction checks: FAIL if any fails, else inconclusive if any is, else pass.

    Where the paper's text allows several readings of the setup (a check's ``reading``, e.g. "grid" and "iid" for
    seed 000's C.2.1), each reading is decided on its own checks (plus those that hold for every reading), and
    readings that disagree give "depends on the reading" (a prediction is decided only where they agree).

    Args:
        checks: (result, check) pairs of the prediction's prediction checks.

    Returns:
        "pass", "FAIL", "inconclusive" or "depends on the reading".
    """
    readings = sorted({c.get("reading") for _, c in checks} - {None})
    if not readings:
        return _decide({c["status"] for _, c in checks})
    per_reading = {_decide({c["status"] for _, c in checks if c.get("reading") in (None, reading)})
                   for reading in readings}
    return per_reading.pop() if len(per_reading) == 1 else "depends on the reading"


def _fmt(v) -> str:
    if isinstance(v, bool) or v is None:
        return str(v)
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, list) and len(v) <= 4:
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    return str(v)[:60]


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _measured(c: dict, threshold: bool = True) -> str:
    reading = f"[{c['reading']} reading] " if c.get("reading") else ""
    interval = f" [{_fmt(c['interval'][0])}, {_fmt(c['interval'][1])}]" if "interval" in c else ""
    n = f", n = {c['n']}" if "n" in c else ""
    if not threshold:  # a finding: the measurement, no bar
        return f"{reading}{_fmt(c['value'])}{interval}{n}"
    needed = f", ~{c['seeds_needed']} seeds to decide" if c.get("seeds_needed") else ""
    return f"{reading}{_fmt(c['value'])}{interval} vs {c.get('direction', '')}{_fmt(c['threshold'])}{n}{needed}"


def _anchor(pid: str) -> str:
    return "x-" + pid.lower()


def render(results: list[dict], explanations: dict[str, str],
           registry: Registry | None = None, controls: list[NegativeControl] | None = None) -> tuple[str, list[str]]:
    """Build VALIDATION.md.

    Args:
        results: the recorded result files (:func:`load_results`: one per study, seed block and part); each gets
            ``_stale`` (its code hash is not today's study code).
        explanations: id → paragraph (:func:`load_explanations`).
        registry: the registry (default: the one of this checkout).
        controls: the registered checks' negative controls (gflow.study.NegativeControl; the studies' own
            ``negative_controls()``, gathered by studies/validation.py), shown beside the predictions they test.

    Returns:
        The text, and the FAIL / inconclusive / not-run predictions and reproductions that have no explanation.
    """
    registry = registry or REGISTERED
    for r in results:
        r["_stale"] = r.get("code_hash") != study_code_hash(r["study"], STUDIES)
    results = as_measurements(results, registry)
    statuses = prediction_statuses(results, registry)
    checks = [(r, c) for r in results for c in r["checks"]]
    controls = controls_by_check(controls or [])
    lines = _overview(statuses, checks, registry, controls) + _results_table(results, registry)
    rows, missing = _decided_rows(statuses, explanations, registry, controls)
    lines += rows + _identity_rows(statuses, registry) + _finding_rows(statuses, registry)
    lines += _preregistration(results, statuses, registry) + _control_section(controls, registry)
    lines += _notes(statuses, explanations, registry)
    lines += _every_check(checks, registry)
    return "\n".join(lines).rstrip() + "\n", missing


def _count(statuses, kind, order) -> tuple[int, str]:
    ids = [pid for pid, s in statuses.items() if s["kind"] == kind]
    counts = {s: sum(statuses[pid]["status"] == s for pid in ids) for s in order}
    return len(ids), ", ".join(f"{counts[s]} {s.split(': ')[-1]}" for s in order if counts[s])


def _overview(statuses, checks, registry, controls) -> list[str]:
    """The heading and the counts of the four kinds of result and of the checks."""
    n_pred, pred = _count(statuses, "prediction", STATUS_ORDER)
    n_rep, rep = _count(statuses, "reproduction", STATUS_ORDER)
    n_id, ident = _count(statuses, "identity", IDENTITY_ORDER)
    n_find, find = _count(statuses, "finding", FINDING_ORDER)
    lines = ["# VALIDATION", "",
             "Built by `python studies/validation.py` from the result files in `validation/results/` (one per study, "
             "written by the study's full run; a run on a declared seed block other than the exploratory one writes "
             "its own, `<study>.<block>.json`, beside it, and a study run in parts one per part, "
             "`<study>[.<block>].part-<part>.json`), the registry `validation/registry.toml` and the explanations in "
             "`validation/explanations.md`. Do not edit by hand: `tests/test_validation.py` rebuilds this file and "
             "fails on any difference.", "",
             RULE, "",
             f"**Predictions ({n_pred}): {pred or 'none'}.** Counted apart: **reproductions ({n_rep}): "
             f"{rep or 'none'}**; **identities ({n_id}): {ident or 'none'}**; **findings ({n_find}): "
             f"{find or 'none'}**. A prediction or reproduction is decided by its registered *prediction* checks only; "
             "*sanity* checks (true by construction, arithmetic, solver guards) are shown beside it and never count. "
             "Over seeds a check reports the statistic with its 95 % interval (exact Clopper–Pearson for a fraction "
             "of seeds, Student t for a seed average, the percentile bootstrap for another statistic over seeds): "
             "pass if the interval clears the threshold, FAIL if it lies entirely on the wrong side, inconclusive "
             "otherwise. A prediction beside a "
             "failed sanity guard is marked so: its checks ran on a state the study did not expect, read them with "
             "care.", ""]
    n_check = sum(c["kind"] == "prediction" for _, c in checks)
    lines += [f"Checks: {len(checks)} ({n_check} prediction: "
              + ", ".join(f"{sum(c['kind'] == 'prediction' and c['status'] == s for _, c in checks)} {s}"
                          for s in ("pass", "FAIL", "inconclusive"))
              + f"; {len(checks) - n_check} sanity: "
              + ", ".join(f"{sum(c['kind'] == 'sanity' and c['status'] == s for _, c in checks)} {s}"
                          for s in ("pass", "FAIL")) + f"). Registered deciding checks: {len(registry.checks)}.", "",
              f"Negative controls: {sum(c.id in controls for c in registry.checks)} of the {len(registry.checks)} "
              "registered deciding checks are judged, by the same function, thresholds and seeds, on a plausible "
              f"alternative outcome on which they must FAIL; {_control_outcomes(controls)} "
              "([Negative controls](#negative-controls)).", ""]
    return lines


def _control_outcomes(controls) -> str:
    """"n FAIL" (and any other outcome) over every control."""
    every = [c for cs in controls.values() for c in cs]
    counts = {s: sum(c.entry.get("status") == s for c in every) for s in ("FAIL", "inconclusive", "pass")}
    return ", ".join(f"{n} {s}" for s, n in counts.items() if n) or "none yet"


def _controls_cell(pid, registry, controls) -> str:
    """A prediction's registered checks with a negative control, and what the controls gave."""
    ids = [c.id for c in registry.checks if pid in c.predictions]
    if not ids:
        return "—"
    mine = {cid: controls[cid] for cid in ids if cid in controls}
    if not mine:
        return f"none yet (0 of {len(ids)})"
    n = sum(len(cs) for cs in mine.values())
    return f"{len(mine)} of {len(ids)} checks, {n} control{'s' if n > 1 else ''}: {_control_outcomes(mine)}"


def _control_section(controls, registry) -> list[str]:
    """Every registered check with its negative control: the alternative and what the check gave on it."""
    lines = ["", "## Negative controls", "",
             "Each registered deciding check judged by the study's own function, with the thresholds and seeds it is "
             "registered with, on a plausible alternative outcome (`negative_controls()` of the study; "
             "`tests/test_negative_controls.py` fails unless every one comes out FAIL). A check whose control passed "
             "could not tell the alternative from the claim.", "",
             "| check | decides | alternative | control: value vs threshold |", "|---|---|---|---|"]
    for reg in registry.checks:
        for c in controls.get(reg.id, []):
            lines.append(f"| `{reg.id}` | {', '.join(reg.predictions)} | {_cell(c.alternative)} | "
                         f"{c.entry.get('status')}: {_cell(_measured(c.entry))} |")
    missing = sorted({reg.study for reg in registry.checks if reg.id not in controls})
    if missing:
        lines += ["", "No control yet for the registered checks of: " + ", ".join(f"`{s}`" for s in missing) + "."]
    return lines


def _results_table(results, registry) -> list[str]:
    """One row per result file, and the studies not yet run at full scale."""
    lines = ["## Results", "", "| study | file | recorded | commit | wall time | checks | code |",
             "|---|---|---|---|---|---|---|"]
    for r in results:
        git = r.get("provenance", {}).get("git") or {}
        commit = (git.get("commit") or "?")[:10] + (" (dirty)" if git.get("dirty") else "")
        lines.append(f"| {r['study']} | `{result_file_name(r)}` | {r['recorded']} | {commit} | "
                     f"{r['wall_time_s'] / 60:.1f} min | {len(r['checks'])} | "
                     f"{'**stale**' if r['_stale'] else 'current'} |")
    by_study = _by_study(results)
    planned = sorted({(s, part) for p in registry.predictions for s, part in planned_runs(p)
                      if not _ran(by_study, s, part)}, key=lambda sp: (sp[0], sp[1] or ""))
    if planned:
        lines += ["", "No result yet (not run at full scale): " + ", ".join(
            f"`{s}`" + (f" (part {part})" if part else "") for s, part in planned) + "."]
    return lines


def _beside(st, registry) -> list[str]:
    """The exploratory and not-registered checks of a prediction, shown beside its deciding ones."""
    out = []
    for r, c in st["exploratory"]:
        seeds = recorded_seeds(r, c)
        reg = registered_check(r, c, registry)[0]
        why = ("registered after the run, decides on its confirmatory seeds" if reg is None or reg.registered_after_run
               else "the run on the confirmatory block decides")
        out.append(f"exploratory ({format_seeds(seeds)}; {why}): {c['status']}: {_measured(c)} ({_label(r)})")
    for r, c, problems in st["unregistered"]:
        out.append(f"not registered ({'; '.join(problems)}): {c['status']}: {_measured(c)} ({_label(r)})")
    return out


def _decided_rows(statuses, explanations, registry, controls) -> tuple[list[str], list[str]]:
    """The tables of predictions and of reproductions with their status and evidence; and those lacking an
    explanation."""
    lines, missing = [], []
    for kind, title, intro in (
            ("prediction", "Predictions", "Claims of a theory about what training does that could have come out "
             "otherwise: the headline."),
            ("reproduction", "Reproductions", "The papers' experimental figures and tables, each to be run with the "
             "paper's own protocol (named in the row); where our run departs from it, the row is a reproduction of "
             "the figure's statement, not of the figure.")):
        head = "| id | figure | statement | protocol (the paper's) | status | " if kind == "reproduction" else \
            "| id | prediction | source | status | "
        lines += ["", f"## {title}", "", intro, "",
                  head + "deciding checks: value [95 % interval] vs threshold; beside them | sanity guards | "
                  "negative controls |",
                  "|---|---|---|---|---|---|---|" + ("---|" if kind == "reproduction" else "")]
        for p in registry.predictions:
            if p.kind != kind:
                continue
            st = statuses[p.id]
            status = st["status"]
            shown = f"**{status}**" if status in ("FAIL", "not checked", "not registered") else status
            if status in EXPLAINED:
                if p.id not in explanations:
                    missing.append(p.id)
                shown = f"[{shown}](#{_anchor(p.id)})"
            elif status == "not testable":
                shown = f"[{shown}](#{_anchor(p.id)})"
            if st["stale"]:
                shown += " (stale)"
            if st["awaiting"] and status != "awaiting confirmation":
                shown += f" ({len(st['awaiting'])} check(s) awaiting confirmation)"
            if st["unregistered"] and status != "not registered":
                shown += f" ({len(st['unregistered'])} check(s) not registered)"
            if st.get("unrun") and status not in ("not run", "not testable"):
                shown += f" ({len(st['unrun'])} registered check(s) not yet run: " + ", ".join(
                    f"`{cid}`" for cid in st["unrun"]) + ")"
            evidence = "; ".join([f"{c['status']}: {_measured(c)} ({_label(r)})" for r, c in st["checks"]]
                                 + _beside(st, registry)) or (
                "— (study: " + ", ".join(s + (f", part {part}" if part else "") for s, part in planned_runs(p)) + ")"
                if status in ("not run", "not checked") else "—")
            guards = f"{sum(c['status'] == 'pass' for _, c in st['guards'])}/{len(st['guards'])} pass" \
                if st["guards"] else "—"
            if any(c["status"] != "pass" for _, c in st["guards"]):
                shown += " (a sanity guard failed)"
                guards = f"**{guards}**"
            claim = p.claim + (f" *(Note: {registry.scaling_notes[p.id]})*" if p.id in registry.scaling_notes else "")
            if p.why_kind:
                claim += f" *(Why {kind}: {p.why_kind})*"
            first = f"| {p.id} | {_cell(p.figure)} | {_cell(claim)} | {_cell(p.protocol)} |" if kind == "reproduction" \
                else f"| {p.id} | {_cell(claim)} | {_cell(p.source)} |"
            lines.append(f"{first} {shown} | {_cell(evidence)} | {guards} | {_controls_cell(p.id, registry, controls)} |")
    return lines, missing


def _identity_rows(statuses, registry) -> list[str]:
    lines = ["", "## Identities", "",
             "Verified and shown, counted apart from the predictions: no run could refute them, so their checks "
             "(whatever kind the study gave them) only show that our code implements them. Why each is one is below "
             "the tables.", "",
             "| id | statement | source | status | checks: value vs threshold |", "|---|---|---|---|---|"]
    for p in registry.predictions:
        if p.kind != "identity":
            continue
        st = statuses[p.id]
        shown = f"[{'**' + st['status'] + '**' if 'failed' in st['status'] else st['status']}](#{_anchor(p.id)})"
        if st["stale"]:
            shown += " (stale)"
        evidence = "; ".join(f"{c['status']}: {_measured(c)} ({_label(r)})" for r, c in st["checks"]) or "—"
        lines.append(f"| {p.id} | {_cell(p.claim)} | {_cell(p.source)} | {shown} | {_cell(evidence)} |")
    return lines


def _finding_rows(statuses, registry) -> list[str]:
    lines = ["", "## Findings", "",
             "Questions the papers leave open, measured by exact flow and reported as measurements: no pass or fail, "
             "no threshold (a number a study once compared with a bar is shown without it).", "",
             "| id | question | source | status | measured: value [95 % interval] |", "|---|---|---|---|---|"]
    for p in registry.predictions:
        if p.kind != "finding":
            continue
        st = statuses[p.id]
        shown = st["status"] + (" (stale)" if st["stale"] else "")
        claim = p.claim + (f" *(Why a finding: {p.why_kind})*" if p.why_kind else "")
        if len(st["checks"]) > FINDING_INLINE:
            evidence = f"{len(st['checks'])} measurements, each with what it measures: [listed below](#{_anchor(p.id)})"
        else:
            evidence = "; ".join(_finding_measurement(r, c) for r, c in st["checks"]) or (
                "— (study: " + (", ".join(s + (f", part {part}" if part else "") for s, part in planned_runs(p))
                                or "—") + ")")
        lines.append(f"| {p.id} | {_cell(claim)} | {_cell(p.source)} | {shown} | {_cell(evidence)} |")
    for p in registry.predictions:
        if p.kind == "finding" and len(statuses[p.id]["checks"]) > FINDING_INLINE:
            lines += ["", f'<a id="{_anchor(p.id)}"></a>**{p.id}**, its measurements, each with the claim its study '
                      "recorded (a bar a claim names decides nothing here):", ""]
            lines += [f"- {_cell(_finding_measurement(r, c))}" for r, c in statuses[p.id]["checks"]]
    return lines


# A finding with more measurements than this lists them under the table, each with its claim
FINDING_INLINE = 3


def _finding_measurement(r: dict, c: dict) -> str:
    """A finding's measurement with what it measures: the check's claim as its study recorded it, its value,
    interval and n, and its study."""
    return f"{c['claim']}: {_measured(c, threshold=False)} ({_label(r)})"


def _preregistration(results, statuses, registry) -> list[str]:
    """Which verdicts are not registered, which await their confirmatory run, which registered checks have no run."""
    problems = preregistration_problems(results, registry)
    lines = ["", "## Pre-registration", "",
             f"{len(registry.checks)} deciding checks are registered in `validation/registry.toml` "
             f"({sum(c.registered_after_run for c in registry.checks)} of them written or changed after their "
             "study had been run: they decide only on their confirmatory seeds). `tests/test_preregistration.py` "
             "fails on a current (not stale) result whose deciding check is not as registered."]
    if problems:
        lines += ["", f"**Not registered** ({len(problems)} recorded deciding checks; they decide nothing):", ""]
        lines += [f"- {_cell(line)}" for line in problems]
    waiting = [(pid, r, c) for pid, st in statuses.items() for r, c in st["awaiting"]]
    if waiting:
        lines += ["", "**Awaiting confirmation** (registered after their study's run, recorded on the exploratory "
                  "seeds; shown beside, not counted):", ""]
        for pid, r, c in waiting:
            reg, _ = registered_check(r, c, registry)
            lines.append(f"- {pid} `{reg.id}`: exploratory seeds {format_seeds(recorded_seeds(r, c))}, confirmatory "
                         f"{format_seeds(reg.confirmatory_seeds)}. Changed: {_cell(reg.changed)}")
    seen = set()
    for r in results:
        for c in r["checks"]:
            reg = registered_check(r, c, registry)[0] if deciding_ids(c, registry) else None
            if reg is not None:
                seen.add(reg.id)
    unrun = [c for c in registry.checks if c.id not in seen]
    if unrun:
        lines += ["", "**Registered, no recorded run yet:** " + ", ".join(f"`{c.id}`" for c in unrun) + "."]
    return lines


def _notes(statuses, explanations, registry) -> list[str]:
    """Why each prediction is not testable, why each identity is one, and why each FAIL, inconclusive and not run."""
    lines = []
    untestable = [p for p in registry.predictions if statuses[p.id]["status"] == "not testable"]
    if untestable:
        lines += ["", "## Not testable at simulator scale", ""]
        for p in untestable:
            lines += [f'<a id="{_anchor(p.id)}"></a>**{p.id}** ({_cell(p.claim)}): {registry.untestable[p.id]}', ""]

    lines += ["", "## Why each identity is one", ""]
    for p in registry.predictions:
        if p.kind == "identity":
            lines += [f'<a id="{_anchor(p.id)}"></a>**{p.id}** ({_cell(p.claim)}): {registry.identities[p.id]}', ""]

    explained = [p for p in registry.predictions
                 if p.kind in DECIDING_KINDS and statuses[p.id]["status"] in EXPLAINED]
    if explained:
        lines += ["", "## Why each FAIL, inconclusive and not run", ""]
        for p in explained:
            text = explanations.get(p.id, "**explanation missing** (add a `## " + p.id +
                                    "` section to validation/explanations.md)")
            lines += [f'<a id="{_anchor(p.id)}"></a>**{p.id}** — {statuses[p.id]["status"]}. {text}', ""]
    return lines


def _every_check(checks, registry) -> list[str]:
    """One row per check of every study, with its registration."""
    lines = ["", "## Every check", "",
             "| study | kind | claim | source | predictions | registered | measured | status |",
             "|---|---|---|---|---|---|---|---|"]
    for r, c in checks:
        status = c["status"] if c["status"] == "pass" else f"**{c['status']}**"
        role, _ = check_role(r, c, registry)
        reg, _ = registered_check(r, c, registry)
        registered = {"deciding": f"`{reg.id}`" if reg else "", "exploratory": f"`{reg.id}` (exploratory)" if reg else "",
                      "not registered": "**no**", "not deciding": "—"}[role]
        lines.append(f"| {_label(r)} | {c['kind']} | {_cell(c['claim'])} | {_cell(c['source'])} | "
                     f"{', '.join(c.get('predictions') or []) or '—'} | {registered} | {_cell(_measured(c))} | "
                     f"{status} |")
    return lines


def main(argv=None, description: str = "Build VALIDATION.md from the committed result files",
         controls: list[NegativeControl] | None = None) -> int:
    """``python studies/validation.py``: write VALIDATION.md, or with ``--check`` compare it.

    Args:
        argv: the command line (default: ``sys.argv[1:]``).
        description: the ``--help`` text.
        controls: the negative controls to show (:func:`render`).

    Returns:
        The exit status: 1 when ``--check`` finds a difference or an explanation is missing, else 0.
    """
    ap = argparse.ArgumentParser(description=description,
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--results", default=RESULTS, help="folder of <study>.json result files")
    ap.add_argument("--explanations", default=EXPLANATIONS, help="markdown file of '## <id>' explanations")
    ap.add_argument("--output", default=OUTPUT, help="file to write")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 if --output differs")
    args = ap.parse_args(argv)
    results = load_results(args.results)
    text, missing = render(results, load_explanations(args.explanations), controls=controls)
    if missing:
        print(f"error: FAIL/inconclusive/not run without an explanation in {args.explanations}: {', '.join(missing)}",
              file=sys.stderr)
    if args.check:
        current = open(args.output).read() if os.path.isfile(args.output) else ""
        if current != text:
            print(f"{args.output} is out of date: run python studies/validation.py", file=sys.stderr)
            return 1
        print(f"{args.output} is up to date ({len(results)} result files)")
        return 1 if missing else 0
    write_text_atomic(args.output, text)
    print(f"wrote {args.output}: {len(results)} result files, {sum(len(r['checks']) for r in results)} checks")
    return 1 if missing else 0

