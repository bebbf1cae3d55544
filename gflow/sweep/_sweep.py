"""Sweeps: a grid of configurations, integrated in batches, each finished run written to disk atomically,
in this process or as tasks on an executor.

``run_sweep(grid, build, out, t1=...)`` expands ``grid`` into configurations, calls ``build(**config)`` for each to
get ``(loss, model0)``, groups the configurations whose models have the same shapes (population losses of different
training lengths are padded to the group's longest, :meth:`gflow.PopulationLoss.padded_to`), integrates every group
in batches with :func:`gflow.solve_flows`, and writes each run to ``out/runs/<name>/`` as soon as its batch is done.
``run_sweep(grid, build, out, method="adam", steps=..., lr=...)`` does the same with a discrete method's batched
runner instead (:func:`gflow.discrete.run_adam_batch`, ...; the objectives stacked, one per member, and ``lr`` per member), so that
discrete sweeps are grouped, resumed, identified and run on executors by the same code as flows.

A run folder holds ``arrays.npz`` (saved times, losses, the final parameters and whatever ``record(traj, config)``
returned), ``final.json`` + ``final.npz`` (the final model, :func:`gflow.results.save_model`: no pickle), optionally ``trajectory/`` (:meth:`gflow.Trajectory.save`, with the
parameters at every saved time: a few MB per run, hence off by default) and, written last, ``run.json``: the
configuration, the solver options, status, statistics, the SHA-256 of every other file, the arrays' shapes and the
parameter count, all checked when the run is loaded (a mismatch names the file). A run is written into a
temporary folder that is renamed into place (``os.replace``), so a folder under its final name is complete unless
something outside gflow damaged it; the checksums catch that too. Re-running the same call resumes: runs whose folder
is complete and matches the configuration, the solver options and what ``build`` reads besides its arguments
(:func:`run_sweep`: globals and closure variables hashed by value, or named in ``params``) are loaded, not
recomputed; a missing, partial or corrupt folder is recomputed, and so is a run made by other code (provenance
below). ``out/sweep.json`` names the runs of the last call's grid, which :func:`load_sweep` returns by default. One
sweep process per output folder, enforced by a lock file.

Results do not depend on how runs are batched or resumed, bit for bit: padding, the default ``atol`` and the default
save times (a count of log-spaced times, which begin at the group's first time scale) are fixed per shape group from
the whole grid, not from the batch (each flow in a batch keeps its own adaptive steps), and every
flow of a shape group is computed in a compiled program of one size, ``program_size`` in ``run.json``: the bucket
(:func:`gflow.stacking.bucket_size`) of min(batch_size, group size) on a fresh folder, and on resume the size the group's finished
runs used, whatever ``batch_size`` is then (a smaller batch is padded up to it). A flow's arithmetic in a vmapped
program does not depend on the other rows, so the same program gives the same bits. Two exceptions, where results
agree to the solver tolerance instead: a solver that lags its Jacobian over steps (``GaussNewtonRosenbrock`` with a
materialized Jacobian above 2²² entries refreshes it for the whole batch at once), and a different number of
local devices (each device runs a program of its share of the rows). The same holds for discrete runs (a member's
steps in the vmapped loop do not depend on the other rows, and its minibatch key on its configuration alone); a
discrete run equals the one-by-one runner of its configuration to rounding (rtol 1e-12 in
tests/test_sweep_discrete.py), not bit for bit, since a vmapped step rounds differently from a single one.
"""

from __future__ import annotations

import collections
import collections.abc
import concurrent.futures
import dataclasses
import inspect
import math
import os
import time
from typing import Callable, Sequence

import equinox as eqx
import jax
import numpy as np

from .. import results as results_api  # looked up at call time, so a test can change the source hash
from .._checks import GflowInputError, positive_int
from ..flow._solve import flat_parameters
from ..flow._step_control import group_atol
from ..results._file_reading import read_json
from ..results._json import write_json_atomic
from ..results._provenance import function_hash
from ..stacking import bucket_size, stack, take
from ._grid import _bind, _canonical_json, _plain, expand_grid
from ._identity import inputs_digest
from ._lock import sweep_lock
from ._methods import check_method, FLOW, grid_option_keys, method_identity, PER_MEMBER
from ._run_files import (
    _load_run,
    _read_meta,
    _remove_stale_temporaries,
    _TMP_PREFIX,
    MISSING,
    RUN_FILE,
    run_name,
    RUNS_DIR,
    SweepRun,
)
from ._tasks import build_config, build_each, run_task, SweepTask, traced_build


