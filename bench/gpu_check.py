"""A prepared GPU check: one table of the engine's numbers on one GPU, in ≤ 10 minutes.

    cd <repo root> && PYTHONPATH=. python3 bench/gpu_check.py --json $OUT/gpu_check.json
    python bench/gpu_check.py --size smallest        # every part at its smallest size (a CPU smoke run, ~2 min)

Parts, each in a fresh subprocess under its own time budget (a part that would overrun prints what it measured and
"skipped: budget"; the table is printed and the JSON written whatever happens):

1. R6: 8 192 R1-size flows (bench/_problems.py ``stacked_flows``: R1's student, seeds differ, k 16 … 24) through
   ``solve_flows`` lock-step (one program) and with refilling slots (``slots=``, default 2 048), first call
   (compile) and warm flows/s to t1 = 1 (about 240 steps a flow) and, where the budget allows, to R1's t1 = 1e7.
2. ``GFLOW_KRYLOV=scan`` against ``doubling`` (read at import, so one subprocess each): one R1 flow's ms/step and a
   batch of R1-size flows' flows/s to t1 = 1.
3. Compile cold and cached: the first R1 solve of two fresh processes sharing one empty persistent cache (as
   bench/_compile_probe.py).
4. One flow's ms/step: R1 through ``gflow.solve_flow``, warm, to t1 = 1e7 (part 2's run under the backend's default
   Krylov schedule: doubling on a GPU, scan on a CPU).
5. GRU students (width 100, k_g 30, minibatches of 100; bench/_discrete_batch.py) trained by Adam in one
   ``gflow.discrete.run_adam_batch`` call: students/s, student-steps/s, and from them the estimated wall time of
   seed 000's prediction P15 at the paper's scale (270 students × 8 000 steps).
6. Slutzky et al.'s diagonal SSM (gflow.problems.ssm_poisoning): a sweep of their L = 9 baseline flows (d = 20,
   escape at t ≈ 1e12, t1 = 1e13), one seed each, lock-step in one ``solve_flows`` call: first call (compile and
   run), then warm flows/s; and one L = 7 flow at d = 4 000 (t1 = 1e11), first and warm: wall and ms/step.

Every row names its device (``jax.devices()[0].device_kind``) and jax version. The parent process never imports JAX
(so the GPU's memory is the worker's); the workers share one fresh compilation cache (first calls are cold compiles,
whatever ~/.cache holds), part 3 its own. Runs where gflow is not installed (``PYTHONPATH=.``) and where
``solve_flows`` has no ``slots`` ("refill: not available in this gflow").
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MARK = "@@"  # a worker's measurement line: MARK + JSON
R1_T1, RTOL, T1_SHORT = 1e7, 1e-8, 1.0
P15_STUDENTS, P15_STEPS = 270, 8000

# Sizes and time budgets (s) per part (a worker's budget includes its start: importing JAX and gflow). "full": one
# H100/H200, the budgets sum to the 10 minutes (600 s), R6's two parts sharing whatever the others leave;
# "smallest": every part at its smallest size, for a CPU smoke run. "compile" is split between its two processes.
SIZES = {
    "full": {"r6_flows": 8192, "slots": 2048, "t1_short": T1_SHORT, "krylov_batch": 256, "gru_students": P15_STUDENTS,
             "gru_steps": 100, "gru_warm": 5, "ssm_flows": 4096, "ssm_width": 4000,
             "budgets": {"r6_lock_step": 150, "r6_refill": 150, "krylov_doubling": 35, "krylov_scan": 35,
                         "compile": 40, "gru": 70, "ssm": 120}},
    "smallest": {"r6_flows": 16, "slots": 4, "t1_short": 0.05, "krylov_batch": 4, "gru_students": 2, "gru_steps": 4,
                 "gru_warm": 2, "ssm_flows": 4, "ssm_width": 50,
                 "budgets": {"r6_lock_step": 60, "r6_refill": 60, "krylov_doubling": 40, "krylov_scan": 40,
                             "compile": 60, "gru": 90, "ssm": 90}},
}
R1_STEPS_GUESS = 5600  # R1-size flows to t1 = 1e7 take ≈ 5 100 steps (max ≈ 5 600; bench/results/*r4*.json):
#                        used only to decide whether a full-length run fits the budget, never printed as a result


# --------------------------------------------------------------------------------------------------
# workers (one part each, in a fresh process)
# --------------------------------------------------------------------------------------------------
class Emitter:
    """Prints a worker's measurements as MARK + JSON lines, each with the device kind and the jax version."""

    def __init__(self, part: str):
        import jax

        self.part, self.device, self.jax = part, jax.devices()[0].device_kind, jax.__version__
        self.platform = jax.default_backend()
        self.started = time.perf_counter()

    def __call__(self, what: str, value, unit: str = "", note: str = "", **fields):
        print(MARK + json.dumps({"part": self.part, "what": what, "value": value, "unit": unit, "note": note,
                                 "device": self.device, "platform": self.platform, "jax": self.jax, **fields}),
              flush=True)

    def elapsed(self) -> float:
        return time.perf_counter() - self.started


