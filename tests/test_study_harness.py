"""The study harness (gflow.study): QuickFull defaults, argument errors that name the flag, run_study's summary and
exit code; the atomic JSON writer and the provenance-checked result cache (gflow.results)."""

import json
import os

import jax
import pytest

import gflow
from gflow.study import check, QuickFull, run_study, save_figure, save_trajectories, study_parser


def _parser(**kw):
    p = study_parser("A toy study.\n\nMore.", "out/toy", "output folder", "tiny", **kw)
    p.add_argument("--seeds", type=int, default=QuickFull(10, quick=4), help="seeds")
    p.add_argument("--widths", type=int, nargs="+", default=QuickFull([64, 128], quick=[8]), help="widths")
    p.add_argument("--teacher-dim", type=int, default=5, help="teacher dimension")
    return p


def test_quick_full_defaults_resolve_after_parsing_and_fill_the_help():
    p = _parser()
    assert p.parse_args([]).seeds == 10 and p.parse_args(["--quick"]).seeds == 4
    assert p.parse_args(["--quick", "--seeds", "7"]).seeds == 7  # a given value wins in either mode
    a, b = p.parse_args([]), p.parse_args([])
    a.widths.append(1)
    assert b.widths == [64, 128]  # every run gets its own list
    assert p.parse_args(["--quick"]).widths == [8]
    text = p.format_help()
    assert "(default: 10; --quick: 4)" in text and "(default: 64 128; --quick: 8)" in text


def test_help_shows_each_default_once():
    """argparse's "(default: …)" is left out where the help states its own default, or the default is None."""
    p = _parser()
    p.add_argument("--pair", type=int, nargs=2, default=None, help="lengths (default: the paper's 30 60)")
    p.add_argument("--solver", default=None, help="solver name")
    text = " ".join(p.format_help().split())
    assert "(default: the paper's 30 60)" in text and "(default: None)" not in text
    assert text.count("(default: validation/results of this checkout)") == 1 and os.getcwd() not in text
    assert "(default: 5)" in text  # an ordinary default is still shown


def test_argument_errors_name_the_flag_and_exit_through_argparse(capsys):
    def validate(args):
        gflow.study.require_positive(args, "teacher_dim", "widths")

    p = _parser(validate=validate)
    for argv, flag in ((["--teacher-dim", "0"], "--teacher-dim"), (["--widths", "8", "-1"], "--widths")):
        with pytest.raises(SystemExit):
            p.parse_args(argv)
        assert f"error: {flag} must be positive" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        p.require_positive(p.parse_args(["--seeds", "0"]), "seeds")
    assert "error: --seeds must be positive, got 0" in capsys.readouterr().err


def test_run_study_writes_the_summary_and_returns_the_exit_code(tmp_path, capsys):
    def science(args, checks, results):
        checks.append(check("a prediction that fails", "here", 2.0, 1.0, False, kind="prediction"))
        checks.append(check("a guard", "here", 0.0, 1.0, args.seeds > 1, kind="sanity"))
        results["x"] = [1.5, float("nan")]
        return {"teacher": "toy"}

    def parse_args(argv):
        return _parser().parse_args(argv)

    out = str(tmp_path / "toy")
    assert run_study("toy", parse_args, science, ["--quick", "--out", out, "--record", ""]) == 0  # a failed
    with open(os.path.join(out, "summary.json")) as f:  # prediction is a result, not an error
        summary = json.load(f)
    assert summary["study"] == "toy" and summary["config"]["seeds"] == 4 and summary["config"]["teacher"] == "toy"
    assert summary["results"] == {"x": [1.5, "nan"]} and not summary["all_passed"] and summary["sanity_passed"]
    assert "wrote" in capsys.readouterr().out
    assert run_study("toy", parse_args, science, ["--quick", "--seeds", "1", "--out", out, "--record", ""]) == 1


def test_ctrl_c_in_a_study_is_one_line_and_exit_code_130(tmp_path, capsys):
    """Ctrl-C inside a study's science (here: in a sweep, whose message says what it kept) ends the run with one line
    and the shell's code for SIGINT, and writes no summary.json."""

    def science(args, checks, results):
        raise KeyboardInterrupt("interrupted: 2 of 6 runs kept in /x, rerun the same call to resume")

    out = str(tmp_path / "toy")
    code = run_study("toy", lambda argv: _parser().parse_args(argv), science, ["--quick", "--out", out, "--record", ""])
    assert code == 130 and not os.path.exists(os.path.join(out, "summary.json"))
    printed = capsys.readouterr().out.strip()
    assert printed.startswith("toy: interrupted: 2 of 6 runs kept") and "Traceback" not in printed
    assert printed.count("rerun") == 1

    def bare(args, checks, results):  # Ctrl-C outside a sweep: no message of its own
        raise KeyboardInterrupt

    assert run_study("toy", lambda argv: _parser().parse_args(argv), bare, ["--out", out, "--record", ""]) == 130
    assert capsys.readouterr().out.strip() == "toy: interrupted; no summary.json written (rerun the same command)"


