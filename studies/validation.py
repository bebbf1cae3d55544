"""Build VALIDATION.md from the committed result files validation/results/<study>.json.

    python studies/validation.py              # rewrite VALIDATION.md
    python studies/validation.py --check      # exit 1 if VALIDATION.md differs from what the results give

A full (not --quick) run of a study records its checks in validation/results/<study>.json; this script reads those
files only (no out/ folders, no clock), so VALIDATION.md is a function of the repository. Every prediction of
gflow.study.PREDICTIONS gets one status:

- pass / FAIL / inconclusive: from the *prediction* checks tagged with it (FAIL if any fails, else inconclusive if
  any is, else pass); *sanity* checks (by construction, arithmetic, solver guards) are listed but never decide;
- depends on the reading: where the paper's text allows several readings of the setup, checks carry a ``reading``
  and each reading is decided on its own; readings that disagree decide nothing (both numbers shown);
- not testable: gflow.study.UNTESTABLE says why, and what it would take;
- an *identity* (gflow.study.IDENTITIES: algebra, an invariance of the exact dynamics, a proven bound on every state, a
  property of the initialization, a construction) is verified by every check tagged with it and counted apart from
  the predictions: "identity: verified", "identity: check failed" (a bug of ours), "identity: by proof" (no check),
  "identity: not run";
- not run: the study meant to decide it (or the part of it, for a study run in ``--parts``) has no result file;
- not checked: none of the above (a defect: tests/test_validation.py fails on it).

A result whose recorded code hash differs from today's study code (the study script, the studies/ modules it
imports, the gflow source) is marked *stale*. Every FAIL, inconclusive and not-run prediction links to its paragraph
in validation/explanations.md ("## <id>" sections): for a FAIL or inconclusive one, why; for one not run, what its
run would take.
"""

from __future__ import annotations

import sys

from gflow.study.report import (  # noqa: F401 (the names tests/test_validation.py reads through this script)
    decided,
    EXPLANATIONS,
    IDENTITIES,
    load_explanations,
    main as _main,
    OUTPUT,
    planned_runs,
    prediction_statuses,
    render,
    RESULTS,
    STUDIES,
)


def main(argv=None) -> int:
    return _main(argv, description=__doc__.split("\n\n")[0])


if __name__ == "__main__":
    sys.exit(main())