def _timed(f):
    start = time.perf_counter()
    out = f()
    return out, time.perf_counter() - start


def _fits(emit, budget: float, estimate: float) -> bool:
    """Whether a run estimated at ``estimate`` s fits in what is left of the worker's ``budget`` (with a margin)."""
    return emit.elapsed() + 1.3 * estimate + 3.0 < budget


def work_r6(args, emit):
    """Part 1: R6 lock-step (args.slots == 0) or with refilling slots."""
    import inspect

    import jax

    import _problems as P
    import gflow

    refill = args.slots > 0
    if refill and "slots" not in inspect.signature(gflow.solve_flows).parameters:
        emit("refill", "not available in this gflow", note="solve_flows has no `slots`")
        return
    way = f"refill {args.slots} slots" if refill else "lock-step"
    (losses, models, _), build_s = _timed(lambda: jax.block_until_ready(P.stacked_flows(args.flows,
                                                                                         list(range(16, 25)))))
    emit(f"{args.flows} flows built (stacked_flows)", build_s, "s")
    kw = dict(rtol=RTOL, save_at=8, progress=False, **({"slots": args.slots} if refill else {}))
    _, first = _timed(lambda: gflow.solve_flows(losses, models, R1_T1 * 1e-13, **kw))
    emit(f"{way}: first call (compile)", first, "s")
    short = None
    for t1 in (args.t1_short, R1_T1):
        if short is not None:
            estimate = short[0] * R1_STEPS_GUESS / max(1.0, float(short[1].mean()))
            if not _fits(emit, args.budget, estimate):
                emit(f"{way}, t1 {t1:g}", "skipped: budget", note=f"≈ {estimate:.0f} s by the t1 {args.t1_short:g} run")
                return
        batch, wall = _timed(lambda t1=t1: gflow.solve_flows(losses, models, t1, **kw))
        steps = batch.steps
        label = f"{way}, t1 {t1:g} (steps mean {steps.mean():.0f}, max {steps.max()})"
        emit(f"{label}: wall", wall, "s")
        emit(f"{label}: flows/s", args.flows / wall, "flows/s")
        emit(f"{label}: flow-steps/s", float(steps.sum()) / wall, "steps/s", key="r6_flow_steps", way=way, t1=t1)
        if refill:  # the time of one step of every slot, were the slots always full
            emit(f"{label}: ms per round of the slots (wall × slots / Σ steps)",
                 1e3 * wall * args.slots / float(steps.sum()), "ms")
        else:
            emit(f"{label}: ms per lock-step", 1e3 * wall / float(steps.max()), "ms")
        statuses = sorted(set(batch.statuses))
        if statuses != ["completed"]:
            emit(f"{label}: statuses", ", ".join(statuses))
        short = (wall, steps)


