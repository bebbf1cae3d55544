"""gflow.analysis.small_init: ln(1/ε) time, escape and plateau times, log-scaling fits."""

import numpy as np
import pytest

import gflow
from gflow import analysis as an


def test_rescaled_time():
    ts = np.array([0.0, 1.0, 2.0])
    np.testing.assert_allclose(an.rescaled_time(ts, 1e-3), ts / np.log(1e3))
    with pytest.raises(gflow.GflowInputError, match=r"\(0, 1\)"):
        an.rescaled_time(ts, 2.0)


def test_escape_time_of_exponential_decay_is_exact():
    ts = np.linspace(0, 10, 11)
    loss = 4.0 * np.exp(-0.7 * ts)
    # log-linear interpolation is exact for an exponential
    assert an.escape_time(ts, loss) == pytest.approx(np.log(2) / 0.7, rel=1e-12)
    assert an.escape_time(ts, loss, fraction=0.1) == pytest.approx(np.log(10) / 0.7, rel=1e-12)
    assert an.plateau_end(ts, loss, band=0.01) == pytest.approx(-np.log(0.99) / 0.7, rel=1e-12)
    assert an.escape_time(ts, loss, fraction=0.5, reference=2.0) == pytest.approx(np.log(4) / 0.7, rel=1e-12)
    assert np.isnan(an.escape_time(ts, loss, fraction=1e-9))


def test_crossing_time_edge_cases():
    ts = np.array([0.0, 1.0, 2.0])
    assert an.crossing_time(ts, [1.0, 0.5, 0.0], 2.0) == 0.0
    assert an.crossing_time(ts, [1.0, 1.0, 0.0], 0.5) == pytest.approx(1.5)  # exact zero: linear in the value
    with pytest.raises(gflow.GflowInputError, match="sorted"):
        an.crossing_time([1.0, 0.0, 2.0], [1.0, 0.5, 0.2], 0.4)
    with pytest.raises(gflow.GflowInputError, match="equal length"):
        an.crossing_time(ts, [1.0, 0.5], 0.4)
    with pytest.raises(gflow.GflowInputError, match="positive finite"):
        an.escape_time(ts, [0.0, 0.0, 0.0])
    with pytest.raises(gflow.GflowInputError, match=r"\(0, 1\)"):
        an.escape_time(ts, [1.0, 0.5, 0.2], fraction=1.5)


def test_plateaus_of_a_two_stage_curve():
    ts = np.linspace(0, 30, 301)
    # saddle to saddle: 1 until t = 10, drop to 0.4, plateau until t = 20, then drop to ~0
    loss = 0.4 + 0.6 / (1 + np.exp(4 * (ts - 10))) - 0.4 / (1 + np.exp(-4 * (ts - 20)))
    found = an.plateaus(ts, loss, band=0.01, min_fraction=0.1)
    assert len(found) == 2
    assert found[0].start == 0.0 and 8.0 < found[0].end < 10.0 and found[0].level == pytest.approx(1.0, abs=1e-6)
    assert 10.0 < found[1].start < 12.0 and 18.0 < found[1].end < 20.0
    assert found[1].level == pytest.approx(0.4, abs=0.01)


def test_fit_log_scaling_recovers_line():
    eps = np.array([1e-1, 1e-2, 1e-3, 1e-4])
    times = 0.5 * np.log(1 / eps) + 3.0
    slope, intercept = an.fit_log_scaling(eps, times)
    assert slope == pytest.approx(0.5, rel=1e-12) and intercept == pytest.approx(3.0, rel=1e-12)
    with pytest.raises(gflow.GflowInputError, match="same shape"):
        an.fit_log_scaling(eps, times[:2])
    with pytest.raises(gflow.GflowInputError, match="two finite"):
        an.fit_log_scaling(eps[:2], [np.nan, 1.0])


def test_curves_collapse_on_rescaled_grid():
    """Curves L(t) = f(t / ln(1/ε)) from different ε coincide on the rescaled grid."""
    grid = np.linspace(0.0, 1.0, 11)
    curves = []
    for eps in (1e-2, 1e-4):
        ts = np.linspace(0, 2 * np.log(1 / eps), 400)
        curves.append(an.on_rescaled_grid(ts, np.tanh(ts / np.log(1 / eps)), eps, grid))
    np.testing.assert_allclose(curves[0], curves[1], atol=1e-4)
    out = an.on_rescaled_grid([0.0, 1.0], [1.0, 2.0], 0.5, [10.0])
    assert np.isnan(out[0])


@pytest.mark.slow
def test_escape_time_of_a_small_init_flow_grows_with_ln_one_over_eps():
    """Memoryless teacher, balanced diagonal start at scale ε: c grows like ε e^{2 w* t}, so t_esc ≈ ln(1/ε)/(2w*)."""
    import jax

    from gflow import initializers, teachers

    loss = gflow.PopulationLoss(teachers.memoryless(1.0), 3)
    eps_list = np.array([1e-2, 1e-4])
    times = []
    for eps in eps_list:
        model0 = initializers.balanced(jax.random.key(0), 2, scale=eps, structure="diagonal")
        traj = gflow.solve_flow(loss, model0, 12.0, save_at=np.linspace(0, 12.0, 400), solver="tsit5")
        times.append(an.escape_time(traj.ts, traj.loss))
    slope, _ = an.fit_log_scaling(eps_list, times)
    assert slope == pytest.approx(0.5, rel=0.05)