# ------------------------------------------------------------------------------------------------ grouping
def _signature(tree) -> tuple:
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    return (str(treedef),) + tuple((tuple(np.shape(x)), str(np.asarray(x).dtype)) if eqx.is_array(x) else repr(x)
                                   for x in leaves)


def _paddable(loss) -> bool:
    return callable(getattr(loss, "padded_to", None)) and isinstance(getattr(loss, "n_lags", None), int)


def _shape_groups(built: list[tuple]) -> list[tuple[list[int], list, int | None]]:
    """Indices of configurations that can share a batch, with their (padded) losses and the number of lags they
    were padded to (None: not padded)."""
    first: dict[tuple, list[int]] = {}
    for i, (loss, model0) in enumerate(built):
        first.setdefault((_signature(model0), type(loss), _paddable(loss)), []).append(i)
    groups: dict[tuple, tuple[list[int], list, int | None]] = {}
    for (model_sig, _, paddable), idx in first.items():
        losses = [built[i][0] for i in idx]
        k_max = max(loss.n_lags for loss in losses) if paddable else None
        if paddable:
            losses = [loss.padded_to(k_max) for loss in losses]
        for i, loss in zip(idx, losses):
            g = groups.setdefault((model_sig, _signature(loss)), ([], [], k_max))
            g[0].append(i)
            g[1].append(loss)
    return list(groups.values())


