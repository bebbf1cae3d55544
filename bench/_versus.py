"""gflow side by side with the integrators a researcher would otherwise use, in one run: ``python bench/run.py
--versus``.

Problems (``--versus-problems``; default ``ssm10 ssm100 ssm1000 R1 batch``):

- ``ssm<d>``: Slutzky et al.'s diagonal-SSM flow, baseline design (L = 7, lag weights {6: 1}, t1 = 1e11, seed 242;
  bench/_ssm.py), d parameters. scipy integrates the O(d) numpy right-hand side ``_ssm.Field`` with its analytic dense
  Jacobian; gflow and diffrax the same flow built through gflow's API (``_ssm.gflow_problem``).
- ``R1``: the reference problem R1 of docs/design.md (1 680 parameters; bench/_problems.py). scipy integrates −∇L
  with the JAX Hessian as Jacobian (``_baselines.FlatField``).
- ``batch``: ``--versus-flows`` (default 64) flows of R1's size (student seeds differ, k cycles through 16..24 padded
  to 24; ``_problems.stacked_flows``, as R4). gflow integrates them in one ``gflow.solve_flows`` call; every baseline
  runs them one after another (scipy with each flow's JAX Hessian, compiled outside the timed region; Kvaerno5 through
  one compiled ``gflow.solve_flow`` program) until its cap, and reports how many flows it finished.

Methods: gflow's default call (``gflow.solve_flow(loss, model0, t1)``: rtol 1e-8, its default atol, solver "auto";
``save_at=[0, t1]``), scipy ``odeint`` (LSODA), scipy ``solve_ivp`` BDF and Radau, and diffrax Kvaerno5 (through
``gflow.solve_flow(solver=...)``, which adds gflow's descent guard; the Newton solve of its stages uses a dense n × n
Jacobian and LU). Every scipy method gets the exact Jacobian (``Dfun``/``jac``); odeint is called on their output grid
linspace(0, t1, 1000) without a step limit (as bench/_ssm.py).

Each baseline runs at two settings:

- "matched": the loosest tolerance of the ladder ``LADDER`` (rtol 1e-6, 1e-8, 1e-10, 1e-12, atol = rtol × gflow's
  own atol/rtol ratio min(1, RMS θ0)) whose final-parameter error is at most gflow's (errors below ``ACCURACY_FLOOR``
  count as equal). Rungs are tried loosest first; once one exceeds the cap the tighter ones are not run. On the batch
  the tolerance matched on R1 (the same size of flow) is used when R1 ran, else the ladder runs on the batch's flow 0.
- "defaults": the method's own default tolerance (odeint rtol = atol = 1.49012e-8; solve_ivp rtol 1e-3, atol 1e-6;
  Kvaerno5 through gflow.solve_flow: gflow's defaults). Not run when a looser ladder rung already exceeded the cap.

Reported per (problem, method, setting): warm wall time (gflow and Kvaerno5 after a first, compiling call; every
completed run under 10 s is repeated, best of up to 6, ``extra_runs``), steps and right-hand-side / Jacobian / LU
counts where the method reports them, the error max|θ − θ_ref| / max|θ_ref| of the final parameters against a
reference (gflow Rodas5P at ``--versus-ref-rtol``, default 1e-12, its default atol), and the ratio baseline wall /
gflow wall ("> x" when the baseline was stopped at ``--versus-cap`` seconds). A Kvaerno5 run checks the wall clock
every 20 steps (every step above 1 000 parameters) through a host callback; its timed runs are those runs (its
fresh-process probe runs ``solver="kvaerno5"``, without the check, which a persistent cache cannot hold).

The first call in a fresh process (``--versus-probe-limit``): for every setting whose warm run took at most that many
seconds, two fresh processes (``python bench/_versus.py --probe SPEC``) run the same solve once and exit, each timed
by this process from spawn to exit: the first with an empty persistent compilation cache (a new GFLOW_CACHE_DIR), the
second from the cache the first filled ("first call", the number compared). For scipy on the SSM flow the process
imports numpy, scipy and the numpy right-hand side only (no JAX); on R1 it imports gflow for the JAX Hessian. Not
measured for the batch.

Errors: of θ (the matching criterion) and of the observable h (the impulse response h_0..h_19 of the SSM flow,
h_0..h_99 of R1's model), each max |· − ·_ref| / max |·_ref|. The batch's errors are the largest over its first
``--versus-ref-flows`` flows, each with its own reference. Some of these flows pass saddles on the way, where the final
θ depends sharply on the path: on flow 0 (k = 16) gflow at rtol 1e-8, ROS34PW2 at 1e-10 and Rodas5P at 1e-10 end
1e-2 apart in θ (at L ≈ 4.5e-13); h is the better-conditioned reading there.

``--quick`` (a smoke run, minutes on 2 cores): ssm10, ssm100, R1 and a batch of 2 flows without references, cap 2 s,
references at rtol 1e-10, Kvaerno5 and the fresh-process probes (gflow and odeint only) on ssm10 only.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import _ssm as S

LADDER = (1e-6, 1e-8, 1e-10, 1e-12)
DEFAULT_RTOL = 1e-8  # gflow's (gflow.flow.DEFAULT_RTOL; not imported here, so that a scipy probe imports no JAX)
ACCURACY_FLOOR = 1e-10  # final-parameter errors below this count as equal (the reference's own error is below it)
BASELINES = ("lsoda", "bdf", "radau", "kvaerno5")
LABELS = {"gflow": "gflow default", "lsoda": "scipy odeint (LSODA)", "bdf": "scipy solve_ivp BDF",
          "radau": "scipy solve_ivp Radau", "kvaerno5": "diffrax Kvaerno5"}
SHORT = {"lsoda": "LSODA", "bdf": "BDF", "radau": "Radau", "kvaerno5": "Kvaerno5"}
# (rtol, atol) of each method's default call; None: gflow's defaults (rtol 1e-8, atol rtol × min(1, RMS θ0))
DEFAULT_TOLS = {"lsoda": (S.ODEINT_DEFAULT_TOL, S.ODEINT_DEFAULT_TOL), "bdf": (1e-3, 1e-6), "radau": (1e-3, 1e-6),
                "kvaerno5": None}
DEFAULT_PROBLEMS = ("ssm10", "ssm100", "ssm1000", "R1", "batch")
QUICK_PROBLEMS = ("ssm10", "ssm100", "R1", "batch")
BATCH_K = tuple(range(16, 25))


def _now() -> float:
    return time.perf_counter()


# --------------------------------------------------------------------------------------------------
# pure helpers (tests/test_bench_versus.py)
# --------------------------------------------------------------------------------------------------
def matches(err, target, floor: float = ACCURACY_FLOOR) -> bool:
    """Whether an error ``err`` is at least as small as ``target`` (both below ``floor`` count as equal)."""
    if err is None or target is None or not math.isfinite(err):
        return False
    return err <= max(target, floor)


def pick_matched(ladder_rows: list[dict], target: float, floor: float = ACCURACY_FLOOR):
    """The first (loosest) completed rung whose error matches ``target``; None if none does."""
    return next((r for r in ladder_rows if r["status"] == "completed" and matches(r.get("error"), target, floor)), None)


def ratio(row: dict | None, gflow_wall: float | None) -> dict | None:
    """wall(row) / gflow's wall: {"value", "lower_bound"} (a lower bound when the row was stopped at the cap)."""
    if row is None or gflow_wall is None or row.get("wall_s") is None or row.get("status") not in ("completed", "cap"):
        return None
    return {"value": row["wall_s"] / gflow_wall, "lower_bound": row["status"] == "cap"}


