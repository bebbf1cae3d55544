"""Nonlinear models under solve_flow and solve_flows: the loss falls, fixed layers stay exactly at their
initialization and are not coordinates of the flow, trajectories save and load them."""

import equinox as eqx
import jax
import numpy as np
import pytest

import gflow

key = jax.random.key
N, T, M = 8, 5, 6


@pytest.fixture(scope="module")
def loss():
    """A diagonal tanh RNN teacher within reach of the students: a displaced symmetric initialization."""
    teacher = gflow.models.elman_cayci_eryilmaz(key(0), M, alpha=0.5)
    teacher = eqx.tree_at(lambda m: m.A, teacher, teacher.A + np.random.default_rng(1).normal(size=M))
    return gflow.objectives.SampleLoss.from_teacher(key(2), teacher, N, T, sampler=gflow.objectives.unit_ball_sequences)


@pytest.mark.slow
def test_batched_stiff_matrix_free_flows_keep_the_fixed_readout(loss, tmp_path):
    models = [gflow.models.elman_cayci_eryilmaz(key(s), M, alpha=0.5) for s in (3, 4)]
    trajs = gflow.solve_flows([loss, loss], models, 20.0, solver="rosenbrock-cg", rtol=1e-6, save_at=4,
                              progress=False)
    for model0, traj in zip(models, trajs):
        assert traj.status == "completed" and traj.loss[-1] < 0.5 * traj.loss[0]
        assert traj.params.shape == (4, M + M)  # W_ii and U_i only: c and 1/√m are not coordinates of the flow
        np.testing.assert_array_equal(traj.final.B.value, model0.B.value)
        np.testing.assert_array_equal(traj.final.output_scale.value, model0.output_scale.value)
        assert not np.array_equal(traj.final.W, model0.W)
    for i, model0 in enumerate(models):  # the stacked final models keep each flow's own fixed layers too
        np.testing.assert_array_equal(trajs.final.B.value[i], model0.B.value)
    loaded = gflow.load_trajectory(trajs[0].save(str(tmp_path / "run")))
    np.testing.assert_array_equal(loaded.final.B.value, models[0].B.value)
    assert float(loss(loaded.model_at(3))) == pytest.approx(trajs[0].loss[3], rel=1e-12)


def test_gru_flow(loss):
    traj = gflow.solve_flow(loss, gflow.models.gru(key(5), 3, scale=0.5), 5.0, solver="tsit5", rtol=1e-6, save_at=4,
                            progress=False)
    assert traj.status == "completed" and traj.loss[-1] < 0.5 * traj.loss[0]