def work_krylov(args, emit):
    """Parts 2 and 4: one R1 flow's ms/step and a batch's flows/s under this process's GFLOW_KRYLOV."""
    import _problems as P
    import gflow

    way = f"GFLOW_KRYLOV={os.environ.get('GFLOW_KRYLOV', 'auto')}"
    p = P.r1(False, None)
    opts = dict(rtol=p.rtol, atol=p.atol, save_at=8, progress=False)
    _, first = _timed(lambda: gflow.solve_flow(p.loss, p.model0, p.t1 * 1e-13, **opts))
    emit(f"{way}: R1 one flow, first call (compile)", first, "s")
    per_step = None
    for t1 in (args.t1_short, p.t1):
        if per_step is not None and not _fits(emit, args.budget, per_step * R1_STEPS_GUESS):
            emit(f"{way}: R1 one flow, t1 {t1:g}", "skipped: budget")
            break
        traj, wall = _timed(lambda t1=t1: gflow.solve_flow(p.loss, p.model0, t1, **opts))
        steps = traj.stats["steps"]
        per_step = wall / steps
        emit(f"{way}: R1 one flow, t1 {t1:g} ({steps} steps, {traj.status}): ms/step", 1e3 * per_step, "ms")
        if t1 == p.t1:
            emit(f"{way}: R1 one flow, t1 {t1:g}: steps", steps, key="r1_steps")
    if not _fits(emit, args.budget, 0.35 * args.budget):  # a batch's compile is not known in advance
        emit(f"{way}: {args.batch} flows", "skipped: budget")
        return
    losses, models, _ = P.stacked_flows(args.batch, list(range(16, 25)))
    kw = dict(rtol=RTOL, save_at=8, progress=False)
    _, first = _timed(lambda: gflow.solve_flows(losses, models, R1_T1 * 1e-13, **kw))
    emit(f"{way}: {args.batch} flows, first call (compile)", first, "s")
    batch, wall = _timed(lambda: gflow.solve_flows(losses, models, args.t1_short, **kw))
    label = f"{way}: {args.batch} flows, t1 {args.t1_short:g} (steps max {batch.steps.max()})"
    emit(f"{label}: flows/s", args.batch / wall, "flows/s")
    emit(f"{label}: ms per lock-step", 1e3 * wall / float(batch.steps.max()), "ms")


def work_compile(args, emit):
    """Part 3: the first R1 solve of this fresh process (compile, or load from the cache in GFLOW_CACHE_DIR)."""
    import _problems as P
    import gflow

    p = P.r1(False, None)
    _, first = _timed(lambda: gflow.solve_flow(p.loss, p.model0, p.t1 * 1e-13, rtol=p.rtol, atol=p.atol,
                                               progress=False))
    emit(f"R1 first solve, {args.label}", first, "s", note=f"process {emit.elapsed():.1f} s")


def work_gru(args, emit):
    """Part 5: GRU students trained by Adam in one batched call, warm."""
    import jax
    import numpy as np

    import _discrete_batch as DB
    import gflow

    n, steps = args.students, args.steps
    train, students = DB._gru_students(n, 100, 30, 1000)
    keys = jax.random.split(jax.random.key(3000), n)
    opts = dict(lr=1e-3, batch_size=100, save_at=np.array([0]), progress=False)
    _, first = _timed(lambda: gflow.discrete.run_adam_batch(train, students, steps=args.warm, key=keys, **opts))
    emit(f"{n} GRU students, first call ({args.warm} steps, compile)", first, "s")
    batch, wall = _timed(lambda: gflow.discrete.run_adam_batch(train, students, steps=steps, key=keys, **opts))
    taken = float(np.sum(batch.steps))
    label = f"{n} GRU students × {steps} Adam steps"
    emit(f"{label}: wall", wall, "s")
    emit(f"{label}: students/s", n / wall, "students/s")
    emit(f"{label}: student-steps/s", taken / wall, "steps/s")
    emit(f"P15 ({P15_STUDENTS} students × {P15_STEPS} steps) at this rate, est.",
         P15_STUDENTS * P15_STEPS / (taken / wall) / 3600, "h", note=f"from {label}")


def _ssm_flow(L: int, seed: int, d: int | None = None):
    """(loss, model0) of Slutzky et al.'s baseline design at length L, as gflow.problems.ssm_poisoning sets it up (their
    A0 recipe), at the study's width or at ``d``."""
    from gflow.problems import ssm_poisoning as sp

    setting = sp.SETTINGS[L] if d is None else sp.SETTINGS[L]._replace(d=d)
    return sp.loss_of(L, "baseline", sp.teacher_of(setting.d)), sp.student(sp.initial_a(setting, seed))