def fmt_ratio(r: dict | None) -> str:
    if r is None:
        return "—"
    return (">" if r["lower_bound"] else "") + f"{r['value']:.3g}×"


def tighter_or_equal(tol: tuple, than: tuple) -> bool:
    """(rtol, atol) at least as tight as ``than`` in both entries."""
    return tol[0] <= than[0] and tol[1] <= than[1]


def ssm_dim(name: str) -> int | None:
    """d of a problem name ``ssm<d>``; None for another name."""
    return int(name[3:]) if name.startswith("ssm") and name[3:].isdigit() else None


def check_problem_names(names) -> list[str]:
    for n in names:
        if n not in ("R1", "batch") and not (ssm_dim(n) or 0) >= 2:
            raise argparse.ArgumentTypeError(f"unknown --versus-problems entry {n!r}: ssm<d> (d ≥ 2), R1 or batch")
    return list(names)


def rel_err(theta, ref) -> float | None:
    """max |θ − θ_ref| / max |θ_ref|; None when θ is missing or not finite."""
    if theta is None:
        return None
    theta = np.asarray(theta, dtype=np.float64)
    if not np.all(np.isfinite(theta)):
        return None
    ref = np.asarray(ref, dtype=np.float64)
    return float(np.max(np.abs(theta - ref)) / np.max(np.abs(ref)))


# --------------------------------------------------------------------------------------------------
# problems
# --------------------------------------------------------------------------------------------------
class JaxField(S.Field):
    """``_ssm.Field``'s interface (rhs(y, t), jac(y, t), evaluation counts, the cap) on −∇L and −∇²L from JAX
    (a ``_baselines.FlatField``): scipy's view of a gflow problem."""

    def __init__(self, flat):  # noqa: D107 (no Field.__init__: there are no lag weights)
        self.flat = flat
        self.d = int(np.size(flat.theta0))
        self.deadline = math.inf
        self.nfev = self.njev = 0
        self.t_reached = 0.0

    def rhs(self, a, t):
        self._tick(t)
        self.nfev += 1
        return np.asarray(self.flat.neg_grad(a))

    def jac(self, a, t):
        self._tick(t)
        self.njev += 1
        return np.asarray(self.flat.neg_hess(a))

    def loss(self, a) -> float:
        return float(self.flat.loss_value(a))


class Case:
    """One flow: gflow's (loss, model0, t1), scipy's start y0 and a fresh right-hand side per run."""

    def __init__(self, name, description, loss, model0, t1, y0, make_field, atol_factor, response=None):
        self.name, self.description, self.loss, self.model0, self.t1 = name, description, loss, model0, t1
        self.y0, self.make_field, self.atol_factor = np.asarray(y0, dtype=np.float64), make_field, atol_factor
        self.response = response  # θ → the observable h whose error is reported beside θ's

    @property
    def n_params(self) -> int:
        return int(self.y0.size)


def ssm_case(d: int) -> Case:
    lag_weights, t1 = S.DESIGNS["baseline"]
    loss, model0, _ = S.gflow_problem(d, "baseline")
    return Case(f"ssm{d}", f"Slutzky et al. diagonal SSM, baseline design (L = {S.LENGTH}, lag weights "
                           f"{lag_weights}, seed {S.SEED}), d = {d}, t1 = {t1:g}",
                loss, model0, t1, S.initial_a(d), lambda: S.Field(d, lag_weights), S.gflow_atol_factor(model0),
                S.impulse)


def jax_case(name: str, description: str, loss, model0, t1: float) -> Case:
    import _baselines as B
    import _problems as P

    flat = B.FlatField(loss, model0)
    return Case(name, description, loss, model0, t1, np.asarray(flat.theta0), lambda: JaxField(flat),
                P.atol_factor_for(model0), lambda theta: P.impulse(P.rebuild(model0, theta), 100))


def r1_case() -> Case:
    import _problems as P

    p = P.r1(False, None)
    return jax_case("R1", p.description, p.loss, p.model0, p.t1)


def make_case(name: str) -> Case:
    d = ssm_dim(name)
    return ssm_case(d) if d is not None else r1_case()


def final_theta(traj) -> np.ndarray:
    import gflow

    return np.asarray(gflow.flatten(traj.final)[0])


