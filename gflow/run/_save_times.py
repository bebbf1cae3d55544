"""When a run saves: a flow's save times in [t0, t1] (a count of log-spaced times, an array of times, or a diffrax
``SaveAt`` of times) and a discrete run's saved steps (a count of log-spaced steps, or an array of steps), parsed
and checked before anything is traced."""

from __future__ import annotations

import diffrax
import numpy as np

from .._checks import GflowInputError, positive_int


def log_save_times(t0: float, t1: float, n: int, first: float | None = None) -> np.ndarray:
    """Log-spaced save times of a flow.

    Args:
        t0: The start time.
        t1: The end time.
        n: How many times (at least 2).
        first: The first time after t0, as an offset from t0 (default 1e-6·(t1 − t0)).

    Returns:
        t0 followed by n − 1 log-spaced times from t0 + first to t1, the last one t1 exactly.
    """
    n = positive_int("save_at", n, minimum=2)
    span = t1 - t0
    first = span * 1e-6 if first is None else first
    ts = np.concatenate([[t0], t0 + np.geomspace(first, span, n - 1)])
    ts[-1] = t1  # t0 + span can round above t1
    return np.minimum(ts, t1)


# a flow's first save after t0: a hundredth of its first time scale τ, rounded down to 10^m. Where the loss sits in the
# stiffest direction it decays like exp(−2t/τ): a first save at τ/100 comes after at most 2 % of that drop (at τ/10,
# up to 18 %: gd_vs_flow's memoryless probe had lost over 10 % of L before it, so its early window was empty)
FIRST_SAVE_FRACTION = 0.01
FIXED_FIRST = 1e-6  # without a time scale: the first save at 1e-6 (t1 − t0)


def first_save_offset(time_scale: float | None, t0: float, t1: float) -> float:
    """Where a flow's default log-spaced save times begin, after t0.

    The first save is at a hundredth of the flow's first time scale τ (:func:`gflow.run.flow_time_scale`), rounded down
    to a power of ten (so that flows of nearby τ share their grid), and kept within [t0, t1]: at most 1e-2 (t1 − t0),
    at least 1e-15 (t1 − t0) and 1e-12 |t0| (distinct from t0 in float64). A log-log plot of the saved losses then
    starts where the flow starts to move, whatever t1: a fixed fraction of t1 − t0 would start at t = 100 for
    t1 = 1e8, after the learning phase of a flow whose τ is 0.5 (``FIRST_SAVE_FRACTION``).

    Args:
        time_scale: τ, or None (not known: the first save at 1e-6 (t1 − t0)).
        t0: The start time.
        t1: The end time.

    Returns:
        The first save's offset from t0.
    """
    span = t1 - t0
    if time_scale is None or not np.isfinite(time_scale) or time_scale <= 0:
        return FIXED_FIRST * span
    first = 10.0 ** np.floor(np.log10(FIRST_SAVE_FRACTION * time_scale))
    return float(min(max(first, 1e-15 * span, 1e-12 * abs(t0)), 1e-2 * span))


def is_count(save_at) -> bool:
    """Whether ``save_at`` is a count of log-spaced save times (an int, not a bool)."""
    return isinstance(save_at, (int, np.integer)) and not isinstance(save_at, bool)


