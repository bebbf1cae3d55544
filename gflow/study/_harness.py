"""What every study shares: the summary.json format of DESIGN.md, checks, and figure saving."""

from __future__ import annotations

import argparse
import json
import os
import time

from ..results import jsonable, package_versions, provenance


def study_parser(doc: str, out: str, out_help: str, quick_help: str) -> argparse.ArgumentParser:
    """Every study's parser starts alike: its docstring's first paragraph as ``--help``, defaults shown,
    ``--out`` (default ``out``) and ``--quick``."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--out", default=out, help=out_help)
    p.add_argument("--quick", action="store_true", help=quick_help)
    return p


def dask_option(p: argparse.ArgumentParser) -> None:
    """``--dask SPEC`` for a study that runs sweeps: where to run them (:func:`gflow.sweep.dask_executor`)."""
    p.add_argument("--dask", default=None, metavar="SPEC",
                   help="run the sweeps on Dask (needs gflow[distributed]): 'local:N' for N worker processes on this "
                        "machine, a scheduler address (tcp://host:8786) or a scheduler file (.json); default: in this "
                        "process")


def check(claim: str, source: str, value: float, threshold: float, passed: bool, **extra) -> dict:
    """One entry of summary.json's list of checks: {"claim", "source", "value", "threshold", "passed"}."""
    entry = {"claim": claim, "source": source, "value": jsonable(value), "threshold": jsonable(threshold),
             "passed": bool(passed)}
    entry.update({k: jsonable(v) for k, v in extra.items()})
    return entry


def write_summary(out: str, study: str, config: dict, checks: list[dict], results: dict, started: float) -> dict:
    summary = {"study": study, "config": jsonable(config), "versions": package_versions(), "provenance": provenance(),
               "wall_time_s": time.time() - started, "checks": checks, "results": jsonable(results),
               "all_passed": all(c["passed"] for c in checks)}
    path = os.path.join(out, "summary.json")
    with open(path + ".tmp", "w") as f:
        json.dump(summary, f, indent=2)
    os.replace(path + ".tmp", path)
    return summary


def print_checks(checks: list[dict]) -> None:
    width = max(len(c["claim"]) for c in checks)
    for c in checks:
        mark = "PASS" if c["passed"] else "FAIL"
        print(f"  [{mark}] {c['claim']:<{width}}  value={_fmt(c['value'])}  threshold={_fmt(c['threshold'])}")


def _fmt(v):
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def save_figure(fig, out: str, name: str) -> str:
    path = os.path.join(out, name)
    fig.savefig(path, dpi=130, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path
