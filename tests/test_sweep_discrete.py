"""Discrete runs in sweeps: ``run_sweep(..., method="adam" | "gd" | "sgd" | "projected_gd")``
batches GD/Adam runs with one objective and one step size per member; each run equals the one-by-one runner of
its configuration (to rounding, rtol 1e-12: a vmapped step and a single one round differently in the last bits);
a resumed, interrupted or executor-run sweep gives the same bits as an uninterrupted one (a fixed program size
per group); the method and its options identify a run."""

import concurrent.futures
import hashlib
import importlib
import json
import logging
import os
import shutil

import jax
import numpy as np
import pytest

import gflow
from conftest import assert_same_bits
from gflow import initializers, teachers

STEPS = 30
SAVES = np.arange(0, STEPS + 1, 5)
GRID = {"lr": [0.01, 0.03], "k": [3, 5], "seed": [0, 1]}  # 8 runs, one group (k padded to 5), two step sizes


def build(seed, k=5, scale=0.3):
    """A teacher per seed and a training length per k: every member of a batch has its own objective."""
    teacher = teachers.balanced(jax.random.key(100 + seed), 3)
    return gflow.PopulationLoss(teacher, k), initializers.gaussian(jax.random.key(seed), 4, scale=scale)


def build_traced(seed, k=5, scale=0.3):
    teacher = teachers.balanced(jax.random.key(100 + seed), 3)
    return gflow.PopulationLoss(teacher, k, k_max=5), initializers.gaussian(jax.random.key(seed), 4, scale=scale)


def final_loss(traj, config):
    return {"final_loss": np.asarray(traj.loss[-1])}


def sweep(out, grid=GRID, **kwargs):
    kwargs.setdefault("method", "adam")
    kwargs.setdefault("steps", STEPS)
    kwargs.setdefault("save_at", SAVES)
    kwargs.setdefault("progress", False)
    return gflow.run_sweep(grid, kwargs.pop("build", build), str(out), **kwargs)


