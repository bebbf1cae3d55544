"""VALIDATION.md from the committed result files ``validation/results/<study>.json`` and the claims registry
(``validation/registry.toml``): every prediction's status, its checks, and the notes beside it. The rules are those
of ``studies/validation.py``'s docstring; that script is :func:`main`."""

from __future__ import annotations

import argparse
import os
import re
import sys

from ..results import write_text_atomic
from ..results._provenance import PACKAGE_DIR
from ._record import load_results, study_code_hash
from ._registry import IDENTITIES, PREDICTIONS, SCALING_NOTES, UNTESTABLE

ROOT = os.path.dirname(PACKAGE_DIR)  # the checkout
STUDIES = os.path.join(ROOT, "studies")
RESULTS = os.path.join(ROOT, "validation", "results")
EXPLANATIONS = os.path.join(ROOT, "validation", "explanations.md")
OUTPUT = os.path.join(ROOT, "VALIDATION.md")
STATUS_ORDER = ("pass", "FAIL", "inconclusive", "depends on the reading", "not testable", "not run", "not checked")
IDENTITY_ORDER = ("identity: verified", "identity: check failed", "identity: by proof", "identity: not run")
RULE = ("**What counts.** A *prediction* is a claim about what training does that could have come out otherwise; only "
        "its *prediction* checks decide it. An *identity* (algebra, an invariance of the exact dynamics, a proven bound "
        "on every state, a property of the initialization, a construction) is verified and shown, but counted apart "
        "from the predictions, whatever kind its checks have in the study (the reason for each is under "
        "[Identities](#identities)). *Not testable* keeps its reasons. Where a measured value is largely fixed by a "
        "scaling we chose, the prediction says so. A threshold or scope changed after a run is shown with both "
        "versions, and the pre-registered one decides.")
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


# The part of a study run in ``--parts`` that decides a prediction (the others are decided by the whole study). Kept
# here, not in the registry: gflow's source hash covers every file of gflow, so editing the registry would make every
# sweep cache on disk look like the work of other code.
STUDY_PARTS = {"000-P15": "A", "001-15": "B", "001-16": "B", "001-17": "B"}


def planned_runs(p) -> list[tuple[str, str | None]]:
    """The runs meant to decide a prediction.

    Args:
        p: a :class:`Prediction`.

    Returns:
        (study, part) pairs: its ``study`` field ("a, b" is two studies) with the part of :data:`STUDY_PARTS` (None:
        the whole study).
    """
    return [(s.strip(), STUDY_PARTS.get(p.id)) for s in p.study.split(",") if s.strip() != "—"]


def _ran(results_by_study: dict, study: str, part: str | None) -> bool:
    """Whether ``study`` (and ``part`` of it, when named) has a recorded full run."""
    r = results_by_study.get(study)
    return r is not None and (part is None or part in (r.get("config") or {}).get("parts", [part]))


def prediction_statuses(results: list[dict]) -> dict[str, dict]:
    """The status of every prediction of the registry.

    Args:
        results: the recorded result files (:func:`load_results`), each with ``_stale`` set (:func:`render` sets it).

    Returns:
        id → {"status", "checks" (prediction checks), "guards" (sanity checks), "stale"}.
    """
    tagged: dict[str, list] = {}
    for r in results:
        for c in r["checks"]:
            for pid in c.get("predictions") or []:
                tagged.setdefault(pid, []).append((r, c))
    recorded = {r["study"]: r for r in results}
    out = {}
    for p in PREDICTIONS:
        checks = [(r, c) for r, c in tagged.get(p.id, []) if c["kind"] == "prediction"]
        guards = [(r, c) for r, c in tagged.get(p.id, []) if c["kind"] == "sanity"]
        if p.id in IDENTITIES:  # every tagged check verifies it, whatever its kind; none decides a prediction
            every = checks + guards
            if every:
                status = ("identity: verified" if all(c["status"] == "pass" for _, c in every)
                          else "identity: check failed")
            elif not all(_ran(recorded, study, part) for study, part in planned_runs(p)):
                status = "identity: not run"
            else:
                status = "identity: by proof"
            out[p.id] = {"status": status, "checks": every, "guards": [],
                         "stale": any(r["_stale"] for r, _ in every)}
            continue
        if checks:
            status = decided(checks)
        elif p.id in UNTESTABLE:
            status = "not testable"
        elif not all(_ran(recorded, study, part) for study, part in planned_runs(p)):
            status = "not run"
        else:
            status = "not checked"
        out[p.id] = {"status": status, "checks": checks, "guards": guards,
                     "stale": any(r["_stale"] for r, _ in checks)}
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


