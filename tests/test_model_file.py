"""Models on disk without pickle (gflow.results.save_model, load_model): exact round trips for every model kind, and a
folder someone sent you can never run code when loaded."""

from __future__ import annotations

import json
import os
import pickle

import equinox as eqx
import jax
import numpy as np
import pytest

import gflow
from gflow import GflowInputError, initializers
from gflow.results import convert_legacy, load_model, save_model

key = jax.random.key

MODELS = {
    "linear general SISO": lambda: initializers.gaussian(key(0), 5, scale=0.3),
    "linear symmetric SISO": lambda: initializers.balanced(key(1), 4, scale=0.3, structure="symmetric"),
    "linear diagonal": lambda: initializers.gaussian(key(2), 4, scale=0.3, structure="diagonal"),
    "linear MIMO": lambda: initializers.gaussian(key(3), 4, scale=0.3, n_in=2, n_out=3),
    "elman allen-zhu-li (frozen A, B)": lambda: gflow.models.elman_allen_zhu_li(key(4), 6, 3),
    "elman panigrahi-goyal": lambda: gflow.models.elman_panigrahi_goyal(key(5), 6, 3),
    "elman cayci-eryilmaz (diagonal W)": lambda: gflow.models.elman_cayci_eryilmaz(key(6), 6, 3, alpha=0.5),
    "gru": lambda: gflow.models.gru(key(7), 3),
    "lstm": lambda: gflow.models.lstm(key(8), 3, n_in=2),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(MODELS))
def test_round_trip_is_exact(name, tmp_path):
    model = MODELS[name]()
    save_model(model, str(tmp_path))
    back = load_model(str(tmp_path))
    assert type(back) is type(model)
    assert bool(eqx.tree_equal(back, model)) is True  # same structure, static fields and bits
    leaves, back_leaves = jax.tree_util.tree_leaves(model), jax.tree_util.tree_leaves(back)
    assert [np.asarray(x).dtype for x in leaves] == [np.asarray(x).dtype for x in back_leaves]
    theta, _, _ = gflow.flatten(model)
    np.testing.assert_array_equal(gflow.flatten(back)[0], theta)


class _Planted:
    """Unpickling this object writes a marker file: a stand-in for any code a pickle can run."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _saved_trajectory(tmp_path):
    loss = gflow.PopulationLoss(gflow.teachers.balanced(key(0), 2), 4)
    traj = gflow.solve_flow(loss, initializers.gaussian(key(1), 3, scale=0.3), 1.0, save_at=4, progress=False)
    return traj, traj.save(str(tmp_path / "run"))


def test_a_planted_pickle_is_never_executed(tmp_path):
    traj, path = _saved_trajectory(tmp_path)
    marker = str(tmp_path / "pwned")
    # an attacker swaps the model for a pickle ...
    os.remove(os.path.join(path, "model.json"))
    with open(os.path.join(path, "model.pkl"), "wb") as f:
        pickle.dump(_Planted(marker), f)
    with pytest.raises(GflowInputError, match="convert_legacy"):
        gflow.load_trajectory(path)
    assert not os.path.exists(marker)
    # ... or hides an object array (stored with pickle) in the arrays
    save_model(traj.final, path)
    np.savez(os.path.join(path, "arrays.npz"), ts=np.array([_Planted(marker)], dtype=object))
    with pytest.raises(GflowInputError, match="pickled objects"):
        gflow.load_trajectory(path)
    assert not os.path.exists(marker)


def test_a_skeleton_naming_a_class_outside_gflow_is_refused(tmp_path):
    save_model(initializers.gaussian(key(0), 3, scale=0.3), str(tmp_path))
    path = tmp_path / "model.json"
    skeleton = json.loads(path.read_text())
    for name in ("os:system", "builtins:eval", "gflow.results._legacy:pickle.loads"):
        skeleton["tree"]["module"] = name
        path.write_text(json.dumps(skeleton))
        with pytest.raises(GflowInputError, match="refusing|does not have"):
            load_model(str(tmp_path))


def test_legacy_folders_convert_only_when_trusted(tmp_path):
    traj, path = _saved_trajectory(tmp_path)
    # the format gflow ≤ 0.1 wrote: the model pickled with numpy leaves
    os.remove(os.path.join(path, "model.json"))
    os.remove(os.path.join(path, "model.npz"))
    with open(os.path.join(path, "model.pkl"), "wb") as f:
        pickle.dump(jax.tree_util.tree_map(np.asarray, traj.final), f)
    with pytest.raises(GflowInputError, match="trust_pickle=True"):
        convert_legacy(path)
    assert convert_legacy(path, trust_pickle=True) == [os.path.join(path, "model.pkl")]
    assert not os.path.exists(os.path.join(path, "model.pkl"))
    back = gflow.load_trajectory(path)
    assert bool(eqx.tree_equal(back.final, traj.final)) is True
    np.testing.assert_array_equal(back.params, traj.params)