def assert_equals_run(run, traj):
    """A sweep's run against the one-by-one runner's trajectory: the same steps and times, values to rounding."""
    assert run.status == traj.status
    np.testing.assert_array_equal(run.ts, traj.ts)
    np.testing.assert_allclose(run.loss, traj.loss, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(run.arrays["final_params"], gflow.flatten(traj.final)[0], rtol=1e-12, atol=1e-15)


@pytest.fixture
def count_runs(monkeypatch):
    """Counts the members the sweep trains (and the batched runner calls)."""
    counts = {"runs": 0, "calls": 0}
    for name in ("run_adam_batch", "run_gd_batch", "run_sgd_batch"):
        real = getattr(gflow.discrete, name)

        def counting(objective, models0, *args, _real=real, **kwargs):
            counts["runs"] += gflow.stacking.batch_length(models0)
            counts["calls"] += 1
            return _real(objective, models0, *args, **kwargs)

        monkeypatch.setattr(gflow.discrete, name, counting)
    return counts


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The uninterrupted Adam sweep in batches of 4 (program size 4)."""
    return sweep(tmp_path_factory.mktemp("reference"), batch_size=4, record=final_loss)


# ------------------------------------------------------------------------------------------------ runs


def test_adam_sweep_over_lr_and_seed_equals_one_by_one(reference):
    assert [r.config for r in reference] == [{"k": k, "seed": s, "scale": 0.3, "lr": lr}
                                             for lr in (0.01, 0.03) for k in (3, 5) for s in (0, 1)]
    for run in reference:
        loss, model0 = build(run.config["seed"], run.config["k"])
        one = gflow.discrete.run_adam(loss, model0, lr=run.config["lr"], steps=STEPS, save_at=SAVES, progress=False)
        assert_equals_run(run, one)
        assert run.computed and run.program_size == 4 and run.record["final_loss"] == run.loss[-1]
        np.testing.assert_array_equal(run.ts, run.config["lr"] * SAVES)  # t = η·n
        assert run.stats["steps"] == STEPS
        meta = json.load(open(os.path.join(run.path, "run.json")))
        assert meta["identity"]["solve"] == {"method": "adam", "steps": STEPS, "save_at": SAVES.tolist()}
        assert meta["flow_config"]["method"] == "adam" and meta["flow_config"]["lr"] == run.config["lr"]
        assert meta["flow_config"]["k"] == run.config["k"]  # the member's own objective, not the padded one


def test_gd_sweep_equals_one_by_one_and_a_diverging_run_stops_alone(tmp_path, count_runs):
    grid = {"lr": [0.02, 50.0], "seed": [0, 1]}
    runs = sweep(tmp_path, grid=grid, method="gd", record=final_loss, keep_trajectory=True)
    assert count_runs == {"runs": 4, "calls": 1}
    assert [r.status for r in runs] == ["completed", "completed", "diverged", "diverged"]
    kept = runs[2].trajectory()  # the per-run status, message and saved steps travel with the run
    assert kept.status == "diverged" and "diverged at step" in kept.message
    assert kept.diagnostics["step"][-1] == runs[2].stats["steps"] < STEPS
    for run in runs:
        loss, model0 = build(run.config["seed"])
        assert_equals_run(run, gflow.discrete.run_gd(loss, model0, lr=run.config["lr"], steps=STEPS, save_at=SAVES,
                                                     progress=False))


def test_sgd_sweep_keys_come_from_the_configuration(tmp_path):
    """Each run's minibatch key is fold_in(key, 31 bits of the SHA-256 of the configuration build gets), whatever
    the batching: runs of different lr draw the same minibatches."""

    def build_data(seed, n=40):
        data = gflow.objectives.EmpiricalLoss.from_teacher(jax.random.key(3), teachers.balanced(jax.random.key(0), 3),
                                                           n, 5)
        return data, initializers.gaussian(jax.random.key(seed), 4, scale=0.3)

    key = jax.random.key(7)
    grid = {"lr": [0.01, 0.02], "seed": [0, 1]}
    runs = gflow.run_sweep(grid, build_data, str(tmp_path), method="sgd", steps=STEPS, save_at=SAVES,
                           minibatch_size=8, key=key, progress=False)
    for run in runs:
        given = {"seed": run.config["seed"], "n": 40}
        digest = hashlib.sha256(json.dumps(given, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
        run_key = jax.random.fold_in(key, int(digest[:8], 16) & 0x7FFFFFFF)
        data, model0 = build_data(**given)
        one = gflow.discrete.run_sgd(data, model0, lr=run.config["lr"], steps=STEPS, batch_size=8, key=run_key,
                                     save_at=SAVES, progress=False)
        assert_equals_run(run, one)


def test_projected_gd_sweep_builds_a_projection_per_run(tmp_path):
    def box(model0, config):
        return gflow.discrete.box_projection(model0, "A", 0.02 * config["seed"] + 0.01)

    runs = sweep(tmp_path, grid={"seed": [0, 1]}, method="projected_gd", lr=0.05, projection=box)
    for run in runs:
        loss, model0 = build(run.config["seed"])
        one = gflow.discrete.run_projected_gd(loss, model0, lr=0.05, steps=STEPS, save_at=SAVES, progress=False,
                                              projection=box(model0, run.config))
        assert_equals_run(run, one)
        meta = json.load(open(os.path.join(run.path, "run.json")))
        assert meta["flow_config"]["method"] == "projected_gd" and len(meta["code"]["projection"]) == 64


def test_batched_runner_takes_one_objective_per_member():
    """gflow.discrete.run_adam_batch with a list of objectives (or a stacked one): member i trains on its own."""
    pairs = [build(seed) for seed in (0, 1)]
    losses, models = [p[0] for p in pairs], [p[1] for p in pairs]
    batch = gflow.discrete.run_adam_batch(losses, models, lr=0.02, steps=STEPS, save_at=SAVES, progress=False)
    stacked = gflow.discrete.run_adam_batch(gflow.stacking.stack(losses), models, lr=0.02, steps=STEPS, save_at=SAVES,
                                            progress=False, stacked_objective=True, program_size=3)
    for i, (loss, model0) in enumerate(pairs):
        one = gflow.discrete.run_adam(loss, model0, lr=0.02, steps=STEPS, save_at=SAVES, progress=False)
        np.testing.assert_allclose(batch.loss[i], one.loss, rtol=1e-12)
        np.testing.assert_allclose(stacked.loss[i], one.loss, rtol=1e-12)
    with pytest.raises(gflow.GflowInputError, match="`objective` holds 1 members"):
        gflow.discrete.run_adam_batch(losses[:1], models, lr=0.02, steps=STEPS)


# ------------------------------------------------------------------------------------------------ resuming


def test_interrupt_and_resume_gives_the_same_bits(tmp_path, count_runs, reference):
    done = []

    def interrupt_after_four(run):
        done.append(run.name)
        if len(done) == 4:
            raise KeyboardInterrupt("simulated interruption")

    with pytest.raises(KeyboardInterrupt, match="4 of 8 runs kept"):
        sweep(tmp_path, batch_size=4, record=final_loss, on_run_done=interrupt_after_four)
    assert count_runs["runs"] == 4
    seen = []
    runs = sweep(tmp_path, batch_size=4, record=final_loss, on_run_done=lambda r: seen.append(r.name))
    assert count_runs["runs"] == 8 and not set(seen) & set(done)  # only the four missing runs were trained
    assert [r.computed for r in runs] == [False] * 4 + [True] * 4
    assert_same_bits(runs, reference)
    # two runs lost and resumed one at a time: computed in the group's program size (4), the same bits
    for run in runs[1:3]:
        shutil.rmtree(run.path)
    again = sweep(tmp_path, batch_size=1, record=final_loss)
    assert count_runs == {"runs": 10, "calls": 4} and [r.computed for r in again] == [False, True, True] + [False] * 5
    assert_same_bits(again, reference)


def test_lr_method_and_flow_are_separate_runs(tmp_path, count_runs):
    grid = {"seed": [0]}
    a = sweep(tmp_path, grid=grid, lr=0.01)
    b = sweep(tmp_path, grid=grid, lr=0.02)  # another lr: recomputed
    c = sweep(tmp_path, grid=grid, lr=0.01, method="gd")  # another method: recomputed
    assert count_runs["runs"] == 3
    d = gflow.run_sweep(grid, build, str(tmp_path), t1=10.0, save_at=25, progress=False)  # the flow (test_sweep's)
    assert not any(r.computed for r in sweep(tmp_path, grid=grid, lr=0.01))  # the first again: loaded
    names = {r[0].name for r in (a, b, c, d)}
    assert len(names) == 4 and {r.name for r in gflow.sweep.load_sweep(str(tmp_path), history=True)} == names
    assert [r.name for r in gflow.sweep.load_sweep(str(tmp_path))] == [a[0].name]  # the last call's grid


def test_a_flow_sweep_passes_slots_on_untouched(tmp_path, monkeypatch):
    """solve_flows's ``slots`` (refilling slots, outside SOLVE_OPTIONS) goes through a flow sweep's tasks as given,
    and identifies the runs."""
    seen = []
    real = gflow.flow.solve_flows

    def lock_step(losses, models0, t1, **kwargs):
        seen.append(kwargs.pop("slots"))
        return real(losses, models0, t1, **kwargs)

    monkeypatch.setattr(gflow.flow, "solve_flows", lock_step)
    runs = gflow.run_sweep({"seed": [0]}, build, str(tmp_path), t1=10.0, save_at=25, slots=2, progress=False)
    assert seen == [2]
    assert json.load(open(os.path.join(runs[0].path, "run.json")))["identity"]["solve"]["slots"] == 2


# ------------------------------------------------------------------------------------------------ traced, executors


def test_traced_build_with_lr_in_the_grid(tmp_path, count_runs, reference):
    runs = sweep(tmp_path, build=build_traced, traced=["k", "seed"], batch_size=8)
    assert count_runs == {"runs": 8, "calls": 1}  # every lr, k and seed in one batch, built in one vmapped call
    for a, b in zip(runs, reference):
        assert a.config == b.config and a.name != b.name  # `traced` is part of the identity
        np.testing.assert_allclose(a.loss, b.loss, rtol=1e-12)
    assert not any(r.computed for r in sweep(tmp_path, build=build_traced, traced=["k", "seed"], batch_size=8))


def test_a_grid_option_other_than_lr_splits_the_batches(tmp_path, count_runs):
    runs = gflow.run_sweep({"steps": [10, 20], "seed": [0, 1]}, build, str(tmp_path), method="adam", lr=0.01,
                           save_at=5, progress=False)
    assert count_runs == {"runs": 4, "calls": 2}
    assert [r.stats["steps"] for r in runs] == [10, 10, 20, 20]


def test_thread_pool_gives_the_same_bits(tmp_path, reference):
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        runs = sweep(tmp_path, batch_size=4, record=final_loss, executor=pool)
    assert all(r.computed for r in runs)
    assert_same_bits(runs, reference)


@pytest.mark.slow
def test_local_dask_cluster_gives_the_same_bits(tmp_path, reference, capsys):
    distributed = (importlib.import_module("distributed") if os.environ.get("CI")
                   else pytest.importorskip("distributed"))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=logging.ERROR) as cluster, distributed.Client(cluster) as client:
        runs = sweep(tmp_path, batch_size=4, record=final_loss, executor=client, progress=True)
    assert_same_bits(runs, reference)
    assert "8/8 done" in capsys.readouterr().out


# ------------------------------------------------------------------------------------------------ bad input


@pytest.mark.parametrize("kwargs, match", [
    ({"method": "adamw"}, r"`method` must be one of \['flow', 'gd', 'sgd', 'adam', 'projected_gd', 'normalized_gd'\]"),
    ({"rtol": 1e-6}, r"unknown option\(s\) \['rtol'\] for method='adam'; it takes \['lr', 'steps'"),
    ({"batch_size": 8, "minibatch": 4}, r"unknown option\(s\) \['minibatch'\]"),
    ({"t1": 10.0}, "`t1` means nothing for a discrete run"),
    ({"grid": {"seed": [0]}, "method": "gd"}, r"method='gd' needs \['lr'\]"),
    ({"lr": 0.01}, "`lr` is both a grid key and an option"),
    ({"minibatch_size": 4}, "`minibatch_size` needs `key`"),
    ({"key": jax.random.key(0)}, "give `minibatch_size` too"),
    ({"method": "projected_gd", "projection": 3}, "`projection` must be a function"),
    ({"grid": {"lr": [0.01, -1.0], "seed": [0]}}, "`lr` must be a positive"),
    ({"traced": ["lr"]}, r"`traced` names \['lr'\], which are not parameters of `build`"),
])
def test_bad_method_or_option_is_named(tmp_path, kwargs, match):
    with pytest.raises(gflow.GflowInputError, match=match):
        sweep(tmp_path, **{"grid": {"lr": [0.01], "seed": [0]}, **kwargs})


def test_a_flow_sweep_needs_t1_and_a_grid_option_may_not_be_a_build_parameter(tmp_path):
    with pytest.raises(gflow.GflowInputError, match="needs `t1`"):
        gflow.run_sweep({"seed": [0]}, build, str(tmp_path))
    with pytest.raises(gflow.GflowInputError, match="unknown grid key"):  # a flow has no lr
        gflow.run_sweep({"seed": [0], "lr": [0.1]}, build, str(tmp_path), t1=1.0)

    def build_with_steps(seed, steps=3):
        return build(seed, steps)

    with pytest.raises(gflow.GflowInputError, match="grid key `steps` is an option of method='adam' and a parameter"):
        sweep(tmp_path, grid={"seed": [0], "steps": [4]}, build=build_with_steps, lr=0.01)


SHARDED = """
import sys, jax, numpy as np, gflow
from gflow import initializers, teachers
assert len(jax.devices()) == 2

def build(seed, k=5):
    teacher = teachers.balanced(jax.random.key(100 + seed), 3)
    return gflow.PopulationLoss(teacher, k), initializers.gaussian(jax.random.key(seed), 4, scale=0.3)

runs = gflow.run_sweep({"lr": [0.01, 50.0], "k": [3, 5], "seed": [0]}, build, sys.argv[1], method="gd", steps=30,
                       save_at=np.arange(0, 31, 5), progress=False)
assert [r.status for r in runs] == ["completed", "completed", "diverged", "diverged"], [r.status for r in runs]
for run in runs:
    loss, model0 = build(run.config["seed"], run.config["k"])
    one = gflow.discrete.run_gd(loss, model0, lr=run.config["lr"], steps=30, save_at=np.arange(0, 31, 5),
                                progress=False)
    np.testing.assert_allclose(run.loss, one.loss, rtol=1e-12)
print("ok")
"""


@pytest.mark.slow
def test_a_discrete_sweep_is_split_over_two_devices(tmp_path):
    """One objective per member, split with the members over two devices."""
    import subprocess
    import sys

    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2")
    done = subprocess.run([sys.executable, "-c", SHARDED, str(tmp_path)], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0 and "ok" in done.stdout, done.stderr[-2000:]
