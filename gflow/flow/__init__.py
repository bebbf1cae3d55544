"""Gradient flow dθ/dt = −∇L(θ) as a stiff ODE: :func:`solve_flow` and its batched form :func:`solve_flows`, the
diffrax term, and gflow's Rosenbrock-W solver for sums of squares (DESIGN.md, integrators)."""

from ._rosenbrock import (
    GaussNewtonRosenbrock as GaussNewtonRosenbrock,
)
from ._rosenbrock import (
    ROS34PW2 as ROS34PW2,
)
from ._rosenbrock import (
    RosenbrockTableau as RosenbrockTableau,
)
from ._solve import (
    default_solver as default_solver,
)
from ._solve import (
    log_save_times as log_save_times,
)
from ._solve import (
    lower_flows as lower_flows,
)
from ._solve import (
    register_solver as register_solver,
)
from ._solve import (
    solve_flow as solve_flow,
)
from ._solve import (
    solve_flows as solve_flows,
)
from ._solve import (
    SOLVER_REGISTRY as SOLVER_REGISTRY,
)
from ._solve import (
    STOCK_SOLVERS as STOCK_SOLVERS,
)
from ._solve import (
    validate_flows as validate_flows,
)
from ._term import GradientFlowTerm as GradientFlowTerm