def save_times(save_at, t0: float, t1: float, first: float | None = None) -> np.ndarray:
    """A flow's save times from its ``save_at`` option.

    Args:
        save_at: A count of log-spaced times (:func:`log_save_times`), an array of sorted times in [t0, t1], or a
            ``diffrax.SaveAt(ts=..., t0=...)`` (times only).
        t0: The start time.
        t1: The end time.
        first: For a count: the first time after t0, as an offset from t0 (default 1e-6 (t1 − t0);
            :func:`first_save_offset` gives a flow's own).

    Returns:
        The save times, float64.

    Raises:
        GflowInputError: ``save_at`` is none of these, or its times are unsorted, non-finite or outside [t0, t1].
    """
    if isinstance(save_at, diffrax.SaveAt):
        save_at = _save_at_times(save_at, t0)
    if is_count(save_at):
        return log_save_times(t0, t1, int(save_at), first)
    if isinstance(save_at, (str, bytes, bool)):
        what = f"the string {save_at!r}" if isinstance(save_at, (str, bytes)) else f"the bool {save_at!r}"
        raise GflowInputError(f"`save_at` must be an int count of log-spaced save times or an array of times in "
                              f"[t0, t1] (or a diffrax.SaveAt(ts=...)), got {what}")
    try:
        ts = np.asarray(save_at, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise GflowInputError(f"`save_at` must be an int count of log-spaced save times or an array of times in "
                              f"[t0, t1], got {type(save_at).__name__} {save_at!r:.60}") from None
    if ts.size == 0 or not np.all(np.isfinite(ts)):
        raise GflowInputError("`save_at` must be a number of points or a non-empty array of finite times")
    if np.any(np.diff(ts) < 0) or ts[0] < t0 or ts[-1] > t1:
        raise GflowInputError(f"`save_at` times must be sorted and lie in [t0, t1] = [{t0}, {t1}]")
    return ts


_SAVE_Y = diffrax.SaveAt(t1=True).subs.fn  # diffrax's default: save the state itself


def _save_at_times(save_at: diffrax.SaveAt, t0: float) -> np.ndarray:
    """The times of a ``diffrax.SaveAt(ts=..., t0=...)``: gflow saves the parameters at given times (and always
    at the last time reached), so dense output, every step, or a custom ``fn`` are refused."""
    subs = save_at.subs
    if save_at.dense or not isinstance(subs, diffrax.SubSaveAt) or subs.steps or subs.fn is not _SAVE_Y:
        raise GflowInputError("`save_at` as a diffrax.SaveAt may only give times (SaveAt(ts=..., t0=..., t1=...)); "
                              "gflow saves the flat parameters at those times and evaluates `diagnostics` there")
    ts = [] if subs.ts is None else list(np.asarray(subs.ts, dtype=np.float64).reshape(-1))
    return np.asarray(([t0] if subs.t0 else []) + ts)


def log_save_steps(steps: int, n: int) -> np.ndarray:
    """Log-spaced saved steps of a discrete run, the same number for runs of any length.

    Args:
        steps: The run's steps.
        n: How many saved steps to aim for (at least 2).

    Returns:
        Exactly min(n, steps + 1) distinct integer steps: 0, then log-spaced from 1 to ``steps`` (nudged apart where
        rounding would repeat a step).
    """
    steps, n = positive_int("steps", steps), positive_int("save_at", n, minimum=2)
    n = min(n, steps + 1)
    logs = np.geomspace(1, steps, n - 1) if n > 2 else np.array([steps])  # geomspace(1, s, 1) would give [1]
    s = np.concatenate([[0], np.round(logs).astype(np.int64)])
    i = np.arange(n)
    s = np.maximum.accumulate(s - i) + i  # strictly increasing
    return np.minimum(s, steps - (n - 1 - i))  # and at most `steps`, ending there


def save_steps(save_at, steps: int) -> np.ndarray:
    """A discrete run's saved steps from its ``save_at`` option.

    Args:
        save_at: A count of log-spaced steps (:func:`log_save_steps`) or an array of sorted integer steps in
            [0, steps].
        steps: The run's steps.

    Returns:
        The saved steps (int64, distinct), the final step always among them.

    Raises:
        GflowInputError: ``save_at`` is neither, or its steps are unsorted or outside [0, steps].
    """
    if isinstance(save_at, (int, np.integer)) and not isinstance(save_at, bool):
        return log_save_steps(steps, int(save_at))
    s = np.asarray(save_at).reshape(-1)
    if s.size == 0 or not np.issubdtype(s.dtype, np.integer):
        raise GflowInputError("`save_at` must be a number of points or a non-empty array of integer steps")
    if np.any(np.diff(s) < 0) or s[0] < 0 or s[-1] > steps:
        raise GflowInputError(f"`save_at` steps must be sorted and lie in [0, steps] = [0, {steps}]")
    return np.unique(np.append(s, steps)).astype(np.int64)  # the final state is always saved
