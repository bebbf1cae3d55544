"""gflow.run_sweep on an executor: a thread pool, and a Dask LocalCluster with two worker processes:
the same bits as one process, a killed worker loses no finished run, a failing task is reported."""

import concurrent.futures
import importlib
import logging
import os
import signal
import threading
import time

import jax
import numpy as np
import pytest

import gflow
from conftest import assert_same_bits
from gflow import initializers, teachers

# CI installs the `distributed` extra; elsewhere the Dask tests are skipped when it is missing
distributed = importlib.import_module("distributed") if os.environ.get("CI") else pytest.importorskip("distributed")

T1, SAVES = 10.0, 12
GRID = {"k": [3, 5], "seed": [0, 1, 2, 3]}  # one shape group of 8 flows (k padded to 5)


def build(k, seed, scale=0.3):
    teacher = teachers.balanced(jax.random.key(0), 3)
    return gflow.PopulationLoss(teacher, k), initializers.gaussian(jax.random.key(seed), 4, scale=scale)


def build_traced(k, seed, scale=0.3):
    """The teacher drawn per seed (traced): its impulse response, computed in a vmapped build of 2 rows and of 8,
    differs in the last bit, so a task must take its rows from a build of the whole group."""
    teacher = teachers.balanced(jax.random.key(seed), 5)
    return gflow.PopulationLoss(teacher, k, k_max=24), initializers.gaussian(jax.random.key(seed), 4, scale=scale)


def final_loss(traj, config):
    return {"final_loss": np.asarray(traj.loss[-1])}


def slow_record(traj, config):
    """Half a second per run, so that a batch is still running when the test kills its worker."""
    time.sleep(0.5)
    return {"final_loss": np.asarray(traj.loss[-1])}


def sweep(out, **kwargs):
    kwargs.setdefault("save_at", SAVES)
    kwargs.setdefault("progress", False)
    kwargs.setdefault("batch_size", 2)
    return gflow.run_sweep(kwargs.pop("grid", GRID), kwargs.pop("build", build), str(out), t1=T1, **kwargs)


@pytest.fixture(scope="module")
def in_process(tmp_path_factory):
    """The reference: the same sweeps in this process, batches of 2 (program size 2)."""
    return {"untraced": sweep(tmp_path_factory.mktemp("plain"), record=final_loss),
            "traced": sweep(tmp_path_factory.mktemp("traced"), build=build_traced, traced=["k", "seed"],
                            record=final_loss)}


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=logging.ERROR) as cluster, distributed.Client(cluster) as c:
        yield c


@pytest.mark.slow
def test_thread_pool_gives_the_same_bits(tmp_path, in_process):
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        runs = sweep(tmp_path, record=final_loss, executor=pool)
    assert all(r.computed for r in runs) and len(runs) == 8
    assert_same_bits(runs, in_process["untraced"])


@pytest.mark.slow
def test_local_cluster_gives_the_same_bits(tmp_path, in_process, client, capsys):
    runs = sweep(tmp_path, record=final_loss, executor=client, progress=True)  # a Client is taken as its executor
    assert all(r.computed for r in runs)
    assert_same_bits(runs, in_process["untraced"])
    out = capsys.readouterr().out
    assert "on ClientExecutor" in out and "8/8 done" in out and "runs/s" in out and "status: 8 completed" in out
    # resumed in this process: nothing left to do
    assert not any(r.computed for r in sweep(tmp_path, record=final_loss))


@pytest.mark.slow
def test_local_cluster_traced_build_gives_the_same_bits(tmp_path, in_process, client):
    """Each task traces ``build`` over its own rows only; the flows are the same bits as the whole group's."""
    runs = sweep(tmp_path, build=build_traced, traced=["k", "seed"], record=final_loss, executor=client)
    assert_same_bits(runs, in_process["traced"])


