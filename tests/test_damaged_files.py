"""A damaged saved trajectory or model file is a GflowInputError that names the file and says what to do, never a
bare BadZipFile / JSONDecodeError (gflow.results' file readers)."""

from __future__ import annotations

import os
import re

import jax
import numpy as np
import pytest

import gflow
from gflow import GflowInputError, initializers
from gflow.results import load_model, save_model


@pytest.fixture
def saved(tmp_path):
    traj = gflow.Trajectory(ts=np.array([0.0, 1.0]), loss=np.array([2.0, 1.0]), diagnostics={},
                            params=np.zeros((2, 9)), final=initializers.gaussian(jax.random.key(0), 2, scale=0.5),
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
