"""studies/xavier_extrapolation.py (the finding 001-F1): its measurement on synthetic runs, and a tiny real run in
which GD at a small step follows the gradient flow."""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

import gflow

_PATH = os.path.join(os.path.dirname(__file__), "..", "studies", "xavier_extrapolation.py")
_spec = importlib.util.spec_from_file_location("xavier_extrapolation", _PATH)
xe = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(xe)


def _runs(args, extrapolation, status=lambda m, s, t: "completed"):
    """Synthetic runs: ``extrapolation(method, seed, memory)`` per student, every student fitting."""
    memories = [0] + args.dT
    return {m: np.array([[{"status": status(m, s, d), "fit": 1e-9, "extrapolation": extrapolation(m, s, d)}
                          for d in memories] for s in range(args.seeds)], dtype=object) for m in xe.methods(args)}


def test_the_measurement_counts_seeds_per_optimizer_and_teacher_group_and_decides_nothing():
    """Per optimizer: memoryless, small (worst), middle (worst), large (median) memories; each a k-of-n entry tagged
    001-F1 only. A flow that never extrapolates shows 0 of 10 (FAIL as a fraction, deciding nothing), GD that does
    on the small memories 10 of 10; a seed's value is its group's worst (or median) error."""
    args = xe.parse_args([])
    assert args.dT == [1, 2, 3, 4, 6, 8, 12, 16] and args.seeds == 10 and len(xe.methods(args)) == 5
    runs = _runs(args, lambda m, s, d: 0.5 if m == xe.FLOW else (0.01 if d <= 2 else 0.3 + d))
    checks = xe.measurement_checks(args, runs)
    assert len(checks) == 5 * 4 and all(c["predictions"] == ["001-F1"] for c in checks)
    assert not any(c.get("check_id") for c in checks)
    flow, gd = checks[:4], checks[4:8]
    assert [c["k"] for c in flow] == [0] * 4 and all(c["status"] == "FAIL" for c in flow)
    assert [c["k"] for c in gd] == [10, 10, 0, 0] and gd[0]["status"] == "pass"
    assert "d_T ∈ [1, 2] (worst)" in gd[1]["claim"] and "d_T ∈ [3, 4, 6] (worst)" in gd[2]["claim"]
    assert gd[2]["per_seed"]["0"] == pytest.approx(6.3) and gd[3]["per_seed"]["0"] == pytest.approx(12.3)  # median of 8, 12, 16
    assert {"001-F1"} <= {p.id for p in gflow.study.PREDICTIONS}


def test_diverged_runs_are_counted_in_the_claim_and_left_out_of_the_fit_check():
    args = xe.parse_args(["--quick"])
    runs = _runs(args, lambda m, s, d: 1e3 if m != xe.FLOW else 0.01,
                 status=lambda m, s, d: "diverged" if m == xe.methods(args)[-1] else "completed")
    runs[xe.methods(args)[-1]][0, 0]["fit"] = 5.0  # a diverged student does not fit, and is not asked to
    fit = xe.fit_check(args, runs)
    n = args.seeds * (1 + len(args.dT))
    assert fit["status"] == "pass" and f"({4 * n} of {5 * n})" in fit["claim"]
    last = [c for c in xe.measurement_checks(args, runs) if xe.methods(args)[-1] in c["claim"]]
    assert all(f"{n} of its runs diverged" in c["claim"] and c["k"] == 0 for c in last)


def test_the_parser_refuses_bad_values_naming_them(capsys):
    for argv, quoted in ((["--radius", "1.2"], "got 1.2"), (["--lr-gd", "0.01", "-1"], "[-1.0, 0.01]"),
                         (["--eval-factor", "1"], "got 1")):
        with pytest.raises(SystemExit):
            xe.parse_args(argv)
        assert quoted in capsys.readouterr().err


@pytest.mark.slow
def test_gd_at_a_small_step_follows_the_flow_and_every_student_fits():
    """A tiny real run (one seed, d_T = 1, 2000 GD steps): every student fits its window; GD at η = 1e-3 ends within
    10 % of the flow's extrapolation error on each teacher, and closer to it than GD at η = 2e-2."""
    args = xe.parse_args(["--quick", "--seeds", "1", "--dT", "1", "--lr-gd", "1e-3", "2e-2"])
    runs = xe.train(args, args.rtol, xe.methods(args))
    e = xe.errors(runs)
    flow, small, large = e[xe.FLOW], e["GD (η = 0.001)"], e["GD (η = 0.02)"]
    assert xe.fit_check(args, runs)["status"] == "pass"
    assert np.all(np.abs(small - flow) <= 0.1 * flow)
    assert np.all(np.abs(small - flow) < np.abs(large - flow))
