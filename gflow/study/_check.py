"""One entry of a study's list of checks (summary.json, validation/results/<study>.json), issue 15.

Every check has a *kind*:

- ``"prediction"``: could fail if the paper were wrong or our code buggy; only these decide a prediction;
- ``"sanity"``: holds by construction, arithmetic or an identity, or guards the numerics (a solver tolerance, a
  projection's bound, a precondition); kept to catch bugs, never counted for a prediction. A study exits non-zero
  when a sanity check fails (something is broken), not when a prediction fails (that is a result).

and a *status*: "pass", "FAIL" or "inconclusive" (:func:`over_seeds`: the bootstrap interval straddles the
threshold). Thresholds are arguments written in the study's code before the run.
"""

from __future__ import annotations

import numpy as np

from ..results import jsonable
from ._statistics import bootstrap_interval, decide, seeds_needed

KINDS = ("prediction", "sanity")
STATUSES = ("pass", "FAIL", "inconclusive")


COMPARISONS = {"<=": np.less_equal, "<": np.less, ">=": np.greater_equal, ">": np.greater}


def compare(value, threshold, direction: str) -> bool:
    """``value direction threshold`` (``direction`` one of ``<=``, ``<``, ``>=``, ``>``); False for NaN."""
    if direction not in COMPARISONS:
        raise ValueError(f"check direction must be one of {tuple(COMPARISONS)}, got {direction!r}")
    return bool(np.all(COMPARISONS[direction](np.asarray(value, dtype=float), threshold)))


def check(claim: str, source: str, value, threshold, passed: bool | None = None, *, kind: str,
          direction: str | None = None, predictions=None, **extra) -> dict:
    """A check decided by one number (or a yes/no).

    Args:
        claim: what is checked, in words.
        source: the paper, theorem or figure it comes from.
        value: the measured number (or array: every entry must satisfy the comparison).
        threshold: the bar, registered before the run; recorded as tested.
        passed: the decision, for a yes/no check; leave it out when ``direction`` is given.
        kind: ``"prediction"`` or ``"sanity"``.
        direction: ``"<="``, ``"<"``, ``">="`` or ``">"``: the check passes when ``value direction threshold``;
            recorded in the entry, so the threshold and comparison that decided are the ones written down.
        predictions: the registry ids the check decides (or vouches for, when a sanity check).

    Returns:
        The check's entry for summary.json.
    """
    if kind not in KINDS:
        raise ValueError(f"check kind must be one of {KINDS}, got {kind!r} ({claim!r})")
    if (passed is None) == (direction is None):
        raise ValueError(f"give a check either `direction` (decided from value and threshold) or `passed` (a yes/no "
                         f"decision), not {'both' if direction else 'neither'} ({claim!r})")
    if direction is not None:
        passed = compare(value, threshold, direction)
    entry = {"claim": claim, "source": source, "kind": kind, "value": jsonable(value),
             "threshold": jsonable(threshold), "status": "pass" if passed else "FAIL", "passed": bool(passed),
             "predictions": list(predictions or [])}
    if direction is not None:
        entry["direction"] = direction
    entry.update({k: jsonable(v) for k, v in extra.items()})
    return entry


def over_seeds(claim: str, source: str, values, threshold, direction: str, *, statistic: str = "median",
               predictions=None, kind: str = "prediction", seed: int = 0, **extra) -> dict:
    """A prediction about a statistic over seeds (one value per seed, normalized per seed where scales differ):
    value = the statistic, ``interval`` = its bootstrap 95 % interval; pass / FAIL / inconclusive by
    :func:`decide`, with ``seeds_needed`` when inconclusive."""
    x = np.asarray(values, dtype=float).ravel()
    estimate = float(getattr(np, statistic)(x))
    interval = bootstrap_interval(x, statistic, seed=seed)
    status = decide(interval, threshold, direction)
    entry = check(claim, source, estimate, threshold, status == "pass", kind=kind, predictions=predictions,
                  **extra)
    entry.update({"status": status, "interval": jsonable(list(interval)), "statistic": statistic,
                  "direction": direction, "n": int(x.size), "values": jsonable(x)})
    if status == "inconclusive":
        entry["seeds_needed"] = seeds_needed(x.size, estimate, interval, threshold, direction)
    return entry


def exit_code(checks: list[dict]) -> int:
    """A study's exit status: 1 when a sanity check failed (a bug or broken numerics), else 0 — a failed or
    inconclusive prediction is a result, not an error."""
    return int(any(c["kind"] == "sanity" and c["status"] != "pass" for c in checks))
