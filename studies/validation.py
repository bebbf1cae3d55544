"""Build VALIDATION.md from the committed result files validation/results/<study>.json (and <study>.<block>.json,
<study>[.<block>].part-<part>.json).

    python studies/validation.py              # rewrite VALIDATION.md
    python studies/validation.py --check      # exit 1 if VALIDATION.md differs from what the results give

A full (not --quick) run of a study records its checks in validation/results/<study>.json; a run on a declared seed
block other than the exploratory one (its configuration's ``seeds_block``, e.g. ``--seeds-block confirmatory``)
records validation/results/<study>.<block>.json beside it, so the exploratory record is kept; a study run in parts
(its configuration's ``record_part``) records one file per part, and a part's record decides over the whole study's. This script reads
those files and the registry validation/registry.toml only (no out/ folders, no clock), so VALIDATION.md is a function of
the repository. Every claim of gflow.study.PREDICTIONS has one of four kinds of result (gflow.study.KINDS_OF_RESULT),
counted apart: only *predictions* make the headline; *reproductions* (a paper's experimental figure, run with its
protocol) are decided the same way and counted apart; *identities* are verified; *findings* are measurements.

A prediction or reproduction gets one status:

- pass / FAIL / inconclusive: from its *deciding* checks (FAIL if any fails, else inconclusive if any is, else
  pass): prediction checks tagged with it that are registered as a [[check]] of the registry and were recorded as
  registered (statistic, direction, threshold, reading, seeds; gflow.study.check_role). *Sanity* checks (by
  construction, arithmetic, solver guards) are listed but never decide;
- depends on the reading: where the paper's text allows several readings of the setup, checks carry a ``reading``
  and each reading is decided on its own; readings that disagree decide nothing (both numbers shown);
- awaiting confirmation: its only checks were registered after their study had been run and were recorded on the
  exploratory seeds; they decide only on their declared fresh confirmatory seeds (the numbers are shown beside).
  Where the confirmatory record holds a registered check, it decides it alone, and the same check in the
  exploratory record is shown beside;
- not registered: its only checks are not registered, or not as registered (gflow.study.preregistration_problems
  says why; the numbers are shown beside and decide nothing);
- not testable: gflow.study.UNTESTABLE says why, and what it would take;
- not run: the study meant to decide it (or the part of it, for a study run in ``--parts``) has no result file;
- not checked: none of the above (a defect: tests/test_validation.py fails on it).

An *identity* (gflow.study.IDENTITIES) is verified by every check tagged with it: "identity: verified", "identity:
check failed" (a bug of ours), "identity: inconclusive", "identity: by proof" (no check), "identity: not run". A
*finding* is "measured" (its tagged checks' values, without thresholds) or "not measured".

A prediction or reproduction is decided only by the studies its ``study`` field names (its planned runs). A check
that another study records with its id decides nothing: :func:`as_measurements` moves that id, in a copy of the
records, to the findings of the same seed whose ``study`` names the recording study, and notes the move in the
check's claim; so the exact-flow runs of seed 000's figures (extrapolation_phase, init_scale) are measurements of the
finding 000-F1 while reproduce_000 decides the figures with the paper's own protocol (App. C.1). :func:`render`,
:func:`prediction_statuses` and ``python studies/validation.py`` apply it; the committed records are left as they
were recorded.

A result file whose recorded code hash differs from today's study code (the study script, the studies/ modules it
imports, the gflow source) is marked *stale*, each file on its own; a row is stale when a record that decides it
is. Every FAIL, inconclusive and not-run prediction or reproduction links
to its paragraph in validation/explanations.md ("## <id>" sections): for a FAIL or inconclusive one, why; for one
not run, what its run would take. VALIDATION.md's "Pre-registration" section lists the recorded deciding checks that
are not registered, those awaiting confirmation and the registered checks not yet run. Its "Negative controls"
section shows each registered check judged, by the study's own function (its ``negative_controls()``), on a
plausible alternative outcome on which it must FAIL (gflow.study.NegativeControl).
"""

from __future__ import annotations

import functools
import importlib
import sys

from gflow.study import preregistration_problems, REGISTERED  # noqa: F401 (read by tests/test_preregistration.py)
from gflow.study.report import (  # noqa: F401 (the names tests/test_validation.py reads through this script)
    as_measurements,
    decided,
    EXPLANATIONS,
    IDENTITIES,
    KINDS_OF_RESULT,
    load_explanations,
    main as _main,
    OUTPUT,
    planned_runs,
    prediction_statuses,
    render as _render,
    RESULTS,
    STUDIES,
)


@functools.cache
def negative_controls() -> tuple:
    """The negative controls of every study with registered checks that defines ``negative_controls()``
    (gflow.study.NegativeControl): synthetic alternatives judged by the study's own functions, no run needed. Built
    once per process (they depend on the code only)."""
    out = []
    for study in sorted({c.study for c in REGISTERED.checks}):
        make = getattr(importlib.import_module(study), "negative_controls", None)
        out += make() if make else []
    return tuple(out)


def render(results, explanations, registry=None):
    """gflow.study.report.render with the studies' negative controls."""
    return _render(results, explanations, registry, controls=negative_controls())


def main(argv=None) -> int:
    return _main(argv, description=__doc__.split("\n\n")[0], controls=negative_controls())


if __name__ == "__main__":
    sys.exit(main())
