"""Sweeps: a grid of configurations, integrated in batches, each finished run written to disk atomically.

``run_sweep(grid, build, out, t1=...)`` expands ``grid`` into configurations, calls ``build(**config)`` for each to
get ``(loss, model0)``, groups the configurations whose models have the same shapes (population losses of different
training lengths are padded to the group's longest, :meth:`gflow.PopulationLoss.padded_to`), integrates every group
in batches with :func:`gflow.solve_flows`, and writes each run to ``out/runs/<name>/`` as soon as its batch is done.

A run folder holds ``arrays.npz`` (saved times, losses, the final parameters and whatever ``record(traj, config)``
returned), ``final.json`` + ``final.npz`` (the final model, gflow/results/_model_file.py: no pickle), optionally ``trajectory/`` (:meth:`gflow.Trajectory.save`, with the
parameters at every saved time: a few MB per run, hence off by default) and, written last, ``run.json``: the
configuration, the solver options, status, statistics and the SHA-256 of every other file. A run is written into a
temporary folder that is renamed into place (``os.replace``), so a folder under its final name is complete unless
something outside gflow damaged it; the checksums catch that too. Re-running the same call resumes: runs whose folder
is complete and matches the configuration and solver options are loaded, not recomputed; a missing, partial or
corrupt folder is recomputed, and so is a run made by other code (provenance below). One sweep process per output
folder, enforced by a lock file (gflow/sweep/_lock.py).

Results do not depend on how runs are batched or resumed, bit for bit: padding and the default ``atol`` are fixed per
shape group from the whole grid, not from the batch (each flow in a batch keeps its own adaptive steps), and every
flow of a shape group is computed in a compiled program of one size, ``program_size`` in ``run.json``: the bucket
(gflow/_batching.py) of min(batch_size, group size) on a fresh folder, and on resume the size the group's finished
runs used, whatever ``batch_size`` is then (a smaller batch is padded up to it). A flow's arithmetic in a vmapped
program does not depend on the other rows, so the same program gives the same bits. Two exceptions, where results
agree to the solver tolerance instead: a solver that lags its Jacobian over steps (``GaussNewtonRosenbrock`` with a
materialized Jacobian above 2²² entries refreshes it for the whole batch at once), and a different number of
local devices (each device runs a program of its share of the rows).
"""

from __future__ import annotations

import collections
import inspect
import json
import math
import os
import time
from typing import Callable, Mapping, Sequence

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .. import (  # solve_flows looked up at call time, so a test can count its calls
    flow as flow_api,
    results as results_api,
)
from .._checks import GflowInputError, positive_int
from ..batching import bucket_size, stack, take
from ..flow._solve import default_atols, flat_parameters
from ..results._provenance import function_hash
from ._grid import _bind, _canonical_json, _plain, expand_grid
from ._lock import sweep_lock
from ._run_files import (
    _load_run,
    _remove_stale_temporaries,
    _write_run,
    MISSING,
    RUN_FILE,
    run_name,
    RUNS_DIR,
    SweepRun,
)

SOLVE_OPTIONS = ("rtol", "atol", "solver", "save_at", "t0", "stop_loss", "diverge_factor", "diagnostics", "max_steps")


# ------------------------------------------------------------------------------------------------ grouping
def _signature(tree) -> tuple:
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    return (str(treedef),) + tuple((tuple(np.shape(x)), str(np.asarray(x).dtype)) if eqx.is_array(x) else repr(x)
                                   for x in leaves)


def _paddable(loss) -> bool:
    return callable(getattr(loss, "padded_to", None)) and isinstance(getattr(loss, "k", None), int)


