"""The harness every study shares: its argument parser, checks, summary.json, figures, and the registry of the
source papers' predictions that VALIDATION.md is built from (DESIGN.md, studies)."""

from ._harness import (
    check as check,
)
from ._harness import (
    print_checks as print_checks,
)
from ._harness import (
    save_figure as save_figure,
)
from ._harness import (
    study_parser as study_parser,
)
from ._harness import (
    write_summary as write_summary,
)
from ._predictions import PREDICTIONS as PREDICTIONS
