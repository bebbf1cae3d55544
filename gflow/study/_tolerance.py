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
    """The tolerance of the repeat: ``rtol / 100``."""
    return rtol / TIGHTER


def rtol_option(p: argparse.ArgumentParser, default=DEFAULT_RTOL, *, what: str = "solver rtol",
                repeat: bool = True, flag: str = "--rtol") -> None:
    """Declare ``--rtol`` (or ``flag``) with ``default`` (a number or a :class:`QuickFull`). With ``repeat`` the
    study also solves at rtol/100, and the parser refuses an rtol whose repeat falls outside
    :data:`gflow.flow.RTOL_RANGE`, naming the user's own number (the study's parser runs the check)."""
    suffix = "; accuracy-dependent checks repeat at rtol/100" if repeat else ""
    p.add_argument(flag, type=float, default=default, help=what + suffix)
    checks = getattr(p, "rtol_flags", None)
    if checks is not None:
        checks.append((flag, repeat))


def check_rtol_flags(args, flags) -> None:
    """A :class:`GflowInputError` naming the flag unless each declared rtol (and its rtol/100 repeat) lies in
    :data:`gflow.flow.RTOL_RANGE`."""
    low, high = RTOL_RANGE
    for flag, repeat in flags:
        value = getattr(args, flag.lstrip("-").replace("-", "_"))
        if not isinstance(value, (int, float)) or not np.isfinite(value):
            raise GflowInputError(f"{flag} must be a number in [{low:g}, {high:g}), got {value}")
        if not low <= value < high:
            raise GflowInputError(f"{flag} must lie in [{low:g}, {high:g}) for a float64 solve, got {value:g}")
        if repeat and not low <= tight_rtol(value):
            raise GflowInputError(f"{flag} {value:g} is too tight for this study: it repeats its accuracy-dependent "
                                  f"measurements at {flag}/100 = {tight_rtol(value):g}, below the {low:g} a float64 "
                                  f"solve can honour; use {flag} >= {low * TIGHTER:g}")


def tolerance_agreement(claim: str, source: str, at_rtol, at_tight, threshold: float, *, relative: bool = True,
                        floor: float = 0.0, predictions=None, **extra) -> dict:
    """Sanity check: the measurement at rtol and at rtol/100 agree, ``max |a − b| (/ max(|b|, floor))`` ≤
    ``threshold``. Both measurements are recorded beside the difference."""
    a = np.asarray(at_rtol, dtype=float)
    b = np.asarray(at_tight, dtype=float)
    diff = np.abs(a - b)
    if relative:
        diff = diff / np.maximum(np.abs(b), floor) if floor else diff / np.abs(b)
    value = float(np.max(diff)) if diff.size else 0.0
    return check(claim, source, value, threshold, direction="<=", kind="sanity", predictions=predictions,
                 at_rtol=a, at_tight_rtol=b, relative=relative, **extra)