# ------------------------------------------------------------------------------------------------ runner
def _format_seconds(s: float) -> str:
    if not math.isfinite(s):
        return "?"
    s = int(round(s))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else (f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s")


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


def run_sweep(grid, build: Callable[..., tuple], out: str, *, method: str = FLOW, t1: float | None = None,
              record: Callable | None = None, batch_size: int = 64, keep_trajectory: bool = False,
              on_run_done: Callable | None = None, progress: bool = True, traced: Sequence[str] = (), executor=None,
              params: dict | None = None, **options) -> list[SweepRun]:
    """Integrate the gradient flow (or run a discrete method) from every configuration of ``grid``; resume from
    ``out`` if it holds runs.

    The method and its options are part of each run's identity: a flow run and an Adam run of one configuration
    never share a folder, and a changed option (``lr``) is a new run. Every run records the code that made it
    (``run.json``: gflow's source hash, the source hashes of ``build``, ``record`` and a projected-GD ``projection``,
    git commit and dirty flag, packages, command, device). A run on disk made by other gflow code, another ``build``
    or (when ``record`` is given) another ``record`` is recomputed, and the sweep says how many and why; so is a run
    written by gflow 0.1 (pickle), and a partial or corrupt one. Runs that are reused or recomputed keep their folder
    name (configuration, method and options). ``out`` is locked while the sweep runs (``out/sweep.lock``: host,
    pid): a second sweep on the same folder gets a clear error instead of corrupting it.

    What ``build`` reads besides its arguments is part of each run's identity too: the module globals its code
    loads and its closure variables (and those of the user's functions it calls, recursively), hashed by value
    (numbers, strings, arrays, tuples, lists, dicts, pytrees such as a teacher module, dataclasses; library code by
    name), as ``joblib.Memory`` or ``dask.base.tokenize`` hash a function. A rerun after such a value changed (a
    script's teacher seed) makes new runs instead of reusing the old ones. A value that cannot be hashed
    deterministically (an object of an arbitrary class) is refused before any work, with the variable named: pass
    ``params={"name": value}``, a JSON value that changes when it does; params enter the identity and the variable is
    then not hashed. (``record``'s inputs are part of its code: a changed one recomputes the runs under their names.)
    The folder records the grid of the last call (``out/sweep.json``): :func:`load_sweep` and the tables return that
    grid's runs, and the sweep says how many runs in the folder are outside it.

    Args:
        grid: See :func:`expand_grid`. Its keys must be parameters of ``build`` (or, for a discrete method, options
            of the method); ``build``'s defaults fill in the rest, and the full configuration identifies the run.
        build: ``build(**config) -> (loss, model0)``: the objective and the initial model of one configuration.
        out: The sweep's folder (runs in ``out/runs/<name>/``).
        method: ``"flow"`` (the default) integrates the gradient flow; ``"gd"``, ``"sgd"``, ``"adam"``,
            ``"projected_gd"`` or ``"normalized_gd"`` (with ``stop_loss`` and ``continue_steps`` for any of them)
            trains each model with the batched runner of that method (:func:`gflow.discrete.run_gd_batch`, ...),
            one objective per member, in batches grouped, resumed, identified and run on executors exactly as flows.
        t1: The end time of the flows (``method="flow"`` only; a discrete run is ``steps`` steps).
        record: ``record(traj, config) -> dict of arrays``: what to keep of each trajectory besides its saved times,
            losses and final model (e.g. an extrapolation error at every saved time).
        batch_size: Runs per :func:`gflow.solve_flows` (or batched runner) call (a batch runs until its slowest run
            is done). On a folder that already holds runs of a shape group, the group's missing runs are computed in
            the program size its finished runs used (module docstring), so that resumed results are bit-identical.
            With an executor it sets the task size: choose it so that there are a few tasks per worker.
        keep_trajectory: Also save the full :class:`gflow.Trajectory` of each run.
        on_run_done: ``on_run_done(run)``, called after each run is on disk.
        progress: Print runs done / total, runs per second and the ETA after each batch, and a count per status at
            the end.
        traced: Grid keys (numbers, e.g. ``("seed", "k")``) over which ``build`` can be traced: the configurations
            that agree on every other key are built in one ``eqx.filter_vmap``-ed call instead of one Python call
            each (``jax.random.key(seed)``, ``PopulationLoss(teacher, k, k_max=...)`` trace; shapes and Python
            branches must not depend on them). Those configurations form one batch group, whose default ``atol`` and
            program size may differ from the shape groups of an untraced build, so ``traced`` is part of each run's
            identity.
        executor: None runs the batches in this process, one after the other. Otherwise a
            ``concurrent.futures.Executor`` (or a ``distributed.Client``, whose ``get_executor()`` is used) runs
            each batch as a task: the task rebuilds its runs from their configurations with ``build`` (nothing large
            is shipped), computes them and writes each run into ``out``, which must be a folder every worker sees.
            The driver fixes each group's ``atol``, save times, padding and program size, so the results are
            bit-identical to an in-process run with the same ``batch_size``. A task whose worker dies is run again by the executor (Dask
            does); runs it had finished are kept. Tested with Dask distributed (``pip install -c constraints.txt -e
            ".[distributed]"``).
        params: Named values that identify the runs besides the configuration (a dict of JSON values, not passed
            to ``build``): what ``build`` depends on that gflow cannot hash, or any value you want the runs told
            apart by. A key that names a global or closure variable ``build`` reads stands for it (the variable is
            not hashed). Shown as columns by :func:`gflow.sweep.sweep_table`.
        **options: Flows: the keyword options of :func:`gflow.solve_flows` (``gflow.flow.SOLVE_OPTIONS``: ``rtol``,
            ``atol``, ``solver``, ``save_at``, ``stop_loss``, ``stepsize_controller``, ... with its defaults; and
            its ``slots``), the same for every run; ``rtol`` is checked before anything uses it. Without ``atol`` or
            ``stepsize_controller``, the atol is the smallest of the runs' own defaults (rtol × min(1, RMS of the
            initial parameters)) over the run's whole shape group, so that it does not depend on the batching and
            suits the smallest initialization in the group. Discrete methods: the runner's options
            (:class:`gflow.discrete.DiscreteOptions` and ``lr``, ``steps``; Adam's ``b1``, ``b2``, ``eps``;
            normalized GD's ``beta``, ``soft_const``, ``average``), with the minibatch size named
            ``minibatch_size`` and ``projection`` a function ``(model0, config) -> projection``; an unknown one is
            an error that lists them. ``lr``, ``steps``, ``minibatch_size``, ``shuffle``, ``b1``, ``b2``, ``eps`` and
            ``diverge_factor`` may be grid keys instead (not passed to ``build``): runs of different ``lr`` share a
            batch, one step size per member; other values split the batches. A minibatch run samples with
            ``fold_in(key, h(config given to build))``: the same minibatches however the sweep is batched or
            resumed, and for runs that differ only in ``lr``.

    Returns:
        A :class:`SweepRun` per configuration, in grid order (loaded from disk or computed now).

    Raises:
        GflowInputError: An argument or option is malformed, ``build`` (or ``record``) reads a value that cannot be
            hashed and ``params`` does not name it, or ``out`` is locked by another sweep.
    """
    configs = expand_grid(grid)
    if not callable(build):
        raise GflowInputError(f"`build` must be a function config -> (loss, model0), got {type(build).__name__}")
    if record is not None and not callable(record):
        raise GflowInputError(f"`record` must be a function (traj, config) -> dict of arrays, got {record!r}")
    batch_size = positive_int("batch_size", batch_size)
    executor = _as_executor(executor)
    check_method(method, t1, options)
    if not isinstance(out, (str, os.PathLike)):
        raise GflowInputError(f"`out` must be a folder path, got {type(out).__name__}")
    signature = inspect.signature(build)
    option_keys = grid_option_keys(method, configs, list(signature.parameters), options)
    configs = [{**_bind(build, signature, build_config(c, option_keys)), **{k: c[k] for k in option_keys}}
               for c in configs]
    solve_id = method_identity(method, t1, options)
    traced = _traced_keys(traced, [build_config(c, option_keys) for c in configs])
    if traced:
        solve_id["traced"] = list(traced)
    params = _checked_params(params)
    makers = {"build": build, **({"projection": options["projection"]} if "projection" in options else {})}
    inputs, unhashable = inputs_digest(makers, named=params)
    record_inputs, record_unhashable = (None, []) if record is None else inputs_digest({"record": record}, params)
    _refuse_unhashable(unhashable + record_unhashable)
    extra = {**({"inputs": inputs} if inputs is not None else {}), **({"params": params} if params else {})}
    identities = [{"config": c, "solve": solve_id, **extra} for c in configs]
    names = [run_name(c, ident) for c, ident in zip(configs, identities)]
    runs_dir = os.path.abspath(os.path.join(os.fspath(out), RUNS_DIR))
    os.makedirs(runs_dir, exist_ok=True)
    with sweep_lock(os.fspath(out)):
        _remove_stale_temporaries(runs_dir)

        code = {"gflow": results_api.source_hash(), "build": function_hash(build),
                "record": None if record is None else function_hash(record)}
        if record_inputs is not None:
            code["record_inputs"] = record_inputs
        if "projection" in options:
            code["projection"] = function_hash(options["projection"])
        loaded = [_load_run(os.path.join(runs_dir, n), ident, n, code) for n, ident in zip(names, identities)]
        results: list[SweepRun | None] = [run for run, _ in loaded]
        reasons = [why for _, why in loaded]
        try:
            groups = (_traced_groups(build, configs, traced, option_keys) if traced
                      else _stacked_shape_groups(build, configs, option_keys))
            _write_manifest(os.fspath(out), names)
            meter = _Meter(len(configs), sum(r is not None for r in results), progress)
            meter.start(out, len(groups), batch_size, executor, reasons, _runs_outside(runs_dir, names))

            tasks = []  # (task, its group, its rows in the group: the flows stacked, for the in-process path)
            for group in groups:
                pending = [p for p, i in enumerate(group.indices) if results[i] is None]
                if not pending:
                    continue
                group_options = dict(options)
                if method == FLOW and options.get("atol") is None and options.get("stepsize_controller") is None:
                    group_options["atol"] = group_atol(options.get("rtol"), flat_parameters(group.models))
                if method == FLOW:
                    group_options.update(_group_save_times(options, t1, group))
                program = _program_size([results[i] for i in group.indices], min(batch_size, len(group.indices)))
                step = min(batch_size, program)
                for start in range(0, len(pending), step):
                    rows = np.asarray(pending[start:start + step])
                    idx = [group.indices[r] for r in rows]
                    task = SweepTask(indices=tuple(idx), configs=tuple(configs[i] for i in idx),
                                     names=tuple(names[i] for i in idx), identities=tuple(identities[i] for i in idx),
                                     runs_dir=runs_dir, build=build, record=record,
                                     t1=None if t1 is None else float(t1), options=group_options,
                                     program_size=program, keep_trajectory=keep_trajectory, code=code,
                                     pad_to=group.pad_to, traced=traced, traced_dtypes=group.traced_dtypes,
                                     group_configs=tuple(configs[i] for i in group.indices) if traced else (),
                                     group_rows=tuple(int(r) for r in rows) if traced else (),
                                     method=method, option_keys=option_keys)
                    tasks.append((task, group, rows))

            def finished(done: list[tuple[int, SweepRun]]) -> None:
                for i, run in done:
                    if not os.path.exists(os.path.join(run.path, RUN_FILE)):
                        raise GflowInputError(f"a worker wrote run {run.name} into {runs_dir}, which this machine does "
                                              "not see: `out` must be a folder that the driver and every worker share")
                    run.recomputed_because = None if reasons[i] == MISSING else reasons[i]
                    results[i] = run
                    if on_run_done is not None:
                        on_run_done(run)
                meter.batch_done(len(done))

            if executor is None:
                for task, group, rows in tasks:
                    finished(run_task(task, take(group.losses, rows), take(group.models, rows),
                                      progress="auto" if progress else False))
            else:
                _run_on(executor, [task for task, _, _ in tasks], finished, meter)
        except KeyboardInterrupt:  # Ctrl-C: what is kept and how to resume, not 40 frames; leaving `with` frees the lock
            kept = sum(r is not None for r in results)
            raise KeyboardInterrupt(f"interrupted: {kept} of {len(results)} runs kept in {os.fspath(out)}, rerun the "
                                    "same call to resume") from None
        meter.summary(results)
        return results


def _group_save_times(options: dict, t1: float, group: _Group) -> dict:
    """``{"save_at": times}`` for a flow sweep whose ``save_at`` is a count: the log-spaced times that
    :func:`gflow.solve_flows` would give the whole shape group (they begin at its fastest flow's first time scale,
    :func:`gflow.run.flow_time_scale`), fixed here so that they do not depend on the batching; {} otherwise."""
    try:
        from ..run import first_save_offset, flow_time_scale, save_times
    except ImportError:  # a gflow whose default save times do not depend on the flows
        return {}
    from ..flow._options import SolveOptions

    save_at = options.get("save_at", SolveOptions.save_at)
    if not isinstance(save_at, (int, np.integer)) or isinstance(save_at, bool):
        return {}
    t0 = float(options["t0"]) if options.get("t0") is not None else float(SolveOptions.t0)
    first = first_save_offset(flow_time_scale(group.losses, group.models, batched=True), t0, float(t1))
    return {"save_at": save_times(int(save_at), t0, float(t1), first)}


def _as_executor(executor):
    """None, a ``concurrent.futures.Executor``, or something with ``get_executor()`` (a ``distributed.Client``)."""
    if executor is None or isinstance(executor, concurrent.futures.Executor):
        return executor
    get = getattr(executor, "get_executor", None)
    if callable(get):
        return get()
    raise GflowInputError(f"`executor` must be None, a concurrent.futures.Executor or a distributed.Client, got "
                          f"{type(executor).__name__}")


def _run_on(executor, tasks: list[SweepTask], finished: Callable, meter: _Meter) -> None:
    """Submit every task to ``executor``; hand each result to ``finished`` as it arrives."""
    futures = [executor.submit(run_task, task) for task in tasks]
    try:
        for future in concurrent.futures.as_completed(futures):
            try:
                done = future.result()
            except GflowInputError:
                raise
            except Exception as e:  # a task failed for good (the executor gave up retrying it)
                raise RuntimeError(f"sweep: a batch failed on the executor ({type(e).__name__}: {e}); the "
                                   f"{meter.done} runs finished so far are on disk, and the same call resumes from "
                                   "them") from e
            finished(done)
    finally:
        for future in futures:
            future.cancel()


class _Meter:
    """The driver's progress: runs done / total, runs per second, ETA; a count per status at the end."""

    def __init__(self, total: int, loaded: int, show: bool):
        self.total, self.loaded, self.show = total, loaded, show
        self.computed, self.started = 0, time.perf_counter()

    @property
    def done(self) -> int:
        return self.loaded + self.computed

    def start(self, out, n_groups: int, batch_size: int, executor, reasons, outside: int = 0) -> None:
        if not self.show:
            return
        where = "in this process" if executor is None else f"on {type(executor).__name__}"
        print(f"sweep {out}: {self.total} configurations, {self.loaded} complete on disk, "
              f"{self.total - self.loaded} to compute ({n_groups} shape group{'s' if n_groups != 1 else ''}, "
              f"batches of ≤ {batch_size}, {where})", flush=True)
        if outside:
            print(f"sweep: {outside} run{'s' if outside != 1 else ''} in {os.fspath(out)} "
                  f"{'are' if outside != 1 else 'is'} outside this grid; "
                  f"gflow.sweep.load_sweep({os.fspath(out)!r}, history=True) shows them", flush=True)
        stale = collections.Counter(why for why in reasons if why not in (None, MISSING))
        for why, count in sorted(stale.items()):
            print(f"sweep: recomputing {count} run(s) found on disk: {why}", flush=True)

    def batch_done(self, n: int) -> None:
        self.computed += n
        if not self.show:
            return
        elapsed = time.perf_counter() - self.started
        rate = self.computed / elapsed if elapsed > 0 else math.inf
        eta = (self.total - self.done) / rate if rate > 0 else math.inf
        print(f"sweep: {self.done}/{self.total} done, {rate:.3g} runs/s, elapsed {_format_seconds(elapsed)}, "
              f"ETA {_format_seconds(eta)}", flush=True)

    def summary(self, results: list[SweepRun]) -> None:
        if not self.show:
            return
        elapsed = time.perf_counter() - self.started
        statuses = collections.Counter(r.status for r in results)
        print(f"sweep: {self.total} runs ({self.computed} computed in {_format_seconds(elapsed)}, {self.loaded} "
              f"loaded); status: " + ", ".join(f"{n} {s}" for s, n in sorted(statuses.items())), flush=True)


@dataclasses.dataclass
class _Group:
    """Configurations that share a batch: their grid indices, their flows stacked (losses padded to
    ``pad_to`` lags, or built traced over keys of ``traced_dtypes``)."""

    indices: list[int]
    losses: object
    models: object
    pad_to: int | None = None
    traced_dtypes: tuple[str, ...] = ()


def _by_batch_options(configs, option_keys) -> list[list[int]]:
    """Indices of the configurations that agree on the grid's method options other than ``lr`` (which may differ
    within a batch): all of them for flows."""
    parts: dict[str, list[int]] = {}
    for i, c in enumerate(configs):
        shared = {k: c[k] for k in option_keys if k not in PER_MEMBER}
        parts.setdefault(_canonical_json(shared, "grid"), []).append(i)
    return list(parts.values())


def _stacked_shape_groups(build, configs, option_keys=()) -> list[_Group]:
    """``build`` called once per distinct configuration it gets; the runs grouped by their batch options and by
    shape, and stacked."""
    built = build_each(build, [build_config(c, option_keys) for c in configs])
    groups = []
    for part in _by_batch_options(configs, option_keys):
        for idx, losses, pad_to in _shape_groups([built[i] for i in part]):
            idx = [part[j] for j in idx]
            groups.append(_Group(idx, stack(losses, "losses"), stack([built[i][1] for i in idx], "models0"), pad_to))
    return groups


def _traced_groups(build, configs, traced, option_keys=()) -> list[_Group]:
    """``build`` traced once per group of configurations that agree on every key but ``traced`` and ``lr`` (which
    may differ within a batch), vmapped over the traced keys' values (the equinox way), stacked."""
    by_fixed: dict[str, list[int]] = {}
    for i, c in enumerate(configs):
        fixed = {k: v for k, v in c.items() if k not in traced and not (k in option_keys and k in PER_MEMBER)}
        by_fixed.setdefault(_canonical_json(fixed, "grid"), []).append(i)
    groups = []
    for idx in by_fixed.values():
        dtypes = []
        for key in traced:
            column = [configs[i][key] for i in idx]
            if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in column):
                raise GflowInputError(f"traced grid key {key!r} must take numbers, got {column[:5]}")
            dtypes.append("int64" if all(isinstance(v, int) for v in column) else "float64")
        loss, model0 = traced_build(build, [build_config(configs[i], option_keys) for i in idx], traced,
                                    tuple(dtypes))
        groups.append(_Group(idx, loss, model0, traced_dtypes=tuple(dtypes)))
    return groups


