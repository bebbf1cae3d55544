"""A sweep's runs as tables: one row per run in a pandas DataFrame, the saved times × runs in an xarray Dataset.

Both take what :func:`gflow.sweep.run_sweep` or :func:`gflow.sweep.load_sweep` returned, or the sweep's folder (its
current grid: the last ``run_sweep`` call's runs; ``history=True`` for every run the folder holds)::

    table = sweep_table("out/sweep")            # columns: the configuration, status, final_loss, steps, ...
    table.groupby("k").final_loss.median()
    data = sweep_dataset("out/sweep")            # loss, t and every recorded array over (run, save)
    data.loss.where(data.k == 8)

pandas and xarray are an optional extra (``pip install -c constraints.txt -e ".[tables]"`` in the checkout), imported only when a table is asked for.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from .._checks import GflowInputError
from ._run_files import SweepRun
from ._sweep import load_sweep

RESULT_COLUMNS = ("name", "status", "final_loss", "t_final", "steps", "wall_time_s")


def _require(module: str):
    try:
        return __import__(module)
    except ImportError:
        raise ImportError(f"sweep tables need {module}, which gflow does not install by default: "
                          'pip install -c constraints.txt -e ".[tables]" (in the gflow checkout)') from None


def _runs(runs, history: bool = False) -> list[SweepRun]:
    if isinstance(runs, (str, os.PathLike)):
        return load_sweep(runs, history=history)
    if isinstance(runs, Sequence) and all(isinstance(r, SweepRun) for r in runs):
        if history:
            raise GflowInputError("`history=True` reads every run of a sweep's folder: pass the folder, not runs")
        return list(runs)
    raise GflowInputError("`runs` must be a sweep folder or the list of runs that run_sweep or load_sweep returned, "
                          f"got {type(runs).__name__}")


def _cell(value):
    """A configuration value as a table cell: lists (and nested lists) become tuples, so columns stay hashable."""
    return tuple(_cell(v) for v in value) if isinstance(value, (list, tuple)) else value


def _column(key: str) -> str:
    """The column of configuration key ``key``: a key named like a result column gets a ``config_`` prefix."""
    return f"config_{key}" if key in RESULT_COLUMNS else key


def _results(run: SweepRun) -> dict:
    loss, ts = np.asarray(run.loss), np.asarray(run.ts)
    return {"name": run.name, "status": run.status, "final_loss": float(loss[-1]) if loss.size else np.nan,
            "t_final": float(ts[-1]) if ts.size else np.nan, "steps": run.stats.get("steps"),
            "wall_time_s": run.stats.get("wall_time_s")}


def _scalar_records(run: SweepRun) -> dict:
    return {k: np.asarray(v).item() for k, v in run.record.items() if np.ndim(v) == 0}


def sweep_table(runs, history: bool = False):
    """A pandas DataFrame with one row per run: the run's configuration (one column per key; a key named like a
    result column gets a ``config_`` prefix), the sweep's ``params`` (one column per key, after the configuration;
    a key named like a configuration key or result column gets a ``params_`` prefix), then ``name``, ``status``,
    ``final_loss`` (the last saved loss), ``t_final``, ``steps``, ``wall_time_s`` (of the batch that computed it),
    and every scalar the sweep's ``record`` returned.

    Args:
        runs: The runs (:func:`gflow.run_sweep`'s result) or the sweep's folder: then the runs of its current grid
            (the last :func:`gflow.run_sweep` call on it, :func:`gflow.sweep.load_sweep`).
        history: With a folder, every run it holds (any grid, any ``params``) instead of the current grid's.

    Returns:
        The ``pandas.DataFrame``.
    """
    pd = _require("pandas")
    runs = _runs(runs, history)
    keys = list(dict.fromkeys(k for run in runs for k in run.config))  # in first-seen order
    taken = {_column(k) for k in keys} | set(RESULT_COLUMNS)
    params = {k: (f"params_{k}" if k in taken else k) for run in runs for k in run.params}
    records = [_scalar_records(run) for run in runs]
    rows = [{**{_column(k): _cell(run.config.get(k)) for k in keys},
             **{column: _cell(run.params.get(k)) for k, column in params.items()}, **_results(run), **record}
            for run, record in zip(runs, records)]
    return pd.DataFrame(rows, columns=[_column(k) for k in keys] + list(params.values()) + list(RESULT_COLUMNS) +
                        list(dict.fromkeys(k for record in records for k in record)))


def _padded(arrays: list[np.ndarray]) -> np.ndarray:
    """The arrays stacked along a new first axis, NaN-padded to their largest shape (a run stopped early saved
    fewer times)."""
    shape = tuple(max(s) for s in zip(*(a.shape for a in arrays)))
    if all(a.shape == shape for a in arrays):
        return np.stack(arrays)
    out = np.full((len(arrays), *shape), np.nan)
    for i, a in enumerate(arrays):
        out[(i, *(slice(0, n) for n in a.shape))] = a
    return out


def _record_dims(name: str, arrays: list[np.ndarray], runs: list[SweepRun]) -> tuple[str, ...]:
    """Dimension names of a recorded array: ``save`` first when every run has one value per saved time."""
    per_save = all(a.ndim >= 1 and a.shape[0] == len(run.ts) for a, run in zip(arrays, runs))
    rest = range(1 if per_save else 0, arrays[0].ndim)
    return ("run",) + (("save",) if per_save else ()) + tuple(f"{name}_dim{i}" for i in rest)


def sweep_dataset(runs, history: bool = False):
    """An xarray Dataset over (``run``, ``save``): ``t`` and ``loss`` at each run's saved times (NaN after a run
    that stopped early), every array the sweep's ``record`` returned (``save`` as its first dimension when it
    has one value per saved time), the configuration keys and the result columns of :func:`sweep_table` as
    coordinates along ``run``, which is indexed by the run names.

    Args:
        runs: The runs (:func:`gflow.run_sweep`'s result) or the sweep's folder: then the runs of its current grid
            (the last :func:`gflow.run_sweep` call on it, :func:`gflow.sweep.load_sweep`).
        history: With a folder, every run it holds (any grid, any ``params``) instead of the current grid's.

    Returns:
        The ``xarray.Dataset``.
    """
    xr = _require("xarray")
    runs = _runs(runs, history)
    if not runs:
        raise GflowInputError("the sweep holds no finished runs: nothing to put in a dataset")
    data = {"t": (("run", "save"), _padded([np.asarray(run.ts, dtype=np.float64) for run in runs])),
            "loss": (("run", "save"), _padded([np.asarray(run.loss, dtype=np.float64) for run in runs]))}
    for name in dict.fromkeys(k for run in runs for k in run.record):
        if not all(name in run.record for run in runs):
            raise GflowInputError(f"recorded array {name!r} is missing from some runs: a dataset needs it in all")
        arrays = [np.asarray(run.record[name]) for run in runs]
        data[name] = (_record_dims(name, arrays, runs), _padded(arrays))
    table = sweep_table(runs)
    coords = {column: ("run", table[column].to_numpy()) for column in table.columns
              if column not in data and column != "name"}
    coords["run"] = table["name"].to_numpy()
    return xr.Dataset(data, coords=coords)