# --------------------------------------------------------------------------------------------------
# runs: each returns a row {"status": completed | cap | failed, "wall_s", counts, "theta"}
# --------------------------------------------------------------------------------------------------
def scipy_run(method: str, case: Case, rtol: float, atol: float, cap_s: float) -> dict:
    """scipy ``odeint`` (method "lsoda") or ``solve_ivp`` ("bdf", "radau") from y0 to t1 with the exact Jacobian,
    stopped at ``cap_s`` seconds (the right-hand side raises ``_ssm.OutOfTime``)."""
    from scipy.integrate import odeint, solve_ivp

    field = case.make_field()
    field.deadline = _now() + cap_s
    start = _now()
    try:
        if method == "lsoda":
            ys, info = odeint(field.rhs, case.y0, np.linspace(0.0, case.t1, S.ODEINT_GRID), Dfun=field.jac,
                              rtol=rtol, atol=atol, mxstep=S.ODEINT_MXSTEP, full_output=True)
            wall = _now() - start
            ok = info["message"].startswith("Integration successful")
            row = {"steps": int(info["nst"][-1]), "rhs_evaluations": int(info["nfe"][-1]),
                   "jacobians": int(info["nje"][-1]), "lu_decompositions": None, "theta": ys[-1],
                   "message": info["message"]}
        else:
            sol = solve_ivp(lambda t, y: field.rhs(y, t), (0.0, case.t1), case.y0, method={"bdf": "BDF", "radau": "Radau"}[method],
                            jac=lambda t, y: field.jac(y, t), rtol=rtol, atol=atol)
            wall = _now() - start
            ok = sol.status == 0
            row = {"steps": int(sol.t.size - 1), "rhs_evaluations": int(sol.nfev), "jacobians": int(sol.njev),
                   "lu_decompositions": int(sol.nlu), "theta": sol.y[:, -1], "message": sol.message}
    except S.OutOfTime:
        return {"status": "cap", "wall_s": _now() - start, "t_reached": field.t_reached, "steps": None,
                "rhs_evaluations": field.nfev, "jacobians": field.njev, "lu_decompositions": None, "theta": None}
    row.update(status="completed" if ok else "failed", wall_s=wall, t_reached=case.t1 if ok else field.t_reached)
    if not ok:
        row["theta"] = None
    return row


def gflow_call(case: Case, rtol=None, solver="auto", t1=None) -> tuple:
    """One ``gflow.solve_flow`` call saving at [0, t1] only: (trajectory, wall)."""
    import gflow

    t1 = case.t1 if t1 is None else t1
    start = _now()
    traj = gflow.solve_flow(case.loss, case.model0, t1, rtol=rtol, solver=solver, save_at=np.array([0.0, t1]),
                            progress=False)
    return traj, _now() - start


def traj_row(traj, wall: float) -> dict:
    st = traj.stats
    return {"status": traj.status, "wall_s": wall, "t_reached": float(traj.ts[-1]), "steps": int(st["steps"]),
            "rejected_steps": int(st["rejected_steps"]), "rhs_evaluations": st.get("gradient_evaluations"),
            "linear_solves": st.get("linear_solves"), "jacobians": None, "lu_decompositions": None,
            "solver": traj.config.get("solver"), "rtol": float(traj.config["rtol"]),
            "atol": float(traj.config["atol"]), "theta": final_theta(traj), "message": traj.message or ""}


class Kvaerno5Runner:
    """diffrax Kvaerno5 through ``gflow.solve_flow`` with a wall-clock stop (``_baselines.timed_solver``), one
    compiled program for every tolerance and every flow of the same structure (rtol, atol and t1 are traced)."""

    def __init__(self, n_params: int):
        import diffrax

        import _baselines as B

        self.clock = B.WallClock()
        self.every = 20 if n_params <= 1000 else 1
        self.solver = B.timed_solver(diffrax.Kvaerno5, self.clock, self.every)
        self.compiled = False
        self.compile_s = 0.0

    def run(self, case: Case, rtol, cap_s: float) -> dict:
        if not self.compiled:  # the first call compiles: a tiny t1, not timed
            self.clock.hit, self.clock.deadline = False, _now() + max(cap_s, 600.0)
            self.compile_s = gflow_call(case, rtol, self.solver, t1=case.t1 * 1e-13)[1]
            self.compiled = True
        self.clock.hit, self.clock.deadline = False, _now() + cap_s
        traj, wall = gflow_call(case, rtol, self.solver)
        row = traj_row(traj, wall)
        if self.clock.hit:
            row.update(status="cap", theta=None)
        elif row["status"] != "completed":
            row.update(status="failed", theta=None)
        return row


def extra_runs(wall: float) -> int:
    """Timed calls after a completed one of ``wall`` seconds: ``_ssm._repeats`` (more for short runs, a shared
    machine's noise), none above 10 s."""
    return 0 if wall > 10.0 else S._repeats(wall)


def best_of(run, first: dict | None = None) -> dict:
    """``run()`` (or ``first``, a run already made); if it completed, ``extra_runs`` more: the fastest completed run,
    with every wall in ``walls_s``."""
    best = run() if first is None else first
    walls = [best["wall_s"]]
    if best["status"] == "completed":
        for _ in range(extra_runs(best["wall_s"])):
            again = run()
            if again["status"] == "completed":
                walls.append(again["wall_s"])
                if again["wall_s"] < best["wall_s"]:
                    best = again
    return dict(best, walls_s=walls)


def baseline_call(method: str, case: Case, tol, cap_s: float, kv5: Kvaerno5Runner | None) -> dict:
    """One run of a baseline at ``tol`` ((rtol, atol); None: gflow's defaults, Kvaerno5 only)."""
    if method == "kvaerno5":
        return kv5.run(case, None if tol is None else tol[0], cap_s)
    return scipy_run(method, case, tol[0], tol[1], cap_s)


def ladder_tol(rtol: float, atol_factor: float) -> tuple[float, float]:
    return rtol, rtol * atol_factor