def _measured(c: dict) -> str:
    reading = f"[{c['reading']} reading] " if c.get("reading") else ""
    interval = f" [{_fmt(c['interval'][0])}, {_fmt(c['interval'][1])}]" if "interval" in c else ""
    n = f", n = {c['n']}" if "n" in c else ""
    needed = f", ~{c['seeds_needed']} seeds to decide" if c.get("seeds_needed") else ""
    return f"{reading}{_fmt(c['value'])}{interval} vs {c.get('direction', '')}{_fmt(c['threshold'])}{n}{needed}"


def _anchor(pid: str) -> str:
    return "x-" + pid.lower()


def render(results: list[dict], explanations: dict[str, str]) -> tuple[str, list[str]]:
    """Build VALIDATION.md.

    Args:
        results: the recorded result files (:func:`load_results`); each gets ``_stale`` (its code hash is not today's).
        explanations: id → paragraph (:func:`load_explanations`).

    Returns:
        The text, and the FAIL / inconclusive / not-run predictions that have no explanation.
    """
    for r in results:
        r["_stale"] = r.get("code_hash") != study_code_hash(r["study"], STUDIES)
    statuses = prediction_statuses(results)
    checks = [(r, c) for r in results for c in r["checks"]]
    lines = _overview(results, statuses, checks) + _results_table(results)
    rows, missing = _prediction_rows(results, statuses, explanations)
    lines += rows + _notes(statuses, explanations) + _every_check(checks)
    return "\n".join(lines).rstrip() + "\n", missing


def _overview(results, statuses, checks) -> list[str]:
    """The heading and the counts of predictions and checks."""
    counts = {s: sum(v["status"] == s for v in statuses.values()) for s in STATUS_ORDER + IDENTITY_ORDER}
    n_identities = sum(p.id in IDENTITIES for p in PREDICTIONS)
    lines = ["# VALIDATION", "",
             "Built by `python studies/validation.py` from the result files in `validation/results/` (one per study, "
             "written by the study's full run) and the explanations in `validation/explanations.md`. Do not edit by "
             "hand: `tests/test_validation.py` rebuilds this file and fails on any difference.", "",
             RULE, "",
             f"**Predictions ({len(PREDICTIONS) - n_identities}): " + ", ".join(
                 f"{counts[s]} {s}" for s in STATUS_ORDER if counts[s] or s != "not checked") + ".** "
             f"**Identities, counted apart ({n_identities}): " + ", ".join(
                 f"{counts[s]} {s.split(': ')[1]}" for s in IDENTITY_ORDER if counts[s]) + ".** "
             "A prediction is decided by its *prediction* checks only; *sanity* checks (true by construction, "
             "arithmetic, solver guards) are shown beside it and never count. Over seeds a check reports the "
             "statistic with its bootstrap 95 % interval: pass if the interval clears the threshold, FAIL if it lies "
             "entirely on the wrong side, inconclusive otherwise. A prediction beside a failed sanity guard is marked so: "
             "its checks ran on a state the study did not expect, read them with care.", ""]
    n_pred = sum(c["kind"] == "prediction" for _, c in checks)
    lines += [f"Checks: {len(checks)} ({n_pred} prediction: "
              + ", ".join(f"{sum(c['kind'] == 'prediction' and c['status'] == s for _, c in checks)} {s}"
                          for s in ("pass", "FAIL", "inconclusive"))
              + f"; {len(checks) - n_pred} sanity: "
              + ", ".join(f"{sum(c['kind'] == 'sanity' and c['status'] == s for _, c in checks)} {s}"
                          for s in ("pass", "FAIL")) + ").", ""]
    return lines


def _results_table(results) -> list[str]:
    """One row per result file, and the studies not yet run at full scale."""
    lines = []
    lines += ["## Results", "", "| study | recorded | commit | wall time | checks | code |", "|---|---|---|---|---|---|"]
    for r in results:
        git = r.get("provenance", {}).get("git") or {}
        commit = (git.get("commit") or "?")[:10] + (" (dirty)" if git.get("dirty") else "")
        lines.append(f"| {r['study']} | {r['recorded']} | {commit} | {r['wall_time_s'] / 60:.1f} min | "
                     f"{len(r['checks'])} | {'**stale**' if r['_stale'] else 'current'} |")
    by_study = {r["study"]: r for r in results}
    planned = sorted({(s, part) for p in PREDICTIONS for s, part in planned_runs(p)
                      if not _ran(by_study, s, part)}, key=lambda sp: (sp[0], sp[1] or ""))
    if planned:
        lines += ["", "No result yet (not run at full scale): " + ", ".join(
            f"`{s}`" + (f" (part {part})" if part else "") for s, part in planned) + "."]
    return lines


