"""What every study shares: its argument parser, the summary.json format of DESIGN.md, the result file a full run
records for VALIDATION.md (issue 15), check printing and figure saving."""

from __future__ import annotations

import argparse
import json
import os
import time

from ..results import jsonable, package_versions, provenance
from ._check import exit_code, KINDS
from ._record import default_results_dir, note_code_at_start, record_result


def study_parser(doc: str, out: str, out_help: str, quick_help: str) -> argparse.ArgumentParser:
    """Every study's parser starts alike: its docstring's first paragraph as ``--help``, defaults shown,
    ``--out`` (default ``out``), ``--quick`` and ``--record``; notes the study's code hash as it starts."""
    note_code_at_start()
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--out", default=out, help=out_help)
    p.add_argument("--quick", action="store_true",
                   help=quick_help + "; a smoke test of every code path: prediction checks may fail or stay "
                        "inconclusive (too few seeds), only an error or a failed sanity check makes it exit non-zero")
    p.add_argument("--record", default=default_results_dir(), metavar="DIR",
                   help="where a full (not --quick) run writes its small result file <study>.json for "
                        "studies/validation.py (default: validation/results of this checkout); '' to not record")
    return p


def dask_option(p: argparse.ArgumentParser) -> None:
    """``--dask SPEC`` for a study that runs sweeps: where to run them (:func:`gflow.sweep.dask_executor`)."""
    p.add_argument("--dask", default=None, metavar="SPEC",
                   help="run the sweeps on Dask (needs gflow[distributed]): 'local:N' for N worker processes on this "
                        "machine, a scheduler address (tcp://host:8786) or a scheduler file (.json); default: in this "
                        "process")


def write_summary(out: str, study: str, config: dict, checks: list[dict], results: dict, started: float) -> dict:
    """Write ``out/summary.json``; a full run (``config["quick"]`` false) with ``config["record"]`` set also
    records its checks in ``<record>/<study>.json`` (:func:`record_result`)."""
    summary = {"study": study, "config": jsonable(config), "versions": package_versions(), "provenance": provenance(),
               "wall_time_s": time.time() - started, "checks": checks, "results": jsonable(results),
               "all_passed": all(c["status"] == "pass" for c in checks),
               "sanity_passed": exit_code(checks) == 0}
    _write_json(os.path.join(out, "summary.json"), summary)
    if config.get("record") and not config.get("quick"):
        path = record_result(config["record"], summary)
        print(f"recorded {len(checks)} checks in {path} (python studies/validation.py rebuilds VALIDATION.md)")
    return summary


def print_checks(checks: list[dict]) -> None:
    """One line per check: status, kind, claim, value (bootstrap interval), threshold; then the counts."""
    width = min(max(len(c["claim"]) for c in checks), 100)
    marks = {"pass": "PASS", "FAIL": "FAIL", "inconclusive": "INCONCLUSIVE"}
    for c in checks:
        interval = f" [{_fmt(c['interval'][0])}, {_fmt(c['interval'][1])}]" if "interval" in c else ""
        needed = f" (~{c['seeds_needed']} seeds to decide)" if c.get("seeds_needed") else ""
        print(f"  [{marks[c['status']]:>4}] {c['kind']:10s} {c['claim']:<{width}}  value={_fmt(c['value'])}{interval}"
              f"  threshold={_fmt(c['threshold'])}{needed}")
    counts = {k: {s: sum(c["kind"] == k and c["status"] == s for c in checks) for s in marks} for k in KINDS}
    print("  " + "; ".join(f"{k}: " + ", ".join(f"{n} {s}" for s, n in v.items() if n) for k, v in counts.items()
                           if any(v.values())))


def _fmt(v):
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def _write_json(path: str, obj) -> None:
    with open(path + ".tmp", "w") as f:
        json.dump(obj, f, indent=2)
    os.replace(path + ".tmp", path)


def save_figure(fig, out: str, name: str) -> str:
    path = os.path.join(out, name)
    fig.savefig(path, dpi=130, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path