# --------------------------------------------------------------------------------------------------
# the first call in a fresh process
# --------------------------------------------------------------------------------------------------
def _probe(spec: dict) -> dict:
    """Runs in a fresh process: import what the method needs, build the problem, one solve; timings inside."""
    t0 = _now()
    name, method = spec["problem"], spec["method"]
    if method in ("lsoda", "bdf", "radau") and ssm_dim(name) is not None:
        import scipy.integrate  # noqa: F401

        d = ssm_dim(name)
        lag_weights, t1 = S.DESIGNS["baseline"]
        case = Case(name, "", None, None, t1, S.initial_a(d), lambda: S.Field(d, lag_weights), None)
    else:
        import gflow  # noqa: F401

        case = make_case(name)
    built = _now()
    if method == "gflow":
        r = traj_row(*gflow_call(case, spec["rtol"]))
    elif method == "kvaerno5":
        r = traj_row(*gflow_call(case, spec["rtol"], "kvaerno5"))
    else:
        r = scipy_run(method, case, spec["rtol"], spec["atol"], spec["cap_s"])
    return {"import_and_build_s": built - t0, "solve_s": r["wall_s"], "status": r["status"], "steps": r["steps"]}


def fresh_process(spec: dict, timeout_s: float) -> dict:
    """Two fresh processes running ``spec`` against one new, empty persistent compilation cache: "empty_cache", then
    "cached"; each timed from spawn to exit (``process_s``)."""
    cmd = [sys.executable, os.path.abspath(__file__), "--probe", json.dumps(spec)]
    out = {}
    with tempfile.TemporaryDirectory(prefix="gflow_versus_cache_") as cache:
        env = dict(os.environ, GFLOW_CACHE_DIR=cache, GFLOW_COMPILATION_CACHE="1")
        env.pop("JAX_COMPILATION_CACHE_DIR", None)
        for label in ("empty_cache", "cached"):
            start = _now()
            try:
                done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout_s)
            except subprocess.TimeoutExpired:
                out[label] = {"status": "timeout", "process_s": _now() - start, "timeout_s": timeout_s}
                break
            wall = _now() - start
            if done.returncode != 0:
                out[label] = {"status": "error", "process_s": wall, "error": done.stderr[-2000:]}
                break
            r = json.loads(done.stdout.strip().splitlines()[-1])
            out[label] = dict(r, process_s=wall)
    return out


def probe_row(row: dict, spec: dict, args, log) -> None:
    """Adds ``fresh_process`` to ``row`` when its warm run completed within --versus-probe-limit seconds."""
    if row.get("status") != "completed" or row["wall_s"] > args.versus_probe_limit:
        row["fresh_process"] = None
        return
    fp = fresh_process(spec, timeout_s=args.versus_cap + 300.0)
    row["fresh_process"] = fp
    c = fp.get("cached", {})
    if c.get("status") == "completed":
        row["first_call_s"] = c["process_s"]
        e = fp["empty_cache"]
        log(f"      fresh process: {c['process_s']:.2f} s from the cache (import + build {c['import_and_build_s']:.2f} "
            f"s, solve {c['solve_s']:.3f} s); {e['process_s']:.2f} s with an empty cache")
    else:
        log(f"      fresh process: {c or fp}")


# --------------------------------------------------------------------------------------------------
# one flow: reference, gflow, the baselines
# --------------------------------------------------------------------------------------------------
def public(row: dict | None) -> dict | None:
    """The row without its arrays."""
    return None if row is None else {k: v for k, v in row.items() if k != "theta"}


class Ref:
    """A reference's final parameters θ_ref and observable h_ref = response(θ_ref), against which runs are judged."""

    def __init__(self, case: Case, theta):
        self.case, self.theta = case, np.asarray(theta)
        self.h = case.response(self.theta)

    def errors(self, theta) -> tuple:
        """(error of θ, error of h), each max |· − ·_ref| / max |·_ref|; Nones for a missing or non-finite θ."""
        e = rel_err(theta, self.theta)
        return (None, None) if e is None else (e, rel_err(self.case.response(np.asarray(theta)), self.h))


def with_error(row: dict, ref: Ref) -> dict:
    row["error"], row["h_error"] = ref.errors(row.get("theta")) if row.get("status") == "completed" else (None, None)
    return row


def run_ladder(method, case, ref, target, cap_s, kv5, log, rtols=LADDER) -> list[dict]:
    """Rungs loosest first until one matches ``target``; none tighter than a rung that exceeded the cap."""
    rows = []
    for rtol in rtols:
        tol = ladder_tol(rtol, case.atol_factor)
        r = with_error(baseline_call(method, case, tol, cap_s, kv5), ref)
        r.update(rtol=tol[0], atol=tol[1])
        rows.append(r)
        log(f"      {SHORT[method]} rtol {tol[0]:g}: {_status(r)}, error {_e(r['error'])}")
        if r["status"] == "cap" or matches(r["error"], target):
            break
    return rows


def timed_setting(method, case, tol, ref, cap_s, kv5, first=None) -> dict:
    r = with_error(best_of(lambda: baseline_call(method, case, tol, cap_s, kv5), first), ref)
    if tol is not None:
        r.update(rtol=tol[0], atol=tol[1])
    return r


