"""A sweep of R1-size flows in this process and on a Dask LocalCluster, timed in one run, results compared byte for
byte.

    python bench/sweep_executor.py                       # 64 flows, 2 workers, batches of 16
    python bench/sweep_executor.py --workers 4 --batch-size 8 --json /tmp/sweep_executor.json

The flows: a balanced teacher d̂ = 5 (key = seed), a symmetric balanced student d = 40 at init 1e-2 (key 1000 +
seed), k ∈ {10, 12, …}, rtol 1e-8, one traced build per panel (as the extrapolation studies do). Three timings, each
into a fresh folder: in this process with the executor's batch size (the same compiled programs, so the same bits),
in this process with all flows in one batch (the in-process default), and on the LocalCluster (started before the
clock, its workers warmed up by one tiny sweep so that process start-up is not counted; each worker still compiles
the sweep's program, unless the persistent compilation cache has it). Requires ``gflow[distributed]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time

import jax
import numpy as np

import gflow
from gflow import initializers, teachers


def build(k, seed, k_max=24):
    teacher = teachers.balanced(jax.random.key(seed), 5)
    student = initializers.balanced(jax.random.key(1000 + seed), 40, scale=1e-2, structure="symmetric")
    return gflow.PopulationLoss(teacher, k, k_max=k_max), student


def tiny_build(k, seed):
    return build(k, seed, k_max=4)


def timed_sweep(grid, out, executor, batch_size, t1, rtol):
    started = time.perf_counter()
    runs = gflow.run_sweep(grid, build, out, t1=t1, rtol=rtol, save_at=20, batch_size=batch_size, executor=executor,
                           traced=["k", "seed"], progress=True)
    return runs, time.perf_counter() - started


def same_bytes(a, b) -> int:
    """How many runs of ``a`` have arrays.npz and final.npz byte-identical to the run of the same name in ``b``."""
    same = 0
    for ra, rb in zip(a, b):
        assert ra.name == rb.name
        files = ("arrays.npz", "final.npz")
        same += all(open(os.path.join(ra.path, f), "rb").read() == open(os.path.join(rb.path, f), "rb").read()
                    for f in files)
    return same


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--seeds", type=int, default=8, help="seeds (teacher and student keys)")
    p.add_argument("--ks", type=int, default=8, help="training lengths k = 10, 12, …")
    p.add_argument("--workers", type=int, default=2, help="LocalCluster worker processes (one thread each)")
    p.add_argument("--batch-size", type=int, default=16, help="flows per task (and per in-process batch)")
    p.add_argument("--t1", type=float, default=1e5, help="integration time")
    p.add_argument("--rtol", type=float, default=1e-8, help="solver rtol")
    p.add_argument("--json", default=None, help="write the numbers here")
    args = p.parse_args(argv)
    import distributed

    ks = list(range(10, 10 + 2 * args.ks, 2))
    grid = {"k": ks, "seed": list(range(args.seeds))}
    n = len(ks) * args.seeds
    root = tempfile.mkdtemp(prefix="gflow-sweep-bench-")
    try:
        print(f"{n} flows (k ∈ {ks}, {args.seeds} seeds), t1 = {args.t1:g}, rtol {args.rtol:g}; "
              f"{args.workers} workers, batches of {args.batch_size}; {os.cpu_count()} CPU cores", flush=True)
        same_program, t_same = timed_sweep(grid, os.path.join(root, "in_process"), None, args.batch_size, args.t1,
                                           args.rtol)
        _, t_one = timed_sweep(grid, os.path.join(root, "one_batch"), None, n, args.t1, args.rtol)
        with distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1, dashboard_address=None) as cluster, \
                distributed.Client(cluster) as client:
            gflow.run_sweep({"k": [2, 4], "seed": [0]}, tiny_build, os.path.join(root, "warmup"), t1=1.0,
                            executor=client, progress=False, batch_size=1)  # imports gflow and JAX on the workers
            dask_runs, t_dask = timed_sweep(grid, os.path.join(root, "dask"), client, args.batch_size, args.t1,
                                            args.rtol)
        identical = same_bytes(dask_runs, same_program)
        steps = int(np.sum([r.stats.get("steps", 0) for r in dask_runs]))
        result = {"flows": n, "workers": args.workers, "batch_size": args.batch_size, "cpu_cores": os.cpu_count(),
                  "in_process_same_batches_s": t_same, "in_process_one_batch_s": t_one, "local_cluster_s": t_dask,
                  "speedup_vs_same_batches": t_same / t_dask, "speedup_vs_one_batch": t_one / t_dask,
                  "runs_byte_identical": identical, "total_steps": steps}
        print(f"\nin process, batches of {args.batch_size}: {t_same:.1f} s; in process, one batch of {n}: {t_one:.1f} s; "
              f"LocalCluster({args.workers}): {t_dask:.1f} s  → {t_same / t_dask:.2f}× and {t_one / t_dask:.2f}×")
        print(f"runs byte-identical to the in-process sweep with the same batches: {identical} of {n}")
        if args.json:
            with open(args.json, "w") as f:
                json.dump(result, f, indent=1)
        return 0 if identical == n else 1
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
