"""The plain-text notebooks in notebooks/ run end to end on a small trajectory and write their figures."""

import os
import runpy

import jax
import matplotlib
import numpy as np
import pytest

import gflow
from gflow import analysis, initializers, teachers

NOTEBOOKS = os.path.join(os.path.dirname(__file__), "..", "notebooks")


@pytest.fixture(autouse=True)
def _headless(monkeypatch):
    matplotlib.use("Agg")


def test_trajectory_notebook(tmp_path, monkeypatch):
    loss = gflow.PopulationLoss(teachers.balanced(jax.random.key(0), 2), 5)
    model0 = initializers.gaussian(jax.random.key(1), 4, scale=1e-2)
    traj = gflow.solve_flow(loss, model0, 30.0, save_at=12, progress=False,
                            diagnostics={"rho_bal": analysis.balance_ratio})
    traj.save(str(tmp_path / "run"))
    monkeypatch.setenv("GFLOW_TRAJECTORY", str(tmp_path / "run"))
    monkeypatch.setenv("GFLOW_TEACHER_DIM", "2")  # the teacher of this run, for the impulse-response overlay
    monkeypatch.setenv("GFLOW_NOTEBOOK_OUT", str(tmp_path))
    ns = runpy.run_path(os.path.join(NOTEBOOKS, "trajectory.py"))
    assert ns["eigenvalues"].shape == (12, 4)
    np.testing.assert_allclose(ns["rho"], traj.diagnostics["rho_bal"])
    assert ns["teacher"].A.shape == (2,)
    for name in ("loss_and_balance.png", "eigenvalues.png", "impulse_responses.png"):
        assert (tmp_path / name).stat().st_size > 1000


@pytest.mark.slow
def test_extrapolation_notebook_quick(tmp_path, monkeypatch):
    monkeypatch.setenv("GFLOW_NOTEBOOK_QUICK", "1")
    monkeypatch.setenv("GFLOW_NOTEBOOK_OUT", str(tmp_path))
    ns = runpy.run_path(os.path.join(NOTEBOOKS, "extrapolation.py"))
    errors, ks = ns["errors"], ns["ks"]
    assert len(errors) == len(ks) and np.all(np.isfinite(errors))
    assert all(tr.status == "completed" for tr in ns["trajs"])
    for name in ("extrapolation_vs_k.png", "losses_and_impulse_responses.png"):
        assert (tmp_path / name).stat().st_size > 1000
