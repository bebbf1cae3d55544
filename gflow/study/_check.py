"""One entry of a study's list of checks (summary.json, validation/results/<study>.json).

Every check has a *kind*:

- ``"prediction"``: could fail if the paper were wrong or our code buggy; only these decide a prediction;
- ``"sanity"``: holds by construction, arithmetic or an identity, or guards the numerics (a solver tolerance, a
  projection's bound, a precondition); kept to catch bugs, never counted for a prediction. A study exits non-zero
  when a sanity check fails (something is broken), not when a prediction fails (that is a result).

and a *status*: "pass", "FAIL" or "inconclusive" (:func:`over_seeds`: the bootstrap interval straddles the
threshold). Thresholds are arguments written in the study's code before the run.

A prediction check that decides a prediction or a reproduction of the registry is pre-registered there (a ``[[check]]``
of validation/registry.toml): the study passes its registry name as ``check_id`` and the seeds it was decided on as
``seeds``, and gflow.study.preregistration_problems compares the recorded entry with the registration.
"""

from __future__ import annotations

import numpy as np

from ..results import jsonable
from ._statistics import bootstrap_interval, decide, seeds_needed

KINDS = ("prediction", "sanity")
STATUSES = ("pass", "FAIL", "inconclusive")


COMPARISONS = {"<=": np.less_equal, "<": np.less, ">=": np.greater_equal, ">": np.greater}


def compare(value, threshold, direction: str) -> bool:
    """Whether ``value`` meets ``threshold`` in ``direction``.

    Args:
        value: a number or array (every entry must meet the threshold).
        threshold: a number; for ``"in"`` a band ``[low, high]``.
        direction: ``"<="``, ``"<"``, ``">="``, ``">"``, or ``"in"`` (``low <= value <= high``).

    Returns:
        The decision; False for NaN.
    """
    x = np.asarray(value, dtype=float)
    if direction == "in":
        low, high = (float(v) for v in threshold)
        return bool(np.all((low <= x) & (x <= high)))
    if direction not in COMPARISONS:
        raise ValueError(f"check direction must be one of {(*COMPARISONS, 'in')}, got {direction!r}")
    return bool(np.all(COMPARISONS[direction](x, threshold)))


def check(claim: str, source: str, value, threshold, passed: bool | None = None, *, kind: str,
          direction: str | None = None, predictions=None, check_id: str | None = None, **extra) -> dict:
    """A check decided by one number (or a yes/no).

    Args:
        claim: what is checked, in words.
        source: the paper, theorem or figure it comes from.
        value: the measured number (or array: every entry must satisfy the comparison).
        threshold: the bar, registered before the run; recorded as tested.
        passed: the decision, for a yes/no check; leave it out when ``direction`` is given.
        kind: ``"prediction"`` or ``"sanity"``.
        direction: ``"<="``, ``"<"``, ``">="``, ``">"`` or ``"in"`` (a band ``[low, high]``): the check passes
            when ``value direction threshold`` (:func:`compare`); recorded in the entry, so the threshold and
            comparison that decided are the ones written down.
        predictions: the registry ids the check decides (or vouches for, when a sanity check).
        check_id: the name of its ``[[check]]`` registration in validation/registry.toml (a check deciding a
            prediction or reproduction must have one); recorded in the entry.
        **extra: further fields of the entry (``seeds``: the seeds it was decided on; ``reading``).

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
    if check_id is not None:
        entry["check_id"] = check_id
    entry.update({k: jsonable(v) for k, v in extra.items()})
    return entry


def over_seeds(claim: str, source: str, values, threshold, direction: str, *, statistic: str = "median",
               predictions=None, kind: str = "prediction", seed: int = 0, **extra) -> dict:
    """A check about a statistic over seeds, decided by its bootstrap 95 % interval (:func:`decide`).

    Args:
        claim: what is checked, in words.
        source: the paper, theorem or figure it comes from.
        values: one value per seed (normalized per seed where scales differ).
        threshold: the bar, registered before the run (for ``"in"``, a band ``[low, high]``).
        direction: ``">="``, ``">"``, ``"<="``, ``"<"`` or ``"in"``.
        statistic: ``"median"``, ``"mean"``, ``"min"`` or ``"max"``.
        predictions: the registry ids it decides.
        kind: ``"prediction"`` (default) or ``"sanity"``.
        seed: the bootstrap's resampling seed.
        **extra: further arguments of :func:`check` (``check_id``) and fields of the entry (``seeds``: the seeds
            of ``values``, in order, which the pre-registration compares with the registered ones).

    Returns:
        The entry: value = the statistic, ``interval``, status pass / FAIL / inconclusive, ``seeds_needed`` when
        inconclusive.
    """
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
    """A study's exit status.

    Args:
        checks: the check entries.

    Returns:
        1 when a sanity check failed (a bug or broken numerics), else 0: a failed or inconclusive prediction is a
        result, not an error.
    """
    return int(any(c["kind"] == "sanity" and c["status"] != "pass" for c in checks))


def over_seeds_by_seed(claim: str, source: str, by_seed: dict, threshold, direction: str, **extra) -> dict:
    """:func:`over_seeds` on one value per named seed, dropping non-finite values (a seed whose run never reached
    the level read, say).

    Args:
        claim: what is checked, in words.
        source: the paper, theorem or figure it comes from.
        by_seed: ``{seed: value}``.
        threshold: the bar (a band ``[low, high]`` for ``"in"``).
        direction: as in :func:`over_seeds`.
        **extra: further arguments of :func:`over_seeds` and fields of the entry.

    Returns:
        The entry, with ``seeds`` (those kept) and ``seeds_dropped``; "inconclusive" with ``n = 0`` when no finite
        value is left.
    """
    seeds = [s for s, v in by_seed.items() if np.isfinite(v)]
    values = [by_seed[s] for s in seeds]
    extra = {**extra, "seeds": seeds, "seeds_dropped": len(by_seed) - len(seeds)}
    if values:
        return over_seeds(claim, source, values, threshold, direction, **extra)
    kind = extra.pop("kind", "prediction")
    entry = check(claim, source, float("nan"), threshold, False, kind=kind, **extra)
    entry.update(status="inconclusive", n=0, direction=direction, seeds_needed=None)
    return entry
