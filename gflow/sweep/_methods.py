"""What a sweep runs for each configuration: the gradient flow (``method="flow"``, :func:`gflow.solve_flows`) or a
discrete method (``"gd"``, ``"sgd"``, ``"adam"``, ``"projected_gd"``, ``"normalized_gd"``: the batched runners of
:mod:`gflow.discrete`, e.g. :func:`gflow.discrete.run_adam_batch`); its options checked, named in each run's
identity, and the batched call a sweep task makes.

A discrete method's options are its runner's (read off :class:`gflow.discrete.DiscreteOptions`), with two renamings forced by :func:`gflow.run_sweep`'s own arguments:
the minibatch size is ``minibatch_size`` (``batch_size`` is the sweep's runs per batch), and ``projection`` is a
function ``(model0, config) -> projection`` (a projection is built from its run's start). Grid keys that name an
option (:data:`GRID_OPTIONS`, e.g. ``lr``, ``steps``) set it per run and are not passed to ``build``; ``lr`` varies
within a batch (one step size per member), any other such key splits the runs into batches by its value.

A minibatch run's key is ``jax.random.fold_in(key, h)``, ``h`` 31 bits of the SHA-256 of the configuration that
``build`` receives: it depends on nothing but the configuration, so a resumed or re-batched sweep draws the same
minibatches, and runs that differ only in their method's options (``lr``, ``steps``) draw the same ones.
"""

from __future__ import annotations

import hashlib
from typing import Mapping, Sequence

import jax
import numpy as np

from .. import discrete as discrete_api  # runners looked up at call time, so a test can count their calls
from .._checks import GflowInputError, positive_float
from ..discrete import DISCRETE_OPTIONS
from ..discrete._options import MINIBATCH_OPTIONS
from ..discrete._runners import check_key
from ..flow import SOLVE_OPTIONS
from ..flow._step_control import checked_rtol
from ..stacking import stack, take
from ._grid import _canonical_json, _plain

FLOW = "flow"
FLOW_EXTRA = ("slots",)  # keywords of gflow.solve_flows outside SOLVE_OPTIONS that a flow sweep passes on
_RENAMED = {"batch_size": "minibatch_size"}  # run_sweep's own batch_size is its runs per batch
# every method: the step size and count, and the discrete options that neither sample minibatches nor project
_FULL_BATCH = ("lr", "steps") + tuple(o for o in DISCRETE_OPTIONS if o not in MINIBATCH_OPTIONS + ("projection",))
_MINIBATCH = tuple(_RENAMED.get(o, o) for o in MINIBATCH_OPTIONS)
METHOD_OPTIONS: dict[str, tuple[str, ...]] = {
    "gd": _FULL_BATCH,
    "sgd": _FULL_BATCH + _MINIBATCH,
    "adam": _FULL_BATCH + ("b1", "b2", "eps") + _MINIBATCH,
    "projected_gd": _FULL_BATCH + ("projection",),
    "normalized_gd": _FULL_BATCH + ("beta", "soft_const", "average", "projection") + _MINIBATCH,
}
_REQUIRED = {"gd": ("lr", "steps"), "sgd": ("lr", "steps", "minibatch_size", "key"), "adam": (),
             "projected_gd": ("lr", "steps", "projection"), "normalized_gd": ("lr", "steps")}
_RUNNERS = {"gd": "run_gd_batch", "sgd": "run_sgd_batch", "adam": "run_adam_batch",
            "projected_gd": "run_projected_gd_batch", "normalized_gd": "run_normalized_gd_batch"}
GRID_OPTIONS = ("lr", "steps", "minibatch_size", "shuffle", "b1", "b2", "eps", "diverge_factor", "beta", "soft_const",
                "average", "stop_loss", "continue_steps")
PER_MEMBER = ("lr",)  # options that may differ between the members of one batch


def check_method(method, t1, options: Mapping) -> None:
    """``method`` and its options as :func:`gflow.run_sweep` was given them (the grid's option keys not included)."""
    if method == FLOW:
        if t1 is None:
            raise GflowInputError("run_sweep(method='flow') needs `t1`, the end time of the flows")
        unknown = sorted(set(options) - set(SOLVE_OPTIONS) - set(FLOW_EXTRA))
        if unknown:
            raise GflowInputError(f"unknown solve option(s) {unknown}; run_sweep passes on {list(SOLVE_OPTIONS)} "
                                  f"and {list(FLOW_EXTRA)}")
        if options.get("rtol") is not None:  # checked before anything uses it (a shape group's atol, the identity)
            checked_rtol(options["rtol"])
        return
    if method not in METHOD_OPTIONS:
        raise GflowInputError(f"`method` must be one of {[FLOW, *METHOD_OPTIONS]}, got {method!r}")
    if t1 is not None:
        raise GflowInputError(f"`t1` means nothing for a discrete run (method={method!r}): give `steps`")
    unknown = sorted(set(options) - set(METHOD_OPTIONS[method]))
    if unknown:
        hint = " (the minibatch size is `minibatch_size`)" if "batch_size" in unknown else ""
        raise GflowInputError(f"unknown option(s) {unknown} for method={method!r}{hint}; it takes "
                              f"{list(METHOD_OPTIONS[method])}")
    if "projection" in options and not callable(options["projection"]):
        raise GflowInputError("`projection` must be a function (model0, config) -> projection, e.g. lambda m, c: "
                              "gflow.discrete.box_projection(m, 'A', c['radius'])")
    if "key" in options:
        check_key(options["key"])


