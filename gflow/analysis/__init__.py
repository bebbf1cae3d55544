"""Pure functions of a model or a trajectory: they never integrate and never plot."""

from .balance import (
    balance_norm as balance_norm,
    balance_ratio as balance_ratio,
    balancing_time as balancing_time,
    early_phase_rate as early_phase_rate,
    fit_exponential_rate as fit_exponential_rate,
    fit_power_law as fit_power_law,
    imbalance_norm as imbalance_norm,
    transition_to_balance_ratio as transition_to_balance_ratio,
)
from .conserved import (
    balance_matrix as balance_matrix,
    balance_matrix_scale as balance_matrix_scale,
    drift as drift,
    norm_difference as norm_difference,
    relative_drift as relative_drift,
)
from .extrapolation import (
    extrapolates as extrapolates,
    loss_at_length as loss_at_length,
    tail_error as tail_error,
    zero_solution_error as zero_solution_error,
)
