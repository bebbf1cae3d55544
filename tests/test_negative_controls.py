"""Negative controls: every registered deciding check that has one FAILs on its plausible alternative, judged as
registered (gflow.study.control_problems), and the mechanism itself reports a control that passes."""

import jax
import pytest

import gru_extrapolation as ge
import validation
from gflow.study import control_problems, NegativeControl, REGISTERED

jax.config.update("jax_enable_x64", True)


@pytest.fixture(scope="module")
def controls():
    return validation.negative_controls()


def test_every_control_fails_on_its_alternative_and_is_judged_as_registered(controls):
    assert len(controls) >= len(REGISTERED.checks)
    assert control_problems(controls, REGISTERED) == []


def test_every_registered_check_has_a_control(controls):
    covered = {c.check_id for c in controls}
    missing = [f"{r.id} ({r.study})" for r in REGISTERED.checks if r.id not in covered]
    assert not missing, f"registered checks without a negative control: {missing}"


def test_a_control_that_passes_or_is_judged_on_other_seeds_is_reported():
    """The controls' own control: part B judged on the paper's picture (normal training extrapolating on every seed)
    passes, so as a control it is reported; the same check judged on the exploratory block is not deciding, and is
    reported too."""
    args = ge.parse_args(["--parts", "B", "--seeds-block", "confirmatory"])
    rows = {job: {"fit": 1e-6, "extrapolation": 0.01 if job[2] == "normal" else 0.8} for job in ge._b_jobs(args)}
    entry = next(e for e in ge.checks_b(args, rows) if e.get("check_id") == "001-16.gru-normal")
    assert entry["status"] == "pass"
    result = {"study": "gru_extrapolation", "seeds_block": "confirmatory",
              "config": {"seeds_block": "confirmatory", "seed_list1": args.seed_list1}}
    problems = control_problems([NegativeControl("001-16.gru-normal", "the claim itself", entry, result)], REGISTERED)
    assert len(problems) == 1 and "came out pass, not FAIL" in problems[0]
    args = ge.parse_args(["--parts", "B", "--seeds1", "10"])  # the exploratory block 0-9
    rows = {job: {"fit": 1e-6, "extrapolation": 0.6} for job in ge._b_jobs(args)}
    entry = next(e for e in ge.checks_b(args, rows) if e.get("check_id") == "001-16.gru-normal")
    explored = {"study": "gru_extrapolation", "config": {"seed_list1": args.seed_list1}}
    problems = control_problems([NegativeControl("001-16.gru-normal", "x", entry, explored)], REGISTERED)
    assert entry["status"] == "FAIL" and len(problems) == 1 and "not judged as registered" in problems[0]
    # and a control naming a check the registry does not hold
    assert "does not hold" in control_problems([NegativeControl("no-such-check", "x", entry, result)], REGISTERED)[0]
