"""studies/gru_extrapolation.py: its helpers, and a tiny end-to-end run (with a cheap GRU teacher) that resumes."""

import json
import os

import jax
import numpy as np
import pytest

import gflow
import gru_extrapolation as ge
from gflow import GflowInputError
from gflow.objectives import nonlinear_teachers as nt
from gflow.problems import gru_extrapolation as gp

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

def test_critical_length_on_synthetic_errors():
    ks = [5, 10, 20, 30, 40, 60]
    assert gp.critical_length(ks, [0.9, 0.8, 0.5, 0.3, 0.05, 0.01], 0.1) == 40
    assert gp.critical_length(ks, [0.05] * 6, 0.1) == 5  # every k extrapolates
    assert gp.critical_length(ks, [0.9, 0.05, 0.5, 0.05, 0.05, 0.05], 0.1) == 30  # a late failure resets it
    assert gp.critical_length(ks, [0.9, 0.05, 0.05, 0.05, 0.05, 0.5], 0.1) is None  # the largest k fails
    assert gp.critical_length(ks, [0.9, 0.05, 0.05, 0.05, np.nan, 0.05], 0.1) == 60  # NaN is a failure
    with pytest.raises(GflowInputError):
        gp.critical_length([10, 5], [0.1, 0.2], 0.1)
    with pytest.raises(GflowInputError):
        gp.critical_length([5, 10], [0.1], 0.1)


def test_breakpoint_dimension_on_synthetic_errors():
    dims = [1, 2, 4, 8, 16]
    assert gp.breakpoint_dimension(dims, [0.001, 0.01, 0.2, 1.0, 2.0], 0.05) == 2
    assert gp.breakpoint_dimension(dims, [0.001] * 5, 0.05) == 16
    assert gp.breakpoint_dimension(dims, [0.1, 0.01, 0.01, 1.0, 2.0], 0.05) is None
    with pytest.raises(GflowInputError):
        gp.breakpoint_dimension([], [], 0.05)


def test_late_echo_teacher_matches_adversarial_labels():
    teacher = gp.memory_teacher(jax.random.key(3), 3)
    k = 4
    echo = gp.late_echo_teacher(teacher, k)
    h, w = np.asarray(echo.impulse_response(12)), np.asarray(teacher.impulse_response(12))
    np.testing.assert_allclose(h - w, np.eye(12)[k], atol=1e-14)
    x = gflow.objectives.gaussian_sequences(jax.random.key(1), 3, 11)
    labels = jax.vmap(nt.AdversarialLateLabels(teacher, k))(x)
    np.testing.assert_allclose(jax.vmap(echo)(x), labels, atol=1e-12)
    with pytest.raises(GflowInputError):
        gp.late_echo_teacher(teacher, 0)


def test_memory_teacher_is_normalized_and_stable():
    for d in (1, 5):
        t = gp.memory_teacher(jax.random.key(d), d, radius=0.8)
        assert np.sum(np.asarray(t.impulse_response(2000)) ** 2) == pytest.approx(1.0, rel=1e-10)
        np.testing.assert_allclose(np.abs(np.linalg.eigvals(np.asarray(t.transition()))), 0.8, rtol=1e-10)
    with pytest.raises(GflowInputError):
        gp.memory_teacher(jax.random.key(0), 0)
    with pytest.raises(GflowInputError):
        gp.memory_teacher(jax.random.key(0), 2, radius=1.2)


def test_error_measures():
    y = np.zeros((2, 6))
    m = y.copy()
    m[:, 4] = [1.0, 3.0]  # an error only beyond k = 3
    e = gp.linf_errors(m, y, 3, scale=2.0)
    assert e["fit"] == 0.0 and e["tail"] == pytest.approx(1.0)  # mean(1, 3) / 2
    teacher = np.ones((4, 6))
    r = gp.relative_mse(teacher + np.where(np.arange(6) >= 3, 0.5, 0.0), teacher, 3)
    assert r["fit"] == 0.0 and r["extrapolation"] == pytest.approx(0.25)
    with pytest.raises(GflowInputError):
        gp.relative_mse(teacher, teacher, 6)
    with pytest.raises(GflowInputError):
        gp.linf_errors(m, y, 0, scale=1.0)


