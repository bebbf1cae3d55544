"""What every study's run shares around its science (:func:`run_study`): the output folder, the clock, the
summary.json format of docs/design.md ("Studies"), the result file a full run records for VALIDATION.md, the
trajectories and figures kept beside it, check printing and the exit code."""

from __future__ import annotations

import os
import time

from ..results import jsonable, package_versions, provenance, write_json_atomic
from ._check import exit_code, KINDS
from ._record import record_result
from ._registry import preregistration_problems

INTERRUPTED = 130  # the exit code of a study stopped by Ctrl-C (128 + SIGINT, as a shell reports it)


def run_study(name: str, parse_args, science, argv=None) -> int:
    """A study's start and end around its science.

    Parses ``argv``, creates ``--out``, starts the clock, calls ``science``, writes summary.json (and a full run's
    result record), prints the checks. Figures use matplotlib's Agg backend. A script's ``main(argv=None)`` is
    ``return run_study("<study>", parse_args, science, argv)``.

    Args:
        name: the study's name (summary.json, validation/results/<name>.json; ``<name>.<block>.json`` for a run on
            a seed block other than the exploratory one, named by the configuration's ``seeds_block``).
        parse_args: ``parse_args(argv) -> argparse.Namespace``; an argument error exits through argparse.
        science: ``science(args, checks, results)``: appends its checks, fills ``results`` and may return entries
            that extend the configuration in summary.json.
        argv: the command line (default: ``sys.argv[1:]``).

    Returns:
        The exit code: :func:`exit_code` of the checks, or ``INTERRUPTED`` after Ctrl-C (one line, no traceback).
    """
    started = time.time()
    args = parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    import matplotlib

    matplotlib.use("Agg")  # figures go to files, never to a window
    checks, results = [], {}
    try:
        config = {**vars(args), **(science(args, checks, results) or {})}
    except KeyboardInterrupt as e:  # Ctrl-C: one line, not a traceback; a sweep's message says what it kept
        said = str(e) or "interrupted"  # a bare Ctrl-C has no message
        print(f"\n{name}: {said}; no summary.json written" + ("" if "rerun" in said else " (rerun the same command)"))
        return INTERRUPTED
    summary = write_summary(args.out, name, config, checks, results, started)
    print_checks(checks)
    print(f"wrote {args.out}/summary.json and figures in {time.time() - started:.1f} s")
    return exit_code(summary["checks"])


def write_summary(out: str, study: str, config: dict, checks: list[dict], results: dict, started: float) -> dict:
    """Write ``out/summary.json`` (the format of docs/design.md, "Studies").

    A full run (``config["quick"]`` false) with ``config["record"]`` set also records its checks in
    ``<record>/<study>.json``, or ``<record>/<study>.<block>.json`` when ``config["seeds_block"]`` names a block
    other than the exploratory one (:func:`record_result`), and prints each deciding check that is not as registered in
    validation/registry.toml (:func:`preregistration_problems`: such a check decides nothing in VALIDATION.md; it
    judges as VALIDATION.md does, so a check recorded for a claim that another study decides is a measurement of that
    seed's finding, not a deciding check).

    Args:
        out: the output folder.
        study: the study's name.
        config: the parsed options and the entries the science added.
        checks: the check entries (:func:`check`, :func:`over_seeds`).
        results: the study's numbers (made JSON-safe).
        started: the run's start, ``time.time()``.

    Returns:
        The summary written.
    """
    summary = {"study": study, "config": jsonable(config), "versions": package_versions(), "provenance": provenance(),
               "wall_time_s": time.time() - started, "checks": checks, "results": jsonable(results),
               "all_passed": all(c["status"] == "pass" for c in checks),
               "sanity_passed": exit_code(checks) == 0}
    write_json_atomic(os.path.join(out, "summary.json"), summary)
    if config.get("record") and not config.get("quick"):
        path = record_result(config["record"], summary)
        print(f"recorded {len(checks)} checks in {path} (python studies/validation.py rebuilds VALIDATION.md)")
        record = {"study": study, "config": summary["config"], "checks": checks}
        # judged as VALIDATION.md judges it: a check for a claim another study decides is a measurement
        for line in preregistration_problems([record]):
            print(f"warning: not as registered in validation/registry.toml (decides nothing): {line}")
    return summary


def print_checks(checks: list[dict]) -> None:
    """Print one line per check (status, kind, claim, value with its bootstrap interval, threshold), then the counts.

    Args:
        checks: the check entries.
    """
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


def save_trajectories(out: str, trajectories: dict) -> None:
    """Write each trajectory to ``out/trajectories/<name>``, replacing an earlier run's.

    Args:
        out: the output folder.
        trajectories: ``{name: Trajectory}``.
    """
    for name, traj in trajectories.items():
        traj.save(os.path.join(out, "trajectories", name), overwrite=True)


def save_figure(fig, out: str, name: str, *, title: str | None = None, title_size: float | None = None) -> str:
    """Lay ``fig`` out, write it at 130 dpi and close it.

    Args:
        fig: a matplotlib figure.
        out: the output folder.
        name: the file name (``.png``).
        title: a title right above the panels.
        title_size: its font size.

    Returns:
        The path written.
    """
    import matplotlib.pyplot as plt

    fig.tight_layout()
    if title is not None:  # just above the panels: the tight bounding box below grows to hold it, without a gap
        fig.suptitle(title, fontsize=title_size, y=1.0, va="bottom")
    path = os.path.join(out, name)
    fig.savefig(path, dpi=130, bbox_inches="tight")
    plt.close(fig)
    return path
