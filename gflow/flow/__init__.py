"""Gradient flow dθ/dt = −∇L(θ) as a stiff ODE: :func:`solve_flow` and its batched form :func:`solve_flows`, the
diffrax term, and gflow's Rosenbrock-W solver for sums of squares (docs/design.md, "Integrators")."""

from .._compilation_cache import (
    exported_call as exported_call,
    program_key as program_key,
    Uncacheable as Uncacheable,
)
from ..run import log_save_times as log_save_times
from ._dense_rodas import DenseRodas as DenseRodas
from ._descent import (
    DescentController as DescentController,
    loss_rounding as loss_rounding,
    loss_rounding_along as loss_rounding_along,
    pack_step_error as pack_step_error,
    rejected_ascent as rejected_ascent,
    saved_losses as saved_losses,
    saved_rises as saved_rises,
)
from ._gradient_flow_solver import (
    AbstractGradientFlowSolver as AbstractGradientFlowSolver,
    STOCK_EVALUATIONS_PER_STEP as STOCK_EVALUATIONS_PER_STEP,
)
from ._integrate import AS_BATCH_MIN_PARAMETERS as AS_BATCH_MIN_PARAMETERS
from ._options import (
    AUTO_RODAS_MAX_RTOL as AUTO_RODAS_MAX_RTOL,
    default_solver as default_solver,
    DENSE_MAX_PARAMETERS as DENSE_MAX_PARAMETERS,
    has_separable_curvature as has_separable_curvature,
    register_solver as register_solver,
    SEPARABLE_MAX_PARAMETERS as SEPARABLE_MAX_PARAMETERS,
    SEPARABLE_MIN_PARAMETERS as SEPARABLE_MIN_PARAMETERS,
    SOLVE_OPTIONS as SOLVE_OPTIONS,
    SolveOptions as SolveOptions,
    SOLVER_REGISTRY as SOLVER_REGISTRY,
    STOCK_SOLVERS as STOCK_SOLVERS,
)
from ._problem import (
    BATCH_SAVES_PER_STEP as BATCH_SAVES_PER_STEP,
    FlowProblem as FlowProblem,
    IntegratorOutput as IntegratorOutput,
    with_batch_saves_checked as with_batch_saves_checked,
    with_saves_checked as with_saves_checked,
)
from ._progress import with_elapsed_lines as with_elapsed_lines
from ._rodas import RODAS5P as RODAS5P, RodasGradientFlow as RodasGradientFlow, RodasTableau as RodasTableau
from ._rosenbrock import (
    GaussNewtonRosenbrock as GaussNewtonRosenbrock,
    ROS34PW2 as ROS34PW2,
    RosenbrockTableau as RosenbrockTableau,
    StageInterpolation as StageInterpolation,
)
from ._separable_rodas import SeparableRodas as SeparableRodas, unit_layout as unit_layout
from ._solve import (
    lower_flows as lower_flows,
    solve_flow as solve_flow,
    solve_flows as solve_flows,
    validate_flows as validate_flows,
)
from ._step_control import (
    default_atols as default_atols,
    DEFAULT_RTOL as DEFAULT_RTOL,
    ERROR_CONTROLS as ERROR_CONTROLS,
    RTOL_RANGE as RTOL_RANGE,
)
from ._term import AbstractSumOfSquaresTerm as AbstractSumOfSquaresTerm, GradientFlowTerm as GradientFlowTerm
