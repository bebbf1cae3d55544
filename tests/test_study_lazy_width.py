"""studies/lazy_width.py and its problem (gflow.problems.lazy_width): helpers on known cases, bad input, and a tiny
end-to-end run."""

import json
import math
import os

import equinox as eqx
import jax
import numpy as np
import pytest

import gflow
import lazy_width
from gflow.problems import lazy_width as lp
from gflow.study import exit_code

TINY = ["--widths", "8", "16", "--seeds", "1", "--n", "4", "--length", "4", "--d", "3", "--tau", "0.2",
        "--eta", "0.1", "--solver-check-widths", "1", "--record", ""]  # a non-quick run: record nothing


@pytest.fixture(scope="module")
def args():
    return lazy_width.parse_args(TINY)


@pytest.mark.slow
@pytest.mark.parametrize("setting", lazy_width.SETTINGS)
def test_measures_vanish_for_an_untrained_model(setting, args):
    inputs, labels, steps = lp.study_task(setting, args)[:3]
    model0 = lp.make_model(setting, 0, 8, args.d, args.alpha)
    loss = lp.centered_loss(model0, inputs, labels, steps, True)
    values = {k: float(v) for k, v in lp.lazy_measures(model0, model0, inputs, loss.step_weights).items()}
    assert values["rescaled_movement"] == values["neuron_movement"] == values["linearization_error"] == 0.0
    assert ("flip_fraction" in values) == (setting != "003") and values.get("flip_fraction", 0.0) == 0.0
    # centering: the loss of model0 is the mean label energy on the supervised steps, RMS = --label-rms
    w = np.asarray(loss.step_weights)
    assert float(loss(model0)) == pytest.approx(w.sum() * args.label_rms**2, rel=1e-10)


def test_exponents_of_synthetic_power_laws_are_recovered():
    widths = np.array([64.0, 128, 256, 512, 1024])
    p, c = lp.fit_exponent(widths, 3.0 * widths ** -0.5)
    assert p == pytest.approx(-0.5, abs=1e-12) and c == pytest.approx(3.0, rel=1e-12)
    rows = {int(m): [{"x": 2.0 * m ** (-1 / 3) * f} for f in (0.5, 1.0, 4.0)] for m in widths}  # median = 1.0 × law
    ms, med = lp.medians(rows, "x")
    np.testing.assert_allclose(med, 2.0 * widths ** (-1 / 3), rtol=1e-12)
    assert lp.fit_exponent(ms, med)[0] == pytest.approx(-1 / 3, abs=1e-12)
    assert lp.fit_exponent([64, 128, 256], [0.1, 0.05, 0.0])[0] == pytest.approx(-1.0, abs=1e-12)  # zero skipped
    assert np.isnan(lp.fit_exponent([64, 128, 256], [0.1, 0.0, 0.0])[0])  # nothing to fit: a failing check


def test_he_recursion_of_hidden_norms():
    np.testing.assert_allclose(lp.predicted_hidden_norms(5, 0.5), [1.0, 1.25, 1.5, 1.75, 2.75])


def test_time_is_rescaled_by_width_only_in_the_standard_parameterization():
    assert lp.time_scale("004", 256) == lp.time_scale("002", 256) == 1 / 256
    assert lp.time_scale("003", 256) == 1.0


@pytest.mark.parametrize("extra, match", [
    (["--widths", "64", "100"], "powers of two"),
    (["--widths", "1", "2"], "powers of two"),
    (["--widths", "64", "64"], "two distinct"),
    (["--eta", "-0.1"], "eta"),
    (["--tau", "0"], "tau"),
    (["--eta", "1", "--tau", "0.5"], "at least one GD step"),
    (["--seeds", "0"], "seeds"),
    (["--n-test", "0"], "n-test"),
    (["--seeds-block", "confirmatory", "--seeds", "31"], "--seeds must be at most 30"),
])
def test_bad_input(extra, match, capsys):
    with pytest.raises(SystemExit):
        lazy_width.parse_args(TINY + extra)
    err = capsys.readouterr().err  # argparse's error, naming the flag
    assert match in err and "error: --" in err


def test_settings_002_and_004_share_the_init_statistics(args):
    """The init checks run once: 002 and 004 draw the same W, A (one key) on the same inputs."""
    x4, x2 = lp.study_task("004", args)[0], lp.study_task("002", args)[0]
    np.testing.assert_array_equal(x4, x2)
    m4, m2 = lp.make_model("004", 0, 8, args.d, args.alpha), lp.make_model("002", 0, 8, args.d, args.alpha)
    np.testing.assert_array_equal(lp.hidden_norms(m4, x4), lp.hidden_norms(m2, x2))


