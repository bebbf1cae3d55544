"""Batches of flows: stacked modules built with filter_vmap, one compiled validation, bucketed programs, the
FlowBatch result, agreement with one-by-one solves, and the split over several devices."""

import os
import subprocess
import sys
import textwrap

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gflow
from gflow import initializers, teachers
from gflow.stacking import bucket_size, take

T1, SAVES, K_MAX = 10.0, 25, 5
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def stacked_batch(n, seed=0):
    """n small flows (balanced teacher d̂ = 3, general student d = 4, k = 3 … 5 padded to 5), built stacked."""
    teacher = teachers.balanced(jax.random.key(0), 3)
    ks = jnp.asarray(3 + np.arange(n) % 3)
    losses = eqx.filter_vmap(lambda k: gflow.PopulationLoss(teacher, k, k_max=K_MAX))(ks)
    keys = jax.random.split(jax.random.key(seed), n)
    models = eqx.filter_vmap(lambda key: initializers.gaussian(key, 4, scale=0.3))(keys)
    return losses, models


def solve(losses, models, **kwargs):
    return gflow.solve_flows(losses, models, T1, save_at=SAVES, progress=False, **kwargs)


@pytest.fixture(scope="module")
def batch():
    return solve(*stacked_batch(5))


def test_bucket_sizes():
    assert [bucket_size(n) for n in (1, 2, 3, 4, 5, 6, 7, 9, 13, 17, 25, 33, 1000, 1025)] == \
        [1, 2, 3, 4, 6, 6, 8, 12, 16, 24, 32, 48, 1024, 1536]
    assert bucket_size(5, n_devices=4) == 8 and bucket_size(3, n_devices=2) == 4
    with pytest.raises(gflow.GflowInputError):
        bucket_size(0)


@pytest.mark.slow
def test_flow_batch_arrays_keep_the_batch_axis(batch):
    assert isinstance(batch, gflow.FlowBatch) and len(batch) == 5
    assert batch.ts.shape == batch.loss.shape == batch.saved.shape == (5, SAVES + 1)
    assert batch.params.shape == (5, SAVES + 1, 4 * 4 + 4 + 4) and batch.final_params.shape == (5, 24)
    assert batch.statuses == ["completed"] * 5 and batch.steps.shape == (5,) and np.all(batch.steps > 10)
    assert np.all(batch.saved.sum(axis=1) == SAVES)  # the t1 row repeats the last save: counted once
    assert batch.final.A.shape == (5, 4, 4)
    assert np.all(batch.loss[:, -1] < 0.1 * batch.loss[:, 0])


def test_indexing_gives_trajectories(batch):
    traj = batch[2]
    assert isinstance(traj, gflow.Trajectory) and traj is batch[2]  # built once
    assert traj.ts.shape == (SAVES,) and traj.config["k"] == 5 and traj.status == "completed"
    np.testing.assert_array_equal(traj.loss, batch.loss[2][batch.saved[2]])
    np.testing.assert_array_equal(gflow.flatten(traj.final)[0], batch.final_params[2])
    assert [t.config["k"] for t in batch] == [3, 4, 5, 3, 4]
    assert len(batch[1:3]) == 2 and batch[-1].config["k"] == 4
    with pytest.raises(IndexError):
        batch[5]


