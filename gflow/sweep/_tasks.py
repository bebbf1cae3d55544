"""A sweep's task: some runs of one batch group (flows, or discrete runs of one method), the unit of work an
executor runs (:func:`gflow.run_sweep`).

A :class:`SweepTask` names its flows by configuration, not by arrays: a worker rebuilds them with the sweep's ``build``,
so nothing large travels to it. An untraced build is called per configuration, the population losses padded to
the shape group's longest. A traced build is vmapped over the whole group, as the driver did, and the task's rows
taken from it: a vmapped build over fewer rows can differ in the last bit (a teacher's impulse response computed
in a batch of 2 and of 4 differed by 1e-16), so each worker keeps the last group it built for the group's next
task. What must be the same as in one process is fixed by the driver from the whole grid and
carried here: the group's ``atol`` and save times, the compiled program size and the padding target. The worker solves the flows
with :func:`gflow.solve_flows`, or trains them with the batched runner of the task's discrete method
(a discrete method's batched runner), writes each run atomically into the shared folder and returns the runs (small arrays). A
task that is run again (its worker died) first loads the runs its earlier attempt finished.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Callable, Mapping

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .. import (  # solve_flows and source_hash looked up at call time, so a test can count or change them
    flow as flow_api,
    results as results_api,
)
from .._checks import GflowInputError
from ..stacking import stack, take
from ._grid import _canonical_json
from ._methods import FLOW, run_method_batch
from ._run_files import _load_run, _write_run, SweepRun


@dataclasses.dataclass(frozen=True)
class SweepTask:
    """Runs of one batch group that are computed together (one :func:`gflow.solve_flows` or batched discrete
    runner call): rows ``indices`` of the grid."""

    indices: tuple[int, ...]  # positions in the grid, for the driver
    configs: tuple[dict, ...]
    names: tuple[str, ...]
    identities: tuple[dict, ...]
    runs_dir: str
    build: Callable
    record: Callable | None
    t1: float | None  # None for a discrete method
    options: dict  # solve_flows options, atol and save times fixed for the group; or the discrete method's options
    program_size: int
    keep_trajectory: bool
    code: dict  # what identifies the code (gflow source hash, build, record)
    pad_to: int | None = None  # an untraced group of population losses: their common number of lags
    traced: tuple[str, ...] = ()  # a traced group: build is vmapped over these keys
    traced_dtypes: tuple[str, ...] = ()  # their dtypes (from the whole group's values)
    group_configs: tuple[dict, ...] = ()  # a traced group: every configuration of the group, in order
    group_rows: tuple[int, ...] = ()  # a traced group: this task's positions in it
    method: str = FLOW  # or a discrete method ("gd", "adam", ...)
    option_keys: tuple[str, ...] = ()  # grid keys that are the method's options, not build's


def build_config(config: dict, option_keys) -> dict:
    """What ``build`` receives of a run's configuration: all but the grid keys that are the method's options."""
    return {k: v for k, v in config.items() if k not in option_keys}


def build_each(build: Callable, configs, pad_to: int | None = None) -> list[tuple]:
    """``build(**config)`` of each configuration, called once per distinct configuration (runs that differ only in
    their method's options share it); population losses padded to ``pad_to`` lags."""
    made: dict[str, tuple] = {}
    for c in configs:
        key = _canonical_json(c, "grid")
        if key not in made:
            loss, model0 = built_pair(build(**c), c)
            made[key] = (loss if pad_to is None else loss.padded_to(pad_to), model0)
    return [made[_canonical_json(c, "grid")] for c in configs]


def built_pair(pair, config):
    """``build``'s result, checked: (loss, model0)."""
    if not (isinstance(pair, tuple) and len(pair) == 2):
        raise GflowInputError(f"`build` must return (loss, model0), got {type(pair).__name__} for {config}")
    return pair


def traced_build(build: Callable, configs, traced: tuple[str, ...], dtypes: tuple[str, ...]):
    """``build`` vmapped over the ``traced`` keys of ``configs`` (which agree on every other key): (losses,
    models0), stacked (the equinox way: one traced call, not one Python call per configuration)."""
    fixed = {k: v for k, v in configs[0].items() if k not in traced}
    values = {key: jnp.asarray([c[key] for c in configs], dtype=dtype) for key, dtype in zip(traced, dtypes)}
    try:
        pair = eqx.filter_jit(eqx.filter_vmap(lambda vals: build(**fixed, **vals)))(values)
    except GflowInputError:
        raise
    except Exception as e:  # a tracer met Python control flow or a shape
        raise GflowInputError(f"`build` could not be traced over {list(traced)} (they must not set shapes or "
                              f"Python branches; pass the rest as fixed grid keys): {type(e).__name__}: "
                              f"{str(e).splitlines()[0] if str(e) else ''}") from None
    return built_pair(pair, fixed)


_last_group: dict = {}  # a worker's last traced group: {"key": ..., "flows": (losses, models0)}


def _rebuild(task: SweepTask, rows: list[int]):
    if task.traced:
        group = [build_config(c, task.option_keys) for c in task.group_configs]
        key = (_canonical_json(group, "grid"), task.code.get("build"), task.traced)
        if _last_group.get("key") != key or key[1] is None:
            _last_group.clear()
            _last_group.update(key=key, flows=traced_build(task.build, group, task.traced, task.traced_dtypes))
        take_rows = np.asarray([task.group_rows[r] for r in rows])
        losses, models0 = _last_group["flows"]
        return take(losses, take_rows), take(models0, take_rows)
    pairs = build_each(task.build, [build_config(task.configs[r], task.option_keys) for r in rows], task.pad_to)
    return stack([loss for loss, _ in pairs], "losses"), stack([m for _, m in pairs], "models0")


def run_task(task: SweepTask, losses=None, models0=None, *, progress=False) -> list[tuple[int, SweepRun]]:
    """Solve the flows (or train the models) of ``task`` and write each run; returns [(grid index, run)].

    ``losses``/``models0``: the task's flows, stacked, when the caller has them (in one process); else (on a
    worker) they are rebuilt from the configurations, and runs that an earlier attempt of this task finished are
    loaded instead of solved again.
    """
    rows = list(range(len(task.indices)))
    done: list[tuple[int, SweepRun]] = []
    if losses is None:
        if task.code.get("gflow") != results_api.source_hash():
            raise GflowInputError(f"a worker on {os.uname().nodename} runs other gflow code (source hash "
                                  f"{results_api.source_hash()[:12]}, the driver's is {task.code.get('gflow', '?')[:12]}): "
                                  "install the same gflow on every worker")
        for r in list(rows):
            run, _ = _load_run(os.path.join(task.runs_dir, task.names[r]), task.identities[r], task.names[r],
                               task.code)
            if run is not None:
                done.append((task.indices[r], run))
                rows.remove(r)
        if not rows:
            return done
        losses, models0 = _rebuild(task, rows)
    if task.method == FLOW:
        trajs = flow_api.solve_flows(losses, models0, task.t1, progress=progress, program_size=task.program_size,
                                     **task.options)
    else:
        configs = [task.configs[r] for r in rows]
        trajs = run_method_batch(task.method, task.options, task.option_keys, losses, models0, configs,
                                 [build_config(c, task.option_keys) for c in configs], task.program_size, progress)
    for r, traj in zip(rows, trajs):
        rec = {} if task.record is None else task.record(traj, task.configs[r])
        if not isinstance(rec, Mapping):
            raise GflowInputError(f"`record` must return a dict of arrays, got {type(rec).__name__}")
        run = _write_run(task.runs_dir, task.names[r], task.identities[r], traj, dict(rec), task.keep_trajectory,
                         task.program_size, task.code)
        done.append((task.indices[r], run))
    return done
