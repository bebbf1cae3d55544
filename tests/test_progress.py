"""The batched progress line (gflow.flow's LogTimeProgressMeter) counts the finished flows and follows the slowest running one,
and the meter changes no number of the solve."""

from __future__ import annotations

import re

import jax
import numpy as np
import pytest

import gflow
from gflow import initializers, teachers

LINE = re.compile(r"\[flows \+\s*[\d.]+s\] flows (\d+)/(\d+) done · (?:slowest t=(\S+) \((\S+) % of log-time\)|"
                  r"all finished), (\d+) steps")


@pytest.fixture(scope="module")
def flows():
    """Three flows of different speeds: the larger the start, the sooner it reaches the stopping loss."""
    loss = gflow.PopulationLoss(teachers.balanced(jax.random.key(0), 2), 5)
    models = [initializers.balanced(jax.random.key(1), 4, scale=s) for s in (1e-1, 1e-3, 1e-6)]
    return [loss] * 3, models


def test_the_batched_line_counts_finished_flows_and_follows_the_slowest(flows, capfd):
    batch = gflow.solve_flows(*flows, 1e5, save_at=5, stop_loss=1e-6, progress=True)
    lines = [m.groups() for m in map(LINE.search, capfd.readouterr().out.splitlines()) if m]
    assert len(set(batch.steps.tolist())) == 3 and batch.statuses == ["stopped_at_loss"] * 3
    done = [int(d) for d, *_ in lines]
    assert {int(total) for _, total, *_ in lines} == {3}
    # a flow counts as done exactly from the first loop iteration after its last step
    for d, _, _, _, steps in lines[:-1]:
        assert int(d) == int(np.sum(batch.steps < int(steps)))
    assert done == sorted(done) and any(0 < d < 3 for d in done)
    running = [(float(t), float(p)) for d, _, t, p, _ in lines if int(d) < 3]
    assert [t for t, _ in running] == sorted(t for t, _ in running)  # the slowest flow never goes back
    assert all(t < 1e5 and p < 100 for t, p in running)
    assert lines[-1][0] == "3" and lines[-1][2] is None  # the closing line: all finished
    assert int(lines[-1][4]) == batch.steps.max()


def test_a_padded_batch_counts_the_callers_flows_only(flows, capfd):
    """5 flows run in a program of 6 (the bucket above 5), padded with a copy of flow 0: the lines say "/5", and a
    flow counts as done exactly when one of the five has finished (flow 0, the fastest, and its copy finish first)."""
    loss = flows[0][0]
    models = [initializers.balanced(jax.random.key(1), 4, scale=s) for s in (1e-1, 1e-3, 1e-6, 1e-2, 1e-4)]
    assert gflow.stacking.bucket_size(5) == 6
    batch = gflow.solve_flows([loss] * 5, models, 1e5, save_at=5, stop_loss=1e-6, progress=True)
    lines = [m.groups() for m in map(LINE.search, capfd.readouterr().out.splitlines()) if m]
    assert lines and {int(total) for _, total, *_ in lines} == {5}
    for d, _, _, _, steps in lines[:-1]:
        assert int(d) == int(np.sum(batch.steps < int(steps)))
    assert lines[-1][0] == "5" and lines[-1][2] is None


def test_the_meter_changes_no_number(flows):
    shown = gflow.solve_flows(*flows, 1e3, save_at=5, progress=True)
    silent = gflow.solve_flows(*flows, 1e3, save_at=5, progress=False)
    for name in ("ts", "loss", "params", "steps", "status_codes"):
        np.testing.assert_array_equal(getattr(shown, name), getattr(silent, name))


def test_a_single_flow_keeps_its_line(flows, capfd):
    traj = gflow.solve_flow(flows[0][0], flows[1][1], 1e3, save_at=5, progress=True)
    out = capfd.readouterr().out
    assert traj.status == "completed"
    assert re.search(r"\[flow \+\s*[\d.]+s\] t = \S+ / 1\.000e\+03 +\(log-time +[\d.]+%, \d+ steps\)", out)
    assert "flows" not in out


def test_auto_prints_elapsed_lines_after_its_quiet_period_and_passes_errors_on(capfd):
    """progress="auto" waits for the solve on a worker thread: silent for short calls, a line once the quiet period
    has passed, and the call's own exception raised in the caller (a planted error, the negative control of silence)."""
    import time

    from gflow.flow import with_elapsed_lines

    assert with_elapsed_lines(lambda: 7, 5.0, "flow") == 7
    assert capfd.readouterr().out == ""
    assert with_elapsed_lines(lambda: time.sleep(0.3) or 8, 0.05, "flow") == 8
    assert "[flow +" in capfd.readouterr().out

    def broken():
        raise ValueError("planted")

    with pytest.raises(ValueError, match="planted"):
        with_elapsed_lines(broken, 5.0, "flow")
