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
corrupt folder is recomputed. One sweep process per output folder.

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

import dataclasses
import hashlib
import inspect
import itertools
import json
import math
import os
import re
import shutil
import time
from typing import Callable, Mapping, Sequence

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .. import flow as flow_api  # solve_flows looked up at call time, so a test can count its calls
from .._checks import GflowInputError, positive_int
from ..batching import bucket_size, stack, take
from ..flow._solve import default_atols, flat_parameters
from ..models._flatten import flatten
from ..results._json import jsonable
from ..results._legacy import file_sha256
from ..results._model_file import load_model, read_npz, save_model
from ..results._trajectory import package_versions, Trajectory

RUNS_DIR = "runs"
RUN_FILE = "run.json"
ARRAYS_FILE = "arrays.npz"
FINAL_STEM = "final"  # final.json + final.npz
LEGACY_FINAL_FILE = "final.pkl"  # written by gflow before the pickle-free format; never loaded
TRAJECTORY_DIR = "trajectory"
_TMP_PREFIX = ".tmp-"
_RECORD_PREFIX = "record__"
# Keyword arguments of solve_flows that a sweep passes through (and that identify a run).
SOLVE_OPTIONS = ("rtol", "atol", "solver", "save_at", "t0", "stop_loss", "diverge_factor", "diagnostics", "max_steps")


