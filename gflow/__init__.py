"""gflow: gradient-flow simulation of the training dynamics of recurrent networks (float64 by default).

The subpackages follow the data path of DESIGN.md, each knowing only those before it:

=================  =================================================================================
``models``         recurrent networks as equinox modules; ``flatten``/``unflatten``; ``initializers``
``objectives``     teachers, input sequences, population / empirical / sample losses (sums of squares)
``results``        :class:`Trajectory`, :class:`FlowBatch` and their files
``flow``           :func:`solve_flow`, :func:`solve_flows`: the gradient flow as a stiff ODE (diffrax)
``discrete``       GD, SGD, Adam and projected GD from the same start
``sweep``          resumable sweeps of many flows
``analysis``       pure functions of a model or a trajectory (never integrate, never plot)
``study``          the harness the scripts in ``studies/`` share
=================  =================================================================================

The names below are the ones almost every script needs; everything else lives in its subpackage.
"""

from . import (
    _compilation_cache,
    _dtype,  # noqa: F401  (enables float64 before anything else touches JAX)
)
from . import (
    analysis as analysis,
)
from . import (
    batching as batching,
)
from . import (
    discrete as discrete,
)
from . import (
    flow as flow,
)
from . import (
    models as models,
)
from . import (
    objectives as objectives,
)
from . import (
    results as results,
)
from . import (
    study as study,
)
from . import (
    sweep as sweep,
)
from ._checks import GflowInputError as GflowInputError
from .flow import solve_flow as solve_flow
from .flow import solve_flows as solve_flows
from .models import flatten as flatten
from .models import initializers as initializers
from .models import LinearRNN as LinearRNN
from .models import unflatten as unflatten
from .objectives import PopulationLoss as PopulationLoss
from .objectives import teachers as teachers
from .results import FlowBatch as FlowBatch
from .results import load_trajectory as load_trajectory
from .results import Trajectory as Trajectory
from .sweep import run_sweep as run_sweep

COMPILATION_CACHE_DIR: str | None = _compilation_cache.CACHE_DIR
"""The folder of JAX's persistent compilation cache that gflow set up (None when off); see the README."""

__version__ = "0.1.0"
