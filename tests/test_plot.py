"""gflow.plot draws a Trajectory or every flow of a FlowBatch on the Axes it returns (Agg backend, no show)."""

from __future__ import annotations

import jax
import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

import gflow  # noqa: E402
import gflow.plot  # noqa: E402
from gflow import analysis, GflowInputError, initializers, teachers  # noqa: E402

K, D = 4, 3


@pytest.fixture(scope="module")
def teacher():
    return teachers.balanced(jax.random.key(0), 2)


@pytest.fixture(scope="module")
def batch(teacher):
    models = [initializers.gaussian(jax.random.key(i), D, scale=s) for i, s in enumerate((1e-1, 1e-2, 1e-3))]
    return gflow.solve_flows([gflow.PopulationLoss(teacher, K)] * 3, models, 20.0, save_at=6, progress=False,
                             diagnostics={"rho_bal": analysis.balance_ratio, "B": lambda m: m.B})


@pytest.fixture(scope="module")
def traj(batch):
    return batch[0]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _data_lines(ax):
    return [line for line in ax.get_lines() if len(line.get_xdata())]


def test_plot_loss(traj, batch):
    ax = gflow.plot.plot_loss(traj)
    (line,) = _data_lines(ax)
    np.testing.assert_array_equal(line.get_ydata(), traj.loss[traj.ts > 0])  # t0 = 0 has no place on a log axis
    assert ax.get_xscale() == ax.get_yscale() == "log"
    ax = gflow.plot.plot_loss(batch)
    assert len(_data_lines(ax)) == 3
    for i, line in enumerate(_data_lines(ax)):
        np.testing.assert_array_equal(line.get_xdata(), batch[i].ts[batch[i].ts > 0])
    ax = gflow.plot.plot_loss(traj, label="rtol a")
    gflow.plot.plot_loss(traj, ax=ax, label="rtol b")  # two runs overlaid one call at a time: two colours
    first, second = _data_lines(ax)
    assert first.get_color() != second.get_color()


def test_plot_diagnostic(traj, batch):
    assert len(_data_lines(gflow.plot.plot_diagnostic(traj, "rho_bal"))) == 1
    assert len(_data_lines(gflow.plot.plot_diagnostic(batch, "rho_bal", log_y=True))) == 3
    assert len(_data_lines(gflow.plot.plot_diagnostic(traj, "B"))) == D  # one line per entry of a vector
    assert len(_data_lines(gflow.plot.plot_diagnostic(batch, "B"))) == 3 * D
    with pytest.raises(GflowInputError, match=r"`name`: no diagnostic 'Q'.*\['B', 'rho_bal'\]"):
        gflow.plot.plot_diagnostic(traj, "Q")


def test_plot_impulse_response(traj, batch, teacher):
    fig, ax = plt.subplots()
    assert gflow.plot.plot_impulse_response(traj, teacher=teacher, ax=ax) is ax
    student, overlay = _data_lines(ax)
    assert len(student.get_xdata()) == max(40, 3 * K) and ax.get_legend() is not None
    assert len(ax.patches) == 1  # the trained lags j < k, shaded
    np.testing.assert_allclose(overlay.get_ydata(), np.asarray(teacher.impulse_response(40)), rtol=1e-15)
    np.testing.assert_allclose(student.get_ydata(), np.asarray(traj.final.impulse_response(40)), rtol=1e-15)
    ax = gflow.plot.plot_impulse_response(batch, teacher=teacher, horizon=9)
    lines = _data_lines(ax)
    assert len(lines) == 4 and all(len(line.get_xdata()) == 9 for line in lines)
    np.testing.assert_allclose(lines[2].get_ydata(), np.asarray(batch[2].final.impulse_response(9)), rtol=1e-14)
    assert len(_data_lines(gflow.plot.plot_impulse_response(batch))) == 3  # no teacher, no overlay


