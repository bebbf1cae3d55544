"""Pictures of what a run produced: the loss, the final impulse response against the teacher's, any recorded
diagnostic — for one :class:`gflow.Trajectory` or every flow of a :class:`gflow.FlowBatch` (one line per flow).

Each function draws on ``ax`` (a new figure when None) and returns the Axes; none calls ``plt.show``, so the
same code serves notebooks, scripts and headless studies (``fig = ax.figure; fig.savefig(...)``). Times go on a
log axis, where the start t0 = 0 has no place: those rows are left out. :func:`figure_grid` and
:func:`label_axes` are the two steps every multi-panel figure of the studies repeats.

    import gflow.plot
    ax = gflow.plot.plot_loss(traj)
    gflow.plot.plot_impulse_response(traj, teacher=teacher)
"""

from __future__ import annotations

import equinox as eqx
import matplotlib.pyplot as plt
import numpy as np

from ._checks import GflowInputError, positive_int
from .results import FlowBatch, Trajectory

LEGEND_MAX = 10  # more flows than this get a colour scale instead of a legend


def _curves(x, values) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per flow, (saved times, values at them) — ``values(i)`` is flow i's array over the saved times."""
    if isinstance(x, Trajectory):
        return [(np.asarray(x.ts), np.asarray(values(None)))]
    if isinstance(x, FlowBatch):
        return [(x.ts[i][x.saved[i]], np.asarray(values(i))[x.saved[i]]) for i in range(len(x))]
    raise GflowInputError(f"`x` must be a gflow.Trajectory or gflow.FlowBatch, got {type(x).__name__}")


def _axes(ax):
    return plt.subplots(figsize=(6, 4))[1] if ax is None else ax


def _colors(n: int):
    """One flow: the axes' next colour (so that curves drawn one call at a time differ); a batch: a colour scale."""
    return [None] if n == 1 else plt.get_cmap("viridis")(np.linspace(0, 0.9, n))


def _draw_over_time(ax, curves, label: str | None, log_y: bool, *, log_x: bool = True, color=None):
    """One line per flow (and per component of a vector-valued quantity), against t (t > 0 on a log axis)."""
    colors = [color] * len(curves) if color is not None else _colors(len(curves))
    for i, ((ts, ys), c) in enumerate(zip(curves, colors)):
        keep = ts > 0 if log_x else np.ones(len(ts), bool)
        ys = ys.reshape(len(ts), -1)[keep]
        name = label if len(curves) == 1 else f"flow {i}"
        ax.plot(ts[keep], ys, color=c, lw=1.0, label=[name] + [None] * (ys.shape[1] - 1))
    if log_x:
        ax.set_xscale("log")
    if log_y:
        ax.set_yscale("log")
    if 1 < len(curves) <= LEGEND_MAX:
        ax.legend(fontsize=8)
    return ax


def plot_loss(x, ax=None, *, label: str = "loss", color=None, log_x: bool = True):
    """The loss L(t) on log-log axes: one line for a Trajectory, one per flow for a FlowBatch.

    Args:
        x: A :class:`~gflow.results.Trajectory` or a :class:`~gflow.results.FlowBatch`.
        ax: The matplotlib Axes to draw on; a new figure when None.
        label: The line's name for a Trajectory.
        color: A colour for every line (default: the axes' next colour, a colour scale for flows).
        log_x: Time on a log axis (t0 = 0 left out); False: linear, t0 = 0 kept.

    Returns:
        The Axes drawn on.

    Raises:
        GflowInputError: ``x`` is neither a Trajectory nor a FlowBatch.

    See also: [`plot_diagnostic`][gflow.plot.plot_diagnostic],
    [`plot_impulse_response`][gflow.plot.plot_impulse_response].
    """
    curves = _curves(x, lambda i: x.loss if i is None else x.loss[i])
    ax = _draw_over_time(_axes(ax), curves, label, log_y=True, log_x=log_x, color=color)
    convention = x.convention if isinstance(x, Trajectory) else x.config.get("convention")
    ax.set(xlabel="t", ylabel="L", title="loss" + (f" (convention {convention})" if convention else ""))
    return ax


def plot_diagnostic(x, name: str, ax=None, *, log_y: bool = False, log_x: bool = True, entry: int | None = None,
                    label: str | None = None, color=None):
    """The recorded diagnostic ``name`` against t.

    A vector- or matrix-valued diagnostic draws a line per entry, or only its flat entry ``entry``.

    Args:
        x: A :class:`~gflow.results.Trajectory` or a :class:`~gflow.results.FlowBatch` that recorded
            ``name`` (``diagnostics={name: f}`` in the solve).
        name: The diagnostic's name.
        ax: The matplotlib Axes to draw on; a new figure when None.
        log_y: A log y axis, for a quantity that spans decades (a balancedness ratio, a drift).
        log_x: Time on a log axis (t0 = 0 left out); False: linear, t0 = 0 kept.
        entry: Draw only this flat entry of a vector- or matrix-valued diagnostic.
        label: The line's name for a Trajectory (default ``name``).
        color: A colour for every line.

    Returns:
        The Axes drawn on.

    Raises:
        GflowInputError: The run did not record ``name``.
    """
    if name not in x.diagnostics:
        raise GflowInputError(f"`name`: no diagnostic {name!r} was recorded; this run has "
                              f"{sorted(x.diagnostics) or 'none'} (pass diagnostics={{...}} to the solve)")
    values = np.asarray(x.diagnostics[name])
    if entry is not None:
        values = values.reshape(*values.shape[:2 if isinstance(x, FlowBatch) else 1], -1)[..., entry]
    curves = _curves(x, lambda i: values if i is None else values[i])
    ax = _draw_over_time(_axes(ax), curves, label or name, log_y, log_x=log_x, color=color)
    ax.set(xlabel="t", ylabel=name, title=name)
    return ax