MANIFEST_FILE = "sweep.json"  # the folder's current grid: the run names of the last run_sweep call, in grid order


def _write_manifest(out: str, names: list[str]) -> None:
    write_json_atomic(os.path.join(out, MANIFEST_FILE), {"format": 1, "current_grid": list(names),
                                                         "written": time.strftime("%Y-%m-%dT%H:%M:%S%z")})


def _current_grid(out: str) -> list[str] | None:
    """The run names of the folder's current grid (the last run_sweep call's), or None for a folder written before
    gflow recorded it."""
    path = os.path.join(out, MANIFEST_FILE)
    if not os.path.exists(path):
        return None
    manifest = read_json(path)  # a damaged file is an error that names it
    names = manifest.get("current_grid") if isinstance(manifest, dict) else None
    if not (isinstance(names, list) and all(isinstance(n, str) and os.sep not in n and n not in ("", ".", "..")
                                            for n in names)):
        raise GflowInputError(f"{path} is not a sweep manifest (no list of run names under 'current_grid'); delete "
                              "it to load every run of the folder, or rerun the sweep to write it again")
    return names


def _run_folders(runs_dir: str) -> list[str]:
    """The names of the folders in ``runs_dir`` that hold a run record (not the temporaries of writers)."""
    return sorted(name for name in os.listdir(runs_dir) if not name.startswith(_TMP_PREFIX)
                  and os.path.isfile(os.path.join(runs_dir, name, RUN_FILE)))


