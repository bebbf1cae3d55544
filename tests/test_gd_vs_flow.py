"""Comparison measures of gflow.analysis: distances to the flow, step-size scaling, Q drift under GD, preservation
of the symmetric class under GD / SGD / Adam, sharpness and the stability edge; the study's checks (quick mode)."""

import dataclasses
import json
import os
import subprocess
import sys

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gflow
from conftest import REF_SAVES
from gflow import analysis as an, flatten, GflowInputError, initializers


class Vector(eqx.Module):
    theta: jax.Array


class DiagonalQuadratic(eqx.Module):
    """L(θ) = Σ_i c_i θ_i²: Hessian diag(2c), so λ_max = 2 max c and GD is stable iff η < 1/max c."""

    c: jax.Array

    def __call__(self, model):
        return jnp.sum(self.c * model.theta**2)


@pytest.fixture(scope="module")
def symmetric_start():
    """A = Aᵀ, B = Cᵀ stored as a general model: GD on (A, B, C) is free to leave the class, and must not."""
    m = initializers.balanced(jax.random.key(4), 4, scale=0.3, structure="symmetric")
    return gflow.LinearRNN(m.transition(), m.B, m.C, structure="general")


def shifted(traj, delta):
    """The same trajectory with every parameter row moved by ``delta``."""
    return dataclasses.replace(traj, params=traj.params + delta)


# ------------------------------------------------------------------------------------- distance measures
def test_distances_by_hand(reference_flow):
    flow = reference_flow
    n = flow.params.shape[1]
    delta = np.zeros(n)
    delta[-1] = 3e-3  # the last entry of C
    other = shifted(flow, delta)
    np.testing.assert_allclose(an.parameter_distance(other, flow), 3e-3, rtol=1e-12)
    scale = np.max(np.linalg.norm(flow.params, axis=1))
    np.testing.assert_allclose(an.parameter_distance(other, flow, relative=True), 3e-3 / scale, rtol=1e-12)
    # h_j = C A^j B changes by 3e-3 · (A^j B)_last; the ℓ∞ distance is the largest over j < 5
    expected = []
    for i in range(len(flow.ts)):
        A, B = np.asarray(flow.model_at(i).A), np.asarray(flow.model_at(i).B)
        expected.append(3e-3 * max(abs((np.linalg.matrix_power(A, j) @ B)[-1]) for j in range(5)))
    np.testing.assert_allclose(an.impulse_response_distance(other, flow, 5), expected, rtol=1e-9)
    same = an.distance_to_flow(flow, flow)
    assert set(same) == {"parameters", "impulse_response", "loss"}
    assert all(np.all(v == 0) for v in same.values())
    moved = dataclasses.replace(flow, loss=flow.loss + 1e-4)
    np.testing.assert_allclose(an.loss_gap(moved, flow), 1e-4, rtol=1e-9)


def test_distances_need_matched_times(reference_flow):
    later = dataclasses.replace(reference_flow, ts=reference_flow.ts * 1.001)
    with pytest.raises(GflowInputError, match="save_at=discrete.ts"):
        an.parameter_distance(later, reference_flow)
    with pytest.raises(GflowInputError, match="`n`"):
        an.impulse_response_distance(reference_flow, reference_flow, 0)


def test_step_size_scaling_and_drift_exponents_on_exact_power_laws():
    etas = np.array([0.1, 0.05, 0.025])
    s = an.step_size_scaling(etas, 3.0 * etas**1.0)
    assert s["exponent"] == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(s["ratios"], 2.0)
    ts = [np.geomspace(0.01, 1.0, 9)] * 3
    drifts = [0.7 * eta**1.0 * t**1.5 for eta, t in zip(etas, ts)]
    p, q = an.fit_drift_exponents(etas, ts, drifts, t_max=0.5)
    assert p == pytest.approx(1.0, abs=1e-10) and q == pytest.approx(1.5, abs=1e-10)
    with pytest.raises(GflowInputError, match="two or more step sizes"):
        an.fit_drift_exponents(etas[:1], ts[:1], drifts[:1])


