"""The harness every study shares: its argument parser, checks (prediction or sanity; decided over seeds by a
bootstrap interval), summary.json, the committed result file for VALIDATION.md, figures, and the registry of the
source papers' predictions (DESIGN.md, studies; issue 15)."""

from ._check import check as check, exit_code as exit_code, over_seeds as over_seeds
from ._harness import (
    dask_option as dask_option,
    print_checks as print_checks,
    save_figure as save_figure,
    study_parser as study_parser,
    write_summary as write_summary,
)
from ._predictions import Prediction as Prediction, PREDICTIONS as PREDICTIONS, UNTESTABLE as UNTESTABLE
from ._record import load_results as load_results, record_result as record_result, study_code_hash as study_code_hash
from ._statistics import bootstrap_interval as bootstrap_interval, decide as decide, seeds_needed as seeds_needed
