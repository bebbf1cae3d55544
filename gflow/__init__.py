"""gflow: gradient-flow simulation of the training dynamics of recurrent networks (float64 by default).

The subpackages follow the data path of docs/design.md ("Layers"), each knowing only those before it:

=================  =================================================================================
``models``         recurrent networks as equinox modules; ``flatten``/``unflatten``; ``initializers``
``objectives``     teachers, input sequences, population / empirical / sample losses (sums of squares)
``results``        :class:`Trajectory`, :class:`FlowBatch` and their files
``run``            what every run shares: its common options, their checks, progress lines, result assembly
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
    analysis as analysis,
    discrete as discrete,
    flow as flow,
    models as models,
    objectives as objectives,
    results as results,
    run as run,
    stacking as stacking,
    study as study,
    sweep as sweep,
)
from ._checks import GflowInputError as GflowInputError
from .flow import solve_flow as solve_flow, solve_flows as solve_flows
from .models import flatten as flatten, initializers as initializers, LinearRNN as LinearRNN, unflatten as unflatten
from .objectives import PopulationLoss as PopulationLoss, teachers as teachers
from .results import FlowBatch as FlowBatch, load_trajectory as load_trajectory, Trajectory as Trajectory
from .sweep import run_sweep as run_sweep

COMPILATION_CACHE_DIR: str | None = _compilation_cache.CACHE_DIR
"""The folder of JAX's persistent compilation cache that gflow set up (None when off); see the README."""

__version__ = "0.1.0"