def test_argument_errors():
    with pytest.raises(SystemExit):
        ge.parse_args(["--kg", "10", "--horizon", "10"])
    with pytest.raises(SystemExit):
        ge.parse_args(["--radius", "1.5"])
    with pytest.raises(SystemExit):
        ge.parse_args(["--kg", "10", "20", "--pair", "10", "30"])  # the pair must be on the grid
    with pytest.raises(SystemExit):
        ge.parse_args(["--teacher-memory", "-1"])
    full = ge.parse_args([])  # paper scale: width 100, 10 seeds, the paper's pair 30 / 60
    assert full.width == 100 and full.seeds == 10 and full.kg == [2, 5, 10, 15, 20, 30, 40, 50, 60]
    assert full.horizon == 120 and full.pair == [30, 60] and full.teacher_memory == 0  # pre-registered
    assert full.trend_memories == [10] and full.fig2_dT in full.dT
    quick = ge.parse_args(["--quick"])
    assert set(quick.pair) <= set(quick.kg) and quick.trend_memories and quick.seeds >= 2
    assert ge.parse_args(["--trend-memories", "10", "--teacher-memory", "10"]).trend_memories == []


def test_teacher_target_is_the_delayed_oscillation():
    w0, w3 = gp.teacher_target(0), gp.teacher_target(3)
    np.testing.assert_array_equal(w0, np.asarray(nt.damped_oscillation()))
    np.testing.assert_array_equal(w3[:3], 0.0)
    np.testing.assert_array_equal(w3[3:], w0)
    with pytest.raises(GflowInputError):
        gp.teacher_target(-1)


def test_seed_critical_lengths_and_part_a_checks_on_synthetic_errors():
    ks = [2, 10, 30, 40, 60]
    tails = np.array([[0.9, 0.9, 0.9], [0.8, 0.9, 0.7], [0.5, 0.3, 0.6], [0.05, 0.4, 0.08], [0.02, 0.5, 0.03]])
    np.testing.assert_array_equal(gp.seed_critical_lengths(ks, tails, 0.1), [40, 61, 40])  # 61: beyond the grid
    args = ge.parse_args(["--kg", *map(str, ks), "--seeds", "3", "--teacher-memory", "10", "--trend-memories", "0"])
    zeros = np.zeros((len(ks), 3))
    low = np.array([[0.9] * 3, [0.05] * 3, [0.02] * 3, [0.02] * 3, [0.02] * 3])
    sweeps = {10: {"tails": tails, "fits": zeros + 0.01, "seed_critical": gp.seed_critical_lengths(ks, tails, 0.1)},
              0: {"tails": low, "fits": zeros + 0.02, "seed_critical": gp.seed_critical_lengths(ks, low, 0.1)}}
    checks = ge.checks_a(args, sweeps)
    kinds = [(c["kind"], c["claim"].split(":")[1].strip()[:12]) for c in checks]
    assert kinds[0][0] == "sanity" and checks[0]["status"] == "pass" and checks[0]["value"] == 0.02
    assert [k for k, _ in kinds[1:]] == ["prediction"] * 9
    low_side, k30, k60, critical = checks[1:5]
    beside, trend = checks[5:9], checks[9]  # memory 0 and the trend: reported, deciding nothing
    assert low_side["value"] == pytest.approx(0.9) and low_side["status"] == "pass" and low_side["statistic"] == "mean"
    assert k30["value"] == pytest.approx(np.mean([0.5, 0.3, 0.6])) and k30["status"] == "pass"
    assert k60["value"] == pytest.approx(np.mean([0.02, 0.5, 0.03]))  # one bad seed: not a pass
    assert k60["status"] != "pass" and "interval" in k60
    assert critical["value"] == 40 and critical["threshold"] == [30, 50] and critical["direction"] == "in"
    np.testing.assert_array_equal(trend["values"], [30, 51, 30])  # per seed: critical(m = 10) − critical(m = 0)
    assert trend["status"] == "pass" and all(c["predictions"] == ["000-P15"] for c in checks[:5])
    assert all(c["predictions"] == [] for c in beside + [trend]) and all("m = 0" in c["claim"] for c in beside)
    assert all("post hoc" in c["claim"] for c in beside) and not any("post hoc" in c["claim"] for c in checks[:5])
    # the largest-k_g error is checked once per memory (the old "transition" check repeated it)
    assert sum(c["value"] == k60["value"] for c in checks) == 1


