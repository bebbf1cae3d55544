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

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

def test_critical_length_on_synthetic_errors():
    ks = [5, 10, 20, 30, 40, 60]
    assert ge.critical_length(ks, [0.9, 0.8, 0.5, 0.3, 0.05, 0.01], 0.1) == 40
    assert ge.critical_length(ks, [0.05] * 6, 0.1) == 5  # every k extrapolates
    assert ge.critical_length(ks, [0.9, 0.05, 0.5, 0.05, 0.05, 0.05], 0.1) == 30  # a late failure resets it
    assert ge.critical_length(ks, [0.9, 0.05, 0.05, 0.05, 0.05, 0.5], 0.1) is None  # the largest k fails
    assert ge.critical_length(ks, [0.9, 0.05, 0.05, 0.05, np.nan, 0.05], 0.1) == 60  # NaN is a failure
    with pytest.raises(GflowInputError):
        ge.critical_length([10, 5], [0.1, 0.2], 0.1)
    with pytest.raises(GflowInputError):
        ge.critical_length([5, 10], [0.1], 0.1)


def test_breakpoint_dimension_on_synthetic_errors():
    dims = [1, 2, 4, 8, 16]
    assert ge.breakpoint_dimension(dims, [0.001, 0.01, 0.2, 1.0, 2.0], 0.05) == 2
    assert ge.breakpoint_dimension(dims, [0.001] * 5, 0.05) == 16
    assert ge.breakpoint_dimension(dims, [0.1, 0.01, 0.01, 1.0, 2.0], 0.05) is None
    with pytest.raises(GflowInputError):
        ge.breakpoint_dimension([], [], 0.05)


def test_late_echo_teacher_matches_adversarial_labels():
    teacher = ge.memory_teacher(jax.random.key(3), 3)
    k = 4
    echo = ge.late_echo_teacher(teacher, k)
    h, w = np.asarray(echo.impulse_response(12)), np.asarray(teacher.impulse_response(12))
    np.testing.assert_allclose(h - w, np.eye(12)[k], atol=1e-14)
    x = gflow.objectives.gaussian_sequences(jax.random.key(1), 3, 11)
    labels = jax.vmap(nt.AdversarialLateLabels(teacher, k))(x)
    np.testing.assert_allclose(jax.vmap(echo)(x), labels, atol=1e-12)
    with pytest.raises(GflowInputError):
        ge.late_echo_teacher(teacher, 0)


def test_memory_teacher_is_normalized_and_stable():
    for d in (1, 5):
        t = ge.memory_teacher(jax.random.key(d), d, radius=0.8)
        assert np.sum(np.asarray(t.impulse_response(2000)) ** 2) == pytest.approx(1.0, rel=1e-10)
        np.testing.assert_allclose(np.abs(np.linalg.eigvals(np.asarray(t.transition()))), 0.8, rtol=1e-10)
    with pytest.raises(GflowInputError):
        ge.memory_teacher(jax.random.key(0), 0)
    with pytest.raises(GflowInputError):
        ge.memory_teacher(jax.random.key(0), 2, radius=1.2)


def test_error_measures():
    y = np.zeros((2, 6))
    m = y.copy()
    m[:, 4] = [1.0, 3.0]  # an error only beyond k = 3
    e = ge.linf_errors(m, y, 3, scale=2.0)
    assert e["fit"] == 0.0 and e["tail"] == pytest.approx(1.0)  # mean(1, 3) / 2
    teacher = np.ones((4, 6))
    r = ge.relative_mse(teacher + np.where(np.arange(6) >= 3, 0.5, 0.0), teacher, 3)
    assert r["fit"] == 0.0 and r["extrapolation"] == pytest.approx(0.25)
    with pytest.raises(GflowInputError):
        ge.relative_mse(teacher, teacher, 6)
    with pytest.raises(GflowInputError):
        ge.linf_errors(m, y, 0, scale=1.0)


def test_argument_errors():
    with pytest.raises(SystemExit):
        ge.parse_args(["--kg", "10", "--horizon", "10"])
    with pytest.raises(SystemExit):
        ge.parse_args(["--radius", "1.5"])
    full = ge.parse_args([])
    assert full.width == 32 and full.kg == [2, 3, 5, 10, 15, 20, 30, 40, 60] and full.horizon == 120
    assert full.fig2_dT in full.dT


def test_tiny_run_writes_summary_and_resumes(tmp_path, monkeypatch, capsys):
    def cheap_teacher(args):  # a random small GRU stands in for the 1000-step fit (tested in test_nonlinear_teachers)
        teacher = gflow.models.gru(jax.random.key(0), args.teacher_dim, scale=0.7)
        return teacher, np.asarray(nt.damped_oscillation(8)), 0.0

    monkeypatch.setattr(ge, "gru_teacher", cheap_teacher)
    argv = ["--out", str(tmp_path), "--teacher-dim", "2", "--width", "3", "--kg", "3", "--seeds", "1",
            "--steps", "20", "--n-train", "20", "--batch", "10", "--n-test", "10", "--archs", "gru",
            "--k1", "4", "--width1", "3", "--fig2-dT", "1", "--dT", "1", "4", "--steps1", "20", "--n-train1", "16", "--n-test1", "20"]
    ge.main(argv)
    with open(tmp_path / "summary.json") as f:
        summary = json.load(f)
    assert summary["study"] == "gru_extrapolation"
    claims = [c["claim"] for c in summary["checks"]]
    assert any(c.startswith("A: a transition") for c in claims)
    assert sum(c.startswith("B Fig. 1") for c in claims) == 3 and sum(c.startswith("B Fig. 5") for c in claims) == 2
    assert all(set(c) >= {"claim", "source", "value", "threshold", "passed"} for c in summary["checks"])
    assert any("001-15" in (c.get("predictions") or []) for c in summary["checks"])
    assert any("000-P15" in (c.get("predictions") or []) for c in summary["checks"])
    for name in ("fig2_gru_critical_length.png", "fig1_fig2_seed001.png", "fig5_seed001.png"):
        assert (tmp_path / name).stat().st_size > 0
    runs = sorted(os.listdir(tmp_path / "runs"))
    assert "A_gru_k3_s0.json" in runs and "B_gru_memoryless_adversarial.json" in runs and len(runs) == 1 + 5
    capsys.readouterr()
    ge.main(argv)  # every configuration is stored: the second run recomputes nothing
    out = capsys.readouterr().out
    assert out.count("reused") == 1 + 5
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
