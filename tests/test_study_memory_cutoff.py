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
from gflow.objectives.nonlinear_teachers import transport_teacher, TransportTeacher
from gflow.problems import memory_cutoff as cutoff_problem
from gflow.study import exit_code

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TINY = ["--quick", "--m", "8", "--n", "4", "--tau", "20", "--lengths", "2", "5", "--step-multipliers", "1", "64",
        "--p13-length", "5", "--grad-length", "14", "--fit-steps", "8", "--teacher-samples", "64",
        "--transport-length", "3", "--transport-samples", "256", "--p6-widths", "8", "32", "--p10-sizes", "3", "12",
        "--p10-tau", "10", "--test-sequences", "16"]


@pytest.mark.slow
def test_tiny_run_writes_summary_and_figures(tmp_path):
    out = tmp_path / "mc"
    code = memory_cutoff.main(TINY + ["--out", str(out)])
    with open(out / "summary.json") as f:
        summary = json.load(f)
    assert summary["study"] == "memory_cutoff" and summary["config"]["m"] == 8
    checks = summary["checks"]
    assert code == exit_code(checks) and len({c["claim"] for c in checks}) == len(checks) == 22
    for c in checks:
        assert {"claim", "source", "kind", "status", "value", "threshold", "passed", "predictions"} <= set(c)
        assert c["source"].startswith("seed 003") and c["kind"] in ("prediction", "sanity")
    # identities (P1, P2), arithmetic (P11 a), the gradients' bound and growth at init (P11 b), the projection's
    # guarantees (P8 a, P13 first half) and the transported point's feasibility (P6) are sanity checks and hold even at
    # this size
    sanity = [c for c in checks if c["kind"] == "sanity"]
    assert len(sanity) == 13 and all(c["passed"] for c in sanity), [c["claim"] for c in sanity if not c["passed"]]
    assert {p for c in sanity for p in c["predictions"]} == {"003-P1", "003-P2", "003-P6", "003-P8", "003-P11",
                                                             "003-P13"}
    predictions = [c for c in checks if c["kind"] == "prediction"]
    assert {p for c in predictions for p in c["predictions"]} == {"003-P3", "003-P6", "003-P8", "003-P10",
                                                                  "003-P11", "003-P14", "003-F1"}
    deciding = [c for c in predictions if {"003-P8", "003-P10", "003-P11", "003-P14"} & set(c["predictions"])]
    assert len(deciding) == 6 and all(c["check_id"] and c["seeds"] == [0, 1] for c in deciding)
    seeds = [c for c in predictions if "interval" in c]  # the medians over seeds of parts E, G and H
    assert len(seeds) == 5 and all(c["n"] == 2 for c in seeds)  # --quick: two seeds
    p10 = [c for c in seeds if "003-P10" in c["predictions"]][0]
    assert p10["threshold"] == pytest.approx(memory_cutoff.P10_SLACK * np.sqrt(np.log(12) / np.log(3)))
    assert p10["direction"] == "<=" and set(p10["median_test_loss_per_n"]) == {"3", "12"}
    p6 = [c for c in seeds if "003-P6" in c["predictions"]][0]
    assert p6["direction"] == "in" and p6["threshold"] == list(memory_cutoff.P6_EXPONENT)
    p13 = [c for c in predictions if c["claim"].startswith("P13 (derived here")]
    assert len(p13) == 1 and {"c_projected", "c_plain"} <= set(p13[0]) and p13[0]["predictions"] == ["003-F1"]
    for name in ("memory_cutoff.png", "projected_gd.png", "transport_samples.png"):
        assert os.path.getsize(out / name) > 10_000
    rows = summary["results"]["part_e"]["rows"]
    assert {r["T"] for r in rows} == {2, 5} and all(r["excess"] <= 1e-12 for r in rows)
    h = summary["results"]["part_h"]
    assert np.shape(h["best"]) == np.shape(h["test"]) == (2, 2) and np.all(np.asarray(h["best"]) < h["R0"])


