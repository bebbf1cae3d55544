"""A model as a flat parameter vector θ and back: what the flow integrates (dθ/dt = −∇L(θ)) and what runners step.

θ concatenates the model's inexact (floating-point) arrays in pytree order; everything else (integer fields,
activations, :class:`gflow.models.Frozen` layers) is the static part, kept aside and put back by :func:`unflatten`.
"""

from __future__ import annotations

from typing import Callable

import equinox as eqx
import jax
import jax.flatten_util
import jax.numpy as jnp
import numpy as np


def flatten(model) -> tuple[jax.Array, eqx.Module, Callable]:
    """Split a model into the flat vector θ of its inexact arrays and the rest.

    Args:
        model: Any equinox module (or pytree).

    Returns:
        ``(theta, static, unravel)``: θ, the static part (integer fields, activations,
        [`Frozen`][gflow.models.Frozen] layers), and the function mapping a θ back to the parameter tree;
        [`unflatten`][gflow.models.unflatten] puts them together.
    """
    params, static = eqx.partition(model, eqx.is_inexact_array)
    theta, unravel = jax.flatten_util.ravel_pytree(params)
    return jnp.asarray(theta), static, unravel


def host_unravel(model) -> Callable:
    """The ``unravel`` of :func:`flatten` for ``model``'s structure, without tracing or eager JAX ops: a flat vector
    (numpy or JAX) is split on the host and each piece put on the device once (a result's ``final`` model costs
    a few µs instead of an eager split per leaf).

    Args:
        model: Any equinox module (or pytree) of the structure θ belongs to.

    Returns:
        θ ↦ the tree of the model's inexact arrays; θ of shape (..., n) gives arrays with those leading axes.
    """
    params = eqx.filter(model, eqx.is_inexact_array)
    leaves, treedef = jax.tree_util.tree_flatten(params)
    shapes = [(np.shape(leaf), np.result_type(leaf)) for leaf in leaves]
    ends = np.cumsum([int(np.prod(shape)) for shape, _ in shapes])

    def unravel(theta):
        theta = np.asarray(theta)
        pieces = np.split(theta, ends[:-1], axis=-1) if shapes else []
        # one batched transfer (an eager jnp.asarray per leaf dispatches a conversion each)
        return jax.tree_util.tree_unflatten(treedef, jax.device_put(
            [np.asarray(piece.reshape(theta.shape[:-1] + shape), dtype=dtype) for piece, (shape, dtype) in
             zip(pieces, shapes)]))

    return unravel


def unflatten(theta, static, unravel: Callable):
    """The model with parameters θ: the inverse of [`flatten`][gflow.models.flatten].

    Args:
        theta: A flat vector of the length ``flatten`` returned.
        static: The static part ``flatten`` returned.
        unravel: The function ``flatten`` returned.

    Returns:
        The model.
    """
    return eqx.combine(unravel(theta), static)


# A few rows at a time: a nonlinear loss on a large sample, vmapped over every saved time, would hold all their
# hidden states at once (R5: 26 GB).
ROWS_PER_BATCH = 8


@eqx.filter_jit
def evaluate_rows(functions: dict, template, params) -> dict:
    """Functions of the model at every row θ of ``params``, the models rebuilt on ``template``'s structure.

    Args:
        functions: ``{name: f}``, each f mapping a model to an array.
        template: A model of the structure the rows belong to.
        params: Shape (S, n): S flat parameter vectors.

    Returns:
        ``{name: values}``, each of shape (S, …).
    """
    _, static, unravel = flatten(template)
    return {name: jax.lax.map(lambda y, f=f: f(unflatten(y, static, unravel)), params, batch_size=ROWS_PER_BATCH)
            for name, f in functions.items()}


def evaluate_batch_rows(functions: dict, models0, params) -> dict:
    """Functions of each flow's model at every row of ``params``, in one compiled call.

    Row i of flow b is rebuilt on model b of the stacked ``models0``, so each flow keeps the static part of its own
    model (its Frozen layers, integer arrays).

    Args:
        functions: ``{name: f}``, each f mapping a model to an array.
        models0: A stacked batch of B models.
        params: Shape (B, S, n).

    Returns:
        ``{name: values}`` as numpy arrays of shape (B, S, …).
    """
    values = _evaluate_batch_rows(functions, models0, jnp.asarray(params))
    return {name: np.asarray(v) for name, v in values.items()}


@eqx.filter_jit
def _evaluate_batch_rows(functions, models0, params):
    return eqx.filter_vmap(lambda model, rows: evaluate_rows(functions, model, rows))(models0, params)