def _runs_outside(runs_dir: str, names: list[str]) -> int:
    """How many runs in ``runs_dir`` are not runs of the grid ``names``."""
    grid = set(names)
    return sum(name not in grid for name in _run_folders(runs_dir))


def _checked_params(params) -> dict:
    """``run_sweep``'s ``params``: a dict of names to JSON values (made plain), {} for None."""
    if params is None:
        return {}
    if not isinstance(params, collections.abc.Mapping) or not all(isinstance(k, str) for k in params):
        raise GflowInputError(f"`params` must be a dict of names to JSON values (numbers, strings, booleans, None, "
                              f"lists and dicts of them), got {type(params).__name__}")
    _canonical_json(params, "params")
    return _plain(dict(params))


def _refuse_unhashable(problems: list[tuple[tuple[str, ...], str]]) -> None:
    """A GflowInputError when ``build`` (or ``record``, ``projection``) reads something that cannot be hashed: the
    sweep could not tell a run made with another value of it, and would reuse it."""
    if not problems:
        return
    names = list(dict.fromkeys(n for ns, _ in problems for n in ns))
    example = ", ".join(f"{n!r}: <a JSON value that changes whenever `{n}` does>" for n in names)
    raise GflowInputError(
        "run_sweep cannot hash what the sweep's functions read besides their arguments, so it could not tell runs "
        "made with other values of it and would reuse them: " + "; ".join(what for _, what in problems) +
        f". Name it: run_sweep(..., params={{{example}}}); params enter every run's identity (another value makes "
        "new runs), and a variable named in params is not hashed")


