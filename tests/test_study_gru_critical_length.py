"""studies/gru_critical_length.py (the finding 000-F2): its measurement on synthetic error curves, where a critical k_g
that follows 4 d̂_g and one set by the target (the same for every d̂_g) must read differently, and a tiny real run."""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

import gflow

_PATH = os.path.join(os.path.dirname(__file__), "..", "studies", "gru_critical_length.py")
_spec = importlib.util.spec_from_file_location("gru_critical_length", _PATH)
gc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gc)


def _runs(args, critical_of):
    """Synthetic runs: for each family and d̂_g, every seed's tail error is 1 below ``critical_of(family, d)`` and
    0.01 from there on; every student fits."""
    kg = np.array(args.kg)
    runs = {}
    for family in args.families:
        runs[family] = {}
        for d in args.dims:
            tails = np.where(kg[:, None] >= critical_of(family, d), 0.01, 1.0) * np.ones((kg.size, args.seeds))
            runs[family][d] = {"tails": tails, "fits": np.full_like(tails, 1e-3)}
    return runs


def test_a_critical_length_of_four_times_the_dimension_reads_as_around_four_and_proportional():
    args = gc.parse_args([])
    assert args.dims == [2, 5, 10] and args.families == ["delayed", "same"] and args.horizon == 2 * max(args.kg)
    checks = gc.measurement_checks(args, _runs(args, lambda f, d: 4 * d))
    assert len(checks) == 2 * (3 + 1) and all(c["predictions"] == ["000-F2"] for c in checks)
    assert not any(c.get("check_id") for c in checks)  # a finding decides nothing
    ratios = [c for c in checks if "d_g" in c]
    # 4·2 = 8 is on the grid; 4·5 = 20 and 4·10 = 40 lie between grid points: the critical k_g is the next one
    assert [c["critical_k_g"] for c in ratios[:3]] == [8, 24, 48]
    assert [c["status"] for c in ratios[:3]] == ["pass", "pass", "pass"]  # 4, 4.8, 4.8 in [3, 5]
    growth = [c for c in checks if "grows" in c["claim"]]
    assert [c["value"] for c in growth] == [6.0, 6.0] and all(c["status"] == "pass" for c in growth)


def test_a_critical_length_set_by_the_target_reads_as_no_growth():
    """The alternative the measurement must tell apart: every teacher's students extrapolate from k_g = 16, whatever
    d̂_g (the target's memory sets it): growth 1× < √5, and the ratio is far from four at d̂_g = 2 and 10."""
    args = gc.parse_args([])
    checks = gc.measurement_checks(args, _runs(args, lambda f, d: 16))
    growth = [c for c in checks if "grows" in c["claim"]]
    assert [c["value"] for c in growth] == [1.0, 1.0] and all(c["status"] == "FAIL" for c in growth)
    ratios = {c["d_g"]: c for c in checks if c.get("family") == "same" and "d_g" in c}
    assert ratios[2]["value"] == 8.0 and ratios[2]["status"] == "FAIL"
    assert ratios[10]["value"] == pytest.approx(1.6) and ratios[10]["status"] == "FAIL"


def test_a_teacher_never_extrapolated_is_a_lower_bound_said_so():
    args = gc.parse_args([])
    checks = gc.measurement_checks(args, _runs(args, lambda f, d: 1000 if d == 10 else 4 * d))
    big = [c for c in checks if c.get("d_g") == 10]
    assert all(c["beyond_grid"] and c["critical_k_g"] == max(args.kg) + 1 for c in big)
    assert all("beyond the grid: a lower bound" in c["claim"] for c in big)


def test_the_fit_check_of_a_family_fails_on_one_student_that_does_not_fit_and_its_teacher_says_so():
    args = gc.parse_args([])
    runs = _runs(args, lambda f, d: 4 * d)
    assert [c["status"] for c in gc.fit_checks(args, runs)] == ["pass", "pass"]
    runs["same"][5]["fits"][3, 1] = 0.2
    delayed, same = gc.fit_checks(args, runs)
    assert delayed["status"] == "pass" and same["status"] == "FAIL" and same["kind"] == "sanity"
    assert same["value"] == 0.2 and "at d̂_g = 5" in same["claim"]
    measured = {(c["family"], c.get("d_g")): c for c in gc.measurement_checks(args, runs)}
    assert "not all fit" in measured[("same", 5)]["claim"] and "all fit" in measured[("same", 2)]["claim"]
    assert "not all fit" not in measured[("same", 2)]["claim"]
    runs["same"][10]["fits"][0, 0] = 0.3  # the largest teacher's students: the growth names them
    growth = {c["family"]: c for c in gc.measurement_checks(args, runs) if "grows" in c["claim"]}
    assert "students of d̂_g = [10] do not all fit" in growth["same"]["claim"]
    assert "do not all fit" not in growth["delayed"]["claim"]


def test_the_parser_refuses_bad_values_naming_them(capsys):
    for argv, quoted in ((["--dims", "4"], "got [4]"), (["--kg", "8"], "got [8]"), (["--width", "0"], "width")):
        with pytest.raises(SystemExit):
            gc.parse_args(argv)
        assert quoted in capsys.readouterr().err
    assert gc.memory_of("same", 5) == 0 and gc.memory_of("delayed", 5) == 5
    assert {"000-F2"} <= {p.id for p in gflow.study.PREDICTIONS}


@pytest.mark.slow
def test_a_tiny_real_run_gives_finite_errors_and_a_longer_window_fits_the_tail_better():
    """One teacher (d̂_g = 2, the same target), students of width 8 trained 300 steps at k_g = 2 and 12, one seed: every
    error is finite and the k_g = 12 student's tail error is below the k_g = 2 student's."""
    args = gc.parse_args(["--quick", "--dims", "2", "3", "--kg", "2", "12", "--families", "same"])
    r = gc.train_teacher(args, "same", 2)
    assert r["tails"].shape == (2, 1) and np.all(np.isfinite(r["tails"])) and np.all(np.isfinite(r["fits"]))
    assert r["tails"][1, 0] < r["tails"][0, 0]
