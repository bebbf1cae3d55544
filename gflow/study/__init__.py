"""The harness every study shares: its start and end (:func:`run_study`), its argument parser with defaults that
differ under ``--quick`` declared once (:class:`QuickFull`), checks (prediction or sanity; decided over seeds by a
bootstrap interval), summary.json, the committed result file for VALIDATION.md, figures, and the registry of the
source papers' predictions (docs/design.md, "Studies")."""

from ._check import (
    check as check,
    compare as compare,
    exit_code as exit_code,
    over_seeds as over_seeds,
    over_seeds_by_seed as over_seeds_by_seed,
)
from ._harness import (
    print_checks as print_checks,
    run_study as run_study,
    save_figure as save_figure,
    save_trajectories as save_trajectories,
    write_summary as write_summary,
)
from ._parser import (
    dask_option as dask_option,
    require_positive as require_positive,
    study_parser as study_parser,
    StudyParser as StudyParser,
    sweep_options as sweep_options,
)
from ._quick_full import QuickFull as QuickFull
from ._record import load_results as load_results, record_result as record_result, study_code_hash as study_code_hash
from ._registry import (
    IDENTITIES as IDENTITIES,
    load_registry as load_registry,
    Prediction as Prediction,
    PREDICTIONS as PREDICTIONS,
    SCALING_NOTES as SCALING_NOTES,
    UNTESTABLE as UNTESTABLE,
)
from ._statistics import bootstrap_interval as bootstrap_interval, decide as decide, seeds_needed as seeds_needed
from ._tolerance import (
    both_tolerances as both_tolerances,
    rtol_option as rtol_option,
    tight_rtol as tight_rtol,
    TIGHTER as TIGHTER,
    tolerance_agreement as tolerance_agreement,
)
