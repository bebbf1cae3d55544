"""Discrete training from the same start as the flow: GD (explicit Euler), SGD, Adam and projected GD, with
their update rules, step-size schedules and projections (DESIGN.md, integrators)."""

from ._fitted_teacher import fit_gru_teacher as fit_gru_teacher
from ._projection import (
    ball_projection as ball_projection,
)
from ._projection import (
    box_projection as box_projection,
)
from ._projection import (
    compose_projections as compose_projections,
)
from ._runners import (
    log_save_steps as log_save_steps,
)
from ._runners import (
    run_adam as run_adam,
)
from ._runners import (
    run_discrete as run_discrete,
)
from ._runners import (
    run_gd as run_gd,
)
from ._runners import (
    run_projected_gd as run_projected_gd,
)
from ._runners import (
    run_sgd as run_sgd,
)
from ._schedules import multistep_schedule as multistep_schedule
from ._update_rule import adam as adam
from ._update_rule import gradient_descent as gradient_descent
from ._update_rule import UpdateRule as UpdateRule
