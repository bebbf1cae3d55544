"""The order-3 W-method ROS34PW2 (``solver="rosenbrock"``) against the order-5 Rodas5P
(``solver="rodas5p"``) at a loose and a tight rtol, each judged against a reference computed by the *other* method
(so no method is judged against itself), in one process: steps, gradient evaluations, Hessian-vector products,
preconditioned linear solves, warm wall time (compile reported apart), error of θ and of h at t1.

A batched problem (R4, R6) runs the stacked flows through ``solve_flows`` with each method; its references are the first
few flows one by one with the other method.
"""

from __future__ import annotations

import math
import time

import numpy as np

import _problems as P
import gflow
from _accuracy import add_accuracy, N_IMPULSE, Reference, rel_err

METHODS = {"rosenbrock": "ROS34PW2", "rodas5p": "Rodas5P"}


def _other(method: str) -> str:
    return next(m for m in METHODS if m != method)


def _solve(loss, model0, t1, rtol, atol, solver, **kw):
    s = time.perf_counter()
    tr = gflow.solve_flow(loss, model0, t1, rtol=rtol, atol=atol, solver=solver, progress=False, **kw)
    return tr, time.perf_counter() - s


def _row(method, rtol, traj, wall, compile_s, repeats):
    st = traj.stats
    return {"method": METHODS[method], "solver": method, "rtol": rtol, "status": traj.status, "wall_s": wall,
            "compile_s": compile_s, "steps": st["steps"], "rejected_steps": st["rejected_steps"],
            "gradient_evaluations": st["gradient_evaluations"],
            "hessian_vector_products": st.get("hessian_vector_products", 0), "linear_solves": st["linear_solves"],
            "ms_per_step": 1e3 * wall / max(st["steps"], 1), "best_of": repeats,
            "theta": np.asarray(gflow.flatten(traj.final)[0]), "saved": (np.asarray(traj.ts), traj.params)}


def run_orders(p: P.Problem, rtols, ref_rtol: float, log) -> dict:
    """Both methods on one problem: references at ``ref_rtol``, then each method at each rtol (best of two warm
    calls when one takes under 10 s)."""
    log(f"\n=== {p.name} orders: {p.description}; n = {p.n_params}; rtols {list(rtols)}, references at {ref_rtol:g} "
        f"by the other method; atol = rtol × {p.atol_factor:.3g}")
    compile_s, refs, ref_rows = {}, {}, {}
    for m in METHODS:
        compile_s[m] = _solve(p.loss, p.model0, p.t1 * 1e-13, p.rtol, p.atol, m)[1]
        traj, wall = _solve(p.loss, p.model0, p.t1, ref_rtol, p.atol_factor * ref_rtol, m)
        refs[m] = Reference(p.model0, traj)
        ref_rows[m] = {k: v for k, v in _row(m, ref_rtol, traj, wall, compile_s[m], 1).items()
                       if k not in ("theta", "saved")}
        log(f"    reference {METHODS[m]} at {ref_rtol:g}: {traj.status}, {traj.stats['steps']} steps, {wall:.1f} s "
            f"(compile {compile_s[m]:.1f} s)")
    agreement = {"theta_rel_err": rel_err(refs["rodas5p"].theta, refs["rosenbrock"].theta),
                 "h_rel_err": rel_err(refs["rodas5p"].h, refs["rosenbrock"].h)}
    log(f"    the two references agree to θ {agreement['theta_rel_err']:.1e}, h {agreement['h_rel_err']:.1e}")
    rows = []
    for rtol in rtols:
        for m in METHODS:
            traj, wall = _solve(p.loss, p.model0, p.t1, rtol, p.atol_factor * rtol, m)
            repeats = 1
            if wall < 10.0:
                again, wall2 = _solve(p.loss, p.model0, p.t1, rtol, p.atol_factor * rtol, m)
                repeats = 2
                if wall2 < wall:
                    traj, wall = again, wall2
            row = add_accuracy(_row(m, rtol, traj, wall, compile_s[m], repeats), refs[_other(m)])
            row["judged_against"] = f"{METHODS[_other(m)]} at rtol {ref_rtol:g}"
            rows.append(row)
            log(f"    {METHODS[m]:9s} rtol {rtol:<6g} {row['status']:9s} {row['steps']:7d} steps "
                f"{row['gradient_evaluations']:8d} grads {row['hessian_vector_products']:8d} HVPs "
                f"{row['linear_solves']:8d} solves {wall:8.2f} s ({row['ms_per_step']:.2f} ms/step)  "
                f"θ err {_e(row['theta_rel_err'])}  h err {_e(row['h_rel_err'])}")
    return {"problem": p.name, "description": p.description, "n_params": p.n_params, "t1": p.t1,
            "atol_factor": p.atol_factor, "ref_rtol": ref_rtol, "references": ref_rows,
            "reference_agreement": agreement, "rows": rows, "speedup": _speedups(rows)}


