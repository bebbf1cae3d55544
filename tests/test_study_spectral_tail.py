"""spectral_tail: the symmetric-class flow in spectral coordinates is the float64 flow's (its velocity, its tail, a
short integration), its registered checks decide on the fresh block, and its controls fail."""

import json
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gflow
import memoryless as mls
import spectral_tail as st
from gflow import teachers
from gflow.problems import memoryless as ml
from gflow.study import check_role, control_problems, preregistration_problems, REGISTERED

jax.config.update("jax_enable_x64", True)
TARGET = np.eye(1, 5)[0]  # w* = 1, k = 5


def _dense_velocity_in_spectral_coordinates(A, c):
    """d(λ, log|c̃|)/dt from the float64 flow's gradient of L(A, B, C) at B = Cᵀ = c (first-order eigen-perturbation)."""
    def loss(A, B, C):
        h = jnp.stack([C @ jnp.linalg.matrix_power(A, j) @ B for j in range(5)])
        return jnp.sum((h - TARGET) ** 2)

    gA, _, gC = jax.grad(loss, argnums=(0, 1, 2))(A, c, c)
    Adot, cdot = -np.asarray(gA), -np.asarray(gC)
    lam, U = np.linalg.eigh(A)
    M, ct = U.T @ Adot @ U, U.T @ c
    gap = lam[:, None] - lam[None, :]
    rot = np.array([sum(M[q, p] * ct[q] / gap[p, q] for q in range(len(lam)) if q != p) for p in range(len(lam))])
    return np.concatenate([np.diag(M), (U.T @ cdot + rot) / ct])


@pytest.mark.parametrize("sigma", [0.3, 2.0])
def test_the_spectral_velocity_is_the_float64_flows_gradient_in_eigen_coordinates(sigma):
    m = ml.symmetric_start(7, 6, sigma)
    A, c = np.asarray(m.transition()), np.asarray(m.C)
    expected = _dense_velocity_in_spectral_coordinates(A, c)
    got = np.asarray(st.spectral_velocity(jnp.asarray(st.spectral_state(m)), jnp.asarray(TARGET)))
    np.testing.assert_allclose(got, expected, rtol=1e-8, atol=1e-10 * np.abs(expected).max())


def test_a_wrong_rotation_term_is_caught():
    """Negative control of the test above: dropping the eigenvector rotation changes the loads' velocity."""
    m = ml.symmetric_start(7, 6, 1.0)
    A, c = np.asarray(m.transition()), np.asarray(m.C)
    expected = _dense_velocity_in_spectral_coordinates(A, c)
    y = st.spectral_state(m)
    lam, load2 = y[:6], np.exp(2 * y[6:])
    r = np.array([(load2 * lam ** j).sum() for j in range(5)]) - TARGET
    no_rotation = np.concatenate([expected[:6], -2 * np.array([(r * lam[p] ** np.arange(5)).sum() for p in range(6)])])
    assert np.max(np.abs(no_rotation[6:] - expected[6:])) > 1e-3 * np.abs(expected[6:]).max()


def test_the_tail_from_spectral_coordinates_is_the_decimal_tail_of_the_model():
    m = ml.symmetric_start(3, 6, 1.0)
    exact = mls.precise_tail(m, 5, 40)
    assert st.spectral_tail(st.spectral_state(m), 5, 40) == pytest.approx(exact, rel=1e-10)


def test_a_short_spectral_flow_follows_the_float64_flow():
    m = ml.symmetric_start(5, 4, 1.0)
    ts = np.concatenate([[0.0], np.geomspace(1e-4, 10.0, 30)])
    ys, steps, ok = st.solve_spectral(st.spectral_state(m)[None], jnp.asarray(TARGET), 10.0, 1e-10, jnp.asarray(ts))
    traj = gflow.solve_flows([gflow.PopulationLoss(teachers.memoryless(1.0), 5)], [m], 10.0, rtol=1e-10,
                             save_at=ts[1:])[0]
    assert bool(ok[0]) and int(steps[0]) > 10
    np.testing.assert_allclose(st.spectral_loss(ys[0], TARGET)[1:], np.asarray(traj.loss), rtol=1e-6)
    np.testing.assert_allclose(np.sort(ys[0, -1, :4]), np.linalg.eigvalsh(np.asarray(traj.final.transition())),
                               atol=1e-8)


def test_the_blocks_and_the_arguments():
    assert st.parse_args(["--seeds-block", "confirmatory"]).seed_list == list(range(1600, 1620))
    assert st.parse_args([]).seed_list == list(range(10))
    for bad in (["--k", "2"], ["--w", "-1"], ["--horizon", "5"], ["--seeds", "0"]):
        with pytest.raises(SystemExit):
            st.parse_args(bad)


def test_a_confirmatory_record_decides_001_6_and_the_controls_fail():
    seeds = list(range(1600, 1620))
    loss = np.geomspace(1.0, 1e-18, 160)
    run = mls.tail_vanishing(loss, 1e3 * np.sqrt(loss))
    entries = mls.tail_checks({sig: {s: run for s in seeds} for sig in (0.3, 1.0, 2.0)}, "confirmatory", k=5, H=100,
                              reading=st.READING)
    record = {"study": "spectral_tail", "seeds_block": "confirmatory", "checks": entries,
              "config": {"seeds_block": "confirmatory", "seed_list": seeds}}
    assert preregistration_problems([record]) == []
    assert {c["check_id"]: check_role(record, c, REGISTERED)[0] for c in entries} == {
        f"001-6_tail_vanishes_sigma{s}": "deciding" for s in ("0.3", "1", "2")}
    assert {c["status"] for c in entries} == {"pass"}
    controls = st.negative_controls()
    assert len(controls) == 3 and {c.entry["status"] for c in controls} == {"FAIL"}
    assert control_problems(controls, REGISTERED) == []


def test_a_quick_run_writes_its_summary_and_figure(tmp_path):
    out = str(tmp_path / "st")
    assert st.main(["--quick", "--sigmas", "2", "--seeds", "1", "--t1", "1e3", "--out", out, "--record", ""]) == 0
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    assert set(summary["results"]["by_sigma"]) == {"2"}
    assert os.path.exists(os.path.join(out, "spectral_tail.png"))
