"""The checks every run makes before anything is traced, flow or discrete: a callable loss, a model with finite
parameters and a finite loss there (one model, or every row of a stacked batch in one compiled call), the
diagnostics, and the levels beyond which a run is stopped as diverged."""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

import equinox as eqx
import jax
import numpy as np

from .._checks import GflowInputError
from ..models._flatten import flatten, unflatten


def check_callable_loss(loss, name: str = "loss") -> None:
    """Refuse a loss that cannot be called on a model.

    Args:
        loss: The loss.
        name: The argument's name in the message.

    Raises:
        GflowInputError: ``loss`` is not callable.
    """
    if not callable(loss):
        raise GflowInputError(f"`{name}` must be callable on a model, got {type(loss).__name__}")


def _theta_and_loss(loss, model):
    """(θ, L(model)): a run's start as the checks read it."""
    return flatten(model)[0], loss(model)


# one compiled call per loss and model structure (eager evaluation recompiles scans every call, and a run's fixed
# cost is a few such calls)
_start_values = eqx.filter_jit(_theta_and_loss)


def check_model_and_loss(loss, model0, name: str = "model0"):
    """Check one run's start: a callable loss, an equinox model with finite parameters and a finite loss there.

    Args:
        loss: A module mapping a model to a scalar.
        model0: The start.
        name: The model's name in the messages.

    Returns:
        (θ0, L(θ0)): the flat parameters (a JAX array) and the loss there (a float).

    Raises:
        GflowInputError: Naming what is wrong.
    """
    check_callable_loss(loss)
    if not isinstance(model0, eqx.Module):
        raise GflowInputError(f"`{name}` must be an equinox module (e.g. gflow.LinearRNN), got {type(model0).__name__}")
    theta0, loss0 = _start_values(loss, model0)
    if not np.all(np.isfinite(theta0)):
        raise GflowInputError(f"`{name}` has non-finite parameters")
    loss0 = float(loss0)
    if not np.isfinite(loss0):
        raise GflowInputError(f"the loss at `{name}` is not finite ({loss0})")
    return theta0, loss0


@eqx.filter_jit
def _initial_values(losses, models0):
    """(θ0, L(θ0)) of every flow of a stacked batch, in one compiled call."""
    return eqx.filter_vmap(_theta_and_loss)(losses, models0)


def validate_batch(losses, models0) -> tuple[np.ndarray, np.ndarray]:
    """Check the starts of a stacked batch in one compiled call.

    Args:
        losses: The losses, stacked (leading batch axis).
        models0: The starts, stacked.

    Returns:
        (θ0 (B, n), L(θ0) (B,)) as numpy arrays.

    Raises:
        GflowInputError: A run has non-finite parameters or loss (the first one named, and how many).
    """
    thetas, losses0 = (np.asarray(x) for x in _initial_values(losses, models0))
    bad = np.flatnonzero(~np.all(np.isfinite(thetas), axis=1))
    if bad.size:
        raise GflowInputError(f"`models0[{bad[0]}]` has non-finite parameters ({bad.size} flow(s) in all: "
                              f"{bad[:10].tolist()})")
    bad = np.flatnonzero(~np.isfinite(losses0))
    if bad.size:
        raise GflowInputError(f"the loss at `models0[{bad[0]}]` is not finite ({losses0[bad[0]]}; {bad.size} "
                              f"flow(s) in all: {bad[:10].tolist()})")
    return thetas, losses0


def diagnostic_functions(diagnostics) -> dict[str, Callable]:
    """The diagnostics of a run by name.

    Args:
        diagnostics: None, a mapping name → function(model), one function, or a list of functions (named by their
            ``__name__``).

    Returns:
        name → function.

    Raises:
        GflowInputError: ``diagnostics`` is none of these, or holds something not callable.
    """
    if diagnostics is None:
        return {}
    if isinstance(diagnostics, Mapping):
        items = dict(diagnostics)
    elif callable(diagnostics):
        items = {diagnostics.__name__: diagnostics}
    elif isinstance(diagnostics, Sequence) and not isinstance(diagnostics, str):
        items = {getattr(f, "__name__", f"diagnostic_{i}"): f for i, f in enumerate(diagnostics)}
    else:
        raise GflowInputError("`diagnostics` must be a mapping name → function(model), or a list of functions")
    for name, f in items.items():
        if not callable(f):
            raise GflowInputError(f"diagnostic {name!r} is not callable: {f!r}")
    return items


def check_diagnostics(functions: Mapping[str, Callable], model0, name: str = "model0") -> None:
    """Trace every diagnostic once on the start, before any integration, so that a diagnostic with a bug fails in
    milliseconds instead of after the whole run.

    Each function is traced abstractly (``jax.eval_shape``: no value is computed) as the run evaluates it: on the
    model rebuilt from its flat parameters, under ``vmap`` over saved rows.

    Args:
        functions: name → function(model) (:func:`diagnostic_functions`).
        model0: The start (one model; for a batch, one of its flows).
        name: The model's name in the message.

    Raises:
        GflowInputError: Naming the diagnostic and quoting the exception it raised.
    """
    if not functions:
        return
    theta0, static, unravel = flatten(model0)
    rows = jax.ShapeDtypeStruct((1,) + theta0.shape, theta0.dtype)
    for label, f in functions.items():
        try:
            jax.eval_shape(jax.vmap(lambda y, f=f: f(unflatten(y, static, unravel))), rows)
        except Exception as error:  # noqa: BLE001  (any failure of the user's function is reported as input)
            raise GflowInputError(f"diagnostic {label!r} fails on `{name}` (checked before the run): "
                                  f"{type(error).__name__}: {error}") from error


def diverge_limits(diverge_factor: float, thetas: np.ndarray, losses0: np.ndarray) -> np.ndarray:
    """The levels beyond which a run is stopped as diverged (flows and batched discrete runs alike).

    Args:
        diverge_factor: The factor (``diverge_factor`` of :class:`RunOptions`).
        thetas: θ0 of every run, (B, n).
        losses0: L(θ0) of every run, (B,).

    Returns:
        (B, 2): diverge_factor × max(|L0|, 1) and diverge_factor × max(max|θ0|, 1).
    """
    scale = np.maximum(np.max(np.abs(thetas), axis=1, initial=0.0), 1.0)
    return diverge_factor * np.stack([np.maximum(np.abs(losses0), 1.0), scale], axis=1)