def run_orders_batched(name: str, n_flows: int, rtols, ref_rtol: float, n_checked: int, log) -> dict:
    """R4's (or R6's: the same flows, more of them) stacked R1-size flows through solve_flows with each method; the
    first ``n_checked`` flows are also solved one by one at ``ref_rtol`` by the other method as references."""
    k_values = list(range(16, 25))
    t1, save_at = 1e7, 8
    losses, models, ks = P.stacked_flows(n_flows, k_values)
    take = gflow.stacking.take
    log(f"\n=== {name} orders: {n_flows} R1-size flows (k {k_values[0]}..{k_values[-1]}), t1 {t1:g}, rtols "
        f"{list(rtols)}; references: first {n_checked} flows one by one at {ref_rtol:g} by the other method")
    refs = {m: [P.impulse(gflow.solve_flow(take(losses, i), take(models, i), t1, rtol=ref_rtol, solver=m,
                                           save_at=save_at, progress=False).final, N_IMPULSE)
                for i in range(n_checked)] for m in METHODS}
    rows = []
    for rtol in rtols:
        for m in METHODS:
            s = time.perf_counter()
            gflow.solve_flows(losses, models, t1 * 1e-13, rtol=rtol, solver=m, save_at=save_at, progress=False)
            compile_s = time.perf_counter() - s
            s = time.perf_counter()
            batch = gflow.solve_flows(losses, models, t1, rtol=rtol, solver=m, save_at=save_at, progress=False)
            wall = time.perf_counter() - s
            errs = [rel_err(P.impulse(batch[i].final, N_IMPULSE), refs[_other(m)][i]) for i in range(n_checked)]
            hvps = [batch[i].stats.get("hessian_vector_products", 0) for i in range(n_flows)]
            row = {"method": METHODS[m], "solver": m, "rtol": rtol, "wall_s": wall, "compile_s": compile_s,
                   "per_flow_s": wall / n_flows, "lock_steps": int(batch.steps.max()),
                   "steps_mean": float(batch.steps.mean()), "ms_per_lock_step": 1e3 * batch.wall_time_s /
                   int(batch.steps.max()), "hessian_vector_products_mean": float(np.mean(hvps)),
                   "statuses": {s_: batch.statuses.count(s_) for s_ in set(batch.statuses)},
                   "h_rel_err_max": max(errs), "judged_against": f"{METHODS[_other(m)]} at rtol {ref_rtol:g}"}
            rows.append(row)
            log(f"    {METHODS[m]:9s} rtol {rtol:<6g} {wall:8.2f} s ({row['per_flow_s'] * 1e3:.1f} ms per flow), "
                f"{row['lock_steps']} lock-steps ({row['ms_per_lock_step']:.2f} ms each), HVPs per flow "
                f"{row['hessian_vector_products_mean']:.0f}, h err (first {n_checked}) {_e(row['h_rel_err_max'])}")
    return {"problem": name, "n_flows": n_flows, "t1": t1, "k_values": k_values, "ref_rtol": ref_rtol,
            "n_checked": n_checked, "rows": rows, "speedup": _speedups(rows)}


def _speedups(rows) -> dict:
    """Per rtol: wall(ROS34PW2) / wall(Rodas5P) (> 1: Rodas5P faster)."""
    out = {}
    for rtol in sorted({r["rtol"] for r in rows}, reverse=True):
        w = {r["solver"]: r["wall_s"] for r in rows if r["rtol"] == rtol}
        out[f"{rtol:g}"] = w["rosenbrock"] / w["rodas5p"] if w.get("rodas5p") else math.nan
    return out


def _e(x):
    return "n/a" if x is None else f"{x:.1e}"


def targets(results) -> list[dict]:
    """The targets of the solver choice that an --orders run can check (the LSODA ratio needs the baseline run)."""
    checks = []
    for r in results:
        if r.get("problem") == "R1" and "rows" in r:
            rows = {(x["solver"], x["rtol"]): x for x in r["rows"]}
            fast = rows.get(("rodas5p", 1e-8))
            if fast is not None:
                checks.append({"target": "R1 rtol 1e-8, Rodas5P ≤ 0.5 s warm", "value": f"{fast['wall_s']:.2f} s",
                               "passed": fast["wall_s"] <= 0.5})
                checks.append({"target": "R1 rtol 1e-8, Rodas5P h within 1e-6 of the ROS34PW2 reference",
                               "value": _e(fast["h_rel_err"]),
                               "passed": fast["h_rel_err"] is not None and fast["h_rel_err"] <= 1e-6})
            tight = rows.get(("rodas5p", 1e-12))
            if tight is not None:
                checks.append({"target": "R1 rtol 1e-12, Rodas5P ≤ 5 s", "value": f"{tight['wall_s']:.2f} s",
                               "passed": tight["wall_s"] <= 5.0})
        for rtol, ratio in r.get("speedup", {}).items():
            checks.append({"target": f"{r['problem']} rtol {rtol}: wall ROS34PW2 / Rodas5P (> 1: Rodas5P faster)",
                           "value": f"{ratio:.2f}", "passed": None})
    return checks