def work_ssm(args, emit):
    """Part 6: a sweep of the diagonal SSM's L = 9 flows in one batched call, and one wide (d = args.batch) flow."""

    import gflow

    n = args.flows
    loss = _ssm_flow(9, 342)[0]
    losses, models = [loss] * n, [_ssm_flow(9, 342 + i)[1] for i in range(n)]
    kw = dict(rtol=RTOL, save_at=8, progress=False)
    _, first = _timed(lambda: gflow.solve_flows(losses, models, 1e13, **kw))  # compiles the time-restart path too
    emit(f"SSM L = 9: {n} flows, first call to t1 1e13 (compile + run)", first, "s")
    batch, wall = _timed(lambda: gflow.solve_flows(losses, models, 1e13, **kw))
    label = f"SSM L = 9, d = 20: {n} flows to t1 1e13 (steps mean {batch.steps.mean():.0f}, max {batch.steps.max()})"
    emit(f"{label}: wall", wall, "s")
    emit(f"{label}: flows/s", n / wall, "flows/s")
    statuses = sorted(set(batch.statuses))
    if statuses != ["completed"]:
        emit(f"{label}: statuses", ", ".join(statuses))
    loss, model0 = _ssm_flow(7, 242, args.batch)
    _, first = _timed(lambda: gflow.solve_flow(loss, model0, 1e11, **kw))
    emit(f"SSM L = 7, d = {args.batch}: first call to t1 1e11 (compile + run)", first, "s")
    traj, wall = _timed(lambda: gflow.solve_flow(loss, model0, 1e11, **kw))
    steps = traj.stats["steps"]
    emit(f"SSM L = 7, d = {args.batch}, one flow to t1 1e11 ({steps} steps, {traj.status}): wall", wall, "s")
    emit(f"SSM L = 7, d = {args.batch}: ms/step", 1e3 * wall / steps, "ms")


WORKERS = {"r6": work_r6, "krylov": work_krylov, "compile": work_compile, "gru": work_gru, "ssm": work_ssm}


# --------------------------------------------------------------------------------------------------
# the parent: runs the parts under their budgets, prints the table, writes the JSON
# --------------------------------------------------------------------------------------------------
def log(msg=""):
    print(msg, flush=True)


def run_part(name: str, part: str, worker_args: list[str], budget: float, env: dict) -> dict:
    """Run one worker under ``budget`` seconds; its measurements, and its status ("ok", "skipped: budget", "failed")."""
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", worker_args[0], "--part", part,
           "--budget", f"{budget:.1f}", *worker_args[1:]]
    log(f"\n--- {name}: budget {budget:.0f} s")
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1, env=env,
                            start_new_session=True)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout] + [lines.put(None)], daemon=True).start()
    records, tail, status = [], [], "ok"
    while True:
        left = budget - (time.perf_counter() - start)
        try:
            line = lines.get(timeout=max(0.01, left))
        except queue.Empty:
            os.killpg(proc.pid, signal.SIGKILL)  # this worker's own process group (start_new_session)
            proc.wait()
            status = "skipped: budget"
            log(f"  {name}: skipped: budget (stopped after {time.perf_counter() - start:.0f} s)")
            break
        if line is None:
            proc.wait()
            break
        line = line.rstrip("\n")
        if line.startswith(MARK):
            rec = json.loads(line[len(MARK):])
            records.append(rec)
            log(f"  {rec['what']}: {_fmt(rec['value'])} {rec['unit']}  [{rec['device']}, jax {rec['jax']}]")
        else:
            tail = (tail + [line])[-30:]
            log(f"  | {line}")
    wall = time.perf_counter() - start
    if status == "ok" and proc.returncode != 0:
        status = f"failed (exit {proc.returncode})"
        log(f"  {name}: {status}; last output:\n" + "\n".join("    " + x for x in tail[-10:]))
    return {"name": name, "part": part, "budget_s": budget, "wall_s": wall, "status": status, "records": records,
            **({"output_tail": tail} if status != "ok" else {})}


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def derived(parts: list[dict]) -> list[dict]:
    """Rows computed from two measurements of this run, labelled est.: where R6 did not run to t1 = 1e7, its flows/s
    there from the flow-steps/s of the t1 = 1 run and R1's steps to t1 = 1e7 (part 2; a lock-step batch pays for
    its slowest flow, so its estimate is an upper bound)."""
    recs = [r for p in parts for r in p["records"]]
    steps = [r["value"] for r in recs if r.get("key") == "r1_steps"]
    if not steps:
        return []
    measured = {r["way"] for r in recs if r.get("key") == "r6_flow_steps" and r["t1"] == R1_T1}
    return [{**r, "what": f"{r['way']}: flows/s to t1 {R1_T1:g}, est.", "value": r["value"] / steps[0],
             "unit": "flows/s", "note": f"flow-steps/s at t1 {r['t1']:g} ÷ R1's {steps[0]} steps (part 2)"}
            for r in recs if r.get("key") == "r6_flow_steps" and r["t1"] != R1_T1 and r["way"] not in measured]