def _impulse_responses(models, horizon: int, stacked: bool) -> np.ndarray:
    """(flows, horizon, outputs) impulse responses of one model or a stacked batch of models."""
    if not callable(getattr(models, "impulse_response", None)):
        raise GflowInputError(f"plot_impulse_response needs models with impulse_response(n) (a gflow.LinearRNN); "
                              f"got {type(models).__name__}")
    h = eqx.filter_vmap(lambda m: m.impulse_response(horizon))(models) if stacked else \
        models.impulse_response(horizon)[None]
    h = np.asarray(h)
    return h.reshape(h.shape[0], horizon, -1)


def _teacher_response(teacher, horizon: int) -> np.ndarray:
    if callable(getattr(teacher, "impulse_response", None)):
        w = np.asarray(teacher.impulse_response(horizon))
    else:
        w = np.asarray(teacher, dtype=np.float64)[:horizon]
    return w.reshape(len(w), -1)


def _training_lengths(x) -> list[int]:
    """The training lengths k recorded in a Trajectory's config, or in each flow's of a FlowBatch (none unknown)."""
    configs = [x.config] if isinstance(x, Trajectory) else list(getattr(x, "_configs", ()))
    ks = [c.get("k") for c in configs]
    return [int(k) for k in ks if k] if all(ks) else []


def plot_impulse_response(x, teacher=None, ax=None, *, horizon: int | None = None, label: str | None = None,
                          color=None, shade: bool = True, style: str = ".-"):
    """The final model's impulse response h_j = C A^j B against the teacher's w_j (black, dashed).

    Args:
        x: A :class:`~gflow.results.Trajectory` or a :class:`~gflow.results.FlowBatch` (one line per
            flow) of models with ``impulse_response(n)`` (a [`LinearRNN`][gflow.models.LinearRNN]).
        teacher: A model with ``impulse_response(n)``, or the values w_0, w_1, …; None: no teacher line.
        ax: The matplotlib Axes to draw on; a new figure when None.
        horizon: The number of lags drawn; default 3k (at least 40), k the training length recorded in the
            trajectory's ``config["k"]`` (a FlowBatch: the largest of its flows'), else 40.
        label: The line's name for a Trajectory (default "student").
        color: A colour for every student line.
        shade: Shade the lags j < k the loss sees (when the trajectory, or every flow of a batch, records one k).
        style: A matplotlib format string for a Trajectory's line (default: dots joined).

    Returns:
        The Axes drawn on.

    Raises:
        GflowInputError: The models have no ``impulse_response``, or ``horizon`` is not a positive integer.
    """
    ks = _training_lengths(x)
    k = ks[0] if len(set(ks)) == 1 else None  # the shaded lags: one k for every flow
    horizon = positive_int("horizon", horizon if horizon is not None else max(40, 3 * max(ks)) if ks else 40)
    h = _impulse_responses(x.final, horizon, stacked=isinstance(x, FlowBatch))
    ax = _axes(ax)
    lags = np.arange(horizon)
    colors = [color] * len(h) if color is not None else _colors(len(h))
    for i, (hi, c) in enumerate(zip(h, colors)):
        name = (label or "student") if len(h) == 1 else f"flow {i}"
        ax.plot(lags, hi, style, color=c, lw=1.2, ms=3, label=[name] + [None] * (hi.shape[1] - 1))
    if teacher is not None:
        w = _teacher_response(teacher, horizon)
        ax.plot(lags[:len(w)], w, color="k", ls="--", lw=1.0, label=["teacher"] + [None] * (w.shape[1] - 1))
    if k and shade:
        ax.axvspan(-0.5, k - 0.5, color="0.9", zorder=0, label=f"trained lags j < k = {k}")
    ax.set(xlabel="lag j", ylabel="h_j", title="impulse response of the final model")
    if len(h) <= LEGEND_MAX:
        ax.legend(fontsize=8)
    return ax


def figure_grid(rows: int = 1, cols: int = 1, *, panel=(6.0, 4.5), **kw):
    """A grid of panels of one size.

    Args:
        rows: Number of rows of panels.
        cols: Number of columns of panels.
        panel: ``(width, height)`` of every panel, in inches.
        **kw: Passed to ``plt.subplots`` (``sharex``, ``squeeze``, …).

    Returns:
        ``(fig, axes)`` as ``plt.subplots(rows, cols, **kw)`` returns them.
    """
    return plt.subplots(rows, cols, figsize=(cols * panel[0], rows * panel[1]), **kw)


def label_axes(ax, *, legend: float | None = 8, title_size: float | None = None, **props):
    """Labels, scales and a legend in one call: ``ax.set(**props)``, the title at its own size, a legend.

    Args:
        ax: The matplotlib Axes.
        legend: The legend's font size; None or 0: no legend.
        title_size: The title's font size (default: matplotlib's).
        **props: Passed to ``ax.set`` (``xlabel``, ``ylabel``, ``title``, ``yscale``, ``ylim``, …).

    Returns:
        ``ax``.
    """
    title = props.pop("title", None)
    ax.set(**props)
    if title is not None:
        ax.set_title(title, fontsize=title_size)
    if legend:
        ax.legend(fontsize=legend)
    return ax
