"""studies/memory_cutoff.py (seed 003) at a tiny size, and the Proposition-1 gradients it relies on."""

import json
import os

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gflow
import memory_cutoff
from gflow import analysis as an
from gflow.objectives.nonlinear_teachers import transport_teacher

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TINY = ["--quick", "--m", "8", "--n", "4", "--tau", "20", "--lengths", "2", "5", "--step-multipliers", "1", "64",
        "--p13-length", "5", "--grad-length", "14", "--fit-steps", "8", "--teacher-samples", "64"]


def test_tiny_run_writes_summary_and_figures(tmp_path):
    out = tmp_path / "mc"
    memory_cutoff.main(TINY + ["--out", str(out)])
    with open(out / "summary.json") as f:
        summary = json.load(f)
    assert summary["study"] == "memory_cutoff" and summary["config"]["m"] == 8
    checks = {c["claim"]: c for c in summary["checks"]}
    assert len(checks) >= 12
    for c in summary["checks"]:
        assert {"claim", "source", "value", "threshold", "passed", "predictions"} <= set(c)
        assert c["source"].startswith("seed 003")
    exact = [c for c in summary["checks"] if any(p in c["predictions"] for p in ("003-P1", "003-P2", "003-P8"))
             and "R_S(Θ(0))" not in c["claim"]]
    assert exact and all(c["passed"] for c in exact), [c["claim"] for c in exact if not c["passed"]]
    for name in ("memory_cutoff.png", "projected_gd.png"):
        assert os.path.getsize(out / name) > 10_000
    rows = summary["results"]["part_e"]["rows"]
    assert {r["T"] for r in rows} == {2, 5} and all(r["excess"] <= 1e-12 for r in rows)


@pytest.mark.parametrize("d,activation", [(None, "logistic"), (3, "tanh")])
def test_proposition_1_matches_autodiff_away_from_init(d, activation):
    model = gflow.models.elman_cayci_eryilmaz(jax.random.key(0), 6, d, alpha=1.2, activation=activation)
    model = eqx.tree_at(lambda mm: mm.W, model, model.W * jnp.linspace(0.8, 1.3, 6))
    x = gflow.objectives.unit_ball_sequences(jax.random.key(1), 1, 9, d)[0]
    d_w, d_u = an.hidden_state_gradients(model, x)

    def states(W, A):
        return eqx.tree_at(lambda mm: (mm.W, mm.A), model, (W, A)).hidden_states(x)

    jac_w, jac_a = jax.jacrev(states, argnums=(0, 1))(model.W, model.A)
    np.testing.assert_allclose(d_w, np.einsum("tii->ti", jac_w), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(d_u, np.einsum("tii...->ti...", jac_a), rtol=1e-12, atol=1e-15)
    norms = an.hidden_state_gradient_norms(model, x)
    np.testing.assert_allclose(norms[-1], np.sqrt(d_w[-1] ** 2 + np.sum(np.reshape(d_u[-1], (6, -1)) ** 2, axis=1)))


def test_loss_gradient_through_proposition_1_matches_autodiff():
    teacher = transport_teacher(jax.random.key(2), 2, alpha=0.7, n_samples=32)
    loss = gflow.objectives.SampleLoss.from_teacher(jax.random.key(3), teacher, 5, 7,
                                         sampler=lambda k, n, t: gflow.objectives.unit_ball_sequences(k, n, t, 2))
    model = gflow.models.elman_cayci_eryilmaz(jax.random.key(4), 8, 2, alpha=0.7)
    model = eqx.tree_at(lambda mm: mm.A, model, model.A + 0.1)  # output no longer zero
    gw, gu = an.sample_loss_gradient(model, loss)
    g = eqx.filter_grad(loss)(model)
    np.testing.assert_allclose(gw, g.W, rtol=1e-11, atol=1e-15)
    np.testing.assert_allclose(gu, g.A, rtol=1e-11, atol=1e-15)
    assert float(jnp.max(jnp.abs(g.W))) > 1e-6  # a non-trivial gradient was compared


def test_proposition_1_rejects_full_recurrence():
    full = gflow.models.elman_panigrahi_goyal(jax.random.key(0), 4, 2)
    with pytest.raises(gflow.GflowInputError, match="diagonal"):
        an.hidden_state_gradients(full, jnp.zeros((3, 2)))


@pytest.mark.parametrize("bad", [["--m", "7"], ["--alphas", "1.2", "1.5"], ["--rho", "0.5"], ["--lengths", "4"],
                                 ["--activation", "relu"]])
def test_bad_configuration_is_a_clear_error(bad, tmp_path):
    with pytest.raises(gflow.GflowInputError):
        memory_cutoff.parse_args(["--quick", "--out", str(tmp_path)] + bad)
