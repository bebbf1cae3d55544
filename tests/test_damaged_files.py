"""A damaged saved trajectory or model file is a GflowInputError that names the file and says what to do, never a
bare BadZipFile / JSONDecodeError (gflow.results' file readers); and a file that is intact but not the one saved
(a model copied in from another run, arrays from another folder) is found by the checks against meta.json."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil

import jax
import numpy as np
import pytest

import gflow
from gflow import GflowInputError, initializers
from gflow.results import load_model, save_model


@pytest.fixture
def saved(tmp_path):
    traj = gflow.Trajectory(ts=np.array([0.0, 1.0]), loss=np.array([2.0, 1.0]), diagnostics={},
                            params=np.zeros((2, 8)), final=initializers.gaussian(jax.random.key(0), 2, scale=0.5),
                            stats={"steps": 3}, status="completed", config={"convention": "L"})
    return traj.save(str(tmp_path / "run"))


def _truncate(path):
    data = open(path, "rb").read()
    with open(path, "wb") as f:
        f.write(data[: len(data) // 2])


@pytest.mark.parametrize("name,says", [
    ("arrays.npz", r"is not a valid \.npz \(zip\) file: it is truncated"),
    ("model.npz", r"is not a valid \.npz \(zip\) file: it is truncated"),
    ("meta.json", r"is damaged or truncated \(not valid JSON"),
    ("model.json", r"is damaged or truncated \(not valid JSON"),
])
def test_a_truncated_file_is_named(saved, name, says):
    path = os.path.join(saved, name)
    _truncate(path)
    with pytest.raises(GflowInputError, match=rf"{re.escape(path)} {says}.*re-run"):
        gflow.load_trajectory(saved)


def test_an_npz_with_a_corrupt_member_names_the_file(saved):
    path = os.path.join(saved, "arrays.npz")
    data = bytearray(open(path, "rb").read())
    data[60] ^= 0xFF  # inside the first member's compressed bytes: the zip directory is intact
    open(path, "wb").write(bytes(data))
    with pytest.raises(GflowInputError, match=rf"{re.escape(str(path))} is damaged.*re-run"):
        gflow.load_trajectory(saved)


def test_random_bytes_are_not_reported_as_pickled_objects(saved):
    path = os.path.join(saved, "arrays.npz")
    open(path, "wb").write(np.random.default_rng(0).bytes(500))
    with pytest.raises(GflowInputError, match=rf"{re.escape(str(path))} is not a valid \.npz \(zip\) file") as info:
        gflow.load_trajectory(saved)
    assert "pickled" not in str(info.value)


def test_load_model_names_a_broken_model_file(tmp_path):
    save_model(initializers.gaussian(jax.random.key(0), 2, scale=0.5), str(tmp_path))
    path = tmp_path / "model.json"
    path.write_text(path.read_text().replace('"array": "a0"', '"array": "a99"'))
    with pytest.raises(GflowInputError, match=rf"{re.escape(str(path))}: saved model refers to a missing array 'a99'"):
        load_model(str(tmp_path))
    _truncate(str(path))
    with pytest.raises(GflowInputError, match=rf"{re.escape(str(path))} is damaged or truncated"):
        load_model(str(tmp_path))


def test_a_missing_folder_is_named(tmp_path):
    with pytest.raises(GflowInputError, match=r"'.*nowhere' is not a folder"):
        gflow.load_trajectory(str(tmp_path / "nowhere"))
    with pytest.raises(GflowInputError, match=r"holds no saved model \(model.json and model.npz\)"):
        load_model(str(tmp_path))


# ---------------------------------------------------------------------------------------------------------------
# files that know what they hold: meta.json records the arrays' shapes, the model's parameter count and every file's
# SHA-256, and loading checks them

def _gd_run(d: int, seed: int, steps: int = 3):
    """A short GD run of a d-dimensional student (d = 3: 15 parameters, d = 8: 80) on a small teacher."""
    loss = gflow.PopulationLoss(gflow.teachers.balanced(jax.random.key(0), 2), 4)
    start = initializers.gaussian(jax.random.key(seed), d, scale=0.3)
    return gflow.discrete.run_gd(loss, start, lr=0.01, steps=steps, save_at=np.arange(steps + 1), progress=False)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Saved folders: d = 3, d = 8, another d = 8 start, and a d = 8 run with more saved rows."""
    root = tmp_path_factory.mktemp("runs")
    return {name: traj.save(str(root / name)) for name, traj in (
        ("d3", _gd_run(3, 1)), ("d8", _gd_run(8, 1)), ("d8_other", _gd_run(8, 2)), ("d8_longer", _gd_run(8, 1, 5)))}


@pytest.fixture
def copies(runs, tmp_path):
    """Fresh copies of the saved folders, to tamper with."""
    return {name: shutil.copytree(path, str(tmp_path / name)) for name, path in runs.items()}


def _copy(src_folder, dst_folder, *names):
    for name in names:
        shutil.copyfile(os.path.join(src_folder, name), os.path.join(dst_folder, name))


