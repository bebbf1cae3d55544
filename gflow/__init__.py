"""gflow: gradient-flow simulation of the training dynamics of recurrent networks (float64 by default)."""

from . import _dtype  # noqa: F401  (enables float64 before anything else touches JAX)
from . import _compilation_cache  # noqa: F401  (JAX's persistent compilation cache, see its docstring)
from . import analysis as analysis, initializers as initializers, teachers as teachers
from . import nonlinear_teachers as nonlinear_teachers
from ._activations import Activation as Activation, ACTIVATIONS as ACTIVATIONS
from ._batching import batch_length as batch_length, repeat as repeat_module, stack as stack_modules  # noqa: F401
from ._checks import GflowInputError as GflowInputError
from ._discrete import (
    log_save_steps as log_save_steps,
    run_adam as run_adam,
    run_discrete as run_discrete,
    run_gd as run_gd,
    run_projected_gd as run_projected_gd,
    run_sgd as run_sgd,
)
from ._empirical_loss import (
    EmpiricalLoss as EmpiricalLoss,
    FreshGaussianSequences as FreshGaussianSequences,
    gaussian_sequences as gaussian_sequences,
)
from ._flow_batch import FlowBatch as FlowBatch
from ._flow import (
    log_save_times as log_save_times,
    register_solver as register_solver,
    solve_flow as solve_flow,
    solve_flows as solve_flows,
    STOCK_SOLVERS as STOCK_SOLVERS,
)
from ._elman_rnn import ElmanRNN as ElmanRNN
from ._elman_settings import (
    elman_allen_zhu_li as elman_allen_zhu_li,
    elman_cayci_eryilmaz as elman_cayci_eryilmaz,
    elman_panigrahi_goyal as elman_panigrahi_goyal,
    theory_output_scale as theory_output_scale,
)
from ._frozen import Frozen as Frozen
from ._gated_rnn import GatedRNN as GatedRNN
from ._gradient_flow_term import GradientFlowTerm as GradientFlowTerm
from ._gru import GRU as GRU, gru as gru
from ._input_sequence import (
    impulse as impulse,
    normalized_token_sequences as normalized_token_sequences,
    null_sequence as null_sequence,
    true_tokens as true_tokens,
    unit_ball_sequences as unit_ball_sequences,
)
from ._lstm import LSTM as LSTM, lstm as lstm
from ._linear_rnn import LinearRNN as LinearRNN
from ._population_loss import PopulationLoss as PopulationLoss
from ._projection import (
    ball_projection as ball_projection,
    box_projection as box_projection,
    compose_projections as compose_projections,
)
from ._regular_languages import (
    balanced_strings as balanced_strings,
    encode_strings as encode_strings,
    LANGUAGES as LANGUAGES,
    membership as membership,
)
from ._rosenbrock import GaussNewtonRosenbrock as GaussNewtonRosenbrock, ROS34PW2 as ROS34PW2
from ._sample_loss import SampleLoss as SampleLoss
from ._schedules import multistep_schedule as multistep_schedule
from ._trajectory import load_trajectory as load_trajectory, Trajectory as Trajectory
from ._update_rule import adam as adam, gradient_descent as gradient_descent, UpdateRule as UpdateRule
from .sweep import (
    expand_grid as expand_grid,
    load_sweep as load_sweep,
    run_sweep as run_sweep,
    SweepRun as SweepRun,
)


__version__ = "0.1.0"
