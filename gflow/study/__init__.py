"""The harness every study shares: its start and end (:func:`run_study`), its argument parser with defaults that
differ under ``--quick`` declared once (:class:`QuickFull`), checks (prediction or sanity; decided over seeds by a
bootstrap interval), summary.json, the committed result file for VALIDATION.md, figures, and the registry of the
source papers' claims, each of one of four kinds of result (identity, reproduction, prediction, finding), with the
checks registered to decide them (pre-registration: :func:`preregistration_problems`; docs/design.md, "Studies")."""

from ._check import (
    check as check,
    compare as compare,
    exit_code as exit_code,
    over_seeds as over_seeds,
    over_seeds_by_seed as over_seeds_by_seed,
)
from ._controls import (
    control_problems as control_problems,
    controls_by_check as controls_by_check,
    NegativeControl as NegativeControl,
)
from ._counting import exists_in as exists_in, k_of_n as k_of_n, seed_average as seed_average
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
from ._record import (
    load_results as load_results,
    record_block as record_block,
    record_name as record_name,
    record_part as record_part,
    record_result as record_result,
    result_block as result_block,
    result_file_name as result_file_name,
    study_code_hash as study_code_hash,
)
from ._registry import (
    check_role as check_role,
    CHECKS as CHECKS,
    IDENTITIES as IDENTITIES,
    KINDS as KINDS,
    KINDS_OF_RESULT as KINDS_OF_RESULT,
    load_registry as load_registry,
    Prediction as Prediction,
    PREDICTIONS as PREDICTIONS,
    preregistration_problems as preregistration_problems,
    read_registry as read_registry,
    recorded_seeds as recorded_seeds,
    REGISTERED as REGISTERED,
    registered_check as registered_check,
    RegisteredCheck as RegisteredCheck,
    Registry as Registry,
    SCALING_NOTES as SCALING_NOTES,
    UNTESTABLE as UNTESTABLE,
)
from ._seed_blocks import (
    CONFIRMATORY as CONFIRMATORY,
    EXPLORATORY as EXPLORATORY,
    SeedBlocks as SeedBlocks,
    SEEDS_BLOCKS as SEEDS_BLOCKS,
)
from ._statistics import (
    bootstrap_interval as bootstrap_interval,
    clopper_pearson as clopper_pearson,
    decide as decide,
    seeds_needed as seeds_needed,
    student_t_interval as student_t_interval,
)
from ._tolerance import (
    both_tolerances as both_tolerances,
    rtol_option as rtol_option,
    tight_rtol as tight_rtol,
    TIGHTER as TIGHTER,
    tolerance_agreement as tolerance_agreement,
)
