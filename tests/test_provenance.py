"""Every result names the code that made it : trajectories, study summaries and sweep runs (the latter in
tests/test_sweep.py)."""

import json
import os
import time

import jax

import gflow
from gflow import initializers, teachers
from gflow.results import function_hash, provenance, source_hash

KEYS = {"gflow_version", "source_hash", "git", "packages", "command", "device"}


def test_provenance_names_the_code_and_the_machine():
    p = provenance()
    assert set(p) == KEYS and p["source_hash"] == source_hash() and len(source_hash()) == 64
    assert p["packages"]["jax"] == jax.__version__ and p["device"].startswith(jax.devices()[0].platform)
    if p["git"]:  # run from a checkout
        assert len(p["git"]["commit"]) == 40 and isinstance(p["git"]["dirty"], bool)


def test_function_hashes_follow_the_source():
    def f(x):
        return x + 1

    def g(x):
        return x + 2

    assert function_hash(f) == function_hash(f) and function_hash(f) != function_hash(g)
    assert function_hash(len) is None  # no source: not hashed


def test_trajectories_and_summaries_record_it(tmp_path):
    loss = gflow.PopulationLoss(teachers.balanced(jax.random.key(0), 2), 4)
    traj = gflow.solve_flow(loss, initializers.gaussian(jax.random.key(1), 3, scale=0.3), 1.0, save_at=4,
                            progress=False)
    meta = json.load(open(os.path.join(traj.save(str(tmp_path / "run")), "meta.json")))
    assert set(meta["provenance"]) == KEYS and meta["provenance"]["source_hash"] == source_hash()
    summary = gflow.study.write_summary(str(tmp_path), "test", {}, [], {}, time.time())
    on_disk = json.load(open(tmp_path / "summary.json"))
    assert on_disk["provenance"]["source_hash"] == summary["provenance"]["source_hash"] == source_hash()
