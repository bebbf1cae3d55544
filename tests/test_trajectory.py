"""Trajectory.save -> gflow.load_trajectory round trip."""

import dataclasses
import json
import os

import jax
import numpy as np
import pytest

import gflow
from gflow import analysis as an, GflowInputError, initializers


def test_round_trip(reference_flow, tmp_path):
    traj = reference_flow
    path = traj.save(str(tmp_path / "run"))
    assert sorted(os.listdir(path)) == ["arrays.npz", "meta.json", "model.json", "model.npz"]
    back = gflow.load_trajectory(path)

    np.testing.assert_array_equal(back.ts, traj.ts)
    np.testing.assert_array_equal(back.loss, traj.loss)
    np.testing.assert_array_equal(back.params, traj.params)
    assert set(back.diagnostics) == set(traj.diagnostics) == {"rho_bal", "Q"}
    for name in traj.diagnostics:
        np.testing.assert_array_equal(back.diagnostics[name], traj.diagnostics[name])
    assert back.status == traj.status == "completed"
    assert back.message == traj.message
    assert back.stats == traj.stats
    assert back.config == traj.config
    assert back.config["convention"] == "L" and back.convention == "L"

    # the final model comes back as the same kind of model with the same arrays and static fields
    assert type(back.final) is type(traj.final)
    assert back.final.structure == traj.final.structure
    assert back.final.parameterization == traj.final.parameterization
    for name in ("A", "B", "C"):
        np.testing.assert_array_equal(np.asarray(getattr(back.final, name)), np.asarray(getattr(traj.final, name)))
    np.testing.assert_array_equal(np.asarray(back.final.impulse_response(7)),
                                  np.asarray(traj.final.impulse_response(7)))
    # model_at works on the loaded trajectory
    np.testing.assert_allclose(float(an.balance_ratio(back.model_at(5))), traj.diagnostics["rho_bal"][5],
                               rtol=1e-14)

    with open(os.path.join(path, "meta.json")) as f:
        meta = json.load(f)
    assert meta["convention"] == "L"
    assert "jax" in meta["versions"] and "gflow" in meta["versions"]


def test_round_trip_keeps_half_convention_and_non_default_fields(tmp_path):
    """A trajectory built by hand: convention "half", another status and a symmetric final model."""
    final = initializers.balanced(jax.random.key(3), 3, scale=0.5, parameterization="triangular")
    traj = gflow.Trajectory(ts=np.array([0.0, 1.0]), loss=np.array([2.0, 1.0]),
                            diagnostics={"x": np.array([[1.0, 2.0], [3.0, 4.0]])},
                            params=np.zeros((2, 12)), final=final, stats={"steps": 3}, status="max_steps",
                            message="stopped", config={"convention": "half", "k": 4, "stop_loss": None})
    back = gflow.load_trajectory(traj.save(str(tmp_path / "half")))
    assert back.convention == "half"
    assert back.status == "max_steps" and back.message == "stopped"
    assert back.config == {"convention": "half", "k": 4, "stop_loss": None}
    np.testing.assert_array_equal(back.diagnostics["x"], traj.diagnostics["x"])
    assert back.final.parameterization == "triangular"
    np.testing.assert_array_equal(np.asarray(back.final.transition()), np.asarray(final.transition()))


def test_save_refuses_an_existing_folder_unless_overwrite(reference_flow, tmp_path):
    path = str(tmp_path / "again")
    reference_flow.save(path)
    with pytest.raises(GflowInputError, match=r"again.*already holds a saved trajectory.*overwrite=True"):
        reference_flow.save(path)
    shorter = dataclasses.replace(reference_flow, ts=reference_flow.ts[:3], loss=reference_flow.loss[:3],
                                  params=reference_flow.params[:3],
                                  diagnostics={k: v[:3] for k, v in reference_flow.diagnostics.items()})
    assert shorter.save(path, overwrite=True) == path
    assert sorted(os.listdir(tmp_path)) == ["again"]  # no temporary or replaced folders left behind
    np.testing.assert_array_equal(gflow.load_trajectory(path).ts, reference_flow.ts[:3])


def test_save_never_replaces_a_folder_that_is_not_a_trajectory(reference_flow, tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    for overwrite in (False, True):
        with pytest.raises(GflowInputError, match="not a saved trajectory folder"):
            reference_flow.save(str(tmp_path / "mine"), overwrite=overwrite)
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"
    (tmp_path / "empty").mkdir()  # an empty folder holds nothing to lose
    assert gflow.load_trajectory(reference_flow.save(str(tmp_path / "empty"))).status == reference_flow.status