# ------------------------------------------------------------------------------------------------ grid
def expand_grid(grid) -> list[dict]:
    """Configurations of a grid, in order, without duplicates.

    ``grid`` is a dict (every list or tuple value is an axis, the product of the axes is taken in key order, other
    values are fixed; wrap a list-valued parameter as ``[[...]]``) or a list of such dicts or plain configurations
    (their expansions are concatenated). ``expand_grid({"k": [4, 8], "seed": [0, 1]})`` gives 4 configurations.
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


# ------------------------------------------------------------------------------------------------ runs
@dataclasses.dataclass
class SweepRun:
    """One finished run of a sweep: its configuration, where it lives, what it produced.

    ``arrays`` holds ``ts``, ``loss``, ``final_params`` (flat) and ``record`` the arrays returned by the sweep's
    ``record`` function; ``computed`` says whether this call integrated it (False: loaded from disk).
    """

    config: dict
    name: str
    path: str
    status: str
    message: str
    stats: dict
    arrays: dict[str, np.ndarray]
    record: dict[str, np.ndarray]
    computed: bool
    program_size: int | None = None  # flows in the compiled program that computed it (None: older gflow)

    @property
    def ts(self) -> np.ndarray:
        return self.arrays["ts"]

    @property
    def loss(self) -> np.ndarray:
        return self.arrays["loss"]

    @property
    def final(self):
        """The final model (from ``final.json`` + ``final.npz``)."""
        return load_model(self.path, FINAL_STEM)

    def trajectory(self) -> Trajectory:
        """The full trajectory, if the sweep kept it (``keep_trajectory=True``)."""
        path = os.path.join(self.path, TRAJECTORY_DIR)
        if not os.path.isdir(path):
            raise GflowInputError(f"run {self.name} was saved without its trajectory (keep_trajectory=False)")
        return Trajectory.load(path)


def _files_under(root: str) -> list[str]:
    out = []
    for base, _, files in os.walk(root):
        out.extend(os.path.relpath(os.path.join(base, f), root) for f in files)
    return sorted(f for f in out if f != RUN_FILE)


def run_name(config: dict, identity: dict) -> str:
    """Folder name of a run: the readable ``key=value`` pairs of its configuration (shortened) and a hash of the
    configuration and solver options, so that a changed option never reuses an old result."""
    digest = hashlib.sha256(_canonical_json(identity, "run").encode()).hexdigest()[:12]
    readable = "_".join(f"{k}={_short(v)}" for k, v in config.items())
    readable = re.sub(r"[^A-Za-z0-9._=+-]", "", readable)[:80]
    return f"{readable}-{digest}" if readable else digest


def _short(v) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, list):
        return "+".join(_short(x) for x in v)
    return str(v)


def _load_run(path: str, identity: dict, name: str) -> SweepRun | None:
    """The run stored in ``path`` if it is complete, uncorrupted and matches ``identity``; else None."""
    try:
        with open(os.path.join(path, RUN_FILE)) as f:
            meta = json.load(f)
        if meta.get("identity") != json.loads(_canonical_json(identity, "run")):
            return None
        files = meta["files"]
        if sorted(files) != _files_under(path):
            return None
        for rel, digest in files.items():
            if file_sha256(os.path.join(path, rel)) != digest:
                return None
        arrays = read_npz(os.path.join(path, ARRAYS_FILE))
    except (OSError, ValueError, KeyError, TypeError, EOFError):  # GflowInputError is a ValueError
        return None
    record = {k[len(_RECORD_PREFIX):]: v for k, v in arrays.items() if k.startswith(_RECORD_PREFIX)}
    arrays = {k: v for k, v in arrays.items() if not k.startswith(_RECORD_PREFIX)}
    return SweepRun(config=identity["config"], name=name, path=path, status=meta["status"],
                    message=meta.get("message", ""), stats=meta.get("stats", {}), arrays=arrays, record=record,
                    computed=False, program_size=meta.get("program_size"))


def _write_run(runs_dir: str, name: str, identity: dict, traj: Trajectory, record: dict,
               keep_trajectory: bool, program_size: int) -> SweepRun:
    """Write a run into a temporary folder, then rename it into place (atomic on POSIX)."""
    final_path = os.path.join(runs_dir, name)
    tmp = os.path.join(runs_dir, f"{_TMP_PREFIX}{os.getpid()}-{name}")
    if os.path.exists(tmp):
        shutil.rmtree(tmp)
    os.makedirs(tmp)
    theta, _, _ = flatten(traj.final)
    arrays = {"ts": np.asarray(traj.ts), "loss": np.asarray(traj.loss), "final_params": np.asarray(theta)}
    record_arrays = {f"{_RECORD_PREFIX}{k}": np.asarray(v) for k, v in record.items()}
    np.savez_compressed(os.path.join(tmp, ARRAYS_FILE), **arrays, **record_arrays)
    save_model(traj.final, tmp, FINAL_STEM)
    if keep_trajectory:
        traj.save(os.path.join(tmp, TRAJECTORY_DIR))
    meta = {"identity": identity, "status": traj.status, "message": traj.message, "stats": traj.stats,
            "program_size": program_size,
            "flow_config": traj.config, "versions": package_versions(),
            "files": {rel: file_sha256(os.path.join(tmp, rel)) for rel in _files_under(tmp)}}
    with open(os.path.join(tmp, RUN_FILE), "w") as f:
        json.dump(jsonable(meta), f, indent=1, default=str)
        f.flush()
        os.fsync(f.fileno())
    if os.path.lexists(final_path):  # an incomplete or corrupt earlier attempt
        shutil.rmtree(final_path) if os.path.isdir(final_path) else os.remove(final_path)
    os.replace(tmp, final_path)
    return SweepRun(config=identity["config"], name=name, path=final_path, status=traj.status, message=traj.message,
                    stats=traj.stats, arrays=arrays, record={k: np.asarray(v) for k, v in record.items()},
                    computed=True, program_size=program_size)


def _remove_stale_temporaries(runs_dir: str) -> None:
    """Delete temporary run folders left by sweep processes that are no longer running."""
    for entry in os.listdir(runs_dir):
        m = re.match(rf"{re.escape(_TMP_PREFIX)}(\d+)-", entry)
        if m and not _alive(int(m.group(1))):
            shutil.rmtree(os.path.join(runs_dir, entry), ignore_errors=True)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return False  # our own leftovers from an earlier call in this process
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


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
      and final model (e.g. an extrapolation error at every saved time). Not part of a run's identity: use a new
      ``out`` when you change it.
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
    _remove_stale_temporaries(runs_dir)

    results: list[SweepRun | None] = [_load_run(os.path.join(runs_dir, n), ident, n)
                                      for n, ident in zip(names, identities)]
    groups = _traced_groups(build, configs, traced) if traced else _stacked_shape_groups(build, configs)
    total, n_loaded = len(configs), sum(r is not None for r in results)
    todo = total - n_loaded
    if progress:
        print(f"sweep {out}: {total} configurations, {n_loaded} complete on disk, {todo} to compute "
              f"({len(groups)} shape group{'s' if len(groups) != 1 else ''}, batches of ≤ {batch_size})", flush=True)
        legacy = sum(os.path.exists(os.path.join(runs_dir, n, LEGACY_FINAL_FILE)) for n in names)
        if legacy:
            print(f"sweep: {legacy} run(s) on disk were written by an older gflow with pickle (final.pkl); they are "
                  "recomputed, never unpickled", flush=True)
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
                                        program)
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
        run = _load_run(path, identity, name)
        if run is not None:
            runs.append(run)
    return runs
