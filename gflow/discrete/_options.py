"""The options of a discrete run, declared once (:class:`DiscreteOptions`): those every run shares
(:class:`gflow.run.RunOptions`) and a discrete run's own. :func:`gflow.discrete.run_discrete` and
:func:`gflow.discrete.run_discrete_batch` take exactly these (their signatures are checked against the fields), and a
discrete sweep reads its options off them (``DISCRETE_OPTIONS``)."""

from __future__ import annotations

import dataclasses
from typing import Any

from ..run import option_names, RunOptions


@dataclasses.dataclass(frozen=True)
class DiscreteOptions(RunOptions):
    """The keyword options of a discrete run and their defaults.

    Attributes:
        batch_size: Minibatch size (None: full batch).
        key: A ``jax.random.key`` that seeds the minibatches.
        shuffle: ``"epoch"`` or ``"with_replacement"``: how minibatches are drawn from a finite dataset.
        projection: A function model → model applied after every step (projected GD).
        continue_steps: With ``stop_loss``, the steps taken after L first reaches it (None: 0).
    """

    batch_size: int | None = None
    key: Any = None
    shuffle: str = "epoch"
    projection: Any = None
    continue_steps: int | None = None


DISCRETE_OPTIONS = option_names(DiscreteOptions)
"""The keyword options of :class:`DiscreteOptions`, in declaration order: what a discrete runner and a discrete
sweep accept beside the method's own hyperparameters."""
MINIBATCH_OPTIONS = ("batch_size", "key", "shuffle")  # the options that sample minibatches