def grid_option_keys(method, configs: Sequence[dict], build_parameters: Sequence[str], options: Mapping) -> tuple:
    """The grid keys that set an option of ``method`` per run (none for flows), checked: each set in every
    configuration, neither given to run_sweep too nor a parameter of ``build``, a per-member one a positive number;
    and every required option given somewhere."""
    if method == FLOW:
        return ()
    keys = tuple(dict.fromkeys(k for c in configs for k in c if k in METHOD_OPTIONS[method] and k in GRID_OPTIONS))
    for k in keys:
        if k in build_parameters:
            raise GflowInputError(f"grid key `{k}` is an option of method={method!r} and a parameter of `build`: "
                                  f"rename build's parameter (the grid's `{k}` goes to the runner)")
        if k in options:
            raise GflowInputError(f"`{k}` is both a grid key and an option of run_sweep: give it once")
        if any(k not in c for c in configs):
            raise GflowInputError(f"grid key `{k}` (an option of method={method!r}) must be set in every "
                                  "configuration of the grid, or given once as an option of run_sweep")
        if k in PER_MEMBER:
            for c in configs:
                positive_float(k, c[k])
    given = set(options) | set(keys)
    missing = [k for k in _REQUIRED[method] if k not in given]
    if missing:
        raise GflowInputError(f"method={method!r} needs {missing} (as options of run_sweep or grid keys)")
    if ("key" in given or "shuffle" in given) and "minibatch_size" not in given:
        raise GflowInputError("`key` and `shuffle` sample minibatches: give `minibatch_size` too")
    if "minibatch_size" in given and "key" not in given:
        raise GflowInputError("`minibatch_size` needs `key` (a jax.random.key): each run's minibatch key is folded "
                              "from it and the run's configuration")
    return keys


def method_identity(method, t1, options: Mapping) -> dict:
    """The method and its options as they identify a run (with the configuration). Flows: ``t1`` and the options
    given, solvers by class name, a step-size controller by its repr, diagnostics by name (as before discrete
    sweeps, so that flow runs keep their folders). A discrete method: its name and options, a key by its data,
    a projection by its name (its source is in the run's code hash)."""
    out = {"t1": float(t1)} if method == FLOW else {"method": method}
    for k, v in sorted(options.items()):
        if k == "stepsize_controller":
            if v is None:  # the default: identified as it was before run_sweep took a controller
                continue
            v = repr(v)
        elif k == "solver" and not isinstance(v, str):
            v = type(v).__name__
        elif k == "diagnostics" and v is not None:  # functions are identified by name
            v = sorted(v) if isinstance(v, Mapping) else [getattr(f, "__name__", repr(f))
                                                          for f in (v if isinstance(v, Sequence) else [v])]
        elif k == "key":
            key = check_key(v)
            v = {"impl": str(jax.random.key_impl(key)), "data": np.asarray(jax.random.key_data(key)).tolist()}
        elif k == "projection":
            v = getattr(v, "__qualname__", type(v).__name__)
        out[k] = _plain(v)
    return out


def run_key(key, build_config: dict):
    """The minibatch key of the run whose ``build`` gets ``build_config``: ``fold_in(key, h)`` (module docstring)."""
    digest = hashlib.sha256(_canonical_json(build_config, "grid").encode()).hexdigest()
    return jax.random.fold_in(check_key(key), int(digest[:8], 16) & 0x7FFFFFFF)


def run_method_batch(method: str, options: Mapping, option_keys: Sequence[str], losses, models0, configs, build_configs,
                 program_size: int, progress):
    """The batched runner of ``method`` on stacked ``losses`` (one objective per member) and ``models0``, the
    members' configurations ``configs``: their grid options (``lr`` per member; the others are equal within a
    batch), minibatch keys and projections. Returns a :class:`gflow.FlowBatch`."""
    kwargs = dict(options)
    for k in option_keys:
        kwargs[k] = np.asarray([float(c[k]) for c in configs]) if k in PER_MEMBER else configs[0][k]
    if "minibatch_size" in kwargs:
        kwargs["batch_size"] = kwargs.pop("minibatch_size")
        kwargs["key"] = jax.numpy.stack([run_key(kwargs["key"], c) for c in build_configs])
    if "projection" in kwargs:
        make = kwargs["projection"]
        kwargs["projection"] = stack([make(take(models0, i), c) for i, c in enumerate(configs)], "projection")
    runner = getattr(discrete_api, _RUNNERS[method])
    return runner(losses, models0, stacked_objective=True, program_size=program_size, progress=progress, **kwargs)