def test_the_default_horizon_is_3k_for_a_trajectory_and_for_a_batch(traj, batch):
    """The default horizon follows the recorded training length k: 3k once that exceeds 40 (a batch: its largest
    k), 40 below or where no k is recorded."""
    import dataclasses

    long = traj.__class__(**{**traj.__dict__, "config": {**traj.config, "k": 20}})
    ax = gflow.plot.plot_impulse_response(long)
    (line,) = _data_lines(ax)
    assert len(line.get_xdata()) == 60 and ax.patches[0].get_x() == -0.5  # the shaded lags j < 20
    np.testing.assert_allclose(line.get_ydata(), np.asarray(traj.final.impulse_response(60)), rtol=1e-15)
    mixed = dataclasses.replace(batch, _configs=tuple({**c, "k": k} for c, k in zip(batch._configs, (4, 30, 20))))
    ax = gflow.plot.plot_impulse_response(mixed)
    assert {len(line.get_xdata()) for line in _data_lines(ax)} == {90} and not ax.patches  # no single k to shade
    same = dataclasses.replace(batch, _configs=tuple({**c, "k": 25} for c in batch._configs))
    ax = gflow.plot.plot_impulse_response(same)
    assert {len(line.get_xdata()) for line in _data_lines(ax)} == {75} and len(ax.patches) == 1
    unknown = dataclasses.replace(batch, _configs=tuple({**c, "k": None} for c in batch._configs))
    assert {len(line.get_xdata()) for line in _data_lines(gflow.plot.plot_impulse_response(unknown))} == {40}


def test_bad_inputs_are_named(traj):
    with pytest.raises(GflowInputError, match="`x` must be a gflow.Trajectory or gflow.FlowBatch"):
        gflow.plot.plot_loss([traj])
    gru = traj.__class__(**{**traj.__dict__, "final": gflow.models.gru(jax.random.key(0), 2)})
    with pytest.raises(GflowInputError, match="impulse_response.*GRU"):
        gflow.plot.plot_impulse_response(gru)


def test_options_label_color_linear_time_and_entry(traj, batch, teacher):
    ax = gflow.plot.plot_loss(traj, label="flow", color="k", log_x=False)
    (line,) = _data_lines(ax)
    assert ax.get_xscale() == "linear" and line.get_label() == "flow" and line.get_color() == "k"
    np.testing.assert_array_equal(line.get_xdata(), traj.ts)  # t0 = 0 kept on a linear axis
    ax = gflow.plot.plot_diagnostic(traj, "B", entry=1, label="B_1", color="C3")
    (line,) = _data_lines(ax)
    assert line.get_label() == "B_1" and line.get_color() == "C3"
    np.testing.assert_array_equal(line.get_ydata(), np.asarray(traj.diagnostics["B"])[traj.ts > 0, 1])
    lines = _data_lines(gflow.plot.plot_diagnostic(batch, "B", entry=2))
    assert len(lines) == 3
    np.testing.assert_array_equal(lines[1].get_ydata(), np.asarray(batch[1].diagnostics["B"])[batch[1].ts > 0, 2])
    ax = gflow.plot.plot_impulse_response(traj, teacher=teacher, label="k = 4", color="C2", shade=False, style="x:")
    student, _ = _data_lines(ax)
    assert student.get_label() == "k = 4" and student.get_marker() == "x" and student.get_linestyle() == ":"
    assert not ax.patches


def test_figure_grid_and_label_axes():
    fig, axes = gflow.plot.figure_grid(2, 3, panel=(4, 2))
    assert axes.shape == (2, 3) and tuple(fig.get_size_inches()) == (12, 4)
    ax = axes[0, 0]
    ax.plot([1, 2], [1, 3], label="a")
    assert gflow.plot.label_axes(ax, xlabel="x", yscale="log", title="T", title_size=7) is ax
    assert (ax.get_xlabel(), ax.get_yscale(), ax.get_title()) == ("x", "log", "T")
    assert ax.title.get_fontsize() == 7 and ax.get_legend() is not None
    gflow.plot.label_axes(axes[0, 1], legend=None)
    assert axes[0, 1].get_legend() is None
