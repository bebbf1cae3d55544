"""Pure functions of a model or a trajectory: they never integrate and never plot."""

from .along import along as along
from .balance import (
    balance_norm as balance_norm,
    balance_ratio as balance_ratio,
    balancing_time as balancing_time,
    early_phase_rate as early_phase_rate,
    imbalance_norm as imbalance_norm,
    transition_to_balance_ratio as transition_to_balance_ratio,
)
from .conserved import (
    balance_matrix as balance_matrix,
    balance_matrix_scale as balance_matrix_scale,
    drift as drift,
    drift_series as drift_series,
    norm_difference as norm_difference,
    relative_drift as relative_drift,
)
from .effective_rank import (
    effective_rank as effective_rank,
    top_eigenvalue_magnitudes as top_eigenvalue_magnitudes,
)
from .extrapolation import (
    extrapolates as extrapolates,
    extrapolation_horizon as extrapolation_horizon,
    first_below as first_below,
    impulse_responses_along as impulse_responses_along,
    loss_at_length as loss_at_length,
    loss_curve as loss_curve,
    loss_curves_along as loss_curves_along,
    non_extrapolating as non_extrapolating,
    relative_extrapolation_error as relative_extrapolation_error,
    tail_error as tail_error,
    tail_errors as tail_errors,
    zero_solution_error as zero_solution_error,
)
from .fits import (
    fit_drift_exponents as fit_drift_exponents,
    fit_exponential_rate as fit_exponential_rate,
    fit_log_scaling as fit_log_scaling,
    fit_power_law as fit_power_law,
    fit_power_law_with_prefactor as fit_power_law_with_prefactor,
)
from .gd_vs_flow import (
    balance_matrix_drift as balance_matrix_drift,
    distance_to_flow as distance_to_flow,
    impulse_response_distance as impulse_response_distance,
    loss_gap as loss_gap,
    parameter_distance as parameter_distance,
    step_size_scaling as step_size_scaling,
)
from .hidden_state_gradients import (
    hidden_state_gradient_norms as hidden_state_gradient_norms,
    hidden_state_gradients as hidden_state_gradients,
    sample_loss_gradient as sample_loss_gradient,
)
from .lag_coefficients import lag_gradient_coefficients as lag_gradient_coefficients
from .laziness import (
    activation_flips as activation_flips,
    hidden_state_drift as hidden_state_drift,
    linearization_error as linearization_error,
    linearized_outputs as linearized_outputs,
    movement as movement,
    neuron_movement as neuron_movement,
    relative_movement as relative_movement,
)
from .memory import (
    memory_argument as memory_argument,
    memory_function_0 as memory_function_0,
    memory_function_1 as memory_function_1,
    memory_regime as memory_regime,
    transport_error_bound as transport_error_bound,
)
from .ntk import empirical_ntk as empirical_ntk
from .sharpness import (
    sharpness as sharpness,
    sharpness_along as sharpness_along,
    stability_edge as stability_edge,
)
from .slackness import (
    ClusterSlackness as ClusterSlackness,
    general_slackness as general_slackness,
    impulse_response_bound as impulse_response_bound,
    readout_slackness_residual as readout_slackness_residual,
    slackness_bound as slackness_bound,
    slackness_modes as slackness_modes,
    slackness_residual as slackness_residual,
    SlacknessModes as SlacknessModes,
)
from .small_init import (
    crossing_time as crossing_time,
    escape_time as escape_time,
    on_rescaled_grid as on_rescaled_grid,
    Plateau as Plateau,
    plateau_end as plateau_end,
    plateaus as plateaus,
    rescaled_time as rescaled_time,
)
from .spectral import (
    clustered_atoms as clustered_atoms,
    DiscreteMeasure as DiscreteMeasure,
    effective_support_size as effective_support_size,
    eigenvalue_paths as eigenvalue_paths,
    eigenvalues as eigenvalues,
    normalized_moments as normalized_moments,
    spectral_measure as spectral_measure,
    spectral_radius as spectral_radius,
    symmetric_eigendecomposition as symmetric_eigendecomposition,
    wasserstein1 as wasserstein1,
)
from .symmetry import balance_defect as balance_defect, symmetry_defect as symmetry_defect
