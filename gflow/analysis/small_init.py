"""Small-initialization limits: time in units of ln(1/ε), plateaus and escape times of loss curves.

From a start of scale ε the flow near zero is linear, so the weights grow like ε e^{r t} and leave the
neighbourhood of the origin after t ≈ ln(1/ε)/r (seed 000 Prop. 9 / Lemma E.12: τ_ε = ln(1/ε)/(4 w0) in the
appendix's L/2 units). Curves from different ε therefore line up against t / ln(1/ε), and the escape time grows
linearly in ln(1/ε). The definitions below (the papers state none) are ours, with their parameters named:

- *escape time* t_esc(f): the first time L(t) ≤ f · L(t_0), default f = 1/2, interpolated linearly in log L
  between the two saved times that bracket the crossing;
- *plateau end*: the escape time with f = 1 − band (default band = 0.01), when L has first moved by 1 % of L(t_0);
- *plateaus*: maximal runs of saved times over which L stays within a factor (1 ± band) of its value at the
  run's start and that last at least ``min_fraction`` of the time span (saddle-to-saddle dynamics).

Power-law fits (e.g. escape time against ε) use :func:`gflow.analysis.fit_power_law`; the linear law in
ln(1/ε) is :func:`fit_log_scaling`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._checks import as_float_array, GflowInputError, positive_float


def _epsilon(eps) -> np.ndarray:
    e = as_float_array("eps", eps)
    if np.any(e <= 0) or np.any(e >= 1):
        raise GflowInputError(f"initialization scales `eps` must lie in (0, 1) so that ln(1/ε) > 0, got {eps}")
    return e


def rescaled_time(ts, eps):
    """t / ln(1/ε): the time axis on which small-initialization curves of different ε line up.

    Args:
        ts: Times.
        eps: ε.

    Returns:
        t / ln(1/ε), shaped like ``ts``.
    """
    ts = as_float_array("ts", ts)
    return ts / np.log(1.0 / _epsilon(eps))


def _curve(ts, values, *, positive_start: bool = True):
    ts = as_float_array("ts", ts, ndim=1)
    values = np.asarray(values, dtype=np.float64).reshape(-1)
    if ts.shape != values.shape or ts.size < 2:
        raise GflowInputError(f"`ts` and the loss curve must be 1-d of equal length >= 2, got {ts.shape} and "
                              f"{values.shape}")
    if np.any(np.diff(ts) < 0):
        raise GflowInputError("`ts` must be sorted")
    if positive_start and (not np.isfinite(values[0]) or values[0] <= 0):
        raise GflowInputError(f"the loss curve must start at a positive finite value, got {values[0]!r}")
    return ts, values


def crossing_time(ts, values, level: float) -> float:
    """The first time a positive curve reaches ``values ≤ level``, interpolated linearly in log(values) between
    the bracketing saved times; ts[0] if it starts there, NaN if it never gets there.

    Args:
        ts: Saved times.
        values: A positive curve at those times.
        level: The level.

    Returns:
        The time, a float.
    """
    ts, values = _curve(ts, values)
    level = positive_float("level", level)
    below = np.flatnonzero(np.isfinite(values) & (values <= level))
    if below.size == 0:
        return float("nan")
    i = int(below[0])
    if i == 0:
        return float(ts[0])
    v0, v1 = values[i - 1], values[i]
    if v1 <= 0:  # an exact zero: interpolate linearly in the value instead
        frac = (v0 - level) / (v0 - v1)
    else:
        frac = (np.log(v0) - np.log(level)) / (np.log(v0) - np.log(v1))
    return float(ts[i - 1] + frac * (ts[i] - ts[i - 1]))


def escape_time(ts, loss, *, fraction: float = 0.5, reference: float | None = None) -> float:
    """First time L(t) ≤ ``fraction`` × ``reference`` (default reference L(ts[0])); NaN if never.

    Args:
        ts: Saved times.
        loss: The loss at those times.
        fraction: The fraction of the reference to reach.
        reference: The reference loss (default L(ts[0])).

    Returns:
        The time, a float.
    """
    ts, loss = _curve(ts, loss)
    fraction = positive_float("fraction", fraction)
    if fraction >= 1:
        raise GflowInputError(f"`fraction` must lie in (0, 1), got {fraction}")
    ref = float(loss[0]) if reference is None else positive_float("reference", reference)
    return crossing_time(ts, loss, fraction * ref)


def plateau_end(ts, loss, *, band: float = 0.01) -> float:
    """End of the initial plateau: the first time L has fallen by the fraction ``band`` of L(ts[0]).

    Args:
        ts: Saved times.
        loss: The loss at those times.
        band: The relative fall that ends the plateau.

    Returns:
        The time, a float.
    """
    band = positive_float("band", band)
    if band >= 1:
        raise GflowInputError(f"`band` must lie in (0, 1), got {band}")
    return escape_time(ts, loss, fraction=1.0 - band)


class Plateau(NamedTuple):
    """One plateau of the loss: from saved time ``start`` to ``end``, at the loss ``level`` where it starts."""

    start: float
    end: float
    level: float


def plateaus(ts, loss, *, band: float = 0.01, min_fraction: float = 0.05) -> list[Plateau]:
    """Maximal runs of saved times over which L stays within [(1 − band), (1 + band)] × L(run start) and which
    last at least ``min_fraction`` × (ts[-1] − ts[0]); a scan from left to right, each run starting where the
    previous one ended. Saddle-to-saddle dynamics show one plateau per saddle.

    Args:
        ts: Saved times.
        loss: The loss at those times.
        band: The relative band around the loss at a run's start.
        min_fraction: The shortest run kept, as a fraction of the saved time span.

    Returns:
        The plateaus, in order of time.
    """
    ts, loss = _curve(ts, loss)
    band = positive_float("band", band)
    min_fraction = positive_float("min_fraction", min_fraction)
    span = ts[-1] - ts[0]
    out, i, n = [], 0, len(ts)
    while i < n - 1:
        level = loss[i]
        j = i
        while j + 1 < n and np.isfinite(loss[j + 1]) and abs(loss[j + 1] - level) <= band * abs(level):
            j += 1
        if j > i and ts[j] - ts[i] >= min_fraction * span:
            out.append(Plateau(float(ts[i]), float(ts[j]), float(level)))
        i = max(j, i + 1)
    return out


def on_rescaled_grid(ts, values, eps, grid) -> np.ndarray:
    """values interpolated at t = grid · ln(1/ε), so curves from a sweep over ε can be compared pointwise;
    NaN outside the saved range.

    Args:
        ts: Saved times.
        values: A curve at those times.
        eps: ε.
        grid: Points of the rescaled time axis t / ln(1/ε).

    Returns:
        Shaped like ``grid``.
    """
    ts, values = _curve(ts, values, positive_start=False)
    grid = as_float_array("grid", grid, ndim=1)
    t = grid * np.log(1.0 / float(_epsilon(eps)))
    return np.interp(t, ts, values, left=np.nan, right=np.nan)
