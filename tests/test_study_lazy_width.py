"""studies/lazy_width.py: its helpers on known cases, bad input, and a tiny end-to-end run."""

import json
import os

import jax
import numpy as np
import pytest

import lazy_width
from gflow import GflowInputError

TINY = ["--widths", "8", "16", "--seeds", "1", "--n", "4", "--length", "4", "--d", "3", "--tau", "0.2",
        "--eta", "0.1", "--solver-check-widths", "1"]


@pytest.fixture(scope="module")
def args():
    return lazy_width.parse_args(TINY)


@pytest.mark.parametrize("setting", lazy_width.SETTINGS)
def test_measures_vanish_for_an_untrained_model(setting, args):
    inputs, labels, steps = lazy_width.make_task(setting, args)
    model0 = lazy_width.make_model(setting, 0, 8, args)
    loss = lazy_width.centered_loss(model0, inputs, labels, steps, True)
    values = {k: float(v) for k, v in lazy_width.lazy_measures(model0, model0, inputs, loss.step_weights).items()}
    assert values["rescaled_movement"] == values["neuron_movement"] == values["linearization_error"] == 0.0
    assert ("flip_fraction" in values) == (setting != "003") and values.get("flip_fraction", 0.0) == 0.0
    # centering: the loss of model0 is the mean label energy on the supervised steps, RMS = --label-rms
    w = np.asarray(loss.step_weights)
    assert float(loss(model0)) == pytest.approx(w.sum() * args.label_rms**2, rel=1e-10)


def test_exponents_of_synthetic_power_laws_are_recovered():
    widths = np.array([64.0, 128, 256, 512, 1024])
    p, c = lazy_width.fit_exponent(widths, 3.0 * widths ** -0.5)
    assert p == pytest.approx(-0.5, abs=1e-12) and c == pytest.approx(3.0, rel=1e-12)
    rows = {int(m): [{"x": 2.0 * m ** (-1 / 3) * f} for f in (0.5, 1.0, 4.0)] for m in widths}  # median = 1.0 × law
    ms, med = lazy_width.medians(rows, "x")
    np.testing.assert_allclose(med, 2.0 * widths ** (-1 / 3), rtol=1e-12)
    assert lazy_width.fit_exponent(ms, med)[0] == pytest.approx(-1 / 3, abs=1e-12)
    assert lazy_width.fit_exponent([64, 128, 256], [0.1, 0.05, 0.0])[0] == pytest.approx(-1.0, abs=1e-12)  # zero skipped
    assert np.isnan(lazy_width.fit_exponent([64, 128, 256], [0.1, 0.0, 0.0])[0])  # nothing to fit: a failing check


def test_he_recursion_of_hidden_norms():
    np.testing.assert_allclose(lazy_width.predicted_hidden_norms(5, 0.5), [1.0, 1.25, 1.5, 1.75, 2.75])


def test_time_is_rescaled_by_width_only_in_the_standard_parameterization():
    assert lazy_width.time_scale("004", 256) == lazy_width.time_scale("002", 256) == 1 / 256
    assert lazy_width.time_scale("003", 256) == 1.0


@pytest.mark.parametrize("extra, match", [
    (["--widths", "64", "100"], "powers of two"),
    (["--widths", "1", "2"], "powers of two"),
    (["--widths", "64", "64"], "two distinct"),
    (["--eta", "-0.1"], "eta"),
    (["--tau", "0"], "tau"),
    (["--eta", "1", "--tau", "0.5"], "at least one GD step"),
    (["--seeds", "0"], "seeds"),
])
def test_bad_input(extra, match):
    with pytest.raises(GflowInputError, match=match):
        lazy_width.parse_args(TINY + extra)


def test_tiny_run_writes_summary_and_figure(tmp_path):
    out = str(tmp_path / "lazy")
    code = lazy_width.main(TINY + ["--settings", "004", "003", "--out", out])
    summary = json.load(open(os.path.join(out, "summary.json")))
    assert code in (0, 1) and os.path.getsize(os.path.join(out, "lazy_width.png")) > 10_000
    claims = [c["claim"] for c in summary["checks"]]
    assert sum(c.startswith("[004]") for c in claims) == 11 and sum(c.startswith("[003]") for c in claims) == 7
    tags = {p for c in summary["checks"] for p in c.get("predictions", [])}
    assert tags == {"004-P1", "004-P3", "004-P5", "003-P9", "003-P5", "002-P9"}
    table = summary["results"]["004"]["exponents_vs_papers"]
    assert table["flip_fraction"]["paper"] == pytest.approx(-1 / 3) and table["linearization_error"]["kind"] == "bound"
    assert isinstance(table["movement"]["fitted"], float)
    rows = summary["results"]["004"]["rows"]
    assert set(rows) == {"8", "16"} and all(r[0]["loss_final"] < r[0]["loss_initial"] for r in rows.values())
    assert summary["all_passed"] == (code == 0)
    jax.clear_caches()