def load_sweep(out: str, history: bool = False) -> list[SweepRun]:
    """The complete runs of the sweep in ``out``: by default those of its current grid (the last
    :func:`run_sweep` call on the folder, recorded in ``out/sweep.json``), in grid order; with ``history=True``
    every run the folder holds (any grid, any ``params``), sorted by name. A folder written before gflow recorded its
    grid has no current grid: every run is returned. Runs not finished (an interrupted sweep), the temporary
    folders of writers killed before their rename and runs written with pickle by gflow 0.1 are skipped.

    Every run is checked against what its ``run.json`` recorded (each file's SHA-256, the arrays' shapes, the
    parameter count).

    Args:
        out: The sweep's folder.
        history: Every run of the folder, not only the current grid's.

    Returns:
        The runs, as :class:`SweepRun`.

    Raises:
        GflowInputError: ``out`` holds no sweep, or a run's files differ from what its ``run.json`` recorded (the
            message names the file).
    """
    runs_dir = os.path.join(os.fspath(out), RUNS_DIR)
    if not os.path.isdir(runs_dir):
        raise GflowInputError(f"no sweep in {out!r}: {runs_dir!r} does not exist")
    names = None if history else _current_grid(os.fspath(out))
    names = _run_folders(runs_dir) if names is None else names
    runs = []
    for name in names:
        path = os.path.join(runs_dir, name)
        if not os.path.isfile(os.path.join(path, RUN_FILE)):
            continue  # not finished, or a partial folder (never a run)
        try:
            identity = _read_meta(path)["identity"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise GflowInputError(f"sweep run {name}: {os.path.join(path, RUN_FILE)} is damaged "
                                  f"({type(e).__name__}: {e}); rerun the sweep (it recomputes a damaged run) or "
                                  "delete the run's folder") from None
        run, _ = _load_run(path, identity, name, strict=True)
        if run is not None:
            runs.append(run)
    return runs