def run_baseline(method: str, case: Case, ref, gflow_row: dict, args, log) -> dict:
    """The matched and the defaults setting of one baseline on one flow (and their fresh-process first calls)."""
    cap = args.versus_cap
    target = gflow_row["error"]
    out = {"method": method, "label": LABELS[method]}
    log(f"    {LABELS[method]}:")
    kv5 = Kvaerno5Runner(case.n_params) if method == "kvaerno5" else None
    # matched
    ladder = run_ladder(method, case, ref, target, cap, kv5, log)
    out["ladder"] = [public(r) for r in ladder]
    hit = pick_matched(ladder, target)
    capped = next((r for r in ladder if r["status"] == "cap"), None)
    if hit is not None:
        tol = (hit["rtol"], hit["atol"])
        m = timed_setting(method, case, tol, ref, cap, kv5, first=hit)
        m["setting"] = "matched"
    elif capped is not None:
        m = dict(capped, setting="matched", note=f"no tolerance up to rtol {capped['rtol']:g} matched gflow's error "
                                                  f"within the cap")
    else:
        best = min((r for r in ladder if r["error"] is not None), key=lambda r: r["error"], default=None)
        m = {"status": "unmatched", "wall_s": None, "setting": "matched", "error": None,
             "note": "no rung of the ladder reached gflow's error" + (
                 f" (smallest error {best['error']:.1e} at rtol {best['rtol']:g})" if best else
                 " (every rung failed)")}
    out["matched"] = m
    # defaults
    dtol = DEFAULT_TOLS[method]
    eff = dtol if dtol is not None else ladder_tol(DEFAULT_RTOL, case.atol_factor)
    same = next((r for r in ladder if (r["rtol"], r["atol"]) == eff), None)
    if capped is not None and tighter_or_equal(eff, (capped["rtol"], capped["atol"])):
        d = {"status": "not run", "wall_s": None, "error": None, "rtol": eff[0], "atol": eff[1],
             "note": f"a looser tolerance (rtol {capped['rtol']:g}) already exceeded the cap"}
    elif hit is not None and same is hit:
        d = dict(m, note="the matched tolerance")
    else:
        d = timed_setting(method, case, dtol, ref, cap, kv5)
        d.update(rtol=eff[0], atol=eff[1])
    d["setting"] = "defaults"
    out["defaults"] = d
    if kv5 is not None:
        out["compile_s"] = kv5.compile_s
    for key in ("matched", "defaults"):
        r = out[key]
        log(f"      {key}: {_status(r)}" + (f", rtol {r['rtol']:g}, atol {r['atol']:.3g}" if r.get("rtol") else "") +
            (f", {r['wall_s']:.4g} s, error {_e(r['error'])}" if r.get("wall_s") is not None else "") +
            (f" ({r['note']})" if r.get("note") else ""))
    return out


def _status(r) -> str:
    return {"cap": "> cap"}.get(r["status"], r["status"])


def _e(x) -> str:
    return "—" if x is None else f"{x:.1e}"


def reference(case: Case, rtol: float, log) -> tuple[Ref, dict]:
    traj, wall = gflow_call(case, rtol, "rodas5p")
    row = traj_row(traj, wall)
    log(f"    reference: gflow Rodas5P rtol {rtol:g}: {row['status']}, {row['steps']} steps, {wall:.2f} s")
    if row["status"] != "completed":
        raise RuntimeError(f"{case.name}: the reference did not complete: {row['status']} {row['message']}")
    return Ref(case, row.pop("theta")), row


def run_flow(case: Case, args, log) -> dict:
    """One flow: the reference, gflow's default call, every baseline (matched and defaults), fresh processes."""
    log(f"\n=== {case.name}: {case.description}; n = {case.n_params}; atol = rtol × {case.atol_factor:.3g}")
    ref, ref_row = reference(case, args.versus_ref_rtol, log)
    out = {"problem": case.name, "description": case.description, "n_params": case.n_params, "t1": case.t1,
           "atol_factor": case.atol_factor, "reference": ref_row}
    _, first = gflow_call(case)
    g = with_error(best_of(lambda: traj_row(*gflow_call(case))), ref)
    g.update(first_in_process_s=first, setting="default call")
    log(f"    gflow default ({g['solver']}, rtol {g['rtol']:g}): {g['status']}, {g['steps']} steps, warm {g['wall_s']:.4g} "
        f"s (first call in this process {first:.3g} s), error {_e(g['error'])}")
    probes = args.versus_probes is None or case.name in args.versus_probes
    if probes:
        probe_row(g, {"problem": case.name, "method": "gflow", "rtol": None}, args, log)
    rows = []
    for method in args.versus_methods:
        if method == "kvaerno5" and args.quick and case.name != "ssm10":
            rows.append({"method": method, "label": LABELS[method], "skipped": "quick mode: Kvaerno5 on ssm10 only "
                                                                              "(each problem compiles it, 5–20 s)"})
            continue
        b = run_baseline(method, case, ref, g, args, log)
        for key in ("matched", "defaults"):
            r = b[key]
            r["ratio"] = ratio(r, g["wall_s"])
            if key == "defaults" and r.get("note") == "the matched tolerance":
                r.update(fresh_process=b["matched"].get("fresh_process"), first_call_s=b["matched"].get("first_call_s"))
            elif probes and (args.versus_probe_methods is None or method in args.versus_probe_methods):
                probe_row(r, {"problem": case.name, "method": method, "rtol": r.get("rtol"), "atol": r.get("atol"),
                              "cap_s": args.versus_cap}, args, log)
            b[key] = public(r)
        rows.append(b)
    out["gflow"] = public(g)
    out["rows"] = rows
    first_call_ratios(out)
    print_flow(out, log)
    return out


def first_call_ratios(out: dict) -> None:
    g = out["gflow"].get("first_call_s")
    for b in out["rows"]:
        for key in ("matched", "defaults"):
            r = b.get(key)
            if r is not None:
                r["first_call_ratio"] = (r["first_call_s"] / g if g and r.get("first_call_s") else None)


