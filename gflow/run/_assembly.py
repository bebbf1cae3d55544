"""The parts of a batch's results that every method assembles alike: arrays copied to the host, and the
diagnostics at every saved row of every run."""

from __future__ import annotations

import equinox as eqx
import jax
import numpy as np

from ..models._flatten import evaluate_batch_rows


def on_host(tree):
    """Every array of ``tree`` as a numpy array (other leaves as they are).

    Args:
        tree: A pytree, e.g. stacked losses and models.

    Returns:
        The same tree on the host.
    """
    return jax.tree_util.tree_map(lambda x: np.asarray(x) if eqx.is_array(x) else x, tree)


def batch_diagnostics(functions: dict, models0, params) -> dict[str, np.ndarray]:
    """Diagnostics at every saved row of every run of a batch, in one compiled call.

    Args:
        functions: name → function(model) (:func:`gflow.run.diagnostic_functions`).
        models0: The stacked starts (the models' structure, and their arrays θ does not hold).
        params: The saved flat parameters, (B, S, n).

    Returns:
        name → (B, S) values; empty without functions.
    """
    if not functions:
        return {}
    return evaluate_batch_rows(functions, models0, params)