# ------------------------------------------------------------------------------------------------ Q drift
def test_one_gd_step_changes_q_by_exactly_eta_squared_times_the_gradient_form(small_loss, general_start):
    """ΔQ = η²(G_A G_Aᵀ − G_AᵀG_A + G_B G_Bᵀ − G_CᵀG_C): the first-order terms cancel as for the flow."""
    eta = 0.05
    traj = gflow.discrete.run_gd(small_loss, general_start, lr=eta, steps=30, save_at=np.arange(31))
    g = eqx.filter_grad(small_loss)(general_start)
    G_A, G_B, G_C = np.asarray(g.A), np.asarray(g.B)[:, None], np.asarray(g.C)[None, :]
    predicted = eta**2 * (G_A @ G_A.T - G_A.T @ G_A + G_B @ G_B.T - G_C.T @ G_C)
    Q = an.along(traj, an.balance_matrix)
    np.testing.assert_allclose(Q[1] - Q[0], predicted, atol=1e-15)


def test_q_drift_under_gd_is_first_order_in_eta_and_zero_under_the_flow(small_loss, general_start, reference_flow):
    runs = [gflow.discrete.run_gd(small_loss, general_start, lr=eta, steps=steps, save_at=REF_SAVES)
            for eta, steps in ((0.02, 250), (0.01, 500))]
    drift = [an.balance_matrix_drift(traj) for traj in runs]
    assert drift[0][0] == 0.0 and np.all(drift[0][1:] > 0)
    assert drift[0][-1] / drift[1][-1] == pytest.approx(2.0, rel=0.05)  # ∝ η at t = 5
    assert np.nanmax(an.balance_matrix_drift(reference_flow)) < 1e-3 * drift[1][-1]


# --------------------------------------------------------------------------------- the symmetric class
def test_defects_by_hand():
    m = gflow.LinearRNN(np.array([[1.0, 0.5], [0.3, 2.0]]), np.array([1.0, -4.0]), np.array([1.0, -3.0]))
    assert float(an.symmetry_defect(m)) == pytest.approx(0.2 / 2.0)
    assert float(an.balance_defect(m)) == pytest.approx(1.0 / 4.0)
    with pytest.raises(GflowInputError, match="equal shape"):
        an.balance_defect(initializers.gaussian(jax.random.key(0), 3, scale=1.0, n_in=2, n_out=1))


def test_gd_sgd_and_adam_keep_a_and_b_on_the_symmetric_class(symmetric_start, small_loss, balanced_teacher):
    data = gflow.objectives.EmpiricalLoss.from_teacher(jax.random.key(3), balanced_teacher, 60, 5)
    runs = {
        "gd": gflow.discrete.run_gd(small_loss, symmetric_start, lr=0.02, steps=250, save_at=REF_SAVES),
        "sgd": gflow.discrete.run_sgd(data, symmetric_start, lr=0.02, steps=250, batch_size=10, key=jax.random.key(5),
                             save_at=REF_SAVES),
        "adam": gflow.discrete.run_adam(small_loss, symmetric_start, steps=250, lr=0.01, save_at=REF_SAVES),
    }
    for name, traj in runs.items():
        assert traj.status == "completed" and traj.loss[-1] < 0.5 * traj.loss[0], name  # it moved
        assert np.max(an.along(traj, an.balance_defect)) <= 1e-13, name
        assert np.max(an.along(traj, an.symmetry_defect)) <= 1e-13, name


def test_an_unbalanced_start_has_order_one_defects(reference_flow):
    assert np.min(an.along(reference_flow, an.balance_defect)) > 0.1
    assert np.min(an.along(reference_flow, an.symmetry_defect)) > 0.1


# ------------------------------------------------------------------------------ sharpness, stability edge
def test_sharpness_equals_the_top_hessian_eigenvalue(small_loss, general_start):
    theta, static, unravel = flatten(general_start)
    grad = jax.jit(jax.grad(lambda th: small_loss(eqx.combine(unravel(th), static))))
    h, eye = 1e-5, np.eye(theta.size)
    H = np.stack([(grad(theta + h * e) - grad(theta - h * e)) / (2 * h) for e in eye])  # central differences
    eig = np.linalg.eigvalsh(0.5 * (H + H.T))
    assert eig[0] < -eig[-1]  # a negative eigenvalue dominates in magnitude here
    assert an.sharpness(small_loss, general_start, iterations=24) == pytest.approx(eig[-1], rel=1e-8)