def test_transported_point_linearizes_to_the_teacher_on_the_students_own_neurons():
    """Remark 4: with the teacher's M samples equal to the student's first m/2 neurons (the second half repeats them),
    F^Lin(Θ̄) = (1/m) Σ_i Z⁽ⁱ⁾ is exactly the teacher's Monte-Carlo mean; a wrong sign of c_i or a wrong scale 1/√m
    in transported_point breaks it."""
    m, d, alpha = 12, 2, 0.6
    model0 = gflow.models.elman_cayci_eryilmaz(jax.random.key(5), m, d, alpha=alpha)
    w0, u0 = model0.W[: m // 2], model0.A[: m // 2]
    v_plus, v_minus, v_u = 0.7, -0.4, jnp.asarray([0.6, -0.8])
    network = gflow.models.ElmanRNN(w0, u0, jnp.full(m // 2, 2.0 / m), activation="tanh", trained=("W", "A"))
    teacher = TransportTeacher(network, jnp.where(w0 > 0, v_plus, v_minus), jnp.tile(v_u, (m // 2, 1)), 1.0, 1.0)
    assert np.any(w0 > 0) and np.any(w0 < 0)  # both transport values are used
    bar = cutoff_problem.transported_point(teacher, model0)
    params, static = eqx.partition(model0, eqx.is_inexact_array)
    tangent = jax.tree_util.tree_map(lambda a, b: a - b, eqx.partition(bar, eqx.is_inexact_array)[0], params)
    x = gflow.objectives.unit_ball_sequences(jax.random.key(6), 1, 7, d)[0]
    f_lin = jax.jvp(lambda p: eqx.combine(p, static)(x), (params,), (tangent,))[1]
    np.testing.assert_allclose(f_lin, teacher(x), rtol=1e-12, atol=1e-14)
    assert float(jnp.max(jnp.abs(teacher(x)))) > 1e-3
    assert cutoff_problem.squared_distance(bar, model0) == pytest.approx(
        (np.sum(np.where(model0.W > 0, v_plus, v_minus) ** 2) + m * float(v_u @ v_u)) / m, rel=1e-12)


def test_flow_bound_holds_for_a_convex_quadratic_flow():
    """P14's inequality (1/t)∫R <= R(θ̄) + ‖θ(0) − θ̄‖²/(2t) for the exact flow of R(θ) = ‖Aθ − b‖² (convex), any θ̄;
    and flow_bound_excess integrates a known curve: R = e^{−t} gives the average (1 − e^{−t})/t."""
    rng = np.random.default_rng(0)
    A, b, theta0 = rng.normal(size=(5, 3)), rng.normal(size=5), rng.normal(size=3)
    lam, V = np.linalg.eigh(A.T @ A)
    star = np.linalg.lstsq(A, b, rcond=None)[0]
    ts = np.concatenate([[0.0], np.geomspace(1e-4, 1e2, 4000)])
    path = star + (V * np.exp(-2 * np.outer(ts, lam))[:, None, :] @ (V.T @ (theta0 - star)))  # dθ/dt = −∇R
    losses = np.sum((path @ A.T - b) ** 2, axis=1)
    for bar in (star, rng.normal(size=3), theta0):
        excess, ratio = cutoff_problem.flow_bound_excess(ts, losses, float(np.sum((A @ bar - b) ** 2)),
                                                        float(np.sum((theta0 - bar) ** 2)))
        assert np.max(excess) <= 1e-9 and np.max(ratio) <= 1 + 1e-9
    with np.errstate(divide="ignore"):  # a zero bound: the ratio is infinite, the excess is the average
        excess, _ = cutoff_problem.flow_bound_excess(ts, np.exp(-ts), 0.0, 0.0)
    np.testing.assert_allclose(excess, -np.expm1(-ts[1:]) / ts[1:], rtol=1e-5)


def test_averaged_loss_is_the_loss_at_the_mean_parameters():
    args = memory_cutoff.parse_args(TINY)
    _, loss, model0 = cutoff_problem.problem(args, args.alphas[0], 3, 0)
    traj = gflow.discrete.run_projected_gd(loss, model0, lr=0.05, steps=4, projection=cutoff_problem.projection_of(
        args, model0), save_at=np.arange(5), progress=False)
    mean = eqx.tree_at(lambda m: (m.W, m.A), model0, tuple(
        np.mean([getattr(traj.model_at(i), k) for i in range(2)], axis=0) for k in ("W", "A")))
    assert cutoff_problem.averaged_loss(loss, traj, 2) == pytest.approx(float(loss(mean)), rel=1e-12)
    assert cutoff_problem.averaged_loss(loss, traj, 1) == pytest.approx(float(traj.loss[0]), rel=1e-12)


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
                                 ["--activation", "relu"], ["--tau", "1"], ["--p6-widths", "64"],
                                 ["--p6-widths", "63", "128"], ["--p10-sizes", "1", "10"]])
def test_bad_configuration_is_a_clear_error(bad, tmp_path, capsys):
    with pytest.raises(SystemExit):
        memory_cutoff.parse_args(["--quick", "--out", str(tmp_path)] + bad)
    assert f"error: {bad[0]}" in capsys.readouterr().err  # argparse's error, naming the flag
