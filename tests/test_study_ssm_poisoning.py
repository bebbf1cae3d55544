"""Slutzky et al.'s problem (gflow.problems.ssm_poisoning) and its study (studies/ssm_poisoning.py): their
initialization and integrator reproduced, a tiny run."""

import json
import os

import numpy as np
import pytest

import ssm_poisoning as study
from gflow.problems import ssm_poisoning as sp
from gflow.study import exit_code


@pytest.mark.parametrize("L, seed, top", [(7, 242, [8.3984e-4, 8.3983e-4, 6.4757e-4]),
                                          (9, 342, [4.6714e-3, 4.6714e-3, 4.1462e-3])])
def test_initialization_is_theirs(L, seed, top):
    """The top entries of their A0 as their notebook draws it (numpy's legacy generator, sorted descending, the
    runner-up diff below the top)."""
    setting = sp.SETTINGS[L]
    a = sp.initial_a(setting, seed)
    assert a.shape == (setting.d,) and np.all(np.diff(a) <= 0)
    np.testing.assert_allclose(a[:3], top, rtol=1e-4)
    assert a[0] - a[1] == pytest.approx(setting.diff, rel=1e-3)


def test_their_integrator_reproduces_their_printed_number():
    """scipy odeint at its default tolerance on their seed 242 (L = 7, baseline): their printed 0.0011832003."""
    setting = sp.SETTINGS[7]
    one_seed = setting._replace(their_seeds=(242,))
    errors = sp.referee(7, "baseline", one_seed, None)
    assert errors[0] == pytest.approx(setting.their_error["baseline"][0], rel=1e-6)


def test_blow_up_estimate_matches_the_baseline_escape():
    """t* = a0^−(L−3)/(2(L−1)(L−3)) at their seed 242 (L = 7): 4.19e10, where their run escapes at 4.19e10."""
    setting = sp.SETTINGS[7]
    a0 = sp.initial_a(setting, 242)
    estimate = sp.blow_up_estimate(a0, 7)
    assert estimate == pytest.approx(4.19e10, rel=0.01)


@pytest.mark.slow
def test_tiny_run_writes_summary_and_figure(tmp_path):
    out = tmp_path / "ssm"
    code = study.main(["--quick", "--lengths", "7", "--seeds", "2", "--referee", "--out", str(out)])
    with open(out / "summary.json") as f:
        summary = json.load(f)
    checks = summary["checks"]
    assert code == exit_code(checks) == 0
    assert {p for c in checks for p in c["predictions"]} == {"005-P1", "005-P2", "005-P3"}
    sanity = [c for c in checks if c["kind"] == "sanity"]
    assert len(sanity) == 5 and all(c["passed"] for c in sanity), [c["claim"] for c in sanity if not c["passed"]]
    r = summary["results"]["L7"]
    assert r["seeds"] == [242, 243]
    base, special = np.asarray(r["baseline"]["extrapolation_error"]), np.asarray(r["special"]["extrapolation_error"])
    np.testing.assert_allclose(base, [0.0011842367, 0.0012260913], rtol=1e-6)  # gflow at rtol 1e-12
    assert np.all(special > 10 * base)
    assert os.path.getsize(out / "ssm_poisoning.png") > 20_000


@pytest.mark.parametrize("bad, flag", [(["--lengths", "8"], "--lengths"), (["--tight-rtol", "1e-6"], "--tight-rtol"),
                                       (["--seeds", "0"], "--seeds")])
def test_bad_configuration_is_a_clear_error(bad, flag, tmp_path, capsys):
    with pytest.raises(SystemExit):
        study.parse_args(["--quick", "--out", str(tmp_path)] + bad)
    assert "error:" in capsys.readouterr().err
