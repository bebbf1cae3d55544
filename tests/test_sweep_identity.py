"""A sweep knows what it computed: a run's identity covers what ``build`` reads besides its arguments (module globals,
closure variables, by value; an unhashable one refused until ``params`` names it), ``load_sweep`` and the tables
return the folder's current grid (its history on request), and run files are checked against their run.json."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys

import jax
import numpy as np
import pytest

import gflow
from gflow import GflowInputError, initializers, teachers
from gflow.sweep import inputs_digest, load_sweep, sweep_table

TEACHER_SEED = 0  # a script option that build reads as a module global
STEPS = 4


def build(seed, d=3):
    teacher = teachers.balanced(jax.random.key(TEACHER_SEED), 2)
    return gflow.PopulationLoss(teacher, 3), initializers.gaussian(jax.random.key(seed), d, scale=0.3)


def sweep(out, grid=None, build_fn=build, **kwargs):
    kwargs.setdefault("progress", False)
    return gflow.run_sweep(grid or {"seed": [0, 1]}, build_fn, str(out), method="gd", lr=0.05, steps=STEPS,
                           save_at=STEPS + 1, **kwargs)


def losses(runs):
    return np.stack([r.loss for r in runs])


# ------------------------------------------------------------------------------------------------ identity
def test_a_changed_module_global_is_recomputed_not_reused(tmp_path, monkeypatch):
    first = sweep(tmp_path)
    assert all(r.computed for r in first)
    monkeypatch.setattr(sys.modules[__name__], "TEACHER_SEED", 1)  # the script rerun with another teacher seed
    second = sweep(tmp_path)
    assert all(r.computed for r in second)  # the old runs were not reused (gflow before this: all loaded)
    assert not np.array_equal(losses(first), losses(second))
    fresh = sweep(tmp_path / "fresh")  # what a fresh solve with teacher seed 1 gives
    np.testing.assert_array_equal(losses(second), losses(fresh))
    assert {r.name for r in second}.isdisjoint(r.name for r in first)  # the old runs keep their own folders
    monkeypatch.setattr(sys.modules[__name__], "TEACHER_SEED", 0)
    back = sweep(tmp_path)  # the first value again: its runs are found and reused
    assert not any(r.computed for r in back)
    np.testing.assert_array_equal(losses(back), losses(first))


def make_build(teacher_seed):
    def build_closure(seed, d=3):
        teacher = teachers.balanced(jax.random.key(teacher_seed), 2)
        return gflow.PopulationLoss(teacher, 3), initializers.gaussian(jax.random.key(seed), d, scale=0.3)

    return build_closure


def test_a_changed_closure_variable_is_recomputed(tmp_path):
    first = sweep(tmp_path, build_fn=make_build(0))
    second = sweep(tmp_path, build_fn=make_build(1))
    assert all(r.computed for r in second) and not np.array_equal(losses(first), losses(second))
    assert not any(r.computed for r in sweep(tmp_path, build_fn=make_build(1)))


class Settings:  # an object gflow cannot hash: not a pytree, not a dataclass
    def __init__(self, teacher_seed):
        self.teacher_seed = teacher_seed


SETTINGS = Settings(0)


def build_from_settings(seed, d=3):
    teacher = teachers.balanced(jax.random.key(SETTINGS.teacher_seed), 2)
    return gflow.PopulationLoss(teacher, 3), initializers.gaussian(jax.random.key(seed), d, scale=0.3)


def test_an_unhashable_dependency_is_refused_until_params_names_it(tmp_path, monkeypatch):
    with pytest.raises(GflowInputError, match=r"global `SETTINGS` of `build` \(a .*Settings object, which gflow "
                                              r"cannot hash\).*run_sweep\(\.\.\., params=\{'SETTINGS': ") as error:
        sweep(tmp_path, build_fn=build_from_settings)
    assert "would reuse them" in str(error.value)
    assert not os.path.exists(tmp_path / "runs")  # refused before any work
    first = sweep(tmp_path, build_fn=build_from_settings, params={"SETTINGS": {"teacher_seed": 0}})
    assert all(r.computed for r in first) and first[0].params == {"SETTINGS": {"teacher_seed": 0}}
    assert not any(r.computed for r in sweep(tmp_path, build_fn=build_from_settings,
                                             params={"SETTINGS": {"teacher_seed": 0}}))
    monkeypatch.setattr(SETTINGS, "teacher_seed", 1)
    second = sweep(tmp_path, build_fn=build_from_settings, params={"SETTINGS": {"teacher_seed": 1}})
    assert all(r.computed for r in second) and not np.array_equal(losses(first), losses(second))
    with pytest.raises(GflowInputError, match="`params` must be a dict"):
        sweep(tmp_path, params=[1])
    with pytest.raises(GflowInputError, match="params values must be JSON"):
        sweep(tmp_path, params={"x": object()})


def test_an_unhashable_closure_variable_inside_a_helper_is_named(tmp_path):
    state = Settings(0)

    def helper():
        return state.teacher_seed

    def build_with_helper(seed, d=3):
        return build(seed, d) if helper() == 0 else None

    with pytest.raises(GflowInputError, match=r"closure variable `helper` of `build` \(the function "
                                              r".*helper`, which reads closure variable `state`.*params=\{'state': "):
        sweep(tmp_path, build_fn=build_with_helper)
    assert len(sweep(tmp_path, build_fn=build_with_helper, params={"state": 0})) == 2


GLOBAL_ARRAY = np.arange(6.0)
GLOBAL_SET = {"alpha", "beta", "gamma", "delta", "epsilon"}  # iterated in a per-process order


def reads_values(seed):
    return GLOBAL_ARRAY[seed] * len(GLOBAL_SET), sorted(GLOBAL_SET), [x for x in GLOBAL_SET]


def scale_of(seed):
    return float(GLOBAL_ARRAY[seed])


def calls_a_helper(seed):
    return scale_of(seed)


@jax.jit
def jitted_scale(x):
    return x * GLOBAL_ARRAY[1]


def calls_a_jitted_helper(seed):
    return jitted_scale(seed)


def test_wrapped_functions_and_library_closures_are_hashed_by_what_they_hold(monkeypatch):
    import optax

    digest, problems = inputs_digest({"build": calls_a_jitted_helper})
    assert digest is not None and problems == []  # jax.jit's wrapper: the function it wraps
    monkeypatch.setattr(sys.modules[__name__], "GLOBAL_ARRAY", np.arange(6.0) * 2)
    assert inputs_digest({"build": calls_a_jitted_helper})[0] != digest
    def reads(optimizer):
        return lambda seed: optimizer

    def digest_of(optimizer):
        return inputs_digest({"build": reads(optimizer)})[0]

    # library functions whose closures hold the learning rate: by their values, not by name alone
    assert digest_of(optax.sgd(0.1)) == digest_of(optax.sgd(0.1)) != digest_of(optax.sgd(0.2))


def test_inputs_digest_hashes_values_and_user_functions(monkeypatch):
    assert inputs_digest({"build": build})[0] is not None  # reads TEACHER_SEED
    assert inputs_digest({"build": lambda seed: (jax.numpy.zeros(seed), np.ones(2), gflow.PopulationLoss)}) == (
        None, [])  # modules and library code only: nothing to hash
    digest = inputs_digest({"build": reads_values})[0]
    monkeypatch.setattr(sys.modules[__name__], "GLOBAL_ARRAY", np.arange(6.0) + np.eye(6)[3] * 1e-12)
    assert inputs_digest({"build": reads_values})[0] != digest  # one element of an array
    helper = inputs_digest({"build": calls_a_helper})[0]
    monkeypatch.setattr(sys.modules[__name__], "GLOBAL_ARRAY", np.arange(6.0))
    assert inputs_digest({"build": calls_a_helper})[0] != helper  # what a user function it calls reads
    teacher = teachers.balanced(jax.random.key(0), 2)
    other = teachers.balanced(jax.random.key(1), 2)
    assert (inputs_digest({"build": lambda seed: teacher})[0] == inputs_digest({"build": lambda seed: teacher})[0]
            != inputs_digest({"build": lambda seed: other})[0])  # a pytree (an equinox module) by its leaves
    options = argparse.Namespace(teacher_seed=0, dtype=np.dtype("float64"))  # a script's parsed options
    assert inputs_digest({"build": lambda seed: options})[1] == []
    before = inputs_digest({"build": lambda seed: options})[0]
    options.teacher_seed = 1
    assert inputs_digest({"build": lambda seed: options})[0] != before
    assert inputs_digest({"build": lambda seed: jax.random.key(5)})[0] is None
    key = jax.random.key(5)
    assert inputs_digest({"build": lambda seed: key})[0] != inputs_digest({"build": lambda seed: jax.random.key(6)})[0]


def test_the_digest_is_the_same_in_every_process():
    """No Python hash(): a set of strings iterates in another order under another PYTHONHASHSEED, and the digest
    does not change."""
    here = os.path.dirname(os.path.abspath(__file__))
    code = (f"import sys; sys.path.insert(0, {here!r}); import test_sweep_identity as t; "
            "print(t.inputs_digest({'build': t.reads_values})[0]); print(list(t.GLOBAL_SET))")
    outs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300,
                           env={**os.environ, "PYTHONHASHSEED": seed, "JAX_PLATFORMS": "cpu"}).stdout.split("\n")
            for seed in ("1", "2")]
    assert outs[0][1] != outs[1][1]  # the control: the set's order differs between the two processes
    assert outs[0][0] == outs[1][0] == inputs_digest({"build": reads_values})[0]


# ------------------------------------------------------------------------------------------------ current grid
def test_load_sweep_and_tables_return_the_current_grid(tmp_path, capsys):
    sweep(tmp_path, grid={"seed": [0, 1]})
    sweep(tmp_path, grid={"seed": [2], "d": [3, 4]})
    third = sweep(tmp_path, grid={"seed": [1, 0]}, progress=True)  # reuses the first grid's runs
    assert not any(r.computed for r in third)
    out = capsys.readouterr().out
    assert f"sweep: 2 runs in {tmp_path} are outside this grid; gflow.sweep.load_sweep('{tmp_path}', " \
           "history=True) shows them" in out
    current = load_sweep(str(tmp_path))
    assert [r.config["seed"] for r in current] == [1, 0]  # in grid order (gflow before this: all 4, by name)
    assert [r.name for r in current] == [r.name for r in third]
    assert len(load_sweep(str(tmp_path), history=True)) == 4
    assert list(sweep_table(str(tmp_path)).seed) == [1, 0]
    assert sorted(sweep_table(str(tmp_path), history=True).seed) == [0, 1, 2, 2]
    assert len(gflow.sweep.sweep_dataset(str(tmp_path), history=True).run) == 4
    with pytest.raises(GflowInputError, match="pass the folder"):
        sweep_table(current, history=True)
    os.remove(tmp_path / "sweep.json")  # a folder written before gflow recorded its grid: every run
    assert len(load_sweep(str(tmp_path))) == 4
    sweep(tmp_path, grid={"seed": [0]}, progress=True)
    assert "3 runs in" in capsys.readouterr().out


def test_params_are_table_columns(tmp_path):
    sweep(tmp_path, params={"teacher": "balanced", "seed": 7})
    table = sweep_table(str(tmp_path))
    assert list(table.columns[:4]) == ["seed", "d", "teacher", "params_seed"]
    assert set(table.teacher) == {"balanced"} and set(table.params_seed) == {7}


# ------------------------------------------------------------------------------------------------ damaged files
def test_a_swapped_model_file_is_named(tmp_path):
    """A d = 3 run's final model copied into a d = 4 run's folder: loading names the file, the sweep recomputes
    the run and says which file differed (gflow before this: load_sweep dropped the run without a word)."""
    runs = sweep(tmp_path, grid={"seed": [0], "d": [3, 4]})
    small, large = runs
    for suffix in ("json", "npz"):
        shutil.copy(os.path.join(small.path, f"final.{suffix}"), os.path.join(large.path, f"final.{suffix}"))
    with pytest.raises(GflowInputError, match=rf"sweep run {large.name}: .*{large.name}/final\.(json|npz) does not "
                                              r"match the SHA-256 its run.json records.*rerun the sweep"):
        load_sweep(str(tmp_path))
    with pytest.raises(GflowInputError, match=r"final\.(json|npz) does not match the SHA-256"):
        _ = large.final  # a run loaded earlier: its model is checked when read
    again = sweep(tmp_path, grid={"seed": [0], "d": [3, 4]})
    assert [r.computed for r in again] == [False, True]
    assert again[1].recomputed_because.startswith("incomplete or corrupt (final.")
    assert again[1].final.A.shape == (4, 4)


def test_recorded_shapes_and_parameter_count_are_checked(tmp_path):
    (run,) = sweep(tmp_path, grid={"seed": [0]})
    meta_path = os.path.join(run.path, "run.json")
    meta = json.load(open(meta_path))
    assert meta["n_params"] == run.arrays["final_params"].size and meta["shapes"]["loss"] == [STEPS + 1]
    meta["n_params"] += 1
    json.dump(meta, open(meta_path, "w"))
    with pytest.raises(GflowInputError, match=rf"{run.name}/arrays\.npz holds {meta['n_params'] - 1} final "
                                              rf"parameters, its run.json records {meta['n_params']}"):
        load_sweep(str(tmp_path))
    meta["n_params"] -= 1
    meta["shapes"]["loss"] = [STEPS]
    json.dump(meta, open(meta_path, "w"))
    with pytest.raises(GflowInputError, match=rf"arrays\.npz holds loss of shape \({STEPS + 1},\), its run.json "
                                              rf"records \({STEPS},\)"):
        load_sweep(str(tmp_path))
    open(meta_path, "w").write("{")
    with pytest.raises(GflowInputError, match=r"run\.json is damaged"):
        load_sweep(str(tmp_path))


def test_a_changed_trajectory_file_is_named(tmp_path):
    (run,) = sweep(tmp_path, grid={"seed": [0]}, keep_trajectory=True)
    assert run.trajectory().loss.shape == (STEPS + 1,)
    path = os.path.join(run.path, "trajectory", "arrays.npz")
    with open(path, "ab") as f:
        f.write(b"junk")
    with pytest.raises(GflowInputError, match=rf"{run.name}/trajectory/arrays\.npz does not match the SHA-256"):
        run.trajectory()
    os.remove(path)
    with pytest.raises(GflowInputError, match=rf"{run.name}/trajectory/arrays\.npz is missing"):
        run.trajectory()
