"""Negative controls: the power of a registered deciding check, shown.

A check that could not have failed decides nothing. For each registered deciding check a study names a *plausible
alternative outcome* (a smooth error curve where the paper sees a knee, the all-zero response, students that fit but
do not extrapolate, a flat dependence where the paper sees growth) and judges it with the same function, thresholds
and seeds that decide the real run. The control must come out FAIL. :func:`control_problems` says where one does not
(or judges a check other than the one it names, or not as registered), tests/test_negative_controls.py fails on any,
and VALIDATION.md shows each check's control beside the prediction it decides.
"""

from __future__ import annotations

from typing import NamedTuple

from ._registry import check_role, Registry


class NegativeControl(NamedTuple):
    """A registered check judged on a plausible alternative outcome, on which it must FAIL.

    Attributes:
        check_id: the registered check (``[[check]]`` of validation/registry.toml).
        alternative: the alternative outcome, in words.
        entry: the check's entry as the study's own judge writes it for the alternative (status, value, threshold).
        result: the result-file context the entry is judged in (``study``, ``config``, ``seeds_block``): the seeds and
            block the registered check decides on.
    """

    check_id: str
    alternative: str
    entry: dict
    result: dict


def control_problems(controls: list[NegativeControl], registry: Registry) -> list[str]:
    """Every control that does not show its check's power.

    Args:
        controls: the controls.
        registry: the registry.

    Returns:
        One line per problem: a control of an unregistered check, whose entry is another check, that is not judged as
        registered (its check would not be deciding on the control's seeds), or whose status is not FAIL.
    """
    registered = {c.id for c in registry.checks}
    problems = []
    for c in controls:
        if c.check_id not in registered:
            problems.append(f"{c.check_id}: a control of a check the registry does not hold")
            continue
        if c.entry.get("check_id") != c.check_id:
            problems.append(f"{c.check_id}: its control judged {c.entry.get('check_id')!r}")
            continue
        role, why = check_role({**c.result, "checks": [c.entry]}, c.entry, registry)
        if role != "deciding":
            problems.append(f"{c.check_id}: its control is not judged as registered ({role}: {'; '.join(why)})")
        if c.entry.get("status") != "FAIL":
            problems.append(f"{c.check_id}: its control ({c.alternative}) came out {c.entry.get('status')}, not FAIL: "
                            "the check cannot tell the alternative from the claim")
    return problems


def controls_by_check(controls: list[NegativeControl]) -> dict[str, list[NegativeControl]]:
    """The controls of each check id (a check may have several)."""
    out: dict[str, list[NegativeControl]] = {}
    for c in controls:
        out.setdefault(c.check_id, []).append(c)
    return out
