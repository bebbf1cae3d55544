"""The pieces of studies/extrapolation_phase.py and studies/init_scale.py (their --quick runs take over 30 s each)."""

import os
import subprocess
import sys
import types

import numpy as np
import pytest

import extrapolation_phase
import extrapolation_sweeps as xs
import init_scale
from gflow import analysis as an

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TINY = {"tiny": {"teacher": "balanced", "teacher_dim": 2, "student": "diagonal_balanced", "d": 6}}


@pytest.mark.parametrize("script", ["extrapolation_phase.py", "init_scale.py"])
def test_help(script):
    proc = subprocess.run([sys.executable, os.path.join("studies", script), "--help"], cwd=REPO, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0 and "--quick" in proc.stdout and "--out" in proc.stdout


def test_argument_checks():
    args = extrapolation_phase.parse_args(["--quick"])
    assert args.seeds == 1 and args.levels == [1e-4, 1e-7, 1e-10] and args.rtol == 1e-8
    assert extrapolation_phase.panel_ks("fig1a", args) == [6, 10, 14, 20]
    full = extrapolation_phase.parse_args([])
    assert full.seeds == 3 and full.levels[-1] == 1e-11 and extrapolation_phase.panel_rtol("fig1a", full) == 1e-9
    assert extrapolation_phase.panel_ks("fig1b", full) == sorted(set(range(4, 31, 2)) | {19, 21})
    assert extrapolation_phase.panel_ks("fig1a", full) == sorted(set(range(4, 31, 2)) | {9, 11})
    with pytest.raises(SystemExit):
        extrapolation_phase.parse_args(["--levels", "3e-5"])
    with pytest.raises(SystemExit):
        extrapolation_phase.parse_args(["--k-max", "200"])
    args = init_scale.parse_args(["--quick"])
    assert args.scales == [1e-5, 1e-1] and args.ks == [8, 14, 20]
    with pytest.raises(SystemExit):
        init_scale.parse_args(["--scales", "1e-3"])


def test_valid_length_cuts_where_the_loss_rises():
    assert xs.valid_length([1.0, 0.5, 0.1, 0.15, 0.01]) == 5  # a wobble within a factor 2 is kept
    assert xs.valid_length([1.0, 0.5, 0.1, 0.25, 0.01]) == 3  # more than doubling: not a gradient flow
    assert xs.valid_length([1.0, 1e-20, 5e-20, 1e-21]) == 4  # below the noise floor 1e-14 L(0)
    assert xs.valid_length([1.0, np.nan, 0.1]) == 1


def test_critical_k():
    ks = np.array([4, 8, 12, 16])
    assert init_scale.critical_k(ks, [0.9, 0.05, 0.5, 0.05]) == 16
    assert init_scale.critical_k(ks, [0.9, 0.5, 0.05, 0.01]) == 12
    assert init_scale.critical_k(ks, [0.01, 0.05, 0.05, 0.01]) == 4
    assert init_scale.critical_k(ks, [0.01, 0.05, 0.05, 0.5]) == np.inf


def test_contrast_and_by_k():
    errors = np.array([1.0, 0.8, 0.5, 0.1, 0.05, np.nan])
    ks = np.array([4, 6, 10, 12, 14, 14])
    lo, hi, ratio = xs.contrast(errors, ks, 10)  # k = 10 left out, NaN ignored
    assert (lo, hi, ratio) == (pytest.approx(0.9), pytest.approx(0.075), pytest.approx(12.0))
    med, mean, std = xs.by_k(errors, ks, [4, 14, 20])
    np.testing.assert_allclose(med[:2], [1.0, 0.05])
    assert np.isnan(med[2]) and std[0] == 0.0


def test_teachers_and_students_by_name():
    assert xs.make_teacher("delay", 4, 7).impulse_response(5)[3] == 1.0
    assert xs.make_student("general", 5, 0.1, 0).structure == "general"
    student = xs.make_student("diagonal_balanced", 5, 0.1, 0)
    assert student.structure == "diagonal" and np.array_equal(student.B, student.C)
    with pytest.raises(ValueError, match="unknown teacher"):
        xs.make_teacher("gru", 4, 0)
    with pytest.raises(ValueError, match="unknown student"):
        xs.make_student("lstm", 4, 0.1, 0)
    zero = xs.zero_baseline(xs.make_teacher("delay", 4, 0), 2, 10)
    assert zero == 1.0 and xs.zero_baseline(xs.make_teacher("delay", 4, 0), 4, 10) == 0.0


def test_panel_sweep_records_and_levels(tmp_path):
    """A tiny panel through the sweep runner: the record and the errors read at loss levels agree with the
    analysis functions applied to the stored trajectory."""
    runs = xs.run_panel("tiny", TINY, [3, 5], [0], [0.1], 200.0, out=str(tmp_path), n_save=40, rtol=1e-8,
                        horizon=20, batch_size=8, max_steps=10_000)
    assert [r.config["k"] for r in runs] == [3, 5]
    table = xs.errors_at_levels(runs, TINY, [1e-2, 1e-6, 1e-30], 20)
    teacher = xs.make_teacher("balanced", 2, 0)
    s = xs.teacher_scale(teacher, 20)
    for r, run in enumerate(runs):
        k = run.config["k"]
        assert run.record["tail_error"].shape == run.loss.shape
        idx = an.first_below(run.loss, [1e-2, 1e-6])
        for i in range(2):
            assert table["reached"][i, r] == (idx[i] >= 0)
            if idx[i] >= 0:
                assert table["error"][i, r] == pytest.approx(run.record["tail_error"][idx[i]] / s, rel=1e-12)
        assert not table["reached"][2, r]  # never reached: the final state is read
        assert table["error"][2, r] == pytest.approx(run.record["tail_error"][-1] / s)
        assert table["error"][2, r] == pytest.approx(float(an.tail_error(run.final, teacher, k, 20)) / s, rel=1e-10)
        np.testing.assert_allclose(run.record["ir_final"], np.asarray(run.final.impulse_response(20)), rtol=1e-12)
        decade = run.record["decade_index"]
        assert decade[0] == an.first_below(run.loss, 1.0)
        view = extrapolation_phase._read_model(run, 1e-30)  # never reached: the final response
        np.testing.assert_array_equal(view.ir, run.record["ir_final"])


def test_figure_checks_on_synthetic_students(monkeypatch):
    """Fig. 6 checks read the students' responses: a zero student for k = 8, one that fails at j = 19 for k = 18,
    and a perfect one for k = 20."""
    teacher = xs.make_teacher("delay", 10, 0)
    w = np.asarray(teacher.impulse_response(100))
    responses = {8: np.zeros(100), 18: w.copy(), 20: w.copy()}
    responses[18][19:] = 0.5
    runs = [types.SimpleNamespace(config={"k": k, "seed": 0}, loss=np.array([1.0, 1e-20]),
                                  record={"ir_final": ir, "ir_decades": np.tile(ir, (17, 1))})
            for k, ir in responses.items()]
    args = types.SimpleNamespace(horizon=100, levels=[1e-12])
    checks, res = extrapolation_phase.figure6_checks(runs, None, args)
    assert [c["passed"] for c in checks] == [True, True, True, True]
    assert res["18"]["horizon_eps0.1"] == [19]
