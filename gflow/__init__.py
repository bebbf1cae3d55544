"""gflow: gradient-flow simulation of the training dynamics of recurrent networks (float64 by default)."""

from . import _dtype  # noqa: F401  (enables float64 before anything else touches JAX)
from . import analysis as analysis, initializers as initializers, teachers as teachers
from ._checks import GflowInputError as GflowInputError
from ._flow import (
    log_save_times as log_save_times,
    register_solver as register_solver,
    solve_flow as solve_flow,
    solve_flows as solve_flows,
    STOCK_SOLVERS as STOCK_SOLVERS,
)
from ._gradient_flow_term import GradientFlowTerm as GradientFlowTerm
from ._linear_rnn import LinearRNN as LinearRNN
from ._population_loss import PopulationLoss as PopulationLoss
from ._rosenbrock import GaussNewtonRosenbrock as GaussNewtonRosenbrock, ROS34PW2 as ROS34PW2
from ._trajectory import load_trajectory as load_trajectory, Trajectory as Trajectory

__version__ = "0.1.0"
