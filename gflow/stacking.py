"""Stacking modules into a batch of flows: stacked modules, bucketed program sizes, and the split of a batch over
local devices.

A batch is a pair of *stacked* modules (every array leaf carries a leading axis of length B, the equinox way:
``eqx.filter_vmap(make_model)(keys)``), or two lists of modules that are stacked here.

Program sizes are bucketed. A batch of B flows runs in a compiled program of ``bucket_size(B)`` flows, the
next size in 1, 2, 3, 4, 6, 8, 12, 16, 24, … (powers of two and 1.5 × powers of two, so at most a third of a
program is padding), rounded up to a multiple of the number of devices; the padding rows repeat flow 0 and
are dropped from the result. Hence batches of 17 … 24 flows share one program (no recompile), and — since a
flow's arithmetic in a vmapped program does not depend on the other rows — a flow gives the same bits
whatever batch of the same program size it lands in (:func:`gflow.run_sweep` relies on this to resume bit for bit).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from ._checks import GflowInputError

BATCH_AXIS = "flows"


def bucket_size(n: int, n_devices: int = 1) -> int:
    """The program size for ``n`` flows.

    Args:
        n: The flows (at least 1).
        n_devices: The devices the program is split over.

    Returns:
        The smallest 2^i or 3·2^(i−1) ≥ n, rounded up to a multiple of ``n_devices``.
    """
    if n < 1:
        raise GflowInputError(f"a batch needs at least one flow, got {n}")
    power = 1 << (n - 1).bit_length()  # the smallest power of two >= n
    size = 3 * power // 4 if power >= 4 and n <= 3 * power // 4 else power
    return -(-size // n_devices) * n_devices


def is_stacked(tree) -> bool:
    """Whether ``tree`` is a module (not a list or tuple of modules).

    Args:
        tree: A module or a sequence of modules.

    Returns:
        True for a module.
    """
    return isinstance(tree, eqx.Module)


def stack(trees, name: str = "modules"):
    """Equal-structure modules stacked along a new leading batch axis (the input :func:`gflow.solve_flows` takes).

    Args:
        trees: The modules (same type, static fields and shapes).
        name: Their name in the messages.

    Returns:
        One module whose arrays have a leading axis of length ``len(trees)``.

    Raises:
        GflowInputError: The modules differ in structure or shapes.
    """
    trees = list(trees)
    if not trees:
        raise GflowInputError(f"`{name}` is empty")
    for i, t in enumerate(trees):
        if not isinstance(t, eqx.Module):
            raise GflowInputError(f"`{name}[{i}]` must be an equinox module, got {type(t).__name__}")
    dynamic0, static0 = eqx.partition(trees[0], eqx.is_array)
    structure0 = jax.tree_util.tree_structure(trees[0])
    for i, t in enumerate(trees[1:], start=1):
        if jax.tree_util.tree_structure(t) != structure0:
            raise GflowInputError(f"all `{name}` must have the same structure to be batched: `{name}[{i}]` differs "
                                  f"from `{name}[0]` (a different type, static field or training length? pad "
                                  f"population losses with PopulationLoss.padded_to)")
    leaves = [jax.tree_util.tree_leaves(eqx.filter(t, eqx.is_array)) for t in trees]
    stacked = []
    for j in range(len(leaves[0])):
        shapes = {np.shape(ls[j]) for ls in leaves}
        if len(shapes) > 1:
            raise GflowInputError(f"all `{name}` must have the same shapes to be batched: array {j} has shapes "
                                  f"{sorted(shapes)}")
        stacked.append(jnp.asarray(np.stack([np.asarray(ls[j]) for ls in leaves])))
    treedef = jax.tree_util.tree_structure(dynamic0)
    return eqx.combine(jax.tree_util.tree_unflatten(treedef, stacked), static0)


def repeat(tree, n: int):
    """``n`` copies of one module as a stacked batch (e.g. one loss shared by the flows of many starts).

    Args:
        tree: The module.
        n: The copies.

    Returns:
        The stacked batch (its arrays broadcast, not copied).
    """
    return jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (n,) + jnp.shape(x)) if eqx.is_array(x) else x, tree)


def batch_length(tree, name: str = "batch") -> int:
    """B, the common leading axis of every array leaf of a stacked module.

    Args:
        tree: The stacked module.
        name: Its name in the messages.

    Returns:
        B.

    Raises:
        GflowInputError: It has no arrays, or their leading sizes differ.
    """
    leaves = jax.tree_util.tree_leaves(eqx.filter(tree, eqx.is_array))
    if not leaves:
        raise GflowInputError(f"stacked `{name}` has no arrays, so no batch axis")
    sizes = {leaf.shape[0] if leaf.ndim else None for leaf in leaves}
    if len(sizes) != 1 or None in sizes:
        raise GflowInputError(f"stacked `{name}` must have one leading batch axis on every array; leading sizes "
                              f"{sorted(str(s) for s in sizes)}")
    return int(sizes.pop())


def take(tree, index):
    """Row ``index`` of every array leaf of a stacked module.

    Args:
        tree: The stacked module.
        index: An int (one module) or an index array (a stacked module of those rows).

    Returns:
        The rows.
    """
    return jax.tree_util.tree_map(lambda x: x[index] if eqx.is_array(x) else x, tree)


def pad_to(tree, size: int):
    """Append copies of row 0 until the batch has ``size`` rows.

    Args:
        tree: The stacked module.
        size: The rows wanted (at least its batch length).

    Returns:
        The padded stacked module.
    """
    n = batch_length(tree, "batch")
    if size == n:
        return tree
    index = np.concatenate([np.arange(n), np.zeros(size - n, dtype=np.int64)])
    return take(tree, index)


def local_devices(devices=None) -> list:
    """The devices a batch is split over.

    Args:
        devices: The devices, or None.

    Returns:
        ``devices`` as a list, or every local device of the default backend.
    """
    return list(jax.local_devices() if devices is None else devices)


def mesh_over(devices) -> Mesh:
    """A one-axis mesh over ``devices`` whose axis is the batch axis.

    Args:
        devices: The devices.

    Returns:
        The ``jax.sharding.Mesh``.
    """
    return Mesh(np.asarray(devices), (BATCH_AXIS,))


def place(tree, mesh: Mesh):
    """Put the rows of every array of a stacked module on the mesh's devices, split along the batch axis.

    Args:
        tree: The stacked module (its batch length a multiple of the mesh's size).
        mesh: The mesh (:func:`mesh_over`).

    Returns:
        The module with its arrays sharded.
    """
    sharding = NamedSharding(mesh, PartitionSpec(BATCH_AXIS))
    return jax.tree_util.tree_map(lambda x: jax.device_put(x, sharding) if eqx.is_array(x) else x, tree)
