"""Smoke test of the main study script (quick mode, two scales, two seeds)."""

import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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
    assert len(summary["checks"]) >= 5
    failed = [c["claim"] for c in summary["checks"] if not c["passed"]]
    assert not failed, failed
    assert summary["all_passed"] is True
    for check in summary["checks"]:
        assert {"claim", "source", "value", "threshold", "passed"} <= set(check)
    assert summary["config"]["eps"] == [1e-2, 1e-3] and summary["config"]["seeds"] == 2
    figures = [p for p in os.listdir(out) if p.endswith(".png")]
    assert figures and all(os.path.getsize(out / p) > 10_000 for p in figures)
    assert os.path.isdir(out / "trajectories") and os.listdir(out / "trajectories")


def test_negated_teacher_flips_w0_and_every_lag():
    sys.path.insert(0, os.path.join(REPO, "studies"))
    import jax
    import numpy as np

    import balance_limit
    from gflow import teachers

    t = teachers.balanced(jax.random.key(0), 3)
    neg = balance_limit.negated_teacher(t)
    assert teachers.first_markov_parameter(neg) == -teachers.first_markov_parameter(t)
    np.testing.assert_array_equal(np.asarray(neg.impulse_response(6)), -np.asarray(t.impulse_response(6)))
