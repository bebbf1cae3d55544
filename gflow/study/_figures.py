"""A study's figures: a grid of panels, one call to label a panel, and saving (tight layout, optional overall
title, closed after writing). Figures go to files under matplotlib's Agg backend (:func:`gflow.study.run_study`);
pictures of a run itself (loss, impulse response, a diagnostic) are :mod:`gflow.plot`'s."""

from __future__ import annotations

import os


def figure_grid(rows: int = 1, cols: int = 1, *, panel=(6.0, 4.5), **kw):
    """``(fig, axes)`` of ``plt.subplots(rows, cols)`` with each panel ``panel`` = (width, height) inches."""
    import matplotlib.pyplot as plt

    return plt.subplots(rows, cols, figsize=(cols * panel[0], rows * panel[1]), **kw)


def label_axes(ax, *, legend: float | None = 8, title_size: float | None = None, **props):
    """``ax.set(**props)`` (xlabel, ylabel, title, xscale, ylim, …), the title at ``title_size`` when given, and a
    legend at font size ``legend`` (None: no legend)."""
    title = props.pop("title", None)
    ax.set(**props)
    if title is not None:
        ax.set_title(title, fontsize=title_size)
    if legend:
        ax.legend(fontsize=legend)
    return ax


def save_figure(fig, out: str, name: str, *, title: str | None = None, title_size: float | None = None) -> str:
    """Lay ``fig`` out (room left for ``title`` above the panels), write ``out/name`` at 130 dpi, close it."""
    import matplotlib.pyplot as plt

    if title is not None:
        fig.suptitle(title, fontsize=title_size)
    fig.tight_layout(rect=(0, 0, 1, 0.96) if title is not None else None)
    path = os.path.join(out, name)
    fig.savefig(path, dpi=130, bbox_inches="tight")
    plt.close(fig)
    return path
