"""Batched discrete runs (gflow.discrete.run_discrete_batch and its named forms): row i of a batch equals the
one-by-one run of member i, a diverging member stops alone, bad input is named, and the batch's stats hold a discrete
run's counts only."""

import logging

import jax
import numpy as np
import pytest

import gflow
from gflow import GflowInputError, initializers
from gflow.stacking import stack

STEPS = 40
SAVES = np.arange(0, STEPS + 1, 5)
LRS = np.array([0.01, 0.02, 0.03])


@pytest.fixture(scope="module")
def starts():
    return [initializers.gaussian(jax.random.key(10 + i), 4, scale=0.3) for i in range(len(LRS))]


@pytest.fixture(scope="module")
def dataset(balanced_teacher):
    return gflow.objectives.EmpiricalLoss.from_teacher(jax.random.key(3), balanced_teacher, 60, 5)


def assert_rows_equal(batch, singles):
    assert len(batch) == len(singles)
    for row, one in zip(batch, singles):
        assert row.status == one.status and row.message == one.message
        np.testing.assert_array_equal(row.ts, one.ts)
        np.testing.assert_array_equal(row.diagnostics["step"], one.diagnostics["step"])
        np.testing.assert_array_equal(row.diagnostics["learning_rate"], one.diagnostics["learning_rate"])
        np.testing.assert_allclose(row.params, one.params, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(row.loss, one.loss, rtol=1e-12, atol=1e-300)
        np.testing.assert_allclose(gflow.flatten(row.final)[0], gflow.flatten(one.final)[0], rtol=1e-12, atol=1e-15)
        assert row.stats["steps"] == one.stats["steps"]
        assert row.config == one.config


def test_batched_gd_with_per_member_step_sizes_equals_one_by_one(small_loss, starts):
    batch = gflow.discrete.run_gd_batch(small_loss, stack(starts), lr=LRS, steps=STEPS, save_at=SAVES)
    assert isinstance(batch, gflow.FlowBatch) and batch.statuses == ["completed"] * 3
    singles = [gflow.discrete.run_gd(small_loss, m, lr=float(lr), steps=STEPS, save_at=SAVES)
               for m, lr in zip(starts, LRS)]
    assert_rows_equal(batch, singles)
    assert batch.ts.shape == (3, len(SAVES)) and batch.params.shape == (3, len(SAVES), 24)
    np.testing.assert_array_equal(batch.ts, LRS[:, None] * SAVES[None, :])  # t = η·n
    # one results type for every method: a GD batch's stats hold its step counts, none of a flow's counts
    assert set(batch.stats) == {"steps"} and batch.steps is batch.stats["steps"]
    np.testing.assert_array_equal(batch.steps, [STEPS] * 3)
    with pytest.raises(AttributeError, match="no count 'rejected_steps'"):
        getattr(batch, "rejected_steps")  # noqa: B009


def test_batched_sgd_with_one_key_per_member_equals_one_by_one(dataset, starts):
    keys = jax.random.split(jax.random.key(7), len(starts))
    batch = gflow.discrete.run_sgd_batch(dataset, starts, lr=0.02, steps=STEPS, batch_size=10, key=keys,
                                         save_at=SAVES)
    singles = [gflow.discrete.run_sgd(dataset, m, lr=0.02, steps=STEPS, batch_size=10, key=keys[i], save_at=SAVES)
               for i, m in enumerate(starts)]
    assert_rows_equal(batch, singles)
    # one key is split per member: the same runs
    split = gflow.discrete.run_sgd_batch(dataset, starts, lr=0.02, steps=STEPS, batch_size=10,
                                         key=jax.random.key(7), save_at=SAVES)
    np.testing.assert_array_equal(split.params, batch.params)


def test_batched_adam_equals_one_by_one(small_loss, starts):
    batch = gflow.discrete.run_adam_batch(small_loss, stack(starts), lr=LRS, steps=STEPS, save_at=SAVES)
    singles = [gflow.discrete.run_adam(small_loss, m, lr=float(lr), steps=STEPS, save_at=SAVES)
               for m, lr in zip(starts, LRS)]
    assert_rows_equal(batch, singles)


def test_a_diverging_member_stops_alone(small_loss, starts):
    lrs = np.array([0.01, 50.0, 0.03])
    batch = gflow.discrete.run_gd_batch(small_loss, stack(starts), lr=lrs, steps=STEPS, save_at=SAVES)
    assert batch.statuses == ["completed", "diverged", "completed"]
    assert "diverged at step" in batch[1].message and batch[1].stats["steps"] < STEPS
    assert np.all(np.isfinite(batch[1].params))
    singles = [gflow.discrete.run_gd(small_loss, m, lr=float(lr), steps=STEPS, save_at=SAVES)
               for m, lr in zip(starts, lrs)]
    assert_rows_equal(batch, singles)


def test_bad_batch_input_is_named(small_loss, starts):
    models = stack(starts)
    with pytest.raises(GflowInputError, match="`lr`"):
        gflow.discrete.run_gd_batch(small_loss, models, lr=np.array([0.01, 0.02]), steps=5)
    with pytest.raises(GflowInputError, match="`models0`"):
        gflow.discrete.run_gd_batch(small_loss, starts[0], lr=0.01, steps=5)  # one model, not a batch
    with pytest.raises(GflowInputError, match="`model0`"):
        gflow.discrete.run_gd(small_loss, starts, lr=0.01, steps=5)  # a list where one model goes
    with pytest.raises(GflowInputError, match="`key`"):
        gflow.discrete.run_sgd_batch(gflow.objectives.EmpiricalLoss.from_teacher(
            jax.random.key(3), gflow.teachers.balanced(jax.random.key(0), 3), 60, 5), models, lr=0.01, steps=5,
            batch_size=10, key=jax.random.split(jax.random.key(0), 2))


def test_batched_projected_gd_takes_one_projection_per_member(small_loss, starts):
    projections = [gflow.discrete.box_projection(m, "A", 0.05) for m in starts]
    batch = gflow.discrete.run_projected_gd_batch(small_loss, starts, lr=0.02, steps=STEPS, projection=projections,
                                                  save_at=SAVES)
    singles = [gflow.discrete.run_projected_gd(small_loss, m, lr=0.02, steps=STEPS, projection=p, save_at=SAVES)
               for m, p in zip(starts, projections)]
    assert_rows_equal(batch, singles)
    assert batch[0].config["method"] == "projected_gd"
    with pytest.raises(GflowInputError, match="`projection`"):
        gflow.discrete.run_projected_gd_batch(small_loss, starts, lr=0.02, steps=5, projection=projections[:2])


SHARDED = """
import jax, numpy as np, gflow
from gflow import initializers
from gflow.stacking import stack
assert len(jax.devices()) == 2
loss = gflow.PopulationLoss(gflow.teachers.balanced(jax.random.key(0), 3), 5)
starts = [initializers.gaussian(jax.random.key(10 + i), 4, scale=0.3) for i in range(3)]
lrs, saves = np.array([0.01, 50.0, 0.03]), np.arange(0, 41, 5)
batch = gflow.discrete.run_gd_batch(loss, stack(starts), lr=lrs, steps=40, save_at=saves)
assert batch.statuses == ["completed", "diverged", "completed"], batch.statuses
for row, m, lr in zip(batch, starts, lrs):
    one = gflow.discrete.run_gd(loss, m, lr=float(lr), steps=40, save_at=saves)
    np.testing.assert_allclose(row.params, one.params, rtol=1e-12, atol=1e-15)
print("ok")
"""


def test_a_batch_is_split_over_two_devices(tmp_path):
    import os
    import subprocess
    import sys

    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2")
    done = subprocess.run([sys.executable, "-c", SHARDED], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "ok" in done.stdout, done.stderr[-2000:]


def test_a_batch_compiles_its_step_loop_once(small_loss, caplog):
    """Every chunk of a run (one per saved step) calls the same compiled loop: a run state whose leaves change between
    weakly and strongly typed from one chunk to the next would compile it again at the first chunks (seconds each
    at study sizes). The starts are new shapes here, so the loop is compiled in this test."""
    starts = [initializers.gaussian(jax.random.key(40 + i), 7, scale=0.3) for i in range(2)]
    caplog.set_level(logging.WARNING)
    with jax.log_compiles(True):
        gflow.discrete.run_adam_batch(small_loss, stack(starts), lr=1e-3, steps=STEPS, save_at=SAVES)
    compiles = [r for r in caplog.records if "Compiling" in r.getMessage() and "advance" in r.getMessage()]
    assert len(compiles) == 1, [r.getMessage()[:120] for r in compiles]