def test_batch_equals_one_by_one(batch):
    losses, models = stacked_batch(5)
    for i in (0, 4):
        one = gflow.solve_flow(take(losses, i), take(models, i), T1, save_at=SAVES, progress=False)
        assert one.config["atol"] == batch[i].config["atol"]  # each flow keeps its own default atol
        np.testing.assert_allclose(batch.final_params[i], gflow.flatten(one.final)[0],
                                   rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(batch[i].loss, one.loss, rtol=1e-6, atol=1e-12)


def test_lists_and_stacks_give_the_same_bits(batch):
    losses, models = stacked_batch(5)
    rows = [take((losses, models), i) for i in range(5)]
    listed = solve([r[0] for r in rows], [r[1] for r in rows])
    np.testing.assert_array_equal(listed.final_params, batch.final_params)


def test_a_flow_gives_the_same_bits_in_any_batch_of_its_program_size(batch):
    losses, models = stacked_batch(5)
    # the 5-flow batch ran in a 6-flow program; rows 4, 1 alone, padded up to 6 flows, give the same bits
    again = solve(take(losses, np.array([4, 1])), take(models, np.array([4, 1])), program_size=6)
    np.testing.assert_array_equal(again.final_params, batch.final_params[[4, 1]])
    np.testing.assert_array_equal(again.loss, batch.loss[[4, 1]])
    same_seed = solve(*stacked_batch(5))
    np.testing.assert_array_equal(same_seed.params, batch.params)


def test_bad_batches_name_the_flow():
    losses, models = stacked_batch(4)
    bad = eqx.tree_at(lambda m: m.B, models, models.B.at[2, 0].set(jnp.nan))
    with pytest.raises(gflow.GflowInputError, match=r"models0\[2\]. has non-finite parameters"):
        solve(losses, bad)
    huge = eqx.tree_at(lambda m: m.A, models, models.A.at[3].set(1e200))
    with pytest.raises(gflow.GflowInputError, match=r"loss at .models0\[3\]. is not finite"):
        solve(losses, huge)
    with pytest.raises(gflow.GflowInputError, match="hold 4 flows but"):
        solve(losses, stacked_batch(3)[1])
    with pytest.raises(gflow.GflowInputError, match="both be stacked"):
        solve(losses, [models])
    teacher = teachers.balanced(jax.random.key(0), 3)
    with pytest.raises(gflow.GflowInputError, match="same structure"):
        solve([gflow.PopulationLoss(teacher, 3), gflow.PopulationLoss(teacher, 4)],
              [initializers.gaussian(jax.random.key(0), 4, scale=0.1)] * 2)
    with pytest.raises(gflow.GflowInputError, match="traced training length"):
        eqx.filter_vmap(lambda k: gflow.PopulationLoss(teacher, k))(jnp.arange(3, 5))


@pytest.mark.parametrize("make", [
    lambda k: initializers.gaussian(k, 4, scale=0.1),
    lambda k: initializers.gaussian(k, 4, scale=0.1, structure="diagonal"),
    lambda k: initializers.balanced(k, 4, scale=0.1),
    lambda k: initializers.balanced(k, 4, scale=0.1, n=2),
    lambda k: initializers.symmetric(k, 4, scale=0.1, parameterization="triangular"),
    lambda k: initializers.residual(k, 4, scale=0.1),
    lambda k: initializers.xavier(k, 4),
    lambda k: teachers.balanced(k, 3),
    lambda k: teachers.random_unbalanced(k, 3),
    lambda k: teachers.vandermonde_student(teachers.delay(3), 2, 4, key=k),
], ids=["gaussian", "gaussian-diagonal", "balanced", "balanced-mimo", "triangular", "residual", "xavier",
        "teacher-balanced", "teacher-random-unbalanced", "vandermonde-student"])
def test_every_initializer_and_teacher_builds_a_batch(make):
    keys = jax.random.split(jax.random.key(3), 3)
    stacked = eqx.filter_vmap(make)(keys)
    for i in (0, 2):  # row i of the stack is the module built one by one
        one = make(keys[i])
        for a, b in zip(jax.tree_util.tree_leaves(stacked), jax.tree_util.tree_leaves(one)):
            np.testing.assert_allclose(np.asarray(a)[i], np.asarray(b), rtol=1e-12, atol=1e-14)


def _python(code: str, **env) -> str:
    path = os.pathsep.join([ROOT, os.path.join(ROOT, "bench"), os.path.dirname(os.path.abspath(__file__))])
    full = dict(os.environ, PYTHONPATH=path, **env)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=full,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.slow
def test_a_batch_is_split_over_local_devices(tmp_path):
    code = """
        import jax, numpy as np, gflow
        from test_batched_flows import stacked_batch, solve
        assert len(jax.local_devices()) == 2
        losses, models = stacked_batch(5)
        two = solve(losses, models)
        one = solve(losses, models, devices=jax.local_devices()[:1])
        print(len(two), two.statuses.count("completed"), float(np.max(np.abs(two.final_params - one.final_params))))
    """
    out = _python(code, XLA_FLAGS="--xla_force_host_platform_device_count=2", GFLOW_COMPILATION_CACHE="0")
    n, completed, diff = out.split()
    assert (int(n), int(completed)) == (5, 5)
    assert float(diff) < 1e-9  # the same flows, in 3-flow programs per device instead of one 6-flow program


@pytest.mark.slow
def test_persistent_compilation_cache(tmp_path):
    code = """
        import gflow, jax
        from gflow import teachers, initializers
        print(gflow.COMPILATION_CACHE_DIR)
        loss = gflow.PopulationLoss(teachers.balanced(jax.random.key(0), 3), 4)
        gflow.solve_flow(loss, initializers.gaussian(jax.random.key(1), 4, scale=0.3), 1.0, save_at=5, progress=False)
    """
    cache = tmp_path / "cache"
    out = _python(code, GFLOW_CACHE_DIR=str(cache), GFLOW_CACHE_MIN_COMPILE_S="0")
    assert out.split()[0] == str(cache) and len(os.listdir(cache)) > 0
    off = _python(code, GFLOW_CACHE_DIR=str(tmp_path / "other"), GFLOW_COMPILATION_CACHE="0")
    assert off.split()[0] == "None" and not (tmp_path / "other").exists()


@pytest.mark.parametrize("n", [1, 2, 5, 8, 13])
def test_krylov_doubling_equals_the_loop(n):
    A = 0.5 * jax.random.normal(jax.random.key(0), (6, 6), dtype=jnp.float64)
    X = jax.random.normal(jax.random.key(1), (6, 2), dtype=jnp.float64)
    scan, doubling = (np.asarray(gflow.models.krylov_sequence(A, X, n, method)) for method in ("scan", "doubling"))
    assert scan.shape == doubling.shape == (n, 6, 2)
    np.testing.assert_allclose(doubling, scan, rtol=1e-12, atol=1e-14 * np.max(np.abs(scan)))


@pytest.mark.slow
def test_kernel_counts_see_the_krylov_loops():
    code = """
        import json
        import _kernels
        from test_batched_flows import stacked_batch, T1
        print(json.dumps(_kernels.batched_solve_counts(*stacked_batch(2), T1, rtol=1e-8, solver="rosenbrock")["step"]))
    """
    import json

    counts = {m: json.loads(_python(code, GFLOW_KRYLOV=m, GFLOW_COMPILATION_CACHE="0").splitlines()[-1])
              for m in ("scan", "doubling")}
    scan, doubling = counts["scan"], counts["doubling"]
    assert scan["kernels"] > 0 and scan["fusions"] > 0
    # the loop builds the Krylov sequences in inner while loops; doubling has none left but diffrax's save loop
    assert scan["while_loops"] >= doubling["while_loops"] + 4 and doubling["while_loops"] <= 1
    # host callbacks (equinox error checks) stay outside the step loop
    assert scan["host_callbacks"] == doubling["host_callbacks"] == 0