# --------------------------------------------------------------------------------------------------
# the batch: one solve_flows call against one flow after another
# --------------------------------------------------------------------------------------------------
def run_batch(n_flows: int, args, log, r1_result: dict | None) -> dict:
    import _problems as P
    import gflow
    from gflow.stacking import take

    t1 = 1e7
    desc = (f"{n_flows} flows of R1's size (symmetric balanced d=40, init 1e-2, balanced teacher d̂=5), student seeds "
            f"differ, k cycles through {BATCH_K[0]}..{BATCH_K[-1]} padded to {BATCH_K[-1]}, t1 = {t1:g}")
    log(f"\n=== batch: {desc}")
    losses, models, ks = P.stacked_flows(n_flows, list(BATCH_K))
    n_ref = min(args.versus_ref_flows, n_flows)

    def flow(i) -> Case:
        return jax_case(f"batch flow {i}", f"flow {i} (k = {ks[i]})", take(losses, i), take(models, i), t1)

    start = _now()
    refs, ref_rows = [], []
    for i in range(n_ref):  # one by one: one compiled program for every flow
        r, row = reference(flow(i), args.versus_ref_rtol, log)
        refs.append(r)
        ref_rows.append(row)
    ref_wall = _now() - start

    def call():
        s = _now()
        b = gflow.solve_flows(losses, models, t1, save_at=np.array([0.0, t1]), progress=False)
        return b, _now() - s

    _, first = call()

    def grow():
        b, wall = call()
        done = b.statuses.count("completed")
        return dict({"status": "completed" if done == n_flows else "failed", "wall_s": wall, "flows_completed": done,
                     "steps_mean": float(np.mean(b.steps)), "steps_max": int(np.max(b.steps))},
                    **max_errors([refs[i].errors(final_theta(b[i])) for i in range(n_ref)]))

    g = best_of(grow)
    g.update(first_in_process_s=first, setting="default call", rtol=gflow.flow.DEFAULT_RTOL)
    assert gflow.flow.DEFAULT_RTOL == DEFAULT_RTOL
    log(f"    gflow.solve_flows (default call): {g['flows_completed']}/{n_flows} completed, warm {g['wall_s']:.3g} s "
        f"(first call in this process {first:.3g} s), steps mean {g['steps_mean']:.0f}, error (first {n_ref} flows) "
        f"{_e(g['error'])}")
    out = {"problem": "batch", "description": desc, "n_flows": n_flows, "n_params": int(np.size(flow(0).y0)), "t1": t1,
           "reference": {"flows": n_ref, "rtol": args.versus_ref_rtol, "wall_s": ref_wall, "runs": ref_rows}, "gflow": g}
    r1_rows = {} if r1_result is None else {b["method"]: b for b in r1_result["rows"] if "matched" in b}
    rows = []
    kv5 = None
    for method in args.versus_methods:
        if method == "kvaerno5" and args.quick:
            rows.append({"method": method, "label": LABELS[method], "skipped": "quick mode: Kvaerno5 on ssm10 only"})
            continue
        log(f"    {LABELS[method]}, one flow after another:")
        if method == "kvaerno5":
            kv5 = Kvaerno5Runner(out["n_params"])
        b = {"method": method, "label": LABELS[method]}
        r1b = r1_rows.get(method)
        if r1b is not None and r1b["matched"].get("rtol") is not None:
            mtol, mnote = (r1b["matched"]["rtol"], r1b["matched"]["atol"]), "the tolerance matched on R1"
        elif r1b is not None:
            mtol, mnote = None, f"R1 matched nothing: {r1b['matched'].get('note')}"
        elif not refs:
            mtol, mnote = None, "no R1 in this run and no batch reference to match against"
        else:  # no R1 in this run: the ladder on flow 0
            c0 = flow(0)
            lad = run_ladder(method, c0, refs[0], g["error"], args.versus_cap, kv5, log)
            hit = pick_matched(lad, g["error"])
            mtol, mnote = ((hit["rtol"], hit["atol"]), "the tolerance matched on flow 0") if hit else (
                None, "no tolerance matched gflow's error on flow 0 within the cap")
        dtol = DEFAULT_TOLS[method]
        for key, tol, note in (("matched", mtol, mnote), ("defaults", dtol, "the method's defaults")):
            if key == "matched" and tol is None:
                b[key] = {"status": "not run", "wall_s": None, "error": None, "note": note}
                continue
            if (r1b is not None and r1b.get(key, {}).get("status") in ("cap", "not run")):
                b[key] = {"status": "not run", "wall_s": None, "error": None, "rtol": r1b[key].get("rtol"),
                          "note": f"on R1 (one flow of this size) it already exceeded the cap of {args.versus_cap:g} s"}
            else:
                b[key] = batch_baseline(method, flow, n_flows, refs, tol, args.versus_cap, kv5)
                b[key]["note"] = note
            b[key]["setting"] = key
            b[key]["ratio"] = ratio(b[key], g["wall_s"])
            r = b[key]
            log(f"      {key}: {_status(r)}" + (f", {r['flows_completed']}/{n_flows} flows in {r['wall_s']:.3g} s"
                                                if r.get("wall_s") is not None else "") +
                f", error {_e(r.get('error'))} ({r['note']})")
        if kv5 is not None and method == "kvaerno5":
            b["compile_s"] = kv5.compile_s
        rows.append(b)
    out["rows"] = rows
    print_flow(out, log)
    return out


def max_errors(errs: list[tuple]) -> dict:
    """The largest θ and h errors over flows ((θ error, h error) each); None where any is missing or none is given."""
    def worst(values):
        return max(values) if values and None not in values else None

    return {"error": worst([e[0] for e in errs]), "h_error": worst([e[1] for e in errs])}


def batch_baseline(method, flow, n_flows, refs, tol, cap_s, kv5) -> dict:
    """The flows one after another, each a fresh run (scipy: its JAX gradient and Hessian compiled before its clock
    starts), until the summed wall time reaches ``cap_s``."""
    walls, errs, steps, compile_s, status = [], [], [], 0.0, "completed"
    n_ref = len(refs)
    for i in range(n_flows):
        left = cap_s - sum(walls)
        if left <= 0:
            status = "cap"
            break
        c = flow(i)
        field = c.make_field()
        if method != "kvaerno5" and isinstance(field, JaxField):  # compile −∇L and −∇²L before the clock starts
            s = _now()
            field.flat.neg_hess(c.y0).block_until_ready()
            field.flat.neg_grad(c.y0).block_until_ready()
            compile_s += _now() - s
        r = baseline_call(method, c, tol, left, kv5)
        walls.append(r["wall_s"])
        if r["status"] == "cap":
            status = "cap"
            break
        if r["status"] != "completed":
            status = "failed"
            break
        steps.append(r["steps"])
        if i < n_ref:
            errs.append(refs[i].errors(r["theta"]))
    done = len(steps)
    return {"status": status, "wall_s": sum(walls), "flows_completed": done, "per_flow_s": sum(walls[:done]) / done
            if done else None, "steps_mean": float(np.mean(steps)) if steps else None, "compile_s": compile_s,
            **max_errors(errs), "error_flows": len(errs),
            "rtol": DEFAULT_RTOL if tol is None else tol[0], "atol": None if tol is None else tol[1]}


