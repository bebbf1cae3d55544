"""Values of a model function at every saved point of a trajectory (a flow or a discrete run)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from .._checks import GflowInputError
from ..models._flatten import evaluate_rows


def along(traj, fn) -> np.ndarray:
    """fn(model) at each saved row of ``traj``, stacked on a leading time axis (one ``vmap``-ed, compiled call:
    pass a module-level function or an equinox module so that repeated calls reuse it).

    Args:
        traj: A :class:`~gflow.results.Trajectory`.
        fn: A function of one model returning an array.

    Returns:
        The values, shape (saved times, …).
    """
    if not callable(fn):
        raise GflowInputError(f"`fn` must be a function of a model, got {type(fn).__name__}")
    return np.asarray(evaluate_rows({"fn": fn}, traj.final, jnp.asarray(traj.params))["fn"])
