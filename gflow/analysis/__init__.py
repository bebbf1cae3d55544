"""Pure functions of a model or a trajectory: they never integrate and never plot."""

from .along import along as along
from .balance import (
    balance_norm as balance_norm,
)
from .balance import (
    balance_ratio as balance_ratio,
)
from .balance import (
    balancing_time as balancing_time,
)
from .balance import (
    early_phase_rate as early_phase_rate,
)
from .balance import (
    fit_exponential_rate as fit_exponential_rate,
)
from .balance import (
    fit_power_law as fit_power_law,
)
from .balance import (
    imbalance_norm as imbalance_norm,
)
from .balance import (
    transition_to_balance_ratio as transition_to_balance_ratio,
)
from .conserved import (
    balance_matrix as balance_matrix,
)
from .conserved import (
    balance_matrix_scale as balance_matrix_scale,
)
from .conserved import (
    drift as drift,
)
from .conserved import (
    drift_series as drift_series,
)
from .conserved import (
    norm_difference as norm_difference,
)
from .conserved import (
    relative_drift as relative_drift,
)
from .extrapolation import (
    extrapolates as extrapolates,
)
from .extrapolation import (
    extrapolation_horizon as extrapolation_horizon,
)
from .extrapolation import (
    first_below as first_below,
)
from .extrapolation import (
    impulse_responses_along as impulse_responses_along,
)
from .extrapolation import (
    loss_at_length as loss_at_length,
)
from .extrapolation import (
    loss_curve as loss_curve,
)
from .extrapolation import (
    loss_curves_along as loss_curves_along,
)
from .extrapolation import (
    non_extrapolating as non_extrapolating,
)
from .extrapolation import (
    tail_error as tail_error,
)
from .extrapolation import (
    tail_errors as tail_errors,
)
from .extrapolation import (
    zero_solution_error as zero_solution_error,
)
from .gd_vs_flow import (
    balance_matrix_drift as balance_matrix_drift,
)
from .gd_vs_flow import (
    distance_to_flow as distance_to_flow,
)
from .gd_vs_flow import (
    fit_drift_exponents as fit_drift_exponents,
)
from .gd_vs_flow import (
    impulse_response_distance as impulse_response_distance,
)
from .gd_vs_flow import (
    loss_gap as loss_gap,
)
from .gd_vs_flow import (
    parameter_distance as parameter_distance,
)
from .gd_vs_flow import (
    step_size_scaling as step_size_scaling,
)
from .hidden_state_gradients import (
    hidden_state_gradient_norms as hidden_state_gradient_norms,
)
from .hidden_state_gradients import (
    hidden_state_gradients as hidden_state_gradients,
)
from .hidden_state_gradients import (
    sample_loss_gradient as sample_loss_gradient,
)
from .laziness import (
    activation_flips as activation_flips,
)
from .laziness import (
    hidden_state_drift as hidden_state_drift,
)
from .laziness import (
    linearization_error as linearization_error,
)
from .laziness import (
    linearized_outputs as linearized_outputs,
)
from .laziness import (
    movement as movement,
)
from .laziness import (
    neuron_movement as neuron_movement,
)
from .laziness import (
    relative_movement as relative_movement,
)
from .memory import (
    memory_argument as memory_argument,
)
from .memory import (
    memory_function_0 as memory_function_0,
)
from .memory import (
    memory_function_1 as memory_function_1,
)
from .memory import (
    memory_regime as memory_regime,
)
from .memory import (
    transport_error_bound as transport_error_bound,
)
from .ntk import empirical_ntk as empirical_ntk
from .sharpness import (
    sharpness as sharpness,
)
from .sharpness import (
    sharpness_along as sharpness_along,
)
from .sharpness import (
    stability_edge as stability_edge,
)
from .slackness import (
    ClusterSlackness as ClusterSlackness,
)
from .slackness import (
    general_slackness as general_slackness,
)
from .slackness import (
    impulse_response_bound as impulse_response_bound,
)
from .slackness import (
    readout_slackness_residual as readout_slackness_residual,
)
from .slackness import (
    slackness_bound as slackness_bound,
)
from .slackness import (
    slackness_modes as slackness_modes,
)
from .slackness import (
    slackness_residual as slackness_residual,
)
from .slackness import (
    SlacknessModes as SlacknessModes,
)
from .small_init import (
    crossing_time as crossing_time,
)
from .small_init import (
    escape_time as escape_time,
)
from .small_init import (
    fit_log_scaling as fit_log_scaling,
)
from .small_init import (
    on_rescaled_grid as on_rescaled_grid,
)
from .small_init import (
    Plateau as Plateau,
)
from .small_init import (
    plateau_end as plateau_end,
)
from .small_init import (
    plateaus as plateaus,
)
from .small_init import (
    rescaled_time as rescaled_time,
)
from .spectral import (
    DiscreteMeasure as DiscreteMeasure,
)
from .spectral import (
    effective_support_size as effective_support_size,
)
from .spectral import (
    eigenvalue_paths as eigenvalue_paths,
)
from .spectral import (
    eigenvalues as eigenvalues,
)
from .spectral import (
    normalized_moments as normalized_moments,
)
from .spectral import (
    spectral_measure as spectral_measure,
)
from .spectral import (
    spectral_radius as spectral_radius,
)
from .spectral import (
    symmetric_eigendecomposition as symmetric_eigendecomposition,
)
from .spectral import (
    wasserstein1 as wasserstein1,
)
from .symmetry import balance_defect as balance_defect
from .symmetry import symmetry_defect as symmetry_defect