def test_new_measures_on_known_cases(args):
    inputs, labels, steps = lp.study_task("004", args)[:3]
    model0 = lp.make_model("004", 0, 8, args.d, args.alpha)
    # relative hidden drift: scaling W by (1 + δ) with ReLU's positive homogeneity at step 1 (h_0 = 0) moves nothing
    # at t = 1; a generic perturbation gives max_t mean_n ‖Δh_t‖/‖h_t‖ computed by hand
    moved = eqx.tree_at(lambda m: m.W, model0, model0.W * 1.1)
    h0 = np.asarray(jax.vmap(model0.hidden_states)(inputs))
    h1 = np.asarray(jax.vmap(moved.hidden_states)(inputs))
    expect = np.max(np.mean(np.linalg.norm(h1 - h0, axis=-1) / np.linalg.norm(h0, axis=-1), axis=0))
    assert float(lp.relative_hidden_drift(model0, moved, inputs)) == pytest.approx(expect, rel=1e-12)
    assert float(lp.relative_hidden_drift(model0, model0, inputs)) == 0.0
    # init output on the supervised steps (3 … L for 004) and the λ ratio = max|F(θ0)| / ρ
    w = np.asarray(gflow.objectives.SampleLoss(inputs, labels, steps=steps).step_weights)
    f0 = np.abs(np.asarray(jax.vmap(model0)(inputs)))
    out_max = float(lp.init_output_max(model0, inputs, w))
    assert out_max == pytest.approx(np.max(f0[:, w > 0]), rel=1e-14) and out_max < np.max(f0) + 1e-15
    rho = 100 * args.length * math.log(8)
    assert lp.lambda_ratio(out_max, args.length, 8) == pytest.approx(out_max / rho, rel=1e-12)
    # 004-P14's comparison model: same arrays, W and A trained
    both = lp.width_and_a(model0)
    assert both.trained == ("W", "A") and model0.trained == ("W",)
    np.testing.assert_array_equal(jax.vmap(both)(inputs), jax.vmap(model0)(inputs))


@pytest.mark.parametrize("setting", lazy_width.SETTINGS)
def test_population_sample_is_fresh_and_labelled_like_the_training_sample(setting):
    """004-P6 / 002-P5 estimate E_D on --n-test new sequences of the same teacher, labels scaled by the same factor
    (d = 8: at d = 3 the true tokens are ±1 on S⁰ and sequences repeat)."""
    args = lazy_width.parse_args(TINY + ["--d", "8"])
    task = lp.study_task(setting, args)
    if setting == "003":
        assert task.test_inputs is None and task.test_labels is None
        return
    assert task.test_inputs.shape == (1024,) + task.inputs.shape[1:] and task.test_labels.shape == (1024, 4)
    assert not np.any(np.all(np.isclose(task.test_inputs[:, None], task.inputs[None]), axis=(2, 3)))
    k_teacher = jax.random.split(jax.random.key(args.task_seed))[0]
    make = gflow.objectives.nonlinear_teachers.token_sum_teacher if setting == "004" else \
        gflow.objectives.nonlinear_teachers.sequence_concept_teacher
    teacher = make(k_teacher, args.length, args.d, eps_x=args.eps_x)
    raw, raw_test = jax.vmap(teacher)(task.inputs), jax.vmap(teacher)(task.test_inputs)
    factor = np.asarray(task.labels)[raw != 0] / np.asarray(raw)[raw != 0]
    np.testing.assert_allclose(factor, factor[0], rtol=1e-12)
    np.testing.assert_allclose(task.test_labels, factor[0] * raw_test, rtol=1e-12)


def test_position_losses_split_the_loss(args):
    """004-P12's per-position losses sum to the loss; at θ0 (centered) each is the label energy of its position."""
    task = lp.study_task("004", args)
    model0 = lp.make_model("004", 0, 8, args.d, args.alpha)
    loss = lp.centered_loss(model0, task.inputs, task.labels, task.steps, True)
    moved = eqx.tree_at(lambda m: m.W, model0, model0.W * 1.3)
    parts = np.asarray(lp.position_losses(loss, moved))
    assert parts.shape == (args.length - 2,) and parts.sum() == pytest.approx(float(loss(moved)), rel=1e-12)
    np.testing.assert_allclose(lp.position_losses(loss, model0),
                               np.mean(np.asarray(task.labels)[:, 2:] ** 2, axis=0), rtol=1e-12)
    assert float(lp.loss_at(loss, moved)) == pytest.approx(float(loss(moved)), rel=1e-14)