def test_part_b_checks_carry_the_figure_ids_and_the_variant_decides_nothing():
    args = ge.parse_args(["--quick", "--k1", "4", "--fig2-dT", "2", "--dT", "1", "2", "4"])
    assert args.archs == ["linear", "gru", "lstm"] and args.variants == [ge.GF_VARIANT]
    assert ge.parse_args(["--no-gf-variant"]).variants == [] and ge.parse_args(["--archs", "gru"]).variants == []
    jobs = ge._b_jobs(args)
    assert args.seed_list1 == [0, 1] and {j[3] for j in jobs} == {0, 1}
    assert sum(j[0] == ge.GF_VARIANT for j in jobs) == sum(j[0] == "linear" for j in jobs) == 2 * (4 + 2)
    rows = {job: {"fit": 1e-6, "extrapolation": (0.5 if job[2] == "adversarial" else 0.01 if job[1] != "dT4" else 0.3)}
            for job in jobs}
    for job in jobs:
        if job[0] == ge.GF_VARIANT:  # a failing variant changes no check
            rows[job] = {"fit": 1.0, "extrapolation": 0.0 if job[2] == "adversarial" else 1.0}
    checks = ge.checks_b(args, rows)
    assert not any(ge.GF_VARIANT in c["claim"] for c in checks)
    fig1 = [c for c in checks if c["claim"].startswith("B Fig. 1")]
    fig2 = [c for c in checks if c["claim"].startswith("B Fig. 2")]
    fig5 = [c for c in checks if c["claim"].startswith("B Fig. 5")]
    assert len(fig1) == len(fig2) == 1 + 2 * 3 and len(fig5) == 1 + 2 * 3  # small d_T = {1, 2}: not only Fig. 2's
    assert all(c["predictions"] == ["001-16"] for c in fig1) and all(c["predictions"] == ["001-17"] for c in fig2)
    assert all(c["predictions"] == ["001-15"] for c in fig5)
    # 2 of 2 seeds: the exact interval [0.16, 1] cannot clear 0.5, so no prediction passes on a quick run's two seeds
    assert all(c["status"] == ("pass" if c["kind"] == "sanity" else "inconclusive") for c in checks)
    assert all(c["k"] == c["n"] == 2 for c in checks if c["kind"] == "prediction")
    assert all("Adam" in c["claim"] for c in checks if ", linear" in c["claim"])
    ids = {p.id for p in gflow.study.PREDICTIONS}
    assert {"001-15", "001-16", "001-17"} <= ids


def _part_b_checks(seeds, extrapolation):
    """Part B's checks on synthetic runs of ``seeds`` seeds (the confirmatory block): ``extrapolation(job)`` gives
    each run's extrapolation MSE (job = (arch, teacher, mode, seed)); every student fits."""
    args = ge.parse_args(["--parts", "B", "--seeds-block", "confirmatory", "--seeds1", str(seeds)])
    rows = {job: {"fit": 1e-6, "extrapolation": extrapolation(job)} for job in ge._b_jobs(args)}
    return {c.get("check_id"): c for c in ge.checks_b(args, rows)}


