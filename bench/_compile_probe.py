"""Time the first solve of a fresh process (compile, or load from JAX's persistent cache) and print it as JSON.

    python bench/_compile_probe.py R1            # one flow, solve_flow
    python bench/_compile_probe.py R4 --flows 1024

Run by bench/run.py twice against one empty GFLOW_CACHE_DIR: the first run compiles cold, the second loads."""

from __future__ import annotations

import argparse
import json
import time

import jax

import _problems as P
import gflow


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("problem", choices=["R1", "R4"], help="R1: one flow; R4: a stacked batch of R1-size flows")
    ap.add_argument("--flows", type=int, default=1024, help="batch size for R4 (default 1024)")
    args = ap.parse_args(argv)
    started = time.perf_counter()
    if args.problem == "R1":
        p = P.r1(False, None)
        t = time.perf_counter()
        gflow.solve_flow(p.loss, p.model0, p.t1 * 1e-13, rtol=p.rtol, atol=p.atol, progress=False)
    else:
        losses, models, _ = P.stacked_flows(args.flows, list(range(16, 25)))
        t = time.perf_counter()
        gflow.solve_flows(losses, models, 1e7 * 1e-13, rtol=1e-8, save_at=8, progress=False)
    first = time.perf_counter() - t
    print(json.dumps({"first_solve_s": first, "process_s": time.perf_counter() - started,
                      "cache_dir": gflow.COMPILATION_CACHE_DIR, "device": str(jax.devices()[0])}))


if __name__ == "__main__":
    main()
