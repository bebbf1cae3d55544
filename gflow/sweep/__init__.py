"""Resumable sweeps of many flows over a grid of configurations, one folder per run."""

from ._sweep import expand_grid as expand_grid
from ._sweep import load_sweep as load_sweep
from ._sweep import run_sweep as run_sweep
from ._sweep import SweepRun as SweepRun
