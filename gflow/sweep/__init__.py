"""Resumable sweeps of many flows over a grid of configurations, one folder per run."""

from ._sweep import expand_grid as expand_grid, load_sweep as load_sweep, run_sweep as run_sweep, SweepRun as SweepRun
