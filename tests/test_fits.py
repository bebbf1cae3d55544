"""gflow.analysis.fits: every scaling-law fit recovers a known law from synthetic data, leaves out the samples it
cannot take a log of, and refuses to fit fewer than two points."""

import numpy as np
import pytest

from gflow import analysis as an, GflowInputError


def test_exponential_rate_on_a_window():
    ts = np.linspace(0.0, 10.0, 41)
    values = 3.0 * np.exp(-0.7 * ts)
    values[ts > 8] = 1.0  # outside the window: ignored
    assert an.fit_exponential_rate(ts, values, t_max=8.0) == pytest.approx(-0.7, rel=1e-12)
    values[3] = -1.0  # not positive: left out
    assert an.fit_exponential_rate(ts, values, t_max=8.0) == pytest.approx(-0.7, rel=1e-12)


def test_power_law_and_its_prefactor():
    xs = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    ys = 0.25 * xs ** -1.5
    assert an.fit_power_law(xs, ys) == pytest.approx(-1.5, rel=1e-12)
    p, c = an.fit_power_law_with_prefactor(np.append(xs, 32.0), np.append(ys, 0.0))  # a zero is left out
    assert (p, c) == (pytest.approx(-1.5, rel=1e-12), pytest.approx(0.25, rel=1e-12))


def test_log_scaling_leaves_out_runs_that_never_escaped():
    eps = np.array([1e-2, 1e-4, 1e-6, 1e-8])
    times = 0.5 * np.log(1.0 / eps) + 3.0
    times[-1] = np.nan
    slope, intercept = an.fit_log_scaling(eps, times)
    assert (slope, intercept) == (pytest.approx(0.5, rel=1e-12), pytest.approx(3.0, rel=1e-12))
    with pytest.raises(GflowInputError, match="eps"):
        an.fit_log_scaling([0.5, 2.0], [1.0, 2.0])


def test_drift_exponents():
    etas, times = [1e-3, 2e-3, 4e-3], [np.linspace(1.0, 10.0, 5)] * 3
    drifts = [0.1 * eta ** 1.0 * t ** 2.0 for eta, t in zip(etas, times)]
    p, q = an.fit_drift_exponents(etas, times, drifts)
    assert (p, q) == (pytest.approx(1.0, rel=1e-10), pytest.approx(2.0, rel=1e-10))


@pytest.mark.parametrize("fit", [an.fit_power_law, an.fit_exponential_rate, an.fit_power_law_with_prefactor])
def test_fewer_than_two_usable_points_is_an_error(fit):
    with pytest.raises(GflowInputError, match="at least two"):
        fit([1.0, 2.0, 3.0], [1.0, -1.0, np.nan])
