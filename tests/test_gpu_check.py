"""bench/gpu_check.py on the CPU: its help, a part run in worker processes into the table and the
JSON, and a part stopped by its time budget ("skipped: budget") without losing the table."""

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "bench", "gpu_check.py")


def _run(*args, timeout=300):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, env=env, timeout=timeout)


def test_help_names_the_gpu_command():
    done = _run("--help")
    assert done.returncode == 0, done.stderr
    assert "PYTHONPATH=. python3 bench/gpu_check.py --json $OUT/gpu_check.json" in done.stdout


@pytest.mark.slow
def test_compile_part_fills_the_table_and_a_spent_budget_skips(tmp_path):
    path = tmp_path / "check.json"
    done = _run("--size", "smallest", "--parts", "compile", "--json", str(path))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "=== gpu_check: one table" in done.stdout
    doc = json.loads(path.read_text())
    assert [p["status"] for p in doc["parts"]] == ["ok", "ok"]
    (cold,), (cached,) = (p["records"] for p in doc["parts"])
    assert cold["what"].endswith("cold") and cached["what"].endswith("cached")
    assert cold["value"] > 0 and cached["value"] > 0 and cold["device"] and cold["jax"]

    done = _run("--size", "smallest", "--parts", "compile", "--total-budget", "2", "--json", str(path))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert [p["status"] for p in json.loads(path.read_text())["parts"]] == ["skipped: budget"] * 2
    assert "skipped: budget" in done.stdout