# --------------------------------------------------------------------------------------------------
# printing
# --------------------------------------------------------------------------------------------------
def _wall(r) -> str:
    if r is None or r.get("wall_s") is None:
        return "—"
    return ("> " if r["status"] == "cap" else "") + f"{r['wall_s']:.4g}"


def print_flow(out: dict, log) -> None:
    g = out["gflow"]
    hdr = (f"{'method':<24} {'setting':<9} {'rtol':>8} {'atol':>8} {'status':<10} {'warm s':>9} {'ratio':>8} "
           f"{'1st call s':>10} {'1st ratio':>9} {'steps':>7} {'rhs evals':>9} {'Jac':>5} {'θ error':>8} {'h error':>8}")
    log(f"--- {out['problem']}: ratios = baseline wall / gflow wall ('>' : stopped at the cap); θ error = max|θ − θ_ref| / "
        f"max|θ_ref| at t1, h error the same for the impulse response ({'h_0..h_19' if ssm_dim(out['problem']) else 'h_0..h_99'})")
    log(hdr)
    log("-" * len(hdr))
    gl = "gflow.solve_flows" if out["problem"] == "batch" else "gflow default"
    log(f"{gl:<24} {'default':<9} {_f(g.get('rtol'), '.3g', 8)} {_f(g.get('atol'), '.1e', 8)} {g['status']:<10} "
        f"{_wall(g):>9} {'1':>8} {_f(g.get('first_call_s'), '.3g', 10)} {'1':>9} {_f(g.get('steps', g.get('steps_mean')), '.0f', 7)} "
        f"{_f(g.get('rhs_evaluations'), 'd', 9)} {'—':>5} {_f(g.get('error'), '.1e', 8)} {_f(g.get('h_error'), '.1e', 8)}")
    for b in out["rows"]:
        if "skipped" in b:
            log(f"{b['label']:<24} skipped: {b['skipped']}")
            continue
        for key in ("matched", "defaults"):
            r = b[key]
            steps = r.get("steps", r.get("steps_mean"))
            log(f"{b['label']:<24} {key:<9} {_f(r.get('rtol'), '.3g', 8)} {_f(r.get('atol'), '.1e', 8)} "
                f"{_status(r):<10} {_wall(r):>9} {fmt_ratio(r.get('ratio')):>8} {_f(r.get('first_call_s'), '.3g', 10)} "
                f"{_f(r.get('first_call_ratio'), '.3g', 9)} {_f(steps, '.0f', 7)} {_f(r.get('rhs_evaluations'), 'd', 9)} "
                f"{_f(r.get('jacobians'), 'd', 5)} {_f(r.get('error'), '.1e', 8)} {_f(r.get('h_error'), '.1e', 8)}")
    notes = [(b["label"], k, b[k]["note"]) for b in out["rows"] if "skipped" not in b for k in ("matched", "defaults")
             if b[k].get("note")]
    for label, k, note in notes:
        log(f"  · {label}, {k}: {note}")
    if out["problem"] == "batch":
        log("  (batch: gflow runs every flow in one solve_flows call; a baseline runs them one after another, its wall the "
            "sum of the flows' walls, stopped at the cap; flows done and per-flow walls in the JSON; the error is over "
            "the first flows that have a reference)")


_f = S._f  # "—" for a missing or non-finite number, else format(x, spec), right-aligned to a width


def _cell(r: dict | None, batch: bool) -> str:
    """A markdown cell: ratio (wall, tolerance, error)."""
    if r is None:
        return "—"
    if r.get("status") in ("not run", "unmatched", "failed") or r.get("wall_s") is None:
        return r.get("status", "—")
    tol = f"rtol {r['rtol']:g}" if r.get("rtol") is not None else ""
    if r["status"] == "cap":
        extra = f", {r['flows_completed']} flows done" if batch else ""
        return f"{fmt_ratio(r.get('ratio'))} (> {r['wall_s']:.3g} s{extra}; {tol})"
    return f"{fmt_ratio(r.get('ratio'))} ({r['wall_s']:.3g} s; {tol}; err {_e(r.get('error'))})"


def markdown(results: list[dict], cap_s: float) -> str:
    """The side-by-side table for docs/solvers.md: ratios at matched accuracy and at defaults, first calls."""
    cols = [m for m in BASELINES if any(b["method"] == m for res in results for b in res.get("rows", []))]
    head = "| problem | n | gflow default: warm s (θ error) | " + " | ".join(f"{SHORT[m]}" for m in cols) + " |"
    sep = "|" + "---|" * (3 + len(cols))
    lines = []
    for key, title in (("matched", "Warm, each baseline at the loosest tolerance at least as accurate as gflow "
                                   "(baseline wall / gflow wall; tolerance; error)"),
                       ("defaults", "Warm, each baseline at its default tolerance (ratio; tolerance; error)")):
        lines += [f"**{title}**", "", head, sep]
        for res in results:
            if "error" in res and "gflow" not in res:
                continue
            g = res["gflow"]
            batch = res["problem"] == "batch"
            name = f"{res['n_flows']} R1-size flows" if batch else res["problem"]
            by = {b["method"]: b for b in res["rows"]}
            cells = [("skipped" if "skipped" in by[m] else _cell(by[m][key], batch)) if m in by else "—" for m in cols]
            lines.append(f"| {name} | {res['n_params']} | {g['wall_s']:.3g} ({_e(g.get('error'))}) | "
                         + " | ".join(cells) + " |")
        lines.append("")
    firsts = [res for res in results if (res.get("gflow") or {}).get("first_call_s")]
    if not firsts:
        return "\n".join(lines + [f"Caps: {cap_s:g} s per baseline run (a batch: for all its flows); \"> x×\" = stopped "
                                  f"at the cap."])
    lines += ["**First call in a fresh process (import + build + solve, spawn to exit, persistent cache filled by a "
              "previous process; matched setting)**", "",
              "| problem | gflow s (empty cache s) | " + " | ".join(SHORT[m] + " s (ratio)" for m in cols) + " |",
              "|" + "---|" * (2 + len(cols))]
    for res in firsts:
        g = res["gflow"]
        by = {b["method"]: b for b in res["rows"]}
        empty = (g.get("fresh_process") or {}).get("empty_cache", {}).get("process_s")
        cells = []
        for m in cols:
            r = by.get(m, {}).get("matched") or {}
            cells.append(f"{r['first_call_s']:.3g} ({r['first_call_ratio']:.3g}×)" if r.get("first_call_s") else "—")
        lines.append(f"| {res['problem']} | {g['first_call_s']:.3g} ({_f(empty, '.3g', 0)}) | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(f"Caps: {cap_s:g} s per baseline run (a batch: for all its flows); \"> x×\" = stopped at the cap.")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------------