def _prediction_rows(results, statuses, explanations) -> tuple[list[str], list[str]]:
    """The table of predictions with their status and evidence; and those lacking an explanation."""
    lines = []
    missing = []
    lines += ["", "## Predictions", "",
              "| id | prediction | source | status | prediction checks: value [95 % interval] vs threshold | "
              "sanity guards |", "|---|---|---|---|---|---|"]
    for p in PREDICTIONS:
        if p.id in IDENTITIES:
            continue
        st = statuses[p.id]
        status = st["status"]
        shown = f"**{status}**" if status in ("FAIL", "not checked") else status
        if status in EXPLAINED:
            if p.id not in explanations:
                missing.append(p.id)
            shown = f"[{shown}](#{_anchor(p.id)})"
        elif status == "not testable":
            shown = f"[{shown}](#{_anchor(p.id)})"
        if st["stale"]:
            shown += " (stale)"
        evidence = "; ".join(f"{c['status']}: {_measured(c)} ({r['study']})" for r, c in st["checks"]) or (
            "— (study: " + ", ".join(s + (f", part {part}" if part else "") for s, part in planned_runs(p)) + ")"
            if status in ("not run", "not checked") else "—")
        guards = f"{sum(c['status'] == 'pass' for _, c in st['guards'])}/{len(st['guards'])} pass" \
            if st["guards"] else "—"
        if any(c["status"] != "pass" for _, c in st["guards"]):
            shown += " (a sanity guard failed)"
            guards = f"**{guards}**"
        claim = p.claim + (f" *(Note: {SCALING_NOTES[p.id]})*" if p.id in SCALING_NOTES else "")
        lines.append(f"| {p.id} | {_cell(claim)} | {_cell(p.source)} | {shown} | {_cell(evidence)} | {guards} |")
    lines += ["", "## Identities", "",
              "Verified and shown, counted apart from the predictions: no run could refute them, so their checks "
              "(whatever kind the study gave them) only show that our code implements them. Why each is one is below "
              "the table.", "",
              "| id | statement | source | status | checks: value vs threshold |", "|---|---|---|---|---|"]
    for p in PREDICTIONS:
        if p.id not in IDENTITIES:
            continue
        st = statuses[p.id]
        shown = f"[{'**' + st['status'] + '**' if 'failed' in st['status'] else st['status']}](#{_anchor(p.id)})"
        if st["stale"]:
            shown += " (stale)"
        evidence = "; ".join(f"{c['status']}: {_measured(c)} ({r['study']})" for r, c in st["checks"]) or "—"
        lines.append(f"| {p.id} | {_cell(p.claim)} | {_cell(p.source)} | {shown} | {_cell(evidence)} |")
    return lines, missing


def _notes(statuses, explanations) -> list[str]:
    """Why each prediction is not testable, and why each FAIL, inconclusive and not run."""
    lines = []
    untestable = [p for p in PREDICTIONS if statuses[p.id]["status"] == "not testable"]
    if untestable:
        lines += ["", "## Not testable at simulator scale", ""]
        for p in untestable:
            lines += [f'<a id="{_anchor(p.id)}"></a>**{p.id}** ({_cell(p.claim)}): {UNTESTABLE[p.id]}', ""]

    lines += ["", "## Why each identity is one", ""]
    for p in PREDICTIONS:
        if p.id in IDENTITIES:
            lines += [f'<a id="{_anchor(p.id)}"></a>**{p.id}** ({_cell(p.claim)}): {IDENTITIES[p.id]}', ""]

    explained = [p for p in PREDICTIONS if statuses[p.id]["status"] in EXPLAINED]
    if explained:
        lines += ["", "## Why each FAIL, inconclusive and not run", ""]
        for p in explained:
            text = explanations.get(p.id, "**explanation missing** (add a `## " + p.id +
                                    "` section to validation/explanations.md)")
            lines += [f'<a id="{_anchor(p.id)}"></a>**{p.id}** — {statuses[p.id]["status"]}. {text}', ""]
    return lines


def _every_check(checks) -> list[str]:
    """One row per check of every study."""
    lines = ["", "## Every check", "",
              "| study | kind | claim | source | predictions | measured | status |", "|---|---|---|---|---|---|---|"]
    for r, c in checks:
        status = c["status"] if c["status"] == "pass" else f"**{c['status']}**"
        lines.append(f"| {r['study']} | {c['kind']} | {_cell(c['claim'])} | {_cell(c['source'])} | "
                     f"{', '.join(c.get('predictions') or []) or '—'} | {_cell(_measured(c))} | {status} |")
    return lines


def main(argv=None, description: str = "Build VALIDATION.md from the committed result files") -> int:
    """``python studies/validation.py``: write VALIDATION.md, or with ``--check`` compare it.

    Args:
        argv: the command line (default: ``sys.argv[1:]``).
        description: the ``--help`` text.

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
    text, missing = render(results, load_explanations(args.explanations))
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