def test_write_json_atomic_leaves_no_temporary_file(tmp_path):
    path = str(tmp_path / "a.json")
    gflow.results.write_json_atomic(path, {"v": float("inf"), "n": [1, 2]}, indent=1, final_newline=True)
    assert os.listdir(tmp_path) == ["a.json"]
    with open(path) as f:
        text = f.read()
    assert text.endswith("}\n") and json.loads(text) == {"v": "inf", "n": [1, 2]}


def test_cached_json_reuses_only_the_same_identity_and_code(tmp_path):
    calls = []

    def compute():
        calls.append(1)
        return {"value": len(calls)}

    path = str(tmp_path / "runs" / "x.json")
    cached = gflow.results.cached_json
    assert cached(path, {"a": 1}, {"gflow": "h1"}, compute) == ({"value": 1}, "missing")
    assert cached(path, {"a": 1}, {"gflow": "h1"}, compute) == ({"value": 1}, None)
    assert cached(path, {"a": 2}, {"gflow": "h1"}, compute) == ({"value": 2}, "another configuration under the "
                                                                              "same name")
    assert cached(path, {"a": 2}, {"gflow": "h2"}, compute) == ({"value": 3}, "made by other code (gflow changed)")
    with open(path) as f:
        stored = json.load(f)
    assert set(stored) == {"identity", "code", "provenance", "result"}
    with open(path, "w") as f:
        f.write("{truncated")
    assert cached(path, {"a": 2}, {"gflow": "h2"}, compute) == ({"value": 4}, "incomplete or corrupt")


def test_save_figure_and_trajectories(tmp_path):
    import matplotlib.pyplot as plt

    fig, _ = plt.subplots()
    path = save_figure(fig, str(tmp_path), "f.png", title="overall")
    assert path == str(tmp_path / "f.png") and (tmp_path / "f.png").stat().st_size > 0
    assert not plt.fignum_exists(fig.number) and fig._suptitle.get_text() == "overall"
    traj = gflow.solve_flow(gflow.PopulationLoss(gflow.teachers.memoryless(1.0), 2),
                            gflow.initializers.gaussian(jax.random.key(0), 2, scale=0.1), 1.0, save_at=3,
                            progress=False)
    save_trajectories(str(tmp_path), {"a": traj})
    save_trajectories(str(tmp_path), {"a": traj})  # an earlier run's is replaced
    assert gflow.Trajectory.load(str(tmp_path / "trajectories" / "a")).ts.shape == traj.ts.shape


def test_check_decides_by_its_direction_and_records_the_threshold_tested():
    from gflow.study import both_tolerances, tight_rtol, tolerance_agreement

    assert check("c", "s", 0.5, [0.4, 0.6], direction="in", kind="sanity")["passed"]
    assert not check("c", "s", 0.7, [0.4, 0.6], direction="in", kind="sanity")["passed"]
    entry = check("c", "s", 1.0, 1.0, direction="<", kind="prediction")
    assert entry["status"] == "FAIL" and entry["direction"] == "<" and entry["threshold"] == 1.0
    with pytest.raises(ValueError, match="either"):
        check("c", "s", 1.0, 1.0, True, direction="<=", kind="sanity")
    registered = check("c", "s", 1.0, 2.0, direction="<=", kind="prediction", check_id="x.c", seeds=[0, 1])
    assert registered["check_id"] == "x.c" and registered["seeds"] == [0, 1]  # what the pre-registration compares
    assert "check_id" not in entry
    assert both_tolerances(1e-8) == (("default", 1e-8), ("tight", tight_rtol(1e-8)))
    agree = tolerance_agreement("c", "s", [[1.0, 2.0], [3.0]], [[1.0, 2.02], [3.0]], 0.01)  # ragged: flattened
    assert agree["passed"] and agree["value"] == pytest.approx(0.02 / 2.02) and agree["kind"] == "sanity"
    assert not tolerance_agreement("c", "s", 1.0, 1.1, 0.05, relative=False)["passed"]


def test_rtol_option_checks_the_flag_and_its_repeat_and_none_means_per_part():
    from gflow.study import rtol_option

    def parser(default):
        p = study_parser("doc", "out", "out", "quick")
        rtol_option(p, default)
        return p

    assert parser(1e-8).parse_args([]).rtol == 1e-8
    assert parser(None).parse_args([]).rtol is None  # each part of the study uses its own rtol
    assert parser(QuickFull(None, quick=1e-8)).parse_args(["--quick"]).rtol == 1e-8
    assert parser(None).parse_args(["--rtol", "1e-9"]).rtol == 1e-9
    for bad in ("1e-13", "0.5", "nan"):  # repeat below the float64 floor, out of range, not a number
        with pytest.raises(SystemExit):
            parser(None).parse_args(["--rtol", bad])
