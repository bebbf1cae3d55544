"""studies/transition_depth.py (the finding 000-F1) on synthetic tables, no solves: the knee it reports per seed and
level tells a step at 2d̂ from a smooth fall and from a step elsewhere, only runs that reached a level are read, and
the tolerance spread is the largest disagreement between the two rtols."""

import numpy as np
import pytest

import transition_depth as td

KS = [6, 8, 9, 10, 11, 12, 14, 20]


def table(curves, reached=None):
    """A table of :func:`gflow.problems.extrapolation.errors_at_levels`'s shape: one level, ``curves`` {seed: errors
    over KS}."""
    seeds = sorted(curves)
    error = np.concatenate([np.asarray(curves[s], float) for s in seeds])[None, :]
    return {"error": error, "k": np.tile(np.asarray(KS, float), len(seeds)),
            "seed": np.repeat(np.asarray(seeds, float), len(KS)),
            "reached": np.ones_like(error, bool) if reached is None else np.asarray(reached, bool)[None, :]}


STEP = [0.8, 0.7, 0.7, 0.6, 1e-6, 1e-6, 1e-6, 1e-6]  # falls six decades from k = 10 to 11
SMOOTH = list(10.0 ** -(0.5 * (np.asarray(KS) - 6)))  # half a decade per unit k, everywhere
LATE = [0.8, 0.7, 0.7, 0.6, 0.6, 0.5, 0.5, 1e-6]  # the step between 14 and 20


@pytest.mark.parametrize("curve, transition", [(STEP, True), (SMOOTH, False), (LATE, False)])
def test_the_knee_tells_a_step_at_2d_hat_from_a_smooth_fall_and_a_late_step(curve, transition):
    (knee,) = td.knees_by_seed(table({0: curve}), 0).values()
    assert knee["transition"] is transition
    if transition:
        assert (knee["k_before"], knee["k_after"]) == (10, 11) and knee["drop"] == pytest.approx(6e5)


def test_runs_that_did_not_reach_the_level_are_not_read():
    reached = [True] * len(KS)
    reached[4] = False  # k = 11 never reached the level: its (final-state) error is not a point of the curve
    (knee,) = td.knees_by_seed(table({0: STEP}, reached), 0).values()
    assert (knee["k_before"], knee["k_after"]) == (10, 12)
    few = [False] * (len(KS) - 2) + [True, True]
    assert td.knees_by_seed(table({0: STEP}, few), 0) == {0: None}


def test_the_tolerance_spread_is_the_largest_disagreement_of_the_two_rtols():
    a, b = table({0: STEP, 1: STEP}), table({0: STEP, 1: STEP})
    b["error"][0, 3] *= 10.0  # one run one decade off
    b["error"][0, 12] = 1e-30  # rounding on both sides: floored, no disagreement
    a["error"][0, 12] = 1e-20
    assert td.tolerance_spread(a, b) == [pytest.approx(1.0)]
    b["reached"][0, 3] = False
    assert td.tolerance_spread(a, b) == [pytest.approx(0.0)]


def test_the_parser_keeps_levels_to_1e_minus_20_and_refuses_deeper():
    args = td.parse_args(["--quick", "--levels", "1e-20", "1e-4"])
    assert args.levels == [1e-4, 1e-20]
    with pytest.raises(SystemExit):
        td.parse_args(["--quick", "--levels", "1e-21"])
    with pytest.raises(SystemExit):
        td.parse_args(["--quick", "--ks", "8", "10"])
    assert sorted(td.panels_of(td.parse_args(["--sizes", "40", "200"]))) == [
        "depth_grid_d200", "depth_grid_d40", "depth_iid_d200", "depth_iid_d40"]


def test_a_part_is_one_size_with_both_readings_recorded_apart(tmp_path):
    args = td.parse_args(["--part", "d100", "--record", str(tmp_path)])
    assert (args.sizes, args.record_part) == ([100], "d100")
    assert sorted(td.panels_of(args)) == ["depth_grid_d100", "depth_iid_d100"]
    assert td.parse_args(["--record", str(tmp_path)]).record_part is None  # the whole study
    for partial in (["--part", "d40", "--readings", "iid"], ["--part", "d40", "--quick"],
                    ["--sizes", "40"]):  # a full run of one size would overwrite the whole study's record
        with pytest.raises(SystemExit):
            td.parse_args(partial + ["--record", str(tmp_path)])
    assert td.parse_args(["--sizes", "40", "--record", ""]).sizes == [40]  # recording nothing, it may


def test_the_repeat_is_tighter():
    assert td.parse_args(["--quick"]).tight_factor == 10.0
    with pytest.raises(SystemExit):
        td.parse_args(["--quick", "--tight-factor", "1"])