def synthetic_rows(gap_growth, worst_ratio, seeds=5):
    """Rows at widths 8, 16 whose generalization gap grows by ``gap_growth`` in the papers' unit (label energy 4.0
    over 3 supervised outputs), and whose worst position's final/initial training loss at the largest width is
    ``worst_ratio`` (others 0.2)."""
    unit = 4.0 / 3

    def row(m, s):
        return {"generalization_gap": 0.3 + (gap_growth * unit if m == 16 else 0.0) + 1e-3 * s, "label_energy": 4.0,
                "loss_population": 1.0, "loss_final": 0.7, "positions": [3, 4, 5],
                "position_loss_initial": [1.0, 2.0, 0.5], "position_loss_final": [0.2, 2.0 * worst_ratio, 0.1]}
    return {m: [row(m, s) for s in range(seeds)] for m in (8, 16)}


@pytest.mark.parametrize("growth, ratio, expect, old_bar", [(0.0, 0.3, "pass", "pass"), (0.2, 1.2, "FAIL", "FAIL"),
                                                             (0.0, 0.8, "pass", "FAIL")])
def test_gap_and_position_checks_decide_on_known_rows(args, growth, ratio, expect, old_bar):
    """004-P12 decides on 'lowers every position' (< 1); the earlier bar 0.5 is shown beside, deciding nothing
    (a position that learns slowly, ratio 0.8, passes the one and fails the other). The gap (004-P6) is read in the
    papers' unit, the zero predictor's loss per supervised output."""
    checks, results = [], {"004": {}}
    rows = synthetic_rows(growth, ratio)
    lazy_width.generalization_check("004", rows, args, checks, results)
    lazy_width.position_check(rows, args, checks, results)
    assert [c["predictions"] for c in checks] == [["004-P6"], ["004-P12"], []]
    assert [c["status"] for c in checks] == [expect, expect, old_bar]
    assert all(c["kind"] == "prediction" for c in checks)
    assert checks[0]["value"] == pytest.approx(growth, abs=1e-12)
    assert checks[0]["derived"] is True and checks[0]["registered_after_run"] is True
    assert checks[0]["seeds"] == [0, 1, 2, 3, 4] and checks[0]["seeds_block"] == "exploratory"
    np.testing.assert_allclose(results["004"]["generalization"]["per_seed_growth"], growth, atol=1e-12)
    assert checks[1]["value"] == pytest.approx(max(ratio, 0.2), rel=1e-12) == checks[2]["value"]
    assert results["004"]["positions"]["positions"] == [3, 4, 5]
    checks2 = []
    lazy_width.generalization_check("002", rows, args, checks2, {"002": {}})
    assert checks2[0]["predictions"] == ["002-P5"] and checks2[0]["status"] == checks[0]["status"]


def test_forward_stability_checks_on_known_rows(args):
    """004-P2 on rows: the deciding check with App. F's ρ⁶ (no power at two widths: never a pass) and, beside it,
    k = 0 (the drift over the movement; decides nothing)."""
    rows = {m: [{"hidden_drift_relative": 0.3 * m**-0.5 * (1 + 0.01 * s), "movement": m**-0.5} for s in range(4)]
            for m in (64, 128, 256)}
    checks, results = [], {"004": {}}
    lazy_width.hidden_drift_checks(rows, args, checks, results)
    assert [c["predictions"] for c in checks] == [["004-P2"], []]
    assert [c["rho_power"] for c in checks] == [lazy_width.RHO_POWER, 0]
    assert [c["status"] for c in checks] == ["inconclusive", "pass"] and [c["power"] for c in checks] == [False, True]
    assert "decides nothing" in checks[1]["claim"] and "decides nothing" not in checks[0]["claim"]
    np.testing.assert_allclose(results["004"]["forward_stability"]["per_seed_exponent_without_polylog"], 0.0,
                               atol=1e-12)


def test_seed_blocks():
    assert lazy_width.seed_list("exploratory", 3) == [0, 1, 2]
    block = lazy_width.seed_list("confirmatory", lazy_width.CONFIRMATORY_SEEDS)
    assert block == list(lazy_width.CONFIRMATORY_BLOCK) and not set(block) & {*range(10), 2000, 2001}  # fresh
    assert lazy_width.parse_args(TINY).seed_list == [0]
    args = lazy_width.parse_args(TINY + ["--seeds-block", "confirmatory", "--seeds", "3"])
    assert args.seed_list == [3000, 3001, 3002]
    with pytest.raises(ValueError, match="--seeds must be at most"):
        lazy_width.seed_list("confirmatory", lazy_width.CONFIRMATORY_SEEDS + 1)