def _paper(job):
    """What seed 001's figures show: normal training extrapolates, adversarial labels do not, Fig. 5's error is low
    for small d_T and grows beyond."""
    arch, teacher, mode, seed = job
    if mode == "adversarial":
        return 0.8
    return 0.01 if teacher == "memoryless" or int(teacher[2:]) <= 2 else 0.6


def test_part_b_decides_on_the_fraction_of_seeds_and_fails_where_training_does_not_extrapolate():
    """Part B's registered checks decide on 10 confirmatory seeds by the exact binomial interval: the paper's
    picture passes; students that fail to extrapolate on 8 of 10 seeds FAIL (the old one-seed check, reading seed
    100 alone, would have passed them); students that extrapolate on 8 of 10 are inconclusive, not a pass."""
    from gflow.study import check_role, REGISTERED

    good = _part_b_checks(10, _paper)
    ids = [i for i in good if i]
    assert len(ids) == 18 and all(good[i]["status"] == "pass" for i in ids)
    assert good["001-16.gru-normal"]["seeds"] == list(range(100, 110)) and good["001-16.gru-normal"]["k"] == 10
    result = {"study": "gru_extrapolation", "seeds_block": "confirmatory",
              "config": {"seeds_block": "confirmatory", "seed_list1": list(range(100, 110))}}
    for i in ids:
        assert check_role({**result, "checks": [good[i]]}, good[i], REGISTERED) == ("deciding", []), i
    # negative control: normal training that fails to extrapolate on all seeds but the first
    mostly_not = _part_b_checks(10, lambda j: _paper(j) if j[2] == "adversarial" or j[3] == 100 else 0.6)
    assert mostly_not["001-16.gru-normal"]["status"] == "FAIL" and mostly_not["001-16.gru-normal"]["k"] == 1
    assert mostly_not["001-15.lstm-low"]["status"] == "FAIL"
    # growth absent (Fig. 5 flat at a low error): FAIL
    flat = _part_b_checks(10, lambda j: 0.8 if j[2] == "adversarial" else 0.01)
    assert flat["001-15.linear-grows"]["status"] == "FAIL" and flat["001-16.linear-normal"]["status"] == "pass"
    # 8 of 10: inconclusive
    eight = _part_b_checks(10, lambda j: _paper(j) if j[2] == "adversarial" or j[3] < 108 else 0.6)
    assert eight["001-17.linear-normal"]["status"] == "inconclusive"


def test_linear_adam_students_run_batched_per_mode():
    jax.config.update("jax_enable_x64", True)
    args = ge.parse_args(["--k1", "3", "--width1", "3", "--fig2-dT", "1", "--dT", "1", "--steps-linear", "30",
                          "--n-train1", "8", "--n-test1", "10", "--archs", "linear", "--seeds1", "2"])
    jobs = [j for j in ge._b_jobs(args) if j[0] == "linear"]
    out = ge._b_linear_adam(args, jobs)
    assert set(out) == set(jobs) and len(jobs) == 4 * 2
    for r in out.values():
        assert r["status"] == "completed" and np.isfinite(r["extrapolation"]) and r["mse"].shape == (9,)
    assert ge._b_config(args, *jobs[0])["method"].startswith("Adam")
    assert ge._b_config(args, ge.GF_VARIANT, "memoryless", "normal", 0)["method"].startswith("gradient flow")


