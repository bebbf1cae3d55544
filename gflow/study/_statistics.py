"""Deciding a prediction about seeds from a sample of seeds: a percentile-bootstrap 95 % interval of
the statistic, and a three-way decision against a threshold fixed before the run.

A check *passes* when the whole interval is on the predicted side of the threshold, *fails* when the whole
interval is on the other side, and is *inconclusive* otherwise; then :func:`seeds_needed` estimates how many
seeds would make the interval clear the threshold (half-width shrinking like 1/√n), or says none would.
"""

from __future__ import annotations

import math

import numpy as np

LEVEL = 0.95
RESAMPLES = 4000
STATISTICS = {"median": np.median, "mean": np.mean, "min": np.min, "max": np.max}
DIRECTIONS = (">=", "<=", ">", "<", "in")


def bootstrap_interval(values, statistic: str = "median", *, seed: int = 0, resamples: int = RESAMPLES,
                       level: float = LEVEL) -> tuple[float, float]:
    """The percentile-bootstrap interval of a statistic over seeds.

    Args:
        values: one value per seed.
        statistic: ``"median"``, ``"mean"``, ``"min"`` or ``"max"``.
        seed: the resampling seed (the same values always give the same interval).
        resamples: bootstrap resamples.
        level: the interval's coverage.

    Returns:
        ``(low, high)``; one value gives a point interval.

    Raises:
        ValueError: for no values or a non-finite one.
    """
    x = np.asarray(values, dtype=float).ravel()
    if x.size == 0:
        raise ValueError("bootstrap_interval: no values")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"bootstrap_interval: non-finite values {x[~np.isfinite(x)][:5].tolist()}")
    f = _statistic(statistic)
    rng = np.random.default_rng(seed)
    stats = f(x[rng.integers(0, x.size, size=(resamples, x.size))], axis=1)
    lo, hi = np.quantile(stats, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def decide(interval, threshold, direction: str) -> str:
    """Decide an interval against a threshold.

    Args:
        interval: ``(low, high)``.
        threshold: the bar; for ``"in"`` a band ``[low, high]``.
        direction: ``">="`` / ``">"`` (the prediction is statistic ≥ threshold), ``"<="`` / ``"<"``, or ``"in"``.

    Returns:
        "pass" when the whole interval is on the predicted side, "FAIL" when it is wholly on the other, else
        "inconclusive".
    """
    lo, hi = (float(v) for v in interval)
    if direction in (">=", ">"):
        ok = lo >= threshold if direction == ">=" else lo > threshold
        bad = hi < threshold if direction == ">=" else hi <= threshold
    elif direction in ("<=", "<"):
        ok = hi <= threshold if direction == "<=" else hi < threshold
        bad = lo > threshold if direction == "<=" else lo >= threshold
    elif direction == "in":
        low, high = (float(v) for v in threshold)
        ok = low <= lo and hi <= high
        bad = hi < low or lo > high
    else:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    return "pass" if ok else "FAIL" if bad else "inconclusive"


def seeds_needed(n: int, estimate: float, interval, threshold, direction: str) -> int | None:
    """How many seeds would decide an inconclusive check.

    Args:
        n: the seeds used.
        estimate: the statistic.
        interval: its bootstrap interval.
        threshold: the bar (a band for ``"in"``).
        direction: as in :func:`decide`.

    Returns:
        The seeds for the interval to clear the threshold if the estimate stays where it is and the half-width
        shrinks like 1/√n; None when the estimate sits on the threshold (no number of seeds would decide).
    """
    lo, hi = (float(v) for v in interval)
    half = max(hi - lo, 0.0) / 2
    if direction == "in":
        low, high = (float(v) for v in threshold)
        margin = min(abs(estimate - low), abs(estimate - high))
    else:
        margin = abs(estimate - float(threshold))
    if margin == 0.0 or not math.isfinite(margin):
        return None
    return max(n + 1, math.ceil(n * (half / margin) ** 2))


def _statistic(name: str):
    if name not in STATISTICS:
        raise ValueError(f"statistic must be one of {sorted(STATISTICS)}, got {name!r}")
    f = STATISTICS[name]
    return lambda a, axis=None: f(a, axis=axis)