@pytest.mark.slow
def test_a_killed_worker_loses_no_finished_run(tmp_path, in_process, client):
    """Kill a worker process while it holds a batch: Dask runs its tasks again elsewhere; the runs already on disk
    stay, and the sweep finishes with the bits of an in-process run."""
    reference = sweep(tmp_path / "reference", record=slow_record)
    killed: dict = {}
    finished_before_kill: dict[str, int] = {}  # run name -> inode of its run.json

    def note(run):
        if not killed:
            finished_before_kill[run.name] = os.stat(os.path.join(run.path, "run.json")).st_ino

    def kill_a_busy_worker():
        deadline = time.time() + 120
        while time.time() < deadline and not killed:
            busy = {w: keys for w, keys in client.processing().items() if keys}
            if busy and finished_before_kill:  # some runs on disk, and a worker in the middle of a batch
                worker, keys = sorted(busy.items())[0]
                pid = client.run(os.getpid, workers=[worker])[worker]
                killed.update(worker=worker, pid=pid, tasks=len(keys), runs_on_disk=len(finished_before_kill))
                os.kill(pid, signal.SIGKILL)
            time.sleep(0.05)

    killer = threading.Thread(target=kill_a_busy_worker, daemon=True)
    killer.start()
    runs = sweep(tmp_path / "dask", record=slow_record, executor=client,
                 on_run_done=note)
    killer.join(timeout=5)
    print(f"killed worker pid {killed.get('pid')} holding {killed.get('tasks')} task(s); "
          f"{killed.get('runs_on_disk')} run(s) were on disk before the kill")
    assert killed and killed["tasks"] >= 1
    assert all(r.status == "completed" for r in runs)
    assert_same_bits(runs, reference)
    for run in runs:  # the runs finished before the kill were never rewritten
        if run.name in finished_before_kill:
            assert os.stat(os.path.join(run.path, "run.json")).st_ino == finished_before_kill[run.name]
    assert len(gflow.sweep.load_sweep(str(tmp_path / "dask"))) == 8
    client.wait_for_workers(2, timeout=60)  # the nanny restarted the worker


def failing_build(k, seed, scale=0.3):
    if seed == 3:
        raise gflow.GflowInputError("seed 3 is not allowed here")
    return build(k, seed, scale)


def test_an_error_in_a_task_reaches_the_driver(tmp_path, client):
    # the driver builds every configuration first (to group them), so a bad build fails there, before any task
    with pytest.raises(gflow.GflowInputError, match="seed 3"):
        sweep(tmp_path, build=failing_build, executor=client)

    def bad_record(traj, config):
        return [1, 2]

    with pytest.raises(gflow.GflowInputError, match="`record` must return a dict"):
        sweep(tmp_path, record=bad_record, executor=client)


def test_bad_executor_is_a_clear_error(tmp_path):
    with pytest.raises(gflow.GflowInputError, match="concurrent.futures.Executor"):
        sweep(tmp_path, executor="local")


def test_dask_executor_from_a_scheduler_address(tmp_path, in_process, client):
    with gflow.sweep.dask_executor(client.scheduler.address) as executor:
        assert isinstance(executor, concurrent.futures.Executor)
        runs = sweep(tmp_path, record=final_loss, executor=executor)
    assert_same_bits(runs, in_process["untraced"])
    with gflow.sweep.dask_executor(None) as executor:
        assert executor is None


@pytest.mark.slow
def test_dask_executor_bad_input(monkeypatch):
    with pytest.raises(gflow.GflowInputError, match="N ≥ 1"):
        with gflow.sweep.dask_executor("local:0"):
            pass
    with pytest.raises(gflow.GflowInputError, match="local:N"):
        with gflow.sweep.dask_executor(""):
            pass
    monkeypatch.setitem(__import__("sys").modules, "distributed", None)  # as if the extra were not installed
    with pytest.raises(gflow.GflowInputError, match=r'pip install -c constraints.txt -e "\.\[distributed\]"'):
        with gflow.sweep.dask_executor("local:2"):
            pass