@pytest.mark.slow
def test_tiny_run_writes_summary_and_resumes(tmp_path, monkeypatch, capsys):
    def cheap_teacher(seed, dim, memory):  # a random small GRU stands in for the 1000-step fit (test_nonlinear_teachers)
        teacher = gflow.models.gru(jax.random.key(memory), dim, scale=0.7)
        return teacher, gp.teacher_target(memory)[:8], 0.0

    monkeypatch.setattr(gp, "gru_teacher", cheap_teacher)
    argv = ["--out", str(tmp_path), "--teacher-dim", "2", "--width", "3", "--kg", "2", "3", "--pair", "2", "3",
            "--teacher-memory", "1", "--trend-memories", "0", "--seeds", "2",
            "--steps", "20", "--n-train", "20", "--batch", "10", "--n-test", "10", "--archs", "gru",
            "--k1", "4", "--width1", "3", "--fig2-dT", "1", "--dT", "1", "4", "--steps1", "20", "--n-train1", "16", "--n-test1", "20",
            "--seeds1", "1"]
    rc = ge.main(argv)
    with open(tmp_path / "summary.json") as f:
        summary = json.load(f)
    assert rc == gflow.study.exit_code(summary["checks"])
    assert summary["study"] == "gru_extrapolation"
    claims = [c["claim"] for c in summary["checks"]]
    # A: fit (sanity), k_g = 2 fails, k_g = 3 extrapolates, critical k_g for each of the memories {1, 0} (0 beside),
    # trend over memories {0, 1}: the smallest k_g is the "fails" one, so no separate low-side check
    assert sum(c.startswith("A:") for c in claims) == 8 and not any("low side" in c for c in claims)
    assert any("grows with the teacher's memory" in c for c in claims)
    # B Fig. 1: fit (sanity) + 2 per architecture; Fig. 5: fit (sanity) + growth (the small-d_T check would repeat
    # the Fig. 2 check: its only small d_T is the Fig. 2 teacher)
    assert sum(c.startswith("B Fig. 1") for c in claims) == 3 and sum(c.startswith("B Fig. 5") for c in claims) == 2
    for c in summary["checks"]:
        assert set(c) >= {"claim", "source", "kind", "status", "value", "threshold", "passed", "predictions"}
        assert c["kind"] in ("prediction", "sanity") and c["status"] in ("pass", "FAIL", "inconclusive")
        assert ("interval" in c) == (c["kind"] == "prediction")  # every prediction is over seeds
        assert (c.get("statistic") == "clopper_pearson") == (c["claim"].startswith("B") and c["kind"] == "prediction")
    assert [c["kind"] for c in summary["checks"]].count("sanity") == 1 + 3
    assert any("001-15" in (c.get("predictions") or []) for c in summary["checks"])
    assert all(c["predictions"] == ["001-16"] for c in summary["checks"] if c["claim"].startswith("B Fig. 1"))
    assert all(c["predictions"] == ["001-17"] for c in summary["checks"] if c["claim"].startswith("B Fig. 2"))
    assert any("000-P15" in (c.get("predictions") or []) for c in summary["checks"])
    for name in ("fig2_gru_critical_length.png", "fig1_fig2_seed001.png", "fig5_seed001.png"):
        assert (tmp_path / name).stat().st_size > 0
    runs = sorted(os.listdir(tmp_path / "runs"))
    assert "A_gru_m1_k3_s0.json" in runs and "A_gru_m0_k2_s1.json" in runs
    assert "B_gru_memoryless_adversarial_s0.json" in runs and len(runs) == 2 * 2 * 2 + 5
    capsys.readouterr()
    ge.main(argv)  # every configuration is stored: the second run recomputes nothing
    out = capsys.readouterr().out
    assert out.count("reused") == 2 * 2 * 2 + 5
    with open(tmp_path / "summary.json") as f:
        again = json.load(f)
    assert again["results"] == summary["results"]


def test_the_cache_recomputes_results_of_other_code(tmp_path, monkeypatch):
    calls = []

    def compute():
        calls.append(1)
        return {"value": 1.5}

    assert ge.cached(str(tmp_path), "x", {"a": 1}, compute) == ({"value": 1.5}, False)
    assert ge.cached(str(tmp_path), "x", {"a": 1}, compute) == ({"value": 1.5}, True)
    monkeypatch.setattr(gflow.results, "source_hash", lambda: "0" * 64)
    ge.RECOMPUTED.clear()
    assert ge.cached(str(tmp_path), "x", {"a": 1}, compute) == ({"value": 1.5}, False)
    assert len(calls) == 2 and ge.RECOMPUTED == {"made by other code (gflow changed)": 1}
