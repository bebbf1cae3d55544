"""The harness every study shares: its argument parser, checks, summary.json, figures, and the registry of the
source papers' predictions that VALIDATION.md is built from (DESIGN.md, studies)."""

from ._harness import (
    check as check,
    dask_option as dask_option,
    print_checks as print_checks,
    save_figure as save_figure,
    study_parser as study_parser,
    write_summary as write_summary,
)
from ._predictions import PREDICTIONS as PREDICTIONS
