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

The names below are the ones almost every script needs; everything else lives in its subpackage. ``import gflow``
loads what one :func:`solve_flow` needs; ``analysis``, ``discrete``, ``study``, ``sweep`` (and
:func:`run_sweep`) are imported on first use (``gflow.discrete`` brings optax, ``gflow.sweep`` the sweep
machinery), so that a notebook's first flow does not pay for them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from . import (
    _compilation_cache,
    _dtype,  # noqa: F401  (enables float64 before anything else touches JAX)
    flow as flow,
    models as models,
    objectives as objectives,
    results as results,
    run as run,
    stacking as stacking,
)
from ._checks import GflowInputError as GflowInputError
from .flow import solve_flow as solve_flow, solve_flows as solve_flows
from .models import flatten as flatten, initializers as initializers, LinearRNN as LinearRNN, unflatten as unflatten
from .objectives import PopulationLoss as PopulationLoss, teachers as teachers
from .results import FlowBatch as FlowBatch, load_trajectory as load_trajectory, Trajectory as Trajectory

if TYPE_CHECKING:  # imported on first use (module __getattr__ below); named here for type checkers and griffe
    from . import analysis as analysis, discrete as discrete, study as study, sweep as sweep
    from .sweep import run_sweep as run_sweep

__all__ = [
    "analysis", "COMPILATION_CACHE_DIR", "discrete", "flatten", "flow", "FlowBatch", "GflowInputError", "initializers",
    "LinearRNN", "load_trajectory", "models", "objectives", "PopulationLoss", "results", "run", "run_sweep",
    "solve_flow", "solve_flows", "stacking", "study", "sweep", "teachers", "Trajectory", "unflatten",
]

# name -> (module, attribute or None for the module itself), loaded by __getattr__ on first access
_LAZY = {
    "analysis": (".analysis", None),
    "discrete": (".discrete", None),
    "study": (".study", None),
    "sweep": (".sweep", None),
    "run_sweep": (".sweep", "run_sweep"),
}


def __getattr__(name: str):
    """The lazily imported subpackages and names of :data:`_LAZY` (PEP 562): imported, then cached as globals."""
    try:
        module, attribute = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'gflow' has no attribute {name!r}") from None
    value = importlib.import_module(module, __name__)
    if attribute is not None:
        value = getattr(value, attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


COMPILATION_CACHE_DIR: str | None = _compilation_cache.CACHE_DIR
"""The folder of JAX's persistent compilation cache that gflow set up (None when off); see the README."""

__version__ = "0.1.0"