def _shape_groups(built: list[tuple]) -> list[tuple[list[int], list]]:
    """Indices of configurations that can share a batch, with their (padded) losses."""
    first: dict[tuple, list[int]] = {}
    for i, (loss, model0) in enumerate(built):
        first.setdefault((_signature(model0), type(loss), _paddable(loss)), []).append(i)
    groups: dict[tuple, tuple[list[int], list]] = {}
    for (model_sig, _, paddable), idx in first.items():
        losses = [built[i][0] for i in idx]
        if paddable:
            k_max = max(loss.k for loss in losses)
            losses = [loss.padded_to(k_max) for loss in losses]
        for i, loss in zip(idx, losses):
            g = groups.setdefault((model_sig, _signature(loss)), ([], []))
            g[0].append(i)
            g[1].append(loss)
    return list(groups.values())


# ------------------------------------------------------------------------------------------------ runner
def _format_seconds(s: float) -> str:
    if not math.isfinite(s):
        return "?"
    s = int(round(s))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else (f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s")


def _solve_identity(t1, options: dict) -> dict:
    out = {"t1": float(t1)}
    for k, v in sorted(options.items()):
        if k == "solver" and not isinstance(v, str):
            v = type(v).__name__
        elif k == "diagnostics" and v is not None:  # functions are identified by name
            v = sorted(v) if isinstance(v, Mapping) else [getattr(f, "__name__", repr(f))
                                                          for f in (v if isinstance(v, Sequence) else [v])]
        out[k] = _plain(v)
    return out


def _traced_keys(traced, configs) -> tuple[str, ...]:
    if isinstance(traced, str) or not isinstance(traced, Sequence) or not all(isinstance(k, str) for k in traced):
        raise GflowInputError(f"`traced` must be a list of grid keys, got {traced!r}")
    unknown = sorted(set(traced) - set(configs[0]))
    if unknown:
        raise GflowInputError(f"`traced` names {unknown}, which are not parameters of `build` ({sorted(configs[0])})")
    return tuple(sorted(set(traced)))


def _program_size(group_runs: list, batch: int) -> int:
    """The compiled program size of a shape group: the size its finished runs used (the most common one), else
    the bucket of ``batch`` flows."""
    stored = [r.program_size for r in group_runs if r is not None and r.program_size]
    if stored:
        sizes, counts = np.unique(stored, return_counts=True)
        return int(sizes[np.argmax(counts)])
    return bucket_size(batch)


def run_sweep(grid, build: Callable[..., tuple], out: str, *, t1: float, record: Callable | None = None,
              batch_size: int = 64, keep_trajectory: bool = False, on_run_done: Callable | None = None,
              progress: bool = True, traced: Sequence[str] = (), **solve_options) -> list[SweepRun]:
    """Integrate the gradient flow of every configuration of ``grid``; resume from ``out`` if it holds runs.

    - ``grid``: see :func:`expand_grid`. Its keys must be parameters of ``build``; ``build``'s defaults fill in the
      rest, and the full configuration identifies the run.
    - ``build(**config) -> (loss, model0)``: the objective and the initial model of one configuration.
    - ``t1`` and ``solve_options`` (``rtol``, ``atol``, ``solver``, ``save_at``, ``stop_loss``, ...): passed to
      :func:`gflow.solve_flows`, the same for every run. An unset ``atol`` is the smallest of the runs' own defaults
      (rtol × min(1, RMS of the initial parameters)) over the run's whole shape group, so that it does not depend on
      the batching and suits the smallest initialization in the group.
    - ``record(traj, config) -> dict of arrays``: what to keep of each trajectory besides its saved times, losses
      and final model (e.g. an extrapolation error at every saved time).
    - Provenance: every run records the code that made it (``run.json``: gflow's source hash, the source hashes of
      ``build`` and ``record``, git commit and dirty flag, packages, command, device). A run on disk made by other
      gflow code, another ``build`` or (when ``record`` is given) another ``record`` is recomputed, and the sweep
      says how many and why; so is a run written by gflow 0.1 (pickle), and a partial or corrupt one. Runs that are
      reused or recomputed keep their folder name (configuration and solver options).
    - ``out`` is locked while the sweep runs (``out/sweep.lock``: host, pid): a second sweep on the same folder gets
      a clear error instead of corrupting it.
    - ``batch_size``: flows per :func:`gflow.solve_flows` call (a batch runs until its slowest flow is done). On a
      folder that already holds runs of a shape group, the group's missing runs are computed in the program size
      its finished runs used (module docstring), so that resumed results are bit-identical.
    - ``keep_trajectory``: also save the full :class:`gflow.Trajectory` of each run.
    - ``on_run_done(run)``: called after each run is on disk.
    - ``traced``: grid keys (numbers, e.g. ``("seed", "k")``) over which ``build`` can be traced: the
      configurations that agree on every other key are built in one ``eqx.filter_vmap``-ed call instead of one
      Python call each (``jax.random.key(seed)``, ``PopulationLoss(teacher, k, k_max=...)`` trace; shapes and
      Python branches must not depend on them). Those configurations form one batch group, whose default
      ``atol`` and program size may differ from the shape groups of an untraced build, so ``traced`` is part of
      each run's identity.

    Returns a :class:`SweepRun` per configuration, in grid order (loaded from disk or computed now).
    """
    configs = expand_grid(grid)
    if not callable(build):
        raise GflowInputError(f"`build` must be a function config -> (loss, model0), got {type(build).__name__}")
    if record is not None and not callable(record):
        raise GflowInputError(f"`record` must be a function (traj, config) -> dict of arrays, got {record!r}")
    batch_size = positive_int("batch_size", batch_size)
    unknown = sorted(set(solve_options) - set(SOLVE_OPTIONS))
    if unknown:
        raise GflowInputError(f"unknown solve option(s) {unknown}; run_sweep passes on {list(SOLVE_OPTIONS)}")
    if not isinstance(out, (str, os.PathLike)):
        raise GflowInputError(f"`out` must be a folder path, got {type(out).__name__}")
    signature = inspect.signature(build)
    configs = [_bind(build, signature, c) for c in configs]
    solve_id = _solve_identity(t1, solve_options)
    traced = _traced_keys(traced, configs)
    if traced:
        solve_id["traced"] = list(traced)
    identities = [{"config": c, "solve": solve_id} for c in configs]
    names = [run_name(c, ident) for c, ident in zip(configs, identities)]
    runs_dir = os.path.join(os.fspath(out), RUNS_DIR)
    os.makedirs(runs_dir, exist_ok=True)
    with sweep_lock(os.fspath(out)):
        _remove_stale_temporaries(runs_dir)

        code = {"gflow": results_api.source_hash(), "build": function_hash(build),
                "record": None if record is None else function_hash(record)}
        loaded = [_load_run(os.path.join(runs_dir, n), ident, n, code) for n, ident in zip(names, identities)]
        results: list[SweepRun | None] = [run for run, _ in loaded]
        reasons = [why for _, why in loaded]
        groups = _traced_groups(build, configs, traced) if traced else _stacked_shape_groups(build, configs)
        total, n_loaded = len(configs), sum(r is not None for r in results)
        todo = total - n_loaded
        if progress:
            print(f"sweep {out}: {total} configurations, {n_loaded} complete on disk, {todo} to compute "
                  f"({len(groups)} shape group{'s' if len(groups) != 1 else ''}, batches of ≤ {batch_size})", flush=True)
            stale = collections.Counter(why for why in reasons if why not in (None, MISSING))
            for why, count in sorted(stale.items()):
                print(f"sweep: recomputing {count} run(s) found on disk: {why}", flush=True)
        started, computed = time.perf_counter(), 0
        for idx, losses, models in groups:
            pending = [p for p, i in enumerate(idx) if results[i] is None]
            if not pending:
                continue
            options = dict(solve_options)
            if options.get("atol") is None:  # the tightest of the runs' own defaults, fixed for the whole group
                options["atol"] = float(np.min(default_atols(float(options.get("rtol", 1e-8)), flat_parameters(models))))
            program = _program_size([results[i] for i in idx], min(batch_size, len(idx)))
            step = min(batch_size, program)
            for start in range(0, len(pending), step):
                rows = np.asarray(pending[start:start + step])
                batch_started = time.perf_counter()
                trajs = flow_api.solve_flows(take(losses, rows), take(models, rows), t1, progress="auto" if progress else False,
                                    program_size=program, **options)
                for row, traj in zip(rows, trajs):
                    i = idx[row]
                    rec = {} if record is None else record(traj, configs[i])
                    if not isinstance(rec, Mapping):
                        raise GflowInputError(f"`record` must return a dict of arrays, got {type(rec).__name__}")
                    results[i] = _write_run(runs_dir, names[i], identities[i], traj, dict(rec), keep_trajectory,
                                            program, code)
                    results[i].recomputed_because = None if reasons[i] == MISSING else reasons[i]
                    computed += 1
                    if on_run_done is not None:
                        on_run_done(results[i])
                if progress:
                    elapsed = time.perf_counter() - started
                    eta = elapsed / computed * (todo - computed)
                    print(f"sweep: {n_loaded + computed}/{total} done (batch of {len(rows)} in "
                          f"{time.perf_counter() - batch_started:.1f} s), elapsed {_format_seconds(elapsed)}, "
                          f"ETA {_format_seconds(eta)}", flush=True)
        return results


def _built(pair, config):
    if not (isinstance(pair, tuple) and len(pair) == 2):
        raise GflowInputError(f"`build` must return (loss, model0), got {type(pair).__name__} for {config}")
    return pair


def _stacked_shape_groups(build, configs) -> list[tuple]:
    """``build`` called once per configuration; the flows grouped by shape and stacked: [(indices, losses,
    models0)]."""
    built = [_built(build(**c), c) for c in configs]
    return [(idx, stack(losses, "losses"), stack([built[i][1] for i in idx], "models0"))
            for idx, losses in _shape_groups(built)]


def _traced_groups(build, configs, traced) -> list[tuple]:
    """``build`` traced once per group of configurations that agree on every key but ``traced`` (vmapped over the
    traced keys' values, the equinox way): [(indices, losses, models0)], stacked."""
    by_fixed: dict[str, tuple[dict, list[int]]] = {}
    for i, c in enumerate(configs):
        fixed = {k: v for k, v in c.items() if k not in traced}
        by_fixed.setdefault(_canonical_json(fixed, "grid"), (fixed, []))[1].append(i)
    groups = []
    for fixed, idx in by_fixed.values():
        values = {}
        for key in traced:
            column = [configs[i][key] for i in idx]
            if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in column):
                raise GflowInputError(f"traced grid key {key!r} must take numbers, got {column[:5]}")
            values[key] = jnp.asarray(column, dtype=jnp.int64 if all(isinstance(v, int) for v in column)
                                      else jnp.float64)
        try:
            pair = eqx.filter_jit(eqx.filter_vmap(lambda vals: build(**fixed, **vals)))(values)  # noqa: B023
        except GflowInputError:
            raise
        except Exception as e:  # a tracer met Python control flow or a shape
            raise GflowInputError(f"`build` could not be traced over {list(traced)} (they must not set shapes or "
                                  f"Python branches; pass the rest as fixed grid keys): {type(e).__name__}: "
                                  f"{str(e).splitlines()[0] if str(e) else ''}") from None
        loss, model0 = _built(pair, fixed)
        groups.append((idx, loss, model0))
    return groups


def load_sweep(out: str) -> list[SweepRun]:
    """Every complete run stored under ``out`` (any grid), sorted by name; partial or corrupt folders are skipped."""
    runs_dir = os.path.join(os.fspath(out), RUNS_DIR)
    if not os.path.isdir(runs_dir):
        raise GflowInputError(f"no sweep in {out!r}: {runs_dir!r} does not exist")
    runs = []
    for name in sorted(os.listdir(runs_dir)):
        path = os.path.join(runs_dir, name)
        try:
            with open(os.path.join(path, RUN_FILE)) as f:
                identity = json.load(f)["identity"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        run, _ = _load_run(path, identity, name)
        if run is not None:
            runs.append(run)
    return runs
