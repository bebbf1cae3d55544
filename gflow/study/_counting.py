"""Checks whose statistic fits the data: counts of 0/1 outcomes over seeds decided by the exact binomial
(Clopper–Pearson) interval, existence claims as k of n with that interval, and seed averages only where the paper
averages, with the paper's number of seeds and the per-seed distribution beside the mean.

Each returns an entry of the same shape as :func:`gflow.study.check`, with status "pass", "FAIL" or "inconclusive"
decided by :func:`gflow.study.decide` on the interval, and ``seeds_needed`` when inconclusive.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from ..results import jsonable
from ._check import check
from ._statistics import _beta_bounds, clopper_pearson, decide, LEVEL, student_t_interval

MAX_SEEDS = 10**7


def k_of_n(claim: str, source: str, outcomes, threshold_fraction: float, *, direction: str = ">=",
           predictions=None, kind: str = "prediction", confidence: float = LEVEL, **extra) -> dict:
    """A claim "a fraction ≥ p of seeds show X" (or ≤ p), decided by the exact binomial interval of the fraction.

    The two-sided Clopper–Pearson interval (Clopper & Pearson, Biometrika 26, 404 (1934);
    :func:`gflow.study.clopper_pearson`) decides as :func:`gflow.study.decide` does: for ``">="`` pass when its
    lower end is ≥ p, FAIL when its upper end is < p, else inconclusive. Two-sided, not the one-sided bound a pass
    alone would need, because the decision is three-way: each of pass and FAIL is then wrong with probability at
    most (1 − confidence)/2, and the interval is the 95 % one the bootstrap checks use. 10 of 10 seeds give
    [0.69, 1]: inconclusive against p = 0.75.

    Args:
        claim: what is checked, in words.
        source: the paper, theorem or figure it comes from.
        outcomes: one yes/no per seed: a list of bools, or ``{seed: bool}`` (the seeds are kept in the entry).
        threshold_fraction: the bar p in [0, 1], registered before the run.
        direction: ``">="`` (the claim is fraction ≥ p) or ``"<="``.
        predictions: the registry ids it decides.
        kind: ``"prediction"`` (default) or ``"sanity"``.
        confidence: the interval's coverage.
        **extra: further fields of the entry.

    Returns:
        The entry: value = fraction = k/n, ``k``, ``n``, ``interval``, ``statistic = "clopper_pearson"``,
        ``outcomes`` (and ``seeds``), status, and when inconclusive ``seeds_needed``: the smallest number of seeds
        at which, if the observed fraction held, the interval would decide (k taken as fraction × seeds, the Beta
        quantiles accepting a non-integer k); None when the fraction sits on p.

    Raises:
        ValueError: for no outcomes, an outcome that is not a bool, p outside [0, 1], or another direction.
    """
    seeds, flags = _split(outcomes, "outcomes")
    if not all(isinstance(f, (bool, np.bool_)) for f in flags) or not flags:
        raise ValueError(f"k_of_n: outcomes must be one or more bools, got {flags[:5]!r} ({claim!r})")
    if not 0 <= threshold_fraction <= 1:
        raise ValueError(f"k_of_n: threshold_fraction must lie in [0, 1], got {threshold_fraction!r} ({claim!r})")
    if direction not in (">=", "<="):
        raise ValueError(f"k_of_n: direction must be '>=' or '<=', got {direction!r} ({claim!r})")
    k, n = sum(map(bool, flags)), len(flags)
    interval = clopper_pearson(k, n, confidence)
    status = decide(interval, threshold_fraction, direction)
    entry = check(claim, source, k / n, threshold_fraction, status == "pass", kind=kind, predictions=predictions,
                  **extra)
    entry.update({"status": status, "direction": direction, "interval": list(interval), "confidence": confidence,
                  "statistic": "clopper_pearson", "k": k, "n": n, "fraction": k / n,
                  "outcomes": [bool(f) for f in flags]})
    if seeds is not None:
        entry["seeds"] = jsonable(seeds)
    if status == "inconclusive":
        tail = (1 - confidence) / 2
        entry["seeds_needed"] = None if k / n == threshold_fraction else _smallest(n + 1, lambda m: decide(
            _beta_bounds(k / n * m, m, tail, tail), threshold_fraction, direction) != "inconclusive")
    return entry


def exists_in(claim: str, source: str, outcomes, min_fraction: float, **kw) -> dict:
    """An existence claim ("some seed / teacher shows X"), reported as k of n with its Clopper–Pearson interval.

    The trivial reading, pass iff k ≥ 1, cannot fail in a meaningful way: for any behaviour with a non-zero rate its
    chance of passing tends to 1 with the number of seeds, so its outcome depends on n. A paper that shows "a
    student that does X" claims the behaviour is something its protocol produces, not a one-in-a-thousand accident.
    So the claim is read as "a fraction ≥ ``min_fraction`` of seeds show X", with ``min_fraction`` registered
    before the run, and decided as :func:`k_of_n` does: it passes only when the interval's lower end clears it,
    FAILs when the upper end is below it (0 of 36 against 0.1, say), and the entry keeps ``any_seed`` (k ≥ 1)
    beside it for the reader.

    Args:
        claim: what is checked, in words.
        source: the paper, theorem or figure it comes from.
        outcomes: one yes/no per seed: a list of bools, or ``{seed: bool}``.
        min_fraction: the least rate that makes the behaviour more than an accident, in [0, 1].
        **kw: further arguments of :func:`k_of_n` (``predictions``, ``kind``, ``confidence``) and fields of the
            entry.

    Returns:
        The :func:`k_of_n` entry with ``reading = "existence"`` and ``any_seed``.
    """
    entry = k_of_n(claim, source, outcomes, min_fraction, direction=">=", **kw)
    entry.update(reading="existence", any_seed=entry["k"] >= 1)
    return entry


def seed_average(claim: str, source: str, values, threshold, direction: str, *, paper_n: int,
                 allow_other_n: bool = False, predictions=None, kind: str = "prediction",
                 confidence: float = LEVEL, **extra) -> dict:
    """A claim about a mean over seeds, allowed only where the paper averages, over the paper's number of seeds.

    Decided by :func:`gflow.study.decide` (the rule :func:`gflow.study.over_seeds` uses) on the Student-t interval
    of the mean (:func:`gflow.study.student_t_interval`), not the bootstrap: at the few seeds papers average (3, 5)
    the percentile bootstrap of the mean covers ≈ 76 % (n = 3) and ≈ 83 % (n = 5) of the time for normal seeds
    instead of 95 %, the t-interval ≈ 95 %. The per-seed values, min, median and max stand beside the mean, so a
    bimodal spread (where no interval of a mean is meaningful) is visible.

    Args:
        claim: what is checked, in words.
        source: the paper, theorem or figure it comes from.
        values: one value per seed: a list, or ``{seed: value}``.
        threshold: the bar, registered before the run (a band ``[low, high]`` for ``"in"``).
        direction: ``">="``, ``">"``, ``"<="``, ``"<"`` or ``"in"``.
        paper_n: the number of seeds the paper averages (≥ 2).
        allow_other_n: accept another number of values; the entry then records ``n`` beside ``paper_n``.
        predictions: the registry ids it decides.
        kind: ``"prediction"`` (default) or ``"sanity"``.
        confidence: the interval's coverage.
        **extra: further fields of the entry.

    Returns:
        The entry: value = the mean, ``interval``, ``statistic = "mean"``, ``interval_method = "student_t"``,
        ``n``, ``paper_n``, ``values``, ``min``, ``median``, ``max``, status, and when inconclusive
        ``seeds_needed`` (the least n at which the t-interval's half-width, with this spread, would clear the
        threshold; None when the mean sits on it).

    Raises:
        ValueError: for paper_n < 2, a number of values other than paper_n (unless allowed), fewer than two values
            or a non-finite one.
    """
    seeds, vals = _split(values, "values")
    x = np.asarray(vals, dtype=float).ravel()
    if isinstance(paper_n, bool) or not isinstance(paper_n, (int, np.integer)) or paper_n < 2:
        raise ValueError(f"seed_average: paper_n must be an integer >= 2 (one run is not an average), got "
                         f"{paper_n!r} ({claim!r})")
    if x.size != paper_n and not allow_other_n:
        raise ValueError(f"seed_average: the paper averages {paper_n} seeds, got {x.size} values; pass "
                         f"allow_other_n=True to record both ({claim!r})")
    interval = student_t_interval(x, confidence)
    status = decide(interval, threshold, direction)
    mean = float(x.mean())
    entry = check(claim, source, mean, threshold, status == "pass", kind=kind, predictions=predictions, **extra)
    entry.update({"status": status, "direction": direction, "interval": list(interval), "confidence": confidence,
                  "statistic": "mean", "interval_method": "student_t", "n": int(x.size), "paper_n": int(paper_n),
                  "values": jsonable(x), "min": float(x.min()), "median": float(np.median(x)),
                  "max": float(x.max())})
    if seeds is not None:
        entry["seeds"] = jsonable(seeds)
    if status == "inconclusive":
        edges = threshold if direction == "in" else [threshold]
        margin, sd = min(abs(mean - float(e)) for e in edges), float(x.std(ddof=1))
        entry["seeds_needed"] = None if margin == 0 else _smallest(x.size + 1, lambda m: float(
            stats.t.ppf((1 + confidence) / 2, m - 1)) * sd / math.sqrt(m) <= margin)
    return entry


def _split(data, name: str):
    """``(seeds or None, values)`` of a list or a ``{seed: value}`` dict."""
    if isinstance(data, dict):
        return list(data), list(data.values())
    if isinstance(data, (str, bytes)) or not hasattr(data, "__iter__"):
        raise ValueError(f"{name} must be a list or a {{seed: value}} dict, got {data!r}")
    return None, list(data)


def _smallest(start: int, reached, cap: int = MAX_SEEDS) -> int | None:
    """The least m ≥ start with ``reached(m)`` (assumed monotone in m), or None when beyond ``cap``."""
    low, high = start - 1, start
    while not reached(high):
        low, high = high, 2 * high
        if high > cap:
            return None
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if reached(mid) else (mid, high)
    return high
