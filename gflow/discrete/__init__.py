"""Discrete training from the same start as the flow: GD (explicit Euler), SGD, Adam, projected GD and normalized GD
(Slutzky et al. 2025), with their update rules, step-size schedules and projections (docs/design.md, "Layers")."""

from ..run import log_save_steps as log_save_steps
from ._batch_runners import (
    run_adam_batch as run_adam_batch,
    run_discrete_batch as run_discrete_batch,
    run_gd_batch as run_gd_batch,
    run_normalized_gd_batch as run_normalized_gd_batch,
    run_projected_gd_batch as run_projected_gd_batch,
    run_sgd_batch as run_sgd_batch,
)
from ._fitted_teacher import fit_gru_teacher as fit_gru_teacher
from ._options import DISCRETE_OPTIONS as DISCRETE_OPTIONS, DiscreteOptions as DiscreteOptions
from ._projection import (
    ball_projection as ball_projection,
    box_projection as box_projection,
    compose_projections as compose_projections,
    diagonal_projection as diagonal_projection,
)
from ._runners import (
    run_adam as run_adam,
    run_discrete as run_discrete,
    run_gd as run_gd,
    run_normalized_gd as run_normalized_gd,
    run_projected_gd as run_projected_gd,
    run_sgd as run_sgd,
)
from ._schedules import multistep_schedule as multistep_schedule
from ._update_rule import (
    adam as adam,
    gradient_descent as gradient_descent,
    normalized_gradient_descent as normalized_gradient_descent,
    UpdateRule as UpdateRule,
)
