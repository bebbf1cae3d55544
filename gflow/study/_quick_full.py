"""A default that differs between a full run and ``--quick``, declared once: ``default=QuickFull(10, quick=4)``.

The study's parser (:func:`gflow.study.study_parser`) replaces it after parsing by the value for the mode chosen, and
``--help`` shows it as "(default: 10; --quick: 4)"."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class QuickFull:
    """The default of a full run and the default of a ``--quick`` run."""

    full: object
    quick: object

    def pick(self, quick: bool):
        """The default for this mode.

        Args:
            quick: whether the run is ``--quick``.

        Returns:
            The value (a fresh list for a list default, so that no run edits another's).
        """
        value = self.quick if quick else self.full
        return list(value) if isinstance(value, (list, tuple)) else value

    def __str__(self) -> str:
        return f"{_shown(self.full)}; --quick: {_shown(self.quick)}"


def _shown(value) -> str:
    return " ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)


def resolve_quick_full(args) -> None:
    """Replace every :class:`QuickFull` left in the parsed ``args`` (the flag was not given) by its default for
    ``args.quick``."""
    for name, value in vars(args).items():
        if isinstance(value, QuickFull):
            setattr(args, name, value.pick(args.quick))
