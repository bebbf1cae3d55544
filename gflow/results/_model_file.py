"""A model on disk without pickle: its structure as JSON, its arrays in an ``.npz``.

``model.json`` describes the pytree: every equinox module as ``{"module": "gflow.models._gru:GRU", "fields": {...}}``,
containers tagged (``{"tuple": [...]}``, ``{"list": [...]}``, ``{"dict": {...}}``), JSON scalars as they are, and
every array as ``{"array": "a3"}``, a key of ``model.npz``. Loading resolves classes only inside the ``gflow``
package (any other name is refused), rebuilds each module field by field without running its ``__init__`` (as
equinox's own unflattening does, so the stored values are used bit for bit), and reads the arrays with
``allow_pickle=False``: loading a folder never runs code from it (docs/design.md, "Results and provenance").
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
import os

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._checks import GflowInputError
from ._file_reading import read_json, read_npz

FORMAT = "gflow-model/1"


def _encode(x, arrays: dict, where: str):
    if isinstance(x, eqx.Module):
        cls = type(x)
        fields = {f.name: _encode(getattr(x, f.name), arrays, f"{where}.{f.name}") for f in dataclasses.fields(x)}
        return {"module": f"{cls.__module__}:{cls.__qualname__}", "fields": fields}
    if isinstance(x, (jax.Array, np.ndarray, np.generic)):
        key = f"a{len(arrays)}"
        arrays[key] = np.asarray(x)
        if arrays[key].dtype == object:
            raise GflowInputError(f"cannot save {where}: an array of Python objects")
        return {"array": key}
    if x is None or isinstance(x, (bool, int, str)):
        return x
    if isinstance(x, float):
        return x if math.isfinite(x) else {"float": repr(x)}
    if isinstance(x, tuple):
        return {"tuple": [_encode(v, arrays, f"{where}[{i}]") for i, v in enumerate(x)]}
    if isinstance(x, list):
        return {"list": [_encode(v, arrays, f"{where}[{i}]") for i, v in enumerate(x)]}
    if isinstance(x, dict) and all(isinstance(k, str) for k in x):
        return {"dict": {k: _encode(v, arrays, f"{where}[{k!r}]") for k, v in x.items()}}
    raise GflowInputError(f"cannot save {where} of type {type(x).__name__}: a saved model holds equinox modules, "
                          "arrays, containers and JSON scalars only")


def _module_class(name: str):
    """The equinox module class ``module:qualname``, looked up only inside gflow."""
    module_name, _, qualname = name.partition(":")
    if module_name != "gflow" and not module_name.startswith("gflow."):
        raise GflowInputError(f"refusing to load class {name!r}: saved models may only name gflow's own classes")
    try:
        obj = importlib.import_module(module_name)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        raise GflowInputError(f"saved model names {name!r}, which this version of gflow does not have") from None
    if not (isinstance(obj, type) and issubclass(obj, eqx.Module)):
        raise GflowInputError(f"refusing to load {name!r}: not an equinox module class")
    return obj


def _decode(node, arrays):
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    if not isinstance(node, dict) or len(node) not in (1, 2):
        raise GflowInputError(f"malformed saved model: {str(node)[:80]}")
    if "module" in node:
        cls = _module_class(node["module"])
        fields = node.get("fields", {})
        expected = [f.name for f in dataclasses.fields(cls)]
        if sorted(fields) != sorted(expected):
            raise GflowInputError(f"saved {node['module']} has fields {sorted(fields)}, this gflow's has "
                                  f"{sorted(expected)}")
        module = object.__new__(cls)
        for name in expected:
            object.__setattr__(module, name, _decode(fields[name], arrays))
        return module
    (tag, value), = node.items()
    if tag == "array":
        if value not in arrays:
            raise GflowInputError(f"saved model refers to a missing array {value!r}")
        return jnp.asarray(arrays[value])
    if tag == "float":
        return float(value)
    if tag == "tuple":
        return tuple(_decode(v, arrays) for v in value)
    if tag == "list":
        return [_decode(v, arrays) for v in value]
    if tag == "dict":
        return {k: _decode(v, arrays) for k, v in value.items()}
    raise GflowInputError(f"malformed saved model: unknown tag {tag!r}")


def save_model(model, folder: str, stem: str = "model") -> tuple[str, str]:
    """Write ``model`` as ``<stem>.json`` (its structure) and ``<stem>.npz`` (its arrays) in ``folder``.

    Args:
        model: A gflow model (or any equinox module of gflow's classes).
        folder: The folder.
        stem: The files' stem.

    Returns:
        The two file names.
    """
    arrays: dict[str, np.ndarray] = {}
    skeleton = {"format": FORMAT, "tree": _encode(model, arrays, stem)}
    np.savez_compressed(os.path.join(folder, f"{stem}.npz"), **arrays)
    with open(os.path.join(folder, f"{stem}.json"), "w") as f:
        json.dump(skeleton, f, indent=1)
    return f"{stem}.json", f"{stem}.npz"


def load_model(folder: str, stem: str = "model"):
    """The model written by :func:`save_model`; never unpickles and never names a class outside gflow.

    Args:
        folder: The folder.
        stem: The files' stem (``<stem>.json``, ``<stem>.npz``).

    Returns:
        The model.

    Raises:
        GflowInputError: The files are missing, damaged, or name a class outside gflow.
    """
    json_path = os.path.join(folder, f"{stem}.json")
    if not os.path.exists(json_path) and os.path.exists(os.path.join(folder, f"{stem}.pkl")):
        raise GflowInputError(
            f"{folder} was written by an older gflow, which stored the model with pickle ({stem}.pkl). gflow no "
            "longer unpickles files, because that runs code from them. If you made this folder yourself, convert it "
            f"once with gflow.results.convert_legacy({folder!r}, trust_pickle=True).")
    if not os.path.isdir(folder):
        raise GflowInputError(f"{folder!r} is not a folder: pass the folder a model or trajectory was saved to")
    if not os.path.exists(json_path):
        raise GflowInputError(f"{folder!r} holds no saved model ({stem}.json and {stem}.npz): pass the folder that "
                              "gflow.results.save_model or Trajectory.save wrote")
    skeleton = read_json(json_path)
    if not isinstance(skeleton, dict) or skeleton.get("format") != FORMAT or "tree" not in skeleton:
        raise GflowInputError(f"{json_path} is not a gflow model file (format {FORMAT!r})")
    arrays = read_npz(os.path.join(folder, f"{stem}.npz"))
    try:
        return _decode(skeleton["tree"], arrays)
    except GflowInputError as e:
        raise GflowInputError(f"{json_path}: {e}") from None
