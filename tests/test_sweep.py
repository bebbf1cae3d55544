"""gflow.sweep: grid expansion, batching by shape, atomic run folders, resuming, bad input."""

import json
import os
import re
import shutil
import socket
import subprocess
import sys

import diffrax
import jax
import numpy as np
import pytest

import gflow
from gflow import initializers, teachers

T1, SAVES = 10.0, 25
GRID = {"k": [3, 5], "seed": [0, 1]}


def build(k, seed, scale=0.3):
    """A small problem: balanced teacher d̂ = 3, general student d = 4."""
    teacher = teachers.balanced(jax.random.key(0), 3)
    return gflow.PopulationLoss(teacher, k), initializers.gaussian(jax.random.key(seed), 4, scale=scale)


def final_loss(traj, config):
    return {"final_loss": np.asarray(traj.loss[-1]), "k_times_two": np.asarray(2 * config["k"])}


def sweep(out, **kwargs):
    kwargs.setdefault("save_at", SAVES)
    kwargs.setdefault("progress", False)
    return gflow.run_sweep(kwargs.pop("grid", GRID), build, str(out), t1=T1, **kwargs)


@pytest.fixture
def count_flows(monkeypatch):
    """Counts the flows the sweep integrates (and the solve_flows calls)."""
    counts = {"flows": 0, "calls": 0}
    real = gflow.flow.solve_flows

    def counting(losses, models0, *args, **kwargs):
        counts["flows"] += gflow.stacking.batch_length(losses)
        counts["calls"] += 1
        return real(losses, models0, *args, **kwargs)

    monkeypatch.setattr(gflow.flow, "solve_flows", counting)
    return counts


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The uninterrupted sweep, batched (all four flows in one call)."""
    return sweep(tmp_path_factory.mktemp("reference"), record=final_loss)


# ------------------------------------------------------------------------------------------------ grid


def test_expand_grid_product_order_and_fixed_values():
    configs = gflow.sweep.expand_grid({"k": [4, 8], "seed": (0, 1, 2), "scale": 1e-3})
    assert len(configs) == 6
    assert configs[0] == {"k": 4, "seed": 0, "scale": 1e-3}
    assert configs[1] == {"k": 4, "seed": 1, "scale": 1e-3}
    assert configs[-1] == {"k": 8, "seed": 2, "scale": 1e-3}


def test_expand_grid_union_duplicates_and_list_values():
    configs = gflow.sweep.expand_grid([{"k": [4, 8], "seed": 0}, {"k": 8, "seed": 0}, {"k": 9, "seed": 1}])
    assert configs == [{"k": 4, "seed": 0}, {"k": 8, "seed": 0}, {"k": 9, "seed": 1}]
    configs = gflow.sweep.expand_grid({"levels": [[1e-4, 1e-8]], "k": [1, 2]})
    assert configs == [{"levels": [1e-4, 1e-8], "k": 1}, {"levels": [1e-4, 1e-8], "k": 2}]


@pytest.mark.parametrize("grid, match", [
    ({}, "empty"),
    ([], "empty"),
    ({"k": []}, "axis 'k' is empty"),
    ({"not a name": [1]}, "identifier"),
    ("k=4", "dict"),
    ([{"k": 1}, 3], "entry 1"),
    ({"k": [object()]}, "JSON"),
    ({"k": [float("nan")]}, "JSON"),
])
def test_expand_grid_bad_input(grid, match):
    with pytest.raises(gflow.GflowInputError, match=match):
        gflow.sweep.expand_grid(grid)


def test_run_sweep_bad_input(tmp_path):
    with pytest.raises(gflow.GflowInputError, match="empty"):
        sweep(tmp_path, grid={})
    with pytest.raises(gflow.GflowInputError, match=r"unknown grid key\(s\) \['kk'\].*accepts \['k', 'seed', 'scale'\]"):
        sweep(tmp_path, grid={"kk": [3], "seed": [0]})
    with pytest.raises(gflow.GflowInputError, match="does not fit"):
        sweep(tmp_path, grid={"k": [3]})  # seed has no default
    with pytest.raises(gflow.GflowInputError, match=r"unknown solve option\(s\) \['rtoll'\]"):
        sweep(tmp_path, rtoll=1e-6)
    with pytest.raises(gflow.GflowInputError, match="batch_size"):
        sweep(tmp_path, batch_size=0)
    with pytest.raises(gflow.GflowInputError, match="build"):
        gflow.run_sweep(GRID, "not callable", str(tmp_path), t1=T1)
    with pytest.raises(gflow.GflowInputError, match="record"):
        sweep(tmp_path, record=42)
    with pytest.raises(gflow.GflowInputError, match=r"\(loss, model0\)"):
        gflow.run_sweep({"x": [1]}, lambda x: 42, str(tmp_path), t1=T1, progress=False)
    with pytest.raises(gflow.GflowInputError, match="no sweep"):
        gflow.sweep.load_sweep(str(tmp_path / "nothing"))


# ------------------------------------------------------------------------------------------------ runs


@pytest.mark.slow
def test_sweep_runs_and_records(reference):
    assert [r.config for r in reference] == [{"k": k, "seed": s, "scale": 0.3} for k in (3, 5) for s in (0, 1)]
    for run in reference:
        assert run.computed and run.status == "completed"
        assert run.ts.shape == run.loss.shape == (SAVES,)
        assert run.record["final_loss"] == run.loss[-1]
        assert int(run.record["k_times_two"]) == 2 * run.config["k"]
        assert run.loss[-1] < 0.1 * run.loss[0]
        assert os.path.basename(run.path).startswith(f"k={run.config['k']}_seed={run.config['seed']}_scale=0.3-")
        # the final model is stored and is what the flow produced (its loss at the run's own k)
        _, model0 = build(**run.config)
        loss = gflow.PopulationLoss(teachers.balanced(jax.random.key(0), 3), run.config["k"])
        assert float(loss(run.final)) == pytest.approx(run.loss[-1], rel=1e-10, abs=1e-300)
        assert type(run.final) is type(model0)
        with open(os.path.join(run.path, "run.json")) as f:
            meta = json.load(f)
        assert meta["identity"]["solve"]["t1"] == T1 and meta["flow_config"]["k"] == run.config["k"]


def test_one_shape_group_padded_into_one_batch(tmp_path, count_flows, reference):
    runs = sweep(tmp_path, record=final_loss)
    assert count_flows == {"flows": 4, "calls": 1}  # k = 3 and k = 5 padded to one shape
    for a, b in zip(runs, reference):
        np.testing.assert_array_equal(a.arrays["final_params"], b.arrays["final_params"])


@pytest.mark.slow
def test_batched_equals_one_by_one(tmp_path, count_flows, reference):
    runs = sweep(tmp_path, batch_size=1, record=final_loss)
    assert count_flows == {"flows": 4, "calls": 4}
    for a, b in zip(runs, reference):
        np.testing.assert_allclose(a.arrays["final_params"], b.arrays["final_params"], rtol=1e-10, atol=1e-13)
        np.testing.assert_allclose(a.loss, b.loss, rtol=1e-9, atol=1e-15)
        np.testing.assert_array_equal(a.ts, b.ts)


def test_resume_after_interruption(tmp_path, count_flows, reference):
    done = []

    def interrupt_after_two(run):
        done.append(run.name)
        if len(done) == 2:
            raise KeyboardInterrupt("simulated interruption")

    with pytest.raises(KeyboardInterrupt) as interrupted:
        sweep(tmp_path, batch_size=1, record=final_loss, on_run_done=interrupt_after_two)
    # one line that says what is kept and what to do, without the frames of the solve it stopped, and the lock freed
    assert str(interrupted.value) == (f"interrupted: 2 of 4 runs kept in {tmp_path}, rerun the same call to resume")
    assert interrupted.value.__suppress_context__ and not (tmp_path / "sweep.lock").exists()
    assert count_flows["flows"] == 2
    assert len(gflow.sweep.load_sweep(str(tmp_path))) == 2
    # a writer killed after writing its run.json but before the rename leaves a complete temporary folder: not a run
    first = gflow.sweep.load_sweep(str(tmp_path))[0]
    shutil.copytree(first.path, os.path.join(os.path.dirname(first.path), f".tmp-999999@host~{first.name}"))
    assert len(gflow.sweep.load_sweep(str(tmp_path))) == 2

    seen = []
    runs = sweep(tmp_path, batch_size=1, record=final_loss, on_run_done=lambda r: seen.append(r.name))
    assert count_flows["flows"] == 4  # only the two missing runs were integrated
    assert len(seen) == 2 and not set(seen) & set(done)
    assert [r.computed for r in runs] == [False, False, True, True]
    for a, b in zip(runs, reference):
        np.testing.assert_allclose(a.arrays["final_params"], b.arrays["final_params"], rtol=1e-10, atol=1e-13)
        assert a.record["final_loss"] == pytest.approx(float(b.record["final_loss"]), rel=1e-9)

    again = sweep(tmp_path, batch_size=1, record=final_loss)  # everything on disk: nothing to do
    assert count_flows["flows"] == 4 and not any(r.computed for r in again)


def test_corrupt_and_partial_runs_are_recomputed(tmp_path, count_flows):
    first = sweep(tmp_path, record=final_loss)
    assert count_flows["flows"] == 4
    with open(os.path.join(first[0].path, "arrays.npz"), "r+b") as f:  # truncated arrays
        f.truncate(100)
    os.remove(os.path.join(first[1].path, "run.json"))  # killed before its metadata was written
    with open(os.path.join(first[2].path, "final.npz"), "ab") as f:  # a file changed after the run was written
        f.write(b"junk")
    stale = os.path.join(tmp_path, "runs", ".tmp-999999999-k=3_seed=0")  # a dead process's temporary folder
    os.makedirs(stale)
    remote = os.path.join(tmp_path, "runs", f".tmp-{os.getpid()}@another-host~k=3_seed=0")  # a worker elsewhere
    os.makedirs(remote)
    host = re.sub(r"[^A-Za-z0-9.-]", "", socket.gethostname())
    live = os.path.join(tmp_path, "runs", f".tmp-{os.getppid()}@{host}~k=3_seed=0")  # a live process of this host
    os.makedirs(live)
    runs = sweep(tmp_path, record=final_loss, batch_size=1)
    assert count_flows["flows"] == 7
    assert [r.computed for r in runs] == [True, True, True, False]
    assert not os.path.exists(stale) and not os.path.exists(remote) and os.path.exists(live)
    # resumed one flow at a time, but in the 4-flow program the finished run used: the same bits
    assert {r.program_size for r in first} == {r.program_size for r in runs} == {4}
    for a, b in zip(runs, first):
        np.testing.assert_array_equal(a.arrays["final_params"], b.arrays["final_params"])
        np.testing.assert_array_equal(a.loss, b.loss)
    assert len(gflow.sweep.load_sweep(str(tmp_path))) == 4


def test_extending_the_grid_reuses_finished_runs(tmp_path, count_flows, reference):
    sweep(tmp_path, grid={"k": [3, 5], "seed": [0]}, batch_size=1, record=final_loss)
    runs = sweep(tmp_path, batch_size=1, record=final_loss)  # the full grid: two more seeds
    assert count_flows["flows"] == 4 and [r.computed for r in runs] == [False, True, False, True]
    for a, b in zip(runs, reference):
        np.testing.assert_allclose(a.arrays["final_params"], b.arrays["final_params"], rtol=1e-10, atol=1e-13)


def test_changed_options_are_new_runs_and_trajectories_are_kept(tmp_path, count_flows):
    grid = {"k": [5], "seed": [0]}
    a = sweep(tmp_path, grid=grid, batch_size=1)
    b = sweep(tmp_path, grid=grid, batch_size=1, rtol=1e-6, keep_trajectory=True)
    assert count_flows["flows"] == 2 and a[0].name != b[0].name
    traj = b[0].trajectory()
    assert traj.params.shape[0] == SAVES and traj.status == "completed"
    np.testing.assert_array_equal(traj.loss, b[0].loss)
    with pytest.raises(gflow.GflowInputError, match="without its trajectory"):
        a[0].trajectory()
    assert {r.name for r in gflow.sweep.load_sweep(str(tmp_path), history=True)} == {a[0].name, b[0].name}
    assert [r.name for r in gflow.sweep.load_sweep(str(tmp_path))] == [b[0].name]  # the current grid: the last call's


# ------------------------------------------------------------------------------------------------ traced builds


def build_traced(k, seed, scale=0.3):
    """``build`` with a traceable training length: every k padded to 5 by the loss itself."""
    teacher = teachers.balanced(jax.random.key(0), 3)
    return gflow.PopulationLoss(teacher, k, k_max=5), initializers.gaussian(jax.random.key(seed), 4, scale=scale)


def test_traced_build_is_one_vmapped_call_per_group(tmp_path, count_flows, reference):
    runs = gflow.run_sweep(GRID, build_traced, str(tmp_path), t1=T1, save_at=SAVES, progress=False,
                           traced=["seed", "k"], record=final_loss)
    assert count_flows == {"flows": 4, "calls": 1}
    assert [r.config for r in runs] == [r.config for r in reference]
    for a, b in zip(runs, reference):
        assert a.name != b.name  # `traced` is part of the identity: never mixed with an untraced run
        np.testing.assert_allclose(a.arrays["final_params"], b.arrays["final_params"], rtol=1e-6, atol=1e-8)
        assert a.record["final_loss"] == pytest.approx(float(b.record["final_loss"]), rel=1e-5)
    again = gflow.run_sweep(GRID, build_traced, str(tmp_path), t1=T1, save_at=SAVES, progress=False,
                            traced=["k", "seed"])
    assert count_flows["flows"] == 4 and not any(r.computed for r in again)  # resumed: nothing recomputed


@pytest.mark.slow
def test_traced_over_some_keys_groups_by_the_others(tmp_path, count_flows):
    runs = sweep(tmp_path, traced=["seed"])  # k fixed per group: k = 3 and k = 5, two seeds each
    assert count_flows == {"flows": 4, "calls": 2}
    assert all(r.status == "completed" for r in runs)


def test_traced_bad_input(tmp_path):
    with pytest.raises(gflow.GflowInputError, match=r"names \['nope'\]"):
        sweep(tmp_path, traced=["nope"])
    with pytest.raises(gflow.GflowInputError, match="list of grid keys"):
        sweep(tmp_path, traced="seed")
    with pytest.raises(gflow.GflowInputError, match="k_max"):  # PopulationLoss(teacher, k) with k traced
        sweep(tmp_path, traced=["k"])


# ------------------------------------------------------------------------------------------------ provenance, lock
@pytest.mark.slow
def test_runs_record_their_code_and_other_code_is_recomputed(tmp_path, monkeypatch, capsys):
    first = sweep(tmp_path, record=final_loss)
    meta = json.load(open(os.path.join(first[0].path, "run.json")))
    assert meta["code"]["gflow"] == gflow.results.source_hash() and len(meta["code"]["build"]) == 64
    assert set(meta["provenance"]) >= {"gflow_version", "source_hash", "git", "packages", "command", "device"}
    # the same call again reuses everything
    assert not any(r.computed for r in sweep(tmp_path, record=final_loss))
    # other gflow code: every run is recomputed, under the same folder name, and the sweep says why
    monkeypatch.setattr(gflow.results, "source_hash", lambda: "0" * 64)
    again = sweep(tmp_path, record=final_loss, progress=True)
    assert all(r.computed for r in again) and [r.name for r in again] == [r.name for r in first]
    assert {r.recomputed_because for r in again} == {"made by other code (gflow changed)"}
    assert "recomputing 4 run(s) found on disk: made by other code (gflow changed)" in capsys.readouterr().out
    np.testing.assert_array_equal(again[0].arrays["final_params"], first[0].arrays["final_params"])


def test_another_build_function_is_other_code(tmp_path):
    sweep(tmp_path)

    def build(k, seed, scale=0.3):  # same configurations, another function: its results may differ
        teacher = teachers.balanced(jax.random.key(1), 3)
        return gflow.PopulationLoss(teacher, k), initializers.gaussian(jax.random.key(seed), 4, scale=scale)

    runs = gflow.run_sweep(GRID, build, str(tmp_path), t1=T1, save_at=SAVES, progress=False)
    assert all(r.computed and r.recomputed_because == "made by other code (build changed)" for r in runs)


def test_a_stepsize_controller_is_passed_on_and_identifies_the_runs(tmp_path, count_flows):
    """run_sweep takes every solve option of solve_flows, a diffrax controller too: the same bits as solve_flows with
    it, recorded by its repr in run.json, and the same call resumes."""
    controller = diffrax.PIDController(rtol=1e-7, atol=1e-9)
    grid = {"k": [3], "seed": [0, 1]}
    runs = sweep(tmp_path, grid=grid, stepsize_controller=controller)
    pairs = [build(3, seed) for seed in (0, 1)]
    batch = gflow.solve_flows([p[0] for p in pairs], [p[1] for p in pairs], T1, save_at=SAVES, progress=False,
                              stepsize_controller=controller)
    for i, (run, traj) in enumerate(zip(runs, batch)):
        np.testing.assert_array_equal(run.arrays["final_params"], batch.final_params[i])
        assert run.status == traj.status
        with open(os.path.join(run.path, "run.json")) as f:
            assert json.load(f)["identity"]["solve"]["stepsize_controller"] == repr(controller)
    assert count_flows["flows"] == 2
    again = sweep(tmp_path, grid=grid, stepsize_controller=diffrax.PIDController(rtol=1e-7, atol=1e-9))
    assert count_flows["flows"] == 2 and not any(r.computed for r in again)
    with pytest.raises(gflow.GflowInputError, match="not both"):
        sweep(tmp_path / "both", grid=grid, stepsize_controller=controller, rtol=1e-6)


def test_a_second_sweep_on_the_same_folder_is_refused(tmp_path):
    import socket

    lock = tmp_path / "sweep.lock"
    lock.write_text(json.dumps({"host": "another-host", "pid": 1, "since": "now"}))
    with pytest.raises(gflow.GflowInputError, match="another sweep .*another-host, pid 1"):
        sweep(tmp_path)
    assert lock.exists()  # the other driver's lock is left alone
    # a lock left by a process of this host that is gone is taken over, and released at the end
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    lock.write_text(json.dumps({"host": socket.gethostname(), "pid": int(dead.stdout), "since": "then"}))
    assert len(sweep(tmp_path)) == 4 and not lock.exists()


def test_default_save_times_are_fixed_per_group_not_per_batch(tmp_path):
    """A count of save times begins at the flows' first time scale; a sweep fixes it from the whole shape group, so
    a run resumed alone keeps the times (and bits) it had in the full batch."""
    grid = {"k": [3], "seed": [0], "scale": [0.3, 1.0]}  # first time scales 0.14 and 1.1e-3
    first = sweep(tmp_path, grid=grid)
    alone = [gflow.solve_flow(*build(**run.config), T1, save_at=SAVES, progress=False) for run in first]
    assert not np.array_equal(alone[0].ts, alone[1].ts)  # the control: each flow alone starts its grid elsewhere
    shutil.rmtree(first[0].path)
    again = sweep(tmp_path, grid=grid, batch_size=1)
    assert [r.computed for r in again] == [True, False]
    for a, b in zip(again, first):
        np.testing.assert_array_equal(a.ts, b.ts)
        np.testing.assert_array_equal(a.loss, b.loss)
