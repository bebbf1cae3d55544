"""Smoke test of the main study script, balance_limit (quick mode, two scales, two seeds), and its per-seed
indicator."""

import json
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.slow
def test_balance_limit_quick(tmp_path):
    out = tmp_path / "balance_limit"
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONUNBUFFERED="1")
    proc = subprocess.run(
        [sys.executable, "studies/balance_limit.py", "--quick", "--eps", "1e-2", "1e-3", "--seeds", "2",
         "--out", str(out)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    with open(out / "summary.json") as f:
        summary = json.load(f)
    assert summary["study"] == "balance_limit"
    checks = summary["checks"]
    assert len(checks) == 9
    for check in checks:
        assert {"claim", "source", "kind", "status", "value", "threshold", "passed", "predictions"} <= set(check)
        assert check["kind"] in ("prediction", "sanity") and check["status"] in ("pass", "FAIL", "inconclusive")
        assert check["passed"] == (check["status"] == "pass")
    # the identities (000-P2, 000-P3, 000-P5) and the solver guards are sanity checks and must pass
    sanity = [c for c in checks if c["kind"] == "sanity"]
    assert len(sanity) == 8 and all(c["status"] == "pass" for c in sanity), sanity
    assert {p for c in sanity for p in c["predictions"]} == {"000-P2", "000-P3", "000-P5", "001-12"}
    assert summary["sanity_passed"] is True
    # 000-P4 is decided by one check, the fraction of balanced seeds with its exact binomial interval: on 2 seeds of
    # the exploratory block it can only be inconclusive (2/2 gives [0.16, 1], 0/2 [0, 0.84])
    (decision,) = [c for c in checks if c["kind"] == "prediction"]
    assert decision["predictions"] == ["000-P4"] and decision["check_id"] == "000-P4.balanced-seeds"
    assert decision["statistic"] == "clopper_pearson" and decision["threshold"] == 0.75 and decision["n"] == 2
    assert decision["seeds"] == [0, 1] and decision["seeds_block"] == "exploratory"
    assert decision["registered_after_run"] is True and decision["status"] == "inconclusive"
    assert decision["interval"][0] <= decision["value"] <= decision["interval"][1]
    assert summary["config"]["eps"] == [1e-2, 1e-3] and summary["config"]["seeds"] == 2
    assert summary["config"]["seed_list"] == [0, 1]
    figures = [p for p in os.listdir(out) if p.endswith(".png")]
    assert figures and all(os.path.getsize(out / p) > 10_000 for p in figures)
    assert os.path.isdir(out / "trajectories") and os.listdir(out / "trajectories")


def test_negated_teacher_flips_w0_and_every_lag():
    import jax
    import numpy as np

    from gflow import teachers
    from gflow.problems import balance_limit

    t = teachers.balanced(jax.random.key(0), 3)
    neg = balance_limit.negated_teacher(t)
    assert teachers.first_markov_parameter(neg) == -teachers.first_markov_parameter(t)
    np.testing.assert_array_equal(np.asarray(neg.impulse_response(6)), -np.asarray(t.impulse_response(6)))


def test_falls_as_eps_falls_is_a_per_seed_indicator():
    import numpy as np

    from gflow.problems import balance_limit

    rho = np.array([[0.5, 0.5, 0.4],   # rows: eps from largest to smallest; columns: seeds
                    [0.1, 0.6, 0.4],
                    [0.01, 0.05, 0.3]])
    np.testing.assert_array_equal(balance_limit.falls_as_eps_falls(rho), [1.0, 0.0, 0.0])  # a tie does not fall