def print_table(parts: list[dict], extra: list[dict]):
    rows = [(p["part"], r["what"], _fmt(r["value"]), r["unit"], r["device"], r["jax"]) for p in parts
            for r in p["records"]] + [(r["part"], r["what"], _fmt(r["value"]), r["unit"], r["device"], r["jax"])
                                      for r in extra]
    rows += [(p["part"], f"{p['name']}: {p['status']}", "", "", "", "") for p in parts if p["status"] != "ok"]
    rows.sort(key=lambda r: r[0][:1])
    widths = [max(len(str(r[i])) for r in rows + [("part", "measurement", "value", "unit", "device", "jax")])
              for i in range(6)]
    header = ("part", "measurement", "value", "unit", "device", "jax")
    log("\n=== gpu_check: one table")
    log("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    log("  ".join("-" * w for w in widths))
    for r in rows:
        log("  ".join(str(c).rjust(w) if i == 2 else str(c).ljust(w) for i, (c, w) in enumerate(zip(r, widths))))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", choices=sorted(SIZES), default="full",
                    help="full (default: one GPU, ≤ 10 min) or smallest (every part at its smallest size: a CPU smoke "
                         "run)")
    ap.add_argument("--cpu-smoke", action="store_true", help="the same as --size smallest")
    ap.add_argument("--json", metavar="PATH", default=None,
                    help="write the table here (default $OUT/gpu_check.json when OUT is set)")
    ap.add_argument("--slots", type=int, default=None, help="refilling slots of part 1 (default 2048; smallest 4)")
    ap.add_argument("--total-budget", type=float, default=None,
                    help="seconds for all parts together (default: the sum of the parts' budgets, 600 s full)")
    ap.add_argument("--parts", nargs="+", choices=["r6", "krylov", "compile", "gru", "ssm"], default=None,
                    help="run only these parts (default: all)")
    # worker mode (internal)
    ap.add_argument("--worker", choices=sorted(WORKERS), help=argparse.SUPPRESS)
    ap.add_argument("--part", help=argparse.SUPPRESS)
    ap.add_argument("--budget", type=float, help=argparse.SUPPRESS)
    ap.add_argument("--flows", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--batch", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--t1-short", type=float, help=argparse.SUPPRESS)
    ap.add_argument("--students", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--steps", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--warm", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--label", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        import gflow  # noqa: F401  (first: it configures JAX, x64 and the compilation cache, before any use)

        return WORKERS[args.worker](args, Emitter(args.part))

    size = "smallest" if args.cpu_smoke else args.size
    cfg = SIZES[size]
    slots = args.slots or cfg["slots"]
    budgets = cfg["budgets"]
    total = args.total_budget or sum(budgets.values())
    json_path = args.json or (os.path.join(os.environ["OUT"], "gpu_check.json") if os.environ.get("OUT") else None)
    started = time.perf_counter()
    log(f"gpu_check: size {size}, total budget {total:.0f} s, python {sys.version.split()[0]}, "
        f"JAX_PLATFORMS={os.environ.get('JAX_PLATFORMS', '')!r}, GFLOW_KRYLOV={os.environ.get('GFLOW_KRYLOV', '')!r}")
    wanted = args.parts or ["r6", "krylov", "compile", "gru", "ssm"]
    env = dict(os.environ, PYTHONUNBUFFERED="1", GFLOW_COMPILATION_CACHE="1")
    env.pop("GFLOW_KRYLOV", None)
    root = os.path.dirname(HERE)  # gflow importable without installing it (PYTHONPATH=. from the repository root)
    env["PYTHONPATH"] = os.pathsep.join([root] + [x for x in os.environ.get("PYTHONPATH", "").split(os.pathsep) if x])
    short = ["--t1-short", str(cfg["t1_short"])]
    # (table part, budget key, name, worker arguments, environment): the parts with fixed budgets first, R6's two
    # batches last, sharing what is left (their compiles are the least predictable)
    plan = []
    if "compile" in wanted:
        plan += [("3 compile", "compile", f"compile {label}", ["compile", "--label", label], {"cache": "probe"})
                 for label in ("cold", "cached")]
    if "krylov" in wanted:
        plan += [("2 Krylov, 4 one flow", f"krylov_{m}", f"GFLOW_KRYLOV={m}",
                  ["krylov", "--batch", str(cfg["krylov_batch"]), *short], {"GFLOW_KRYLOV": m})
                 for m in ("doubling", "scan")]
    if "gru" in wanted:
        plan.append(("5 GRU Adam", "gru", f"{cfg['gru_students']} GRU students",
                     ["gru", "--students", str(cfg["gru_students"]), "--steps", str(cfg["gru_steps"]),
                      "--warm", str(cfg["gru_warm"])], {}))
    if "ssm" in wanted:
        plan.append(("6 SSM", "ssm", f"diagonal SSM, {cfg['ssm_flows']} flows",
                     ["ssm", "--flows", str(cfg["ssm_flows"]), "--batch", str(cfg["ssm_width"])], {}))
    if "r6" in wanted:
        plan += [("1 R6", "r6_lock_step", f"R6 lock-step, {cfg['r6_flows']} flows",
                  ["r6", "--flows", str(cfg["r6_flows"]), "--slots", "0", *short], {}),
                 ("1 R6", "r6_refill", f"R6 refill, {cfg['r6_flows']} flows, {slots} slots",
                  ["r6", "--flows", str(cfg["r6_flows"]), "--slots", str(slots), *short], {})]
    parts = []
    with tempfile.TemporaryDirectory() as shared_cache, tempfile.TemporaryDirectory() as probe_cache:
        for i, (part, key, name, wargs, extra_env) in enumerate(plan):
            left = total - (time.perf_counter() - started)
            later = [k for _, k, *_ in plan[i + 1:]]
            budget = budgets[key] / (2 if key == "compile" else 1)
            if key.startswith("r6"):  # R6's batches share what the other parts left
                budget = left / (1 + sum(k.startswith("r6") for k in later))
            if left < 5:
                parts.append({"name": name, "part": part, "budget_s": 0, "wall_s": 0, "status": "skipped: budget",
                              "records": []})
                log(f"\n--- {name}: skipped: budget (the total is spent)")
                continue
            cache = probe_cache if extra_env.pop("cache", None) == "probe" else shared_cache
            parts.append(run_part(name, part, wargs, min(budget, left), {**env, "GFLOW_CACHE_DIR": cache, **extra_env}))
    extra = derived(parts)
    print_table(parts, extra)
    wall = time.perf_counter() - started
    log(f"\ntotal wall time: {wall:.1f} s")
    if json_path:
        doc = {"size": size, "slots": slots, "config": {k: v for k, v in cfg.items()}, "total_budget_s": total,
               "total_wall_s": wall, "python": sys.version.split()[0], "argv": sys.argv[1:], "parts": parts,
               "derived": extra}
        os.makedirs(os.path.dirname(os.path.abspath(json_path)), exist_ok=True)
        with open(json_path + ".tmp", "w") as f:
            json.dump(doc, f, indent=2)
        os.replace(json_path + ".tmp", json_path)
        log(f"wrote {json_path}")


if __name__ == "__main__":
    main()
