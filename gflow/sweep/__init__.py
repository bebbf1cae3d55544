"""Resumable sweeps of many flows over a grid of configurations, one folder per run."""

from ._dask import dask_executor as dask_executor
from ._grid import expand_grid as expand_grid
from ._identity import inputs_digest as inputs_digest
from ._run_files import SweepRun as SweepRun
from ._sweep import load_sweep as load_sweep, run_sweep as run_sweep
from ._tables import sweep_dataset as sweep_dataset, sweep_table as sweep_table