def test_power_iteration_finds_the_top_eigenvalue_even_when_a_negative_one_dominates():
    loss = DiagonalQuadratic(jnp.array([-3.0, 1.0, 2.0]))  # Hessian diag(−6, 2, 4)
    model = Vector(jnp.array([1.0, 1.0, 1.0]))
    assert an.sharpness(loss, model, method="power", iterations=200) == pytest.approx(4.0, rel=1e-10)
    assert an.sharpness(loss, model, iterations=3) == pytest.approx(4.0, rel=1e-12)


def test_sharpness_along_a_trajectory(small_loss, reference_flow):
    lam = an.sharpness_along(small_loss, reference_flow, iterations=24)
    assert lam.shape == reference_flow.ts.shape
    for i in (0, len(lam) - 1):
        assert lam[i] == pytest.approx(an.sharpness(small_loss, reference_flow.model_at(i), iterations=24),
                                       rel=1e-12)


def test_gd_is_stable_below_the_edge_and_diverges_above_it():
    loss = DiagonalQuadratic(jnp.array([0.5, 2.0, 5.0]))
    model0 = Vector(jnp.array([1.0, -1.0, 0.5]))
    lam = an.sharpness(loss, model0, iterations=3)
    assert lam == pytest.approx(10.0, rel=1e-12)
    edge = an.stability_edge(lam)
    assert edge == pytest.approx(0.2)
    below = gflow.discrete.run_gd(loss, model0, lr=0.95 * edge, steps=300, save_at=REF_SAVES)
    above = gflow.discrete.run_gd(loss, model0, lr=1.1 * edge, steps=300, save_at=REF_SAVES)
    assert below.status == "completed" and below.loss[-1] < 1e-10
    assert above.status == "diverged" and np.all(np.isfinite(above.params))
    with pytest.raises(GflowInputError, match="`lambda_max`"):
        an.stability_edge(0.0)
    with pytest.raises(GflowInputError, match="`method`"):
        an.sharpness(loss, model0, method="arnoldi")
    with pytest.raises(GflowInputError, match="`iterations`"):
        an.sharpness(loss, model0, iterations=0)


def test_the_study_script_describes_itself():
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    proc = subprocess.run([sys.executable, "studies/gd_vs_flow.py", "--help"], cwd=repo, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    for option in ("--quick", "--out", "--adam-lr", "--n-fit", "--rtol"):
        assert option in proc.stdout


@pytest.mark.slow
def test_the_study_quick_mode_classifies_its_checks(tmp_path):
    """Quick mode is a smoke test: every check has a kind and a status, the sanity checks pass (exit code 0), and
    each prediction check names the predictions it tests."""
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = tmp_path / "gd_vs_flow"
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONUNBUFFERED="1")
    proc = subprocess.run([sys.executable, "studies/gd_vs_flow.py", "--quick", "--out", str(out)], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    with open(out / "summary.json") as f:
        summary = json.load(f)
    checks = summary["checks"]
    assert len(checks) == 26 and summary["sanity_passed"] is True
    for c in checks:
        assert c["kind"] in ("prediction", "sanity") and c["status"] in ("pass", "FAIL", "inconclusive"), c
        assert c["passed"] == (c["status"] == "pass")
        if c["kind"] == "sanity":
            assert c["status"] == "pass", c["claim"]
    predictions = [c for c in checks if c["kind"] == "prediction"]
    assert len(predictions) == 12 and all(c["predictions"] for c in predictions)
    for problem in ("balanced", "memoryless"):
        ours = [c for c in predictions if c["claim"].startswith(problem)]
        assert sum(c["predictions"] == ["000-P2"] for c in ours) == 2  # Q drift ∝ η: at the horizon, early phase
        keep = [c for c in ours if "keeps max|A − Aᵀ|" in c["claim"]]
        assert len(keep) == 4 and all("001-5" in c["predictions"] for c in keep)  # flow, GD, SGD, Adam
    first_order = [c for c in checks if "GD is first order" in c["claim"]]
    assert len(first_order) == 4 and all(c["kind"] == "sanity" for c in first_order)
    assert {p for p in os.listdir(out) if p.endswith(".png")} == {
        "distance_to_flow.png", "step_size_scaling.png", "q_drift.png", "methods.png", "sharpness.png"}
