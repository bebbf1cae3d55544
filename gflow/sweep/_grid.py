"""The grid of a sweep: configurations from a grid, bound to ``build``'s signature, and their canonical JSON
(what identifies a run)."""

from __future__ import annotations

import itertools
import json
from typing import Mapping, Sequence

import numpy as np

from .._checks import GflowInputError


def expand_grid(grid) -> list[dict]:
    """Configurations of a grid, in order, without duplicates.

    ``grid`` is a dict (every list or tuple value is an axis, the product of the axes is taken in key order, other
    values are fixed; wrap a list-valued parameter as ``[[...]]``) or a list of such dicts or plain configurations
    (their expansions are concatenated). ``expand_grid({"k": [4, 8], "seed": [0, 1]})`` gives 4 configurations.

    Args:
        grid: A dict of axes and fixed values, or a list of such dicts or configurations.

    Returns:
        The configurations, each a dict.
    """
    if isinstance(grid, Mapping):
        parts = [grid]
    elif isinstance(grid, Sequence) and not isinstance(grid, (str, bytes)):
        parts = list(grid)
    else:
        raise GflowInputError(f"`grid` must be a dict of parameter lists or a list of dicts, got {type(grid).__name__}")
    configs, seen = [], set()
    for i, part in enumerate(parts):
        if not isinstance(part, Mapping):
            raise GflowInputError(f"`grid` entry {i} must be a dict, got {type(part).__name__}")
        if not part:
            raise GflowInputError(f"the grid is empty: entry {i} names no parameters")
        for name in part:
            if not isinstance(name, str) or not name.isidentifier():
                raise GflowInputError(f"grid keys must be parameter names (identifiers), got {name!r}")
        axes = {k: list(v) for k, v in part.items() if isinstance(v, (list, tuple))}
        for name, values in axes.items():
            if not values:
                raise GflowInputError(f"grid axis {name!r} is empty")
        for values in itertools.product(*axes.values()):
            config = {k: v for k, v in part.items()}
            config.update(zip(axes, values))
            key = _canonical_json(config, "grid")
            if key not in seen:
                seen.add(key)
                configs.append(config)
    if not configs:
        raise GflowInputError("the grid is empty: it has no configurations")
    return configs


def _canonical_json(value, what: str) -> str:
    try:
        return json.dumps(_plain(value), sort_keys=True, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as e:
        raise GflowInputError(f"{what} values must be JSON numbers, strings, booleans, None or lists of them "
                              f"(finite floats): {e}") from None


def _plain(value):
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, (np.generic,)):
        return value.item()
    return value


def _bind(build, signature, config: dict) -> dict:
    """The full configuration: ``config`` bound to ``build``'s parameters, defaults filled in."""
    try:
        bound = signature.bind(**config)
    except TypeError as e:
        params = [p.name for p in signature.parameters.values()
                  if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        unknown = sorted(set(config) - set(params))
        if unknown and not any(p.kind == p.VAR_KEYWORD for p in signature.parameters.values()):
            raise GflowInputError(f"unknown grid key(s) {unknown}: `build` ({getattr(build, '__name__', build)}) "
                                  f"accepts {params}") from None
        raise GflowInputError(f"configuration {config} does not fit `build`{signature}: {e}") from None
    bound.apply_defaults()
    full = dict(bound.arguments)
    for p in signature.parameters.values():  # flatten **kwargs into the configuration
        if p.kind == p.VAR_KEYWORD:
            full.update(full.pop(p.name, {}))
    return _plain(full)
