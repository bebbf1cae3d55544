"""The rule every study follows for a number that depends on solver accuracy: measure it at ``--rtol`` and again at
a 100× tighter tolerance, and report both (docs/design.md, "Studies"). :func:`rtol_option` declares ``--rtol``
(default :data:`gflow.flow.DEFAULT_RTOL`) and checks at parse time that both tolerances are ones a float64 solve can
honour; :func:`tolerance_agreement` is the sanity check that the two measurements agree."""

from __future__ import annotations

import argparse

import numpy as np

from .._checks import GflowInputError
from ..flow import DEFAULT_RTOL, RTOL_RANGE
from ._check import check

TIGHTER = 100.0  # the repeat runs at rtol / TIGHTER


def tight_rtol(rtol: float) -> float:
    """The tolerance of the repeat.

    Args:
        rtol: the study's ``--rtol``.

    Returns:
        ``rtol / 100``.
    """
    return rtol / TIGHTER


def both_tolerances(rtol: float) -> tuple[tuple[str, float], tuple[str, float]]:
    """The two solves of an accuracy-dependent measurement.

    Args:
        rtol: the study's ``--rtol``.

    Returns:
        ``(("default", rtol), ("tight", rtol / 100))``, to loop over: ``{name: solve(r) for name, r in
        both_tolerances(args.rtol)}``.
    """
    return ("default", rtol), ("tight", tight_rtol(rtol))


def rtol_option(p: argparse.ArgumentParser, default=DEFAULT_RTOL, *, what: str = "solver rtol",
                repeat: bool = True, flag: str = "--rtol") -> None:
    """Declare ``--rtol`` (or ``flag``); the study's parser checks it after parsing.

    Args:
        p: the study's parser (a :class:`StudyParser` runs the check).
        default: a number, ``None`` (the study's parts each use their own rtol, which the study checks; a given
            ``--rtol`` is checked here) or a :class:`QuickFull` of these (default :data:`gflow.flow.DEFAULT_RTOL`).
        what: the help text.
        repeat: the study also solves at rtol/100: the parser refuses an rtol whose repeat falls outside
            :data:`gflow.flow.RTOL_RANGE`, naming the user's own number.
        flag: the option's name.
    """
    suffix = "; accuracy-dependent checks repeat at rtol/100" if repeat else ""
    p.add_argument(flag, type=float, default=default, help=what + suffix)
    checks = getattr(p, "rtol_flags", None)
    if checks is not None:
        checks.append((flag, repeat))


def check_rtol_flags(args, flags) -> None:
    """Check each declared rtol (and its rtol/100 repeat) against :data:`gflow.flow.RTOL_RANGE`.

    Args:
        args: the parsed arguments.
        flags: ``(flag, repeat)`` of each :func:`rtol_option`.

    Raises:
        GflowInputError: naming the flag.
    """
    low, high = RTOL_RANGE
    for flag, repeat in flags:
        value = getattr(args, flag.lstrip("-").replace("-", "_"))
        if value is None:  # rtol_option(default=None): each part of the study uses its own rtol
            continue
        if not isinstance(value, (int, float)) or not np.isfinite(value):
            raise GflowInputError(f"{flag} must be a number in [{low:g}, {high:g}), got {value}")
        if not low <= value < high:
            raise GflowInputError(f"{flag} must lie in [{low:g}, {high:g}) for a float64 solve, got {value:g}")
        if repeat and not low <= tight_rtol(value):
            raise GflowInputError(f"{flag} {value:g} is too tight for this study: it repeats its accuracy-dependent "
                                  f"measurements at {flag}/100 = {tight_rtol(value):g}, below the {low:g} a float64 "
                                  f"solve can honour; use {flag} >= {low * TIGHTER:g}")


def _flat(values) -> np.ndarray:
    """A number, an array, or a list of arrays of any shapes, as one flat float array."""
    if isinstance(values, (list, tuple)):
        return np.concatenate([np.ravel(np.asarray(v, dtype=float)) for v in values]) if values else np.zeros(0)
    return np.ravel(np.asarray(values, dtype=float))


def tolerance_agreement(claim: str, source: str, at_rtol, at_tight, threshold: float, *, relative: bool = True,
                        floor: float = 0.0, predictions=None, **extra) -> dict:
    """The sanity check that a measurement does not depend on the solver's tolerance.

    Args:
        claim: what is compared, in words.
        source: where the rule comes from (usually "tolerance check (docs/design.md)").
        at_rtol: the measurement at ``--rtol`` (a number, an array, or a list of arrays of any shapes).
        at_tight: the same measurement at rtol/100, in the same layout.
        threshold: the largest difference allowed.
        relative: compare ``|a − b| / |b|`` (or ``/ max(|b|, floor)`` with a ``floor``); else ``|a − b|``.
        floor: the smallest denominator of a relative difference (0: none).
        predictions: the registry ids the check vouches for.
        **extra: further fields of the entry.

    Returns:
        The check's entry (kind "sanity", direction "<="): value ``max`` of the differences, both measurements
        recorded beside it.
    """
    a = _flat(at_rtol)
    b = _flat(at_tight)
    diff = np.abs(a - b)
    if relative:
        diff = diff / np.maximum(np.abs(b), floor) if floor else diff / np.abs(b)
    value = float(np.max(diff)) if diff.size else 0.0
    return check(claim, source, value, threshold, direction="<=", kind="sanity", predictions=predictions,
                 at_rtol=a, at_tight_rtol=b, relative=relative, **extra)
