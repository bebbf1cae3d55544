"""A sweep's runs as a pandas DataFrame and an xarray Dataset (gflow.sweep's tables)."""

from __future__ import annotations

import builtins

import jax
import numpy as np
import pandas as pd
import pytest
import xarray as xr

import gflow
from gflow import GflowInputError, initializers, teachers
from gflow.sweep import load_sweep, sweep_dataset, sweep_table

T1, SAVES = 10.0, 6
GRID = {"k": [3, 5], "seed": [0, 1], "status": ["x"]}  # a key named like a result column


def build(k, seed, status, scale=0.3):
    return (gflow.PopulationLoss(teachers.balanced(jax.random.key(0), 2), k),
            initializers.gaussian(jax.random.key(seed), 3, scale=scale))


def record(traj, config):
    return {"loss_over_k": np.asarray(traj.loss) / config["k"], "last_loss": np.asarray(traj.loss[-1]),
            "B": np.asarray(traj.final.B)}


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("sweep"))
    gflow.run_sweep(GRID, build, out, t1=T1, save_at=SAVES, record=record, progress=False)
    return out


def test_one_row_per_run_with_the_grid_keys_as_columns(out):
    runs = load_sweep(out)
    table = sweep_table(out)
    assert isinstance(table, pd.DataFrame) and len(table) == 4
    assert list(table.columns) == ["k", "seed", "config_status", "scale", "name", "status", "final_loss", "t_final",
                                   "steps", "wall_time_s", "last_loss"]
    assert sorted(zip(table.k, table.seed)) == [(3, 0), (3, 1), (5, 0), (5, 1)]
    assert set(table.config_status) == {"x"} and set(table.status) == {"completed"}
    for row, run in zip(table.itertuples(), runs):
        assert row.name == run.name and row.final_loss == run.loss[-1] == row.last_loss
        assert row.steps == run.stats["steps"] > 0 and row.t_final == T1
    pd.testing.assert_frame_equal(sweep_table(runs), table)  # the runs themselves, or their folder


def test_the_dataset_holds_saved_times_by_runs(out):
    runs = load_sweep(out)
    data = sweep_dataset(out)
    assert isinstance(data, xr.Dataset)
    assert data.loss.dims == data.t.dims == data.loss_over_k.dims == ("run", "save")
    assert data.loss.shape == (4, SAVES) and data.B.dims == ("run", "B_dim0") and data.last_loss.dims == ("run",)
    assert list(data.run.values) == [run.name for run in runs]
    for i, run in enumerate(runs):
        np.testing.assert_array_equal(data.loss[i], run.loss)
        np.testing.assert_array_equal(data.loss_over_k[i], run.loss / run.config["k"])
    np.testing.assert_array_equal(data.k.values, [run.config["k"] for run in runs])
    assert float(data.loss.where(data.k == 5).isel(save=-1).max()) == max(r.loss[-1] for r in runs if r.config["k"] == 5)


def test_runs_that_stopped_early_are_padded_with_nan(out):
    runs = load_sweep(out)
    short = runs[0]
    short.arrays = {**short.arrays, "ts": short.ts[:3], "loss": short.loss[:3]}
    short.record = {**short.record, "loss_over_k": short.record["loss_over_k"][:3]}
    data = sweep_dataset(runs)
    assert np.isnan(data.loss[0, 3:]).all() and np.isnan(data.loss_over_k[0, 3:]).all()
    np.testing.assert_array_equal(data.loss[1], runs[1].loss)


def test_bad_input_and_a_missing_extra(out, monkeypatch):
    with pytest.raises(GflowInputError, match="`runs` must be a sweep folder"):
        sweep_table([1, 2])
    real_import = builtins.__import__

    def without_pandas(name, *args, **kwargs):
        if name == "pandas":
            raise ImportError("No module named 'pandas'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", without_pandas)
    with pytest.raises(ImportError, match=r'sweep tables need pandas.*pip install -c constraints.txt -e "\.\[tables\]"'):
        sweep_table(out)
