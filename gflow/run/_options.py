"""The options every run takes, flow or discrete, declared once (:class:`RunOptions`); each integrator's options
extend them (:class:`gflow.flow.SolveOptions`, :class:`gflow.discrete.DiscreteOptions`), so an entry point's keyword
options, and the options a sweep passes on, are read off one dataclass."""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping, TypeVar

_Options = TypeVar("_Options", bound="RunOptions")


@dataclasses.dataclass(frozen=True)
class RunOptions:
    """The keyword options shared by every run and their defaults.

    Attributes:
        save_at: When to save: a number of log-spaced save points (default 200), or explicit times (a flow) or
            steps (a discrete run).
        stop_loss: Stop once the loss L ≤ ``stop_loss`` (status ``"stopped_at_loss"``); None never stops on L.
        diverge_factor: Stop with status ``"diverged"`` once the parameters or |L| grow beyond ``diverge_factor``
            times their start (:func:`gflow.run.diverge_limits`).
        diagnostics: name → function(model), or a list of functions, evaluated at every saved point.
    """

    save_at: Any = 200
    stop_loss: float | None = None
    diverge_factor: float = 1e6
    diagnostics: Any = None

    @classmethod
    def of(cls: type[_Options], arguments: Mapping[str, Any]) -> _Options:
        """The options among a call's ``arguments``.

        Args:
            arguments: A call's keyword arguments (its ``locals()``), holding at least every field of ``cls``.

        Returns:
            An instance of ``cls`` with the fields read from ``arguments``.
        """
        return cls(**{field.name: arguments[field.name] for field in dataclasses.fields(cls)})


def option_names(options: type[RunOptions]) -> tuple[str, ...]:
    """The keyword options an options dataclass declares, in declaration order.

    Args:
        options: :class:`RunOptions` or a subclass.

    Returns:
        Its field names.
    """
    return tuple(field.name for field in dataclasses.fields(options))