def _as_older_gflow(folder):
    """meta.json as gflow wrote it before it recorded shapes, n_params and checksums."""
    path = os.path.join(folder, "meta.json")
    meta = json.load(open(path))
    for name in ("shapes", "n_params", "files"):
        del meta[name]
    json.dump(meta, open(path, "w"))


def test_meta_records_what_the_folder_holds(runs):
    def file_sha256(path):
        return hashlib.sha256(open(path, "rb").read()).hexdigest()

    meta = json.load(open(os.path.join(runs["d8"], "meta.json")))
    assert meta["n_params"] == meta["config"]["n_params"] == 80
    assert meta["shapes"] == {"ts": [4], "loss": [4], "params": [4, 80], "diag__step": [4],
                              "diag__learning_rate": [4]}
    assert meta["files"] == {name: file_sha256(os.path.join(runs["d8"], name))
                             for name in ("arrays.npz", "model.json", "model.npz")}
    assert gflow.load_trajectory(runs["d8"]).final.A.shape == (8, 8)


@pytest.mark.parametrize("older", [False, True], ids=["recorded", "older folder"])
def test_a_model_copied_from_another_run_is_named(copies, older):
    """The d = 3 run's model copied into the d = 8 run's folder: loading names the model file and the parameter
    counts. A folder saved before the counts were recorded is caught by its run's config.n_params."""
    d8 = copies["d8"]
    if older:
        _as_older_gflow(d8)
        assert gflow.load_trajectory(d8).final.A.shape == (8, 8)  # an untouched older folder loads
    _copy(copies["d3"], d8, "model.json", "model.npz")
    what = "config.n_params" if older else "n_params"
    with pytest.raises(GflowInputError, match=rf"{re.escape(os.path.join(d8, 'model.json'))} and "
                                              rf"{re.escape(os.path.join(d8, 'model.npz'))} hold a model with 15 "
                                              rf"parameters, but .*meta.json records {what} = 80"):
        gflow.load_trajectory(d8)


def test_a_model_array_file_from_another_run_is_named(copies):
    d8 = copies["d8"]
    _copy(copies["d3"], d8, "model.npz")  # model.json of the d = 8 run, the d = 3 run's arrays
    with pytest.raises(GflowInputError, match=r"hold a model with 15 parameters, but .*records n_params = 80"):
        gflow.load_trajectory(d8)


def test_a_model_of_the_same_size_from_another_run_is_found_by_its_checksum(copies):
    d8 = copies["d8"]
    _copy(copies["d8_other"], d8, "model.npz")
    path = re.escape(os.path.join(d8, "model.npz"))
    with pytest.raises(GflowInputError, match=rf"{path} is not the file saved with this trajectory: its SHA-256 is "
                                              r"[0-9a-f]{12}…, meta.json records [0-9a-f]{12}…"):
        gflow.load_trajectory(d8)
    _as_older_gflow(d8)  # without recorded checksums nothing tells two d = 8 models apart (docs/file-formats.md)
    assert gflow.load_trajectory(d8).final.A.shape == (8, 8)


def test_arrays_from_another_run_are_named(copies):
    d8 = copies["d8"]
    _copy(copies["d8_longer"], d8, "arrays.npz")  # 6 saved rows where 4 were saved
    path = re.escape(os.path.join(d8, "arrays.npz"))
    with pytest.raises(GflowInputError, match=rf"{path} does not hold the arrays .*meta.json records \(.*loss: "
                                              r"shape \(6,\) where meta.json records shape \(4,\)"):
        gflow.load_trajectory(d8)
    _copy(copies["d8_other"], d8, "arrays.npz")  # the same shapes: its checksum differs
    with pytest.raises(GflowInputError, match=rf"{path} is not the file saved with this trajectory"):
        gflow.load_trajectory(d8)
    _copy(copies["d3"], d8, "arrays.npz")  # an older folder: the width of params against the model
    _as_older_gflow(d8)
    with pytest.raises(GflowInputError, match=rf"{path} holds params of shape \(4, 15\), but the model in .* has "
                                              r"80 parameters"):
        gflow.load_trajectory(d8)


def test_a_trajectory_whose_arrays_do_not_fit_its_model_is_not_saved(tmp_path):
    model = initializers.gaussian(jax.random.key(0), 2, scale=0.5)  # 8 parameters
    traj = gflow.Trajectory(ts=np.array([0.0, 1.0]), loss=np.array([2.0, 1.0]), diagnostics={},
                            params=np.zeros((2, 9)), final=model, stats={}, status="completed")
    with pytest.raises(GflowInputError, match=r"params have shape \(2, 9\), but its final model has 8 parameters"):
        traj.save(str(tmp_path / "a"))
    traj.params, traj.loss = np.zeros((2, 8)), np.array([1.0])
    with pytest.raises(GflowInputError, match=r"ts, loss and params hold 2, 1 and 2 saved rows"):
        traj.save(str(tmp_path / "b"))
    assert not os.listdir(tmp_path)  # nothing left behind