# the whole run
# --------------------------------------------------------------------------------------------------
def configure(args) -> None:
    """Fills the --versus options' quick/full defaults in ``args``."""
    q = args.quick
    args.versus_problems = check_problem_names(args.versus_problems or (QUICK_PROBLEMS if q else DEFAULT_PROBLEMS))
    args.versus_cap = args.versus_cap if args.versus_cap is not None else (2.0 if q else 120.0)
    args.versus_flows = args.versus_flows or (2 if q else 64)
    args.versus_ref_flows = args.versus_ref_flows if args.versus_ref_flows is not None else (0 if q else 4)
    args.versus_ref_rtol = args.versus_ref_rtol or (1e-10 if q else S.REF_RTOL)
    args.versus_probe_limit = args.versus_probe_limit if args.versus_probe_limit is not None else (
        1.0 if q else 30.0)
    if args.versus_probes is None and q:
        args.versus_probes = ["ssm10"]
    args.versus_probe_methods = ("gflow", "lsoda") if q else None  # quick: gflow's and odeint's first calls only
    args.versus_methods = args.versus_methods or list(BASELINES)


def run(args, log) -> dict:
    """Every problem of ``args`` (configured), then the markdown table."""
    results = []
    r1 = None
    for name in args.versus_problems:
        try:
            if name == "batch":
                results.append(run_batch(args.versus_flows, args, log, r1))
            else:
                results.append(run_flow(make_case(name), args, log))
                if name == "R1":
                    r1 = results[-1]
        except Exception as e:  # keep going: one failing problem must not lose the others' results
            import traceback

            traceback.print_exc()
            log(f"!!! {name} failed: {type(e).__name__}: {e}")
            results.append({"problem": name, "error": f"{type(e).__name__}: {e}"})
    md = markdown([r for r in results if "error" not in r], args.versus_cap)
    log("\n=== the side-by-side table (markdown)\n")
    log(md)
    return {"results": results, "markdown": md}


def main(args, log) -> dict:
    """``bench/run.py --versus``: every problem, the table, and the JSON document (``--json``)."""
    import platform

    import jax
    import scipy

    from gflow.results import package_versions, provenance, write_json_atomic

    started = _now()
    try:
        configure(args)
    except argparse.ArgumentTypeError as e:
        raise SystemExit(f"bench/run.py --versus: {e}") from None
    load0 = os.getloadavg()
    log(f"gflow bench --versus{' (quick)' if args.quick else ''}: problems {' '.join(args.versus_problems)}, methods "
        f"{' '.join(args.versus_methods)}, cap {args.versus_cap:g} s per baseline run, reference Rodas5P rtol "
        f"{args.versus_ref_rtol:g}, fresh-process probes for runs ≤ {args.versus_probe_limit:g} s"
        + (f" on {' '.join(args.versus_probes)}" if args.versus_probes is not None else "")
        + f"; device {jax.devices()[0]}, {os.cpu_count()} CPU cores, OPENBLAS_NUM_THREADS="
        f"{os.environ.get('OPENBLAS_NUM_THREADS')}, load average {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}")
    out = run(args, log)
    total = _now() - started
    load1 = os.getloadavg()
    log(f"\ntotal wall time: {total:.1f} s; load average at the end {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}")
    if args.json:
        doc = {"what": "gflow against scipy odeint (LSODA), solve_ivp BDF and Radau, and diffrax Kvaerno5, warm and "
                       "first call in a fresh process, at matched accuracy and at each method's defaults",
               "quick": args.quick, "problems": args.versus_problems, "methods": args.versus_methods,
               "cap_s": args.versus_cap, "ladder_rtols": list(LADDER), "accuracy_floor": ACCURACY_FLOOR,
               "reference": f"gflow rodas5p at rtol {args.versus_ref_rtol:g} (default atol)",
               "batch_flows": args.versus_flows, "batch_reference_flows": args.versus_ref_flows,
               "probe_limit_s": args.versus_probe_limit, "probes_on": args.versus_probes,
               "default_tolerances": {m: DEFAULT_TOLS[m] for m in BASELINES}, "total_wall_s": total,
               "loadavg_start": list(load0), "loadavg_end": list(load1), "platform": platform.platform(),
               "cpu_count": os.cpu_count(), "openblas_num_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
               "device": str(jax.devices()[0]), "versions": dict(package_versions(), scipy=scipy.__version__),
               "provenance": provenance(), **out, "argv": sys.argv[1:]}
        write_json_atomic(args.json, doc)
        log(f"wrote {args.json}")
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--probe", required=True, metavar="SPEC",
                    help="one fresh-process first call (JSON: problem, method, rtol, atol, cap_s); bench/run.py "
                         "--versus runs these")
    print(json.dumps(_probe(json.loads(ap.parse_args().probe))))
