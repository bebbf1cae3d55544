"""Every study's parser, options included that the study derives from the user's numbers (an rtol's rtol/100
repeat, the lengths and times a part computes, a solver name): a bad value fails at parse time, in well under 2 s,
with the user's own number in the message, never minutes into the run."""

from __future__ import annotations

import contextlib
import glob
import importlib.util
import io
import os
import time

import pytest

STUDIES = sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(os.path.dirname(__file__), "..", "studies",
                                                                            "*.py")) if not p.endswith("validation.py"))


def _study(name: str):
    path = os.path.join(os.path.dirname(__file__), "..", "studies", f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"_parsed_study_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _parse(module, argv):
    """(args, None) when ``argv`` parses, else (None, the error line), and the seconds it took."""
    err = io.StringIO()
    start = time.perf_counter()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            args = module.parse_args(argv)
        return args, None, time.perf_counter() - start
    except SystemExit:
        return None, err.getvalue().strip().splitlines()[-1], time.perf_counter() - start


@pytest.fixture(scope="module")
def studies():
    return {name: _study(name) for name in STUDIES}


def test_every_study_is_covered():
    assert len(STUDIES) >= 12 and "balance_limit" in STUDIES


@pytest.mark.parametrize("name", STUDIES)
def test_quick_parses_and_an_rtol_whose_repeat_is_below_the_floor_fails_at_once(studies, name):
    """--quick parses. --rtol 1e-13: a study that repeats at rtol/100 refuses it quoting 1e-13 (and its repeat
    1e-15); one that does not repeat (init_scale) takes it; one without --rtol says the flag is unknown."""
    module = studies[name]
    args, error, _ = _parse(module, ["--quick", "--record", ""])
    assert error is None, error
    args, error, seconds = _parse(module, ["--quick", "--rtol", "1e-13"])
    assert seconds < 2.0
    if name == "init_scale":
        assert error is None and args.rtol == 1e-13
    elif name == "ssm_poisoning":  # its repeat is --tight-rtol, which must lie below --rtol
        assert "--tight-rtol (1e-11) must be below --rtol (1e-13)" in error
    elif error is not None and "unrecognized arguments" in error:
        assert "--rtol 1e-13" in error
    else:
        assert error is not None and "--rtol 1e-13" in error and "1e-15" in error, error


DERIVED = [  # (study, argv, what the message must quote)
    ("balance_limit", ["--eps", "1", "0.1"], "got 1"),  # τ_ε = ln(1/ε)/(8 w0) = 0: t1 = --horizon × τ_ε = 0
    ("balance_limit", ["--solver", "rk4"], "got 'rk4'"),
    ("gd_vs_flow", ["--solver", "Tsit5x"], "got 'Tsit5x'"),
    ("moment_pairs", ["--prop3-teacher-dim", "48"], "--horizon 100 is too short for --prop3-teacher-dim 48"),
    ("moment_pairs", ["--prop3-d", "120"], "--horizon 100 is too short for --prop3-d 120"),
    ("moment_pairs", ["--general-d-hat", "3", "60"], "--horizon 100 is too short for --general-d-hat 60"),
    ("moment_pairs", ["--horizon", "12"], "--horizon 12 is too short"),
    ("balance_limit", ["--rtol", "5e-13"], "--rtol 5e-13"),
    ("memoryless", ["--rtol", "1e-14"], "--rtol 1e-14"),
    ("ssm_poisoning", ["--tight-rtol", "1e-15"], "1e-15"),
    ("extrapolation_phase", ["--k-max", "120"], "got 100"),  # the flows read lags up to --horizon
    ("init_scale", ["--ks", "8", "120"], "[8, 120]"),
    ("gru_extrapolation", ["--eval-factor", "1"], "got 1"),
    ("gd_vs_flow", ["--n-fit", "9"], "--n-fit"),
    ("gd_vs_flow", ["--w-star", "nan"], "got nan"),
    ("memoryless", ["--w", "nan"], "got nan"),
    ("memoryless", ["--lemma63-lambda", "1"], "got 1"),
    ("extrapolation_phase", ["--max-steps", "-5"], "got -5"),
]


@pytest.mark.parametrize("name,argv,quoted", DERIVED)
def test_a_derived_option_out_of_range_fails_at_parse_time_quoting_the_users_number(studies, name, argv, quoted):
    args, error, seconds = _parse(studies[name], ["--quick", *argv])
    assert args is None and quoted in error, error
    assert seconds < 2.0


@pytest.mark.parametrize("name,argv", [
    ("balance_limit", ["--eps", "0.5", "0.1"]), ("balance_limit", ["--solver", "auto"]),
    ("gd_vs_flow", ["--solver", "kvaerno5"]), ("moment_pairs", ["--prop3-teacher-dim", "47"]),
    ("moment_pairs", ["--horizon", "15"]), ("memoryless", ["--lemma63-lambda", "1.01"]),
    ("gd_vs_flow", ["--w-star", "-0.5"]), ("extrapolation_phase", ["--max-steps", "5"]),
])
def test_the_controls_at_the_edge_still_parse(studies, name, argv):
    """Negative controls: the values just inside each derived bound are taken."""
    args, error, _ = _parse(studies[name], ["--quick", *argv])
    assert error is None, error