def test_a_block_trains_its_own_seeds(args, monkeypatch):
    """train_block, 004-P14's W-and-A runs and the solver check use the block's seeds (no solve: train is faked)."""
    calls = []

    def fake_train(setting, seed, m, a, task, eta, both_layers=False, population=True):
        calls.append((seed, m, both_layers))
        return {"loss_ratio": 0.5, "loss_initial": 1.0, "loss_final": 0.5, "movement": 1.0 / m,
                "linearization_error": 0.1, "flip_fraction": 0.01}, 0.0
    monkeypatch.setattr(lazy_width.lp, "train", fake_train)
    block = lazy_width.parse_args(TINY + ["--seeds-block", "confirmatory", "--seeds", "2"])
    rows = lazy_width.train_block("004", block, None, 0.0)
    assert sorted(rows) == [8, 16] and [c[0] for c in calls] == [3000, 3001, 3000, 3001]
    calls.clear()
    checks, results = [], {"004": {}}
    lazy_width.p14_check(block, None, rows, checks, results)
    lazy_width.solver_check("004", block, None, rows, checks, results)
    assert calls == [(3000, 16, True), (3001, 16, True), (3000, 8, False)]
    assert [r["seed"] for r in results["004"]["p14_width_and_a"]["runs"]] == [3000, 3001]


def test_per_seed_exponents():
    widths = [64, 128, 256]
    rows = {m: [{"x": 2.0 * m ** -0.5}, {"x": 5.0 * m ** -0.25}] for m in widths}
    np.testing.assert_allclose(lp.per_seed_exponents(rows, "x"), [-0.5, -0.25], atol=1e-12)


@pytest.mark.slow
def test_tiny_run_writes_summary_and_figure(tmp_path):
    out = str(tmp_path / "lazy")
    code = lazy_width.main(TINY + ["--settings", "004", "003", "--out", out])
    summary = json.load(open(os.path.join(out, "summary.json")))
    assert os.path.getsize(os.path.join(out, "lazy_width.png")) > 10_000
    checks = summary["checks"]
    assert code == exit_code(checks) and summary["sanity_passed"] == (code == 0)
    assert all(c["kind"] in ("prediction", "sanity") and c["status"] in ("pass", "FAIL", "inconclusive")
               for c in checks)
    claims = [c["claim"] for c in checks]
    assert len(set(claims)) == len(claims)  # no check twice
    # 004: 3 exponents, λ, P6, P2 (ρ⁶; k = 0 beside), P12 (old bar beside), P14 (predictions); precondition, 2 init,
    # solver (sanity). 003: 3 exponents; 2 sanity
    kinds = {s: [c["kind"] for c in checks if c["claim"].startswith(f"[{s}")] for s in ("004", "003")}
    assert kinds["004"].count("prediction") == 10 and kinds["004"].count("sanity") == 4
    assert kinds["003"].count("prediction") == 3 and kinds["003"].count("sanity") == 2
    tags = {p for c in checks if c["kind"] == "prediction" for p in c["predictions"]}
    assert tags == {"004-P1", "004-P2", "004-P3", "004-P5", "004-P6", "004-P12", "004-P14", "003-P9", "003-P5", "002-P8"}
    guards = {p for c in checks if c["kind"] == "sanity" for p in c["predictions"]}
    assert "002-P9" in guards and "002-P9" not in tags
    assert all(c["kind"] == "sanity" for c in checks if "GD follows the flow" in c["claim"] or "precondition" in
               c["claim"])
    exps = [c for c in checks if "per seed" in c["claim"] and "exponent" in c["claim"]]
    assert len(exps) == 8 and all(c["n"] == 1 and c["interval"][0] == c["interval"][1] for c in exps if "n" in c)
    after = [c for c in checks if c.get("registered_after_run")]  # P6 and P2 (twice): written after the first runs
    assert sorted(c["check_id"] for c in after) == ["lazy_width_004_forward_stability",
                                                    "lazy_width_004_forward_stability_k0", "lazy_width_gap_004"]
    assert all(c["seeds"] == [0] and c["seeds_block"] == "exploratory" for c in after)
    assert summary["config"]["seed_list"] == [0] and summary["config"]["seeds_block"] == "exploratory"
    table = summary["results"]["004"]["exponents_vs_papers"]
    assert table["flip_fraction"]["paper"] == pytest.approx(-1 / 3) and table["linearization_error"]["kind"] == "bound"
    assert isinstance(table["movement"]["fitted"], float)
    rows = summary["results"]["004"]["rows"]
    assert set(rows) == {"8", "16"} and all(r[0]["loss_final"] < r[0]["loss_initial"] for r in rows.values())
    for r in (r[0] for r in rows.values()):  # 004-P6: the gap of the trained predictor; 004-P12: losses by position
        assert r["generalization_gap"] == pytest.approx(r["loss_population"] - r["loss_final"], abs=1e-12)
        assert r["positions"] == [3, 4] and sum(r["position_loss_final"]) == pytest.approx(r["loss_final"], rel=1e-9)
    assert "loss_population" not in summary["results"]["003"]["rows"]["8"][0]
    p14 = summary["results"]["004"]["p14_width_and_a"]
    assert p14["width"] == 16 and len(p14["runs"]) == 1
    jax.clear_caches()
