"""Least-squares fits of the scaling laws the studies measure: exponential rates, power laws, the ln(1/ε) law of
small initialization, and GD's drift in η and t. Every fit leaves out non-finite samples (and, on a log scale,
non-positive ones) and needs at least two points left; it fails with :class:`gflow.GflowInputError` otherwise."""

from __future__ import annotations

import numpy as np

from .._checks import as_float_array, GflowInputError


def fit_exponential_rate(ts, values, *, t_min: float | None = None, t_max: float | None = None) -> float:
    """Least-squares slope of log(values) against t on [t_min, t_max]: the rate r in values ∝ e^{r t}.

    Args:
        ts: Times.
        values: Positive values at those times.
        t_min: Fit only t ≥ t_min.
        t_max: Fit only t ≤ t_max.

    Returns:
        r.
    """
    ts = np.asarray(ts, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    mask = np.isfinite(ts) & np.isfinite(values) & (values > 0)
    if t_min is not None:
        mask &= ts >= t_min
    if t_max is not None:
        mask &= ts <= t_max
    if mask.sum() < 2:
        raise GflowInputError("need at least two positive, finite samples in the window to fit a rate")
    slope, _ = np.polyfit(ts[mask], np.log(values[mask]), 1)
    return float(slope)


def fit_power_law(xs, ys) -> float:
    """Least-squares slope of log y against log x: the exponent p in y ∝ x^p.

    Args:
        xs: Positive x values.
        ys: Positive y values.

    Returns:
        p.
    """
    xs = np.asarray(xs, dtype=np.float64)
    ys = np.asarray(ys, dtype=np.float64)
    mask = np.isfinite(xs) & np.isfinite(ys) & (xs > 0) & (ys > 0)
    if mask.sum() < 2:
        raise GflowInputError("need at least two positive, finite points to fit a power law")
    slope, _ = np.polyfit(np.log(xs[mask]), np.log(ys[mask]), 1)
    return float(slope)


def fit_power_law_with_prefactor(xs, ys) -> tuple[float, float]:
    """(p, c) of y ≈ c x^p: p from :func:`fit_power_law`, c the geometric mean of y / x^p over the points used.

    Args:
        xs: Positive x values.
        ys: Positive y values.

    Returns:
        ``(p, c)``.
    """
    p = fit_power_law(xs, ys)
    xs, ys = np.asarray(xs, dtype=np.float64), np.asarray(ys, dtype=np.float64)
    mask = np.isfinite(xs) & np.isfinite(ys) & (xs > 0) & (ys > 0)
    return p, float(np.exp(np.mean(np.log(ys[mask]) - p * np.log(xs[mask]))))


def fit_log_scaling(eps, times) -> tuple[float, float]:
    """Least-squares (slope, intercept) of times = slope · ln(1/ε) + intercept (escape times of a sweep over ε);
    NaN times (runs that never escaped) are left out.

    Args:
        eps: The initialization scales ε.
        times: The escape time of each run (NaN: never escaped).

    Returns:
        ``(slope, intercept)``.
    """
    e = as_float_array("eps", eps)
    if np.any(e <= 0) or np.any(e >= 1):
        raise GflowInputError(f"initialization scales `eps` must lie in (0, 1) so that ln(1/ε) > 0, got {eps}")
    try:
        t = np.asarray(times, dtype=np.float64)  # NaN allowed: a run that never escaped is left out
    except (TypeError, ValueError):
        raise GflowInputError(f"`times` must be a real array, got {type(times).__name__}") from None
    if e.shape != t.shape:
        raise GflowInputError(f"`eps` and `times` must have the same shape, got {e.shape} and {t.shape}")
    mask = np.isfinite(t)
    if mask.sum() < 2:
        raise GflowInputError("need at least two finite times to fit times against ln(1/ε)")
    slope, intercept = np.polyfit(np.log(1.0 / e[mask]), t[mask], 1)
    return float(slope), float(intercept)


def fit_drift_exponents(etas, times, drifts, *, t_min: float | None = None, t_max: float | None = None):
    """(p, q) of drift ≈ c · η^p · t^q, by least squares on log drift over every run i (step size etas[i], saved
    times times[i], drifts drifts[i]) and every positive finite sample with t_min ≤ t ≤ t_max.

    Args:
        etas: The step size of each run.
        times: Each run's saved times.
        drifts: Each run's drift at those times.
        t_min: Fit only t ≥ t_min.
        t_max: Fit only t ≤ t_max.

    Returns:
        ``(p, q)``.
    """
    if not len(etas) == len(times) == len(drifts):
        raise GflowInputError("`etas`, `times` and `drifts` must have one entry per run")
    rows, rhs = [], []
    for eta, ts, ds in zip(etas, times, drifts):
        ts, ds = np.asarray(ts, dtype=np.float64), np.asarray(ds, dtype=np.float64)
        keep = np.isfinite(ts) & np.isfinite(ds) & (ts > 0) & (ds > 0)
        keep &= ts >= (t_min if t_min is not None else -np.inf)
        keep &= ts <= (t_max if t_max is not None else np.inf)
        rows += [[1.0, np.log(eta), np.log(t)] for t in ts[keep]]
        rhs += list(np.log(ds[keep]))
    X = np.asarray(rows)
    if len(X) < 3 or np.linalg.matrix_rank(X) < 3:
        raise GflowInputError("need samples at two or more step sizes and two or more times to fit both exponents")
    coef, *_ = np.linalg.lstsq(X, np.asarray(rhs), rcond=None)
    return float(coef[1]), float(coef[2])
