"""gflow against scipy ``odeint`` (LSODA) on Slutzky et al.'s diagonal-SSM gradient flow (NeurIPS 2025, "The Implicit
Bias of Structured State Space Models Can Be Poisoned With Clean Labels"; their notebook
``standalone_ssm_theory_poison_experiments.ipynb``, "TH" below, "c6:L10" = its code cell 6, line 10),
``python bench/run.py --ssm``.

The problem: a diagonal SSM with A = a ∈ R^d trained and B = C = 1 fixed, so h_j = Σ_i a_i^j; the teacher has h*_0 = d
and h*_j = 1 (j ≥ 1); the loss is L = Σ_j w_j (h_j − h*_j)² (no ½) with lag weights {L − 1: 1} ("baseline", t1 = 1e11)
or {L − 1: ½, 1: ½} ("special": the baseline sequence and one special sequence, the mean over the two; t1 = 1e4), L = 7;
a0 = flip(sort(sd_A · U[0, 1)^d)) from ``np.random.RandomState(seed)``, then a0[1] = a0[0] − diff (sd_A = 1e-3,
diff = 0.05·e^−15). Their flow integrates da/dt = −∇L with ``scipy.integrate.odeint`` at its defaults (LSODA,
rtol = atol = 1.49012e-8) and reports ext = max_{j<20} |h_j − h*_j| / d at t1.

In one process, per d and design:

- a reference: gflow's Rodas5P at rtol 1e-12 (atol its default, rtol × RMS a0); at the smallest d it is checked
  against scipy Radau with the exact Jacobian at rtol 1e-13, restarted at 40 log-spaced save times, and at d = 10
  odeint at its defaults is run on their notebook's own right-hand side (np.diag, matrix_power; never timed) and on
  the O(d) one, against the ext the notebook printed for seed 242;
- gflow's default solver at rtol 1e-6 and 1e-8, timed warm (the first call compiles and is reported apart; best of
  a few calls);
- scipy ``odeint`` (LSODA) on the same right-hand side written here in numpy, O(d) per evaluation (elementwise powers
  of a; no d × d matrices) on their output grid linspace(0, t1, 1000) (it sets LSODA's first step; no step limit):
  at its default tolerance (their run), at rtol = atol = 1e-6 and 1e-8, and at rtol 1e-6 and 1e-8 with gflow's atol
  (rtol × RMS a0: the same error control as gflow's on a state of size ~1e-3); each also with
  the analytic Jacobian −2(Σ_j w_j g_j g_jᵀ + diag(Σ_j w_j r_j j (j − 1) a^{j−2})), g_j = j a^{j−1} (O(d²), dense) as
  ``Dfun``. Each scipy run stops at a wall-clock cap (the right-hand side raises once it is spent) and is then
  reported as "> cap" with the time it reached.

Reported per run: wall time, steps, right-hand-side (gradient) evaluations, Jacobians, ext, its relative error
against the reference's ext, the final parameters' error max|a − a_ref| / max|a_ref|, wall / gflow's wall at the same
rtol (LSODA's default against gflow at 1e-8), and wall / the fastest gflow run whose final a is at least as accurate
(errors below ACCURACY_FLOOR counted as equal). gflow's fixed cost per call (a warm call to t1·1e-13) is reported too.

The cold first call (``cold_start``): fresh processes, each timed from spawn to exit by the parent: one imports gflow
and runs one d = 10 baseline flow with an empty persistent compilation cache (GFLOW_CACHE_DIR a fresh folder), a second
does the same from that cache, and a third imports scipy and runs ``odeint`` on the same flow. This file is that
probe too: ``python bench/_ssm.py --probe gflow|scipy`` (it imports only the standard library and numpy at the top, so
the probe's import time is gflow's or scipy's own).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time

import numpy as np

SEED, LENGTH, SD_A, DIFF, N_EXT = 242, 7, 1e-3, 0.05 * math.exp(-15.0), 20
DESIGNS = {"baseline": ({LENGTH - 1: 1.0}, 1e11), "special": ({LENGTH - 1: 0.5, 1: 0.5}, 1e4)}
DIMS = (10, 100, 1000, 4000)
RTOLS = (1e-6, 1e-8)
REF_RTOL, RADAU_RTOL = 1e-12, 1e-13
# final-a errors below this are not resolved (the reference and Radau differ by up to 2e-9 at d = 10): the
# "same accuracy" ratio treats them as equal
ACCURACY_FLOOR = 1e-8
# the ext the notebook saved for seed 242, L = 7, d = 10 (its outputs of exec counts 5 and 6)
PRINTED_EXT = {"baseline": 0.0011832003, "special": 0.0491806233}
ODEINT_DEFAULT_TOL = 1.49012e-8  # scipy.integrate.odeint's rtol = atol default
ODEINT_GRID = 1000  # their output grid, np.linspace(0, t1, 1000) (TH c6:L10): LSODA's first step depends on it
ODEINT_MXSTEP = 100_000_000  # no step limit (LSODA's default is 500 per output interval)


def _now() -> float:
    return time.perf_counter()


# --------------------------------------------------------------------------------------------------
# the problem, in numpy
# --------------------------------------------------------------------------------------------------
def initial_a(d: int, seed: int = SEED) -> np.ndarray:
    """Their a0 (TH c6:L6-8): uniform [0, sd_A), sorted descending, entry 1 moved a hair below entry 0."""
    a0 = np.flip(np.sort(SD_A * np.random.RandomState(seed).rand(d))).copy()
    a0[1] = a0[0] - DIFF
    return a0


def teacher_impulse(d: int, n: int = N_EXT) -> np.ndarray:
    h = np.ones(n)
    h[0] = d
    return h


def impulse(a: np.ndarray, n: int = N_EXT) -> np.ndarray:
    """h_j = Σ_i a_i^j, j < n, by repeated elementwise products."""
    h, p = np.empty(n), np.ones_like(a)
    for j in range(n):
        h[j] = p.sum()
        p = p * a
    return h


def ext_error(a: np.ndarray) -> float:
    """Their extrapolation error: max_{j<20} |h_j − h*_j| / d (h*_0 = d = max |h*|)."""
    d = a.size
    return float(np.max(np.abs(impulse(a) - teacher_impulse(d))) / d)


class Field:
    """da/dt = −∇L(a) for L = Σ_j w_j (Σ_i a_i^j − h*_j)², elementwise: O(d) per evaluation; its Jacobian
    (O(d²), dense) for LSODA's ``Dfun`` and Radau. Counts the evaluations, and raises :class:`OutOfTime` from
    either once ``deadline`` (perf_counter) has passed."""

    def __init__(self, d: int, lag_weights: dict):
        self.d = d
        self.lags = np.array(sorted(lag_weights), dtype=np.int64)
        self.weights = np.array([lag_weights[j] for j in self.lags], dtype=np.float64)
        self.targets = np.array([float(d) if j == 0 else 1.0 for j in self.lags])
        self.deadline = math.inf
        self.nfev = self.njev = 0
        self.t_reached = 0.0

    def residuals(self, a):
        return np.array([np.sum(a ** j) for j in self.lags]) - self.targets

    def loss(self, a) -> float:
        return float(np.sum(self.weights * self.residuals(a) ** 2))

    def _tick(self, t):
        if _now() > self.deadline:
            raise OutOfTime
        self.t_reached = max(self.t_reached, float(t))

    def rhs(self, a, t):
        self._tick(t)
        self.nfev += 1
        out = np.zeros_like(a)
        for j, w, target in zip(self.lags, self.weights, self.targets):
            if j == 0:
                continue
            pm1 = a ** (j - 1)  # a^(j−1)
            r = np.sum(pm1 * a) - target
            out -= (2.0 * w * r * j) * pm1
        return out

    def jac(self, a, t):
        self._tick(t)
        self.njev += 1
        diag = np.zeros_like(a)
        J = np.zeros((a.size, a.size))
        for j, w, target in zip(self.lags, self.weights, self.targets):
            if j == 0:
                continue
            g = j * a ** (j - 1)
            r = np.sum(a ** j) - target
            J += w * np.outer(g, g)
            if j >= 2:
                diag += w * r * j * (j - 1) * a ** (j - 2)
        J[np.diag_indices_from(J)] += diag
        return -2.0 * J


class OutOfTime(Exception):
    pass


def notebook_rhs(design: str, d: int):
    """Their right-hand side as the notebook writes it (TH c4: np.diag and matrix_power, O(d³) per evaluation), for
    the reproduction check at d = 10 only, never timed: odeint's result at its default tolerance depends on the
    rounding of the right-hand side (see ``reproduction``)."""
    from numpy.linalg import matrix_power

    lag_weights, _ = DESIGNS[design]
    x_short = [1.0] if 1 in lag_weights else []
    n = 1 + len(x_short)
    B = np.ones((d, 1))
    C = B.T

    def impulse(A, k):
        return (C @ matrix_power(np.diag(A), k - 1) @ B)[0, 0]

    def model(A, t):
        r_long = impulse(A, LENGTH) - 1.0
        grad = (LENGTH - 1) * np.diag(matrix_power(np.diag(A), LENGTH - 2)) * r_long
        if x_short:
            grad = grad + (impulse(A, 2) - 1.0) * np.ones(d)
        return -(2.0 / n) * grad

    return model


def reproduction(design: str, d: int = 10) -> dict:
    """odeint at its defaults on their grid, with their notebook's right-hand side and with this file's O(d) one,
    against the ext the notebook printed for seed 242."""
    from scipy.integrate import odeint

    lag_weights, t1 = DESIGNS[design]
    grid = np.linspace(0.0, t1, ODEINT_GRID)
    theirs = ext_error(odeint(notebook_rhs(design, d), initial_a(d), grid)[-1])
    ours = ext_error(odeint(Field(d, lag_weights).rhs, initial_a(d), grid)[-1])
    printed = PRINTED_EXT[design]
    return {"printed_ext": printed, "notebook_rhs_ext": theirs, "elementwise_rhs_ext": ours,
            "notebook_rhs_rel_diff": abs(theirs - printed) / printed,
            "elementwise_rhs_rel_diff": abs(ours - printed) / printed}


# --------------------------------------------------------------------------------------------------
# scipy
# --------------------------------------------------------------------------------------------------
def odeint_run(d: int, design: str, rtol: float, atol: float, use_jac: bool, cap_s: float) -> dict:
    """scipy ``odeint`` (LSODA) from a0 to t1 of ``design`` on their output grid (LSODA steps past the grid points and
    interpolates, so the grid sets only its first step size), stopped at ``cap_s`` seconds of wall time."""
    from scipy.integrate import odeint

    lag_weights, t1 = DESIGNS[design]
    field = Field(d, lag_weights)
    a0 = initial_a(d)
    field.deadline = _now() + cap_s
    start = _now()
    try:
        ys, info = odeint(field.rhs, a0, np.linspace(0.0, t1, ODEINT_GRID), Dfun=field.jac if use_jac else None, rtol=rtol,
                          atol=atol, mxstep=ODEINT_MXSTEP, full_output=True)
    except OutOfTime:
        return {"status": "cap", "wall_s": _now() - start, "t_reached": field.t_reached, "rhs_evaluations": field.nfev,
                "jacobians": field.njev if use_jac else None, "steps": None}
    wall = _now() - start
    ok = info["message"].startswith("Integration successful")
    a = ys[-1]
    return {"status": "completed" if ok else "failed", "wall_s": wall, "t_reached": t1 if ok else None,
            "steps": int(info["nst"][-1]), "rhs_evaluations": int(info["nfe"][-1]), "jacobians": int(info["nje"][-1]),
            "method_switches": int(np.sum(np.diff(info["mused"]) != 0)) if len(info["mused"]) > 1 else 0,
            "method_at_end": {1: "Adams", 2: "BDF"}.get(int(info["mused"][-1])), "a": a,
            "final_loss": field.loss(a), "message": info["message"]}


def radau_reference(d: int, design: str, n_save: int = 40, rtol: float = RADAU_RTOL) -> np.ndarray:
    """scipy Radau with the exact Jacobian at ``rtol`` (atol 1e-14 · max|a0|), restarted at ``n_save``
    log-spaced save times (as tests/test_descent.py's scipy_reference): the final a."""
    from scipy.integrate import solve_ivp

    lag_weights, t1 = DESIGNS[design]
    field = Field(d, lag_weights)
    a = initial_a(d)
    atol = 1e-14 * np.max(np.abs(a))
    ts = np.concatenate([[0.0], np.geomspace(t1 * 1e-6, t1, n_save - 1)])
    for t0_, t1_ in zip(ts[:-1], ts[1:]):
        sol = solve_ivp(lambda t, y: field.rhs(y, t), (t0_, t1_), a, method="Radau",
                        jac=lambda t, y: field.jac(y, t), rtol=rtol, atol=atol)
        if sol.status != 0:
            raise RuntimeError(f"Radau reference failed at t={t0_:g}: {sol.message}")
        a = sol.y[:, -1]
    return a


# --------------------------------------------------------------------------------------------------
# gflow
# --------------------------------------------------------------------------------------------------
def gflow_problem(d: int, design: str):
    """(loss, model0, t1) of ``design`` at width d through gflow's public API: the teacher A* = diag(1, 0),
    B* = C* = (1, √(d − 1)) (so h*_0 = d, h*_j = 1), the student's B and C frozen at ones."""
    import gflow
    from gflow.models import Frozen

    lag_weights, t1 = DESIGNS[design]
    bc = np.array([1.0, math.sqrt(d - 1)])
    teacher = gflow.LinearRNN(np.array([1.0, 0.0]), bc, bc.copy(), structure="diagonal")
    loss = gflow.PopulationLoss.at_lags(teacher, lag_weights)
    model0 = gflow.LinearRNN(initial_a(d), Frozen(np.ones(d)), Frozen(np.ones(d)), structure="diagonal")
    return loss, model0, t1


def gflow_atol_factor(model0) -> float:
    """gflow's default atol / rtol: min(1, RMS θ0) (θ = a here: B and C are frozen)."""
    import gflow

    theta = np.asarray(gflow.flatten(model0)[0])
    return float(min(1.0, np.sqrt(np.mean(theta ** 2))))


def same_field(loss, model0, field: Field) -> float:
    """max |numpy rhs − gflow's −∇L| / max |gflow's −∇L| at a0 and at one point near the end of the flow (a0 with
    entry 0 at 0.9): the two integrate the same ODE."""
    import jax
    import jax.numpy as jnp

    import gflow

    _, static, unravel = gflow.flatten(model0)
    term = gflow.flow.GradientFlowTerm(loss, static, unravel)
    neg_grad = jax.jit(lambda y: -jax.grad(term.loss_value)(y))
    worst = 0.0
    for a in (initial_a(field.d), np.concatenate([[0.9], initial_a(field.d)[1:]])):
        g = np.asarray(neg_grad(jnp.asarray(a)))
        worst = max(worst, float(np.max(np.abs(field.rhs(a, 0.0) - g)) / np.max(np.abs(g))))
        worst = max(worst, abs(field.loss(a) - float(term.loss_value(jnp.asarray(a)))) / field.loss(a))
    return worst


def gflow_solve(loss, model0, t1, rtol, solver="auto"):
    import gflow

    start = _now()
    traj = gflow.solve_flow(loss, model0, t1, rtol=rtol, solver=solver, save_at=np.array([0.0, t1]), progress=False)
    return traj, _now() - start


def _repeats(first_s: float) -> int:
    """How many timed calls after a first one of ``first_s``: more for short runs (a shared machine's noise)."""
    return 5 if first_s < 0.2 else 3 if first_s < 2.0 else 1


def gflow_row(loss, model0, t1, rtol, solver="auto") -> dict:
    """First call (compile, or load from the persistent cache, + the run), then the best of warm calls."""
    traj, first = gflow_solve(loss, model0, t1, rtol, solver)
    walls = []
    for _ in range(_repeats(first)):
        traj, w = gflow_solve(loss, model0, t1, rtol, solver)
        walls.append(w)
    st = traj.stats
    a = np.asarray(traj.final.A)
    overhead = min(gflow_solve(loss, model0, t1 * 1e-13, rtol, solver)[1] for _ in range(3))
    return {"method": f"gflow {traj.config.get('solver', solver)}", "kind": "gflow", "rtol": rtol,
            "atol": float(traj.config["atol"]), "error_control": traj.config.get("error_control"),
            "status": traj.status, "wall_s": min(walls), "walls_s": walls, "first_call_s": first,
            "short_call_s": overhead,
            "t_reached": float(traj.ts[-1]), "steps": int(st["steps"]), "rejected_steps": int(st["rejected_steps"]),
            "rhs_evaluations": int(st["gradient_evaluations"]), "jacobians": None,
            "linear_solves": int(st["linear_solves"]), "final_loss": float(traj.loss[-1]), "a": a,
            "message": traj.message or ""}


def scipy_row(d, design, label, rtol, atol, use_jac, cap_s) -> dict:
    r = odeint_run(d, design, rtol, atol, use_jac, cap_s)
    walls = [r["wall_s"]]
    if r["status"] == "completed":
        for _ in range(_repeats(r["wall_s"])):
            again = odeint_run(d, design, rtol, atol, use_jac, cap_s)
            if again["status"] == "completed":
                walls.append(again["wall_s"])
    r.update({"method": label, "kind": "scipy", "rtol": rtol, "atol": atol, "jacobian": "analytic" if use_jac else
              "finite differences (LSODA's own)", "wall_s": min(walls), "walls_s": walls, "cap_s": cap_s})
    return r


# --------------------------------------------------------------------------------------------------
# one case: d × design
# --------------------------------------------------------------------------------------------------
def scipy_settings(atol_factor: float) -> list[tuple[str, float, float, bool]]:
    """(label, rtol, atol, analytic Jacobian) of the scipy runs of a case."""
    out = []
    for jac in (False, True):
        j = " +Jac" if jac else ""
        out.append((f"odeint default{j}", ODEINT_DEFAULT_TOL, ODEINT_DEFAULT_TOL, jac))
        for r in RTOLS:
            out.append((f"odeint rtol=atol={r:g}{j}", r, r, jac))
        for r in RTOLS:
            out.append((f"odeint rtol {r:g}, gflow's atol{j}", r, r * atol_factor, jac))
    return out


def run_case(d: int, design: str, cap_s: float, log, radau_check: bool = False) -> dict:
    lag_weights, t1 = DESIGNS[design]
    load0 = os.getloadavg()
    loss, model0, _ = gflow_problem(d, design)
    factor = gflow_atol_factor(model0)
    field = Field(d, lag_weights)
    case = {"d": d, "design": design, "length": LENGTH, "seed": SEED, "lag_weights": {str(k): v for k, v in
            lag_weights.items()}, "t1": t1, "atol_factor": factor, "ext_lags": N_EXT,
            "ext_teacher_norm": float(d), "loss_a0": field.loss(initial_a(d))}
    case["rhs_max_rel_diff_numpy_vs_gflow"] = same_field(loss, model0, field)
    log(f"\n=== d = {d}, {design} (lags {lag_weights}, t1 = {t1:g}); gflow's atol = rtol × {factor:.3g}; numpy rhs vs "
        f"gflow −∇L: max rel diff {case['rhs_max_rel_diff_numpy_vs_gflow']:.1e}")

    ref = gflow_row(loss, model0, t1, REF_RTOL, solver="rodas5p")
    a_ref = ref.pop("a")
    ext_ref = ext_error(a_ref)
    ref.update({"ext": ext_ref, "repeats": len(ref["walls_s"])})
    case["reference"] = ref
    log(f"    reference: gflow Rodas5P rtol {REF_RTOL:g}: {ref['status']}, {ref['steps']} steps, {ref['wall_s']:.2f} s, "
        f"ext = {ext_ref:.10g}, final L {ref['final_loss']:.3g}, a_max {np.max(a_ref):.6g}")
    if radau_check:
        start = _now()
        a_rad = radau_reference(d, design)
        case["radau_check"] = {"method": f"scipy Radau, exact Jacobian, rtol {RADAU_RTOL:g}, restarted at 40 log-spaced "
                                         f"times", "wall_s": _now() - start, "ext": ext_error(a_rad),
                               "ext_rel_diff": abs(ext_error(a_rad) - ext_ref) / ext_ref,
                               "a_rel_diff": float(np.max(np.abs(a_rad - a_ref)) / np.max(np.abs(a_ref)))}
        rc = case["radau_check"]
        log(f"    check: {rc['method']}: ext = {rc['ext']:.10g} (rel diff {rc['ext_rel_diff']:.1e}), a rel diff "
            f"{rc['a_rel_diff']:.1e}, {rc['wall_s']:.1f} s")

    if radau_check and d == 10:
        case["reproduction"] = rp = reproduction(design, d)
        rp["reference_rel_diff"] = abs(rp["printed_ext"] - ext_ref) / ext_ref
        log(f"    their printed ext (seed 242) {rp['printed_ext']:.10g} (rel diff to the reference "
            f"{rp['reference_rel_diff']:.1e}); odeint defaults on their grid: their notebook's rhs "
            f"{rp['notebook_rhs_ext']:.10g} (rel diff {rp['notebook_rhs_rel_diff']:.1e}), the elementwise rhs "
            f"{rp['elementwise_rhs_ext']:.10g} ({rp['elementwise_rhs_rel_diff']:.1e})")

    rows = [gflow_row(loss, model0, t1, r) for r in RTOLS]
    for label, rtol, atol, jac in scipy_settings(factor):
        rows.append(scipy_row(d, design, label, rtol, atol, jac, cap_s))
    for r in rows:
        a = r.pop("a", None)
        r["ext"] = None if a is None else ext_error(a)
        r["ext_rel_err"] = None if a is None else abs(r["ext"] - ext_ref) / ext_ref
        r["a_rel_err"] = None if a is None else float(np.max(np.abs(a - a_ref)) / np.max(np.abs(a_ref)))
    _ratios(rows)
    case["rows"] = rows
    case["loadavg_before"], case["loadavg_after"] = list(load0), list(os.getloadavg())
    print_case(case, log)
    return case


def _ratios(rows):
    """wall / gflow's wall at the same rtol (LSODA's default 1.49e-8 against gflow at 1e-8); and wall / the
    fastest gflow run that is at least as accurate (final a error ≤ max(this run's, ACCURACY_FLOOR)); '>' for runs
    stopped at the cap."""
    g = {r["rtol"]: r for r in rows if r["kind"] == "gflow"}
    for r in rows:
        if r["kind"] != "scipy":
            continue
        peer = g.get(r["rtol"]) or g[min(RTOLS)]
        r["vs_gflow_rtol"] = peer["rtol"]
        r["ratio"] = r["wall_s"] / peer["wall_s"]
        r["ratio_lower_bound"] = r["status"] == "cap"
        if r["a_rel_err"] is not None:
            bar = max(r["a_rel_err"], ACCURACY_FLOOR)
            better = [x for x in g.values() if x["a_rel_err"] is not None and x["a_rel_err"] <= bar]
            best = min(better, key=lambda x: x["wall_s"]) if better else None
            r["ratio_same_accuracy"] = None if best is None else r["wall_s"] / best["wall_s"]
            r["same_accuracy_gflow_rtol"] = None if best is None else best["rtol"]


# --------------------------------------------------------------------------------------------------
# printing
# --------------------------------------------------------------------------------------------------
def _f(x, spec, width=None):
    s = "—" if x is None or (isinstance(x, float) and not math.isfinite(x)) else format(x, spec)
    return s.rjust(width) if width else s


def _wall(r) -> str:
    return (f"> {r['cap_s']:g}" if r["status"] == "cap" else f"{r['wall_s']:.4f}") if r["wall_s"] is not None else "—"


def _ratio(r) -> str:
    if r.get("ratio") is None:
        return "—"
    return (">" if r.get("ratio_lower_bound") else "") + f"{r['ratio']:.3g}×"


def print_case(case, log):
    hdr = (f"{'method':<36} {'status':<9} {'wall s':>9} {'1st call':>8} {'short':>6} {'steps':>6} {'rhs evals':>9} {'Jac':>4} "
           f"{'ext':>12} {'ext rel err':>11} {'a rel err':>9} {'final L':>9} {'ratio':>8} {'same-acc':>8}")
    ref = case["reference"]
    log(f"--- d = {case['d']}, {case['design']}: reference ext = {ref['ext']:.10g} (gflow Rodas5P rtol {REF_RTOL:g}, "
        f"{ref['steps']} steps, {ref['wall_s']:.2f} s); load avg {case['loadavg_before'][0]:.2f} → "
        f"{case['loadavg_after'][0]:.2f}")
    log(hdr)
    log("-" * len(hdr))
    for r in case["rows"]:
        name = r["method"] + (f" rtol {r['rtol']:g}" if r["kind"] == "gflow" else "")
        same = r.get("ratio_same_accuracy")
        log(f"{name:<36} {r['status']:<9} {_wall(r):>9} {_f(r.get('first_call_s'), '.2f', 8)} {_f(r.get('short_call_s'), '.3f', 6)} "
            f"{_f(r.get('steps'), 'd', 6)} {_f(r.get('rhs_evaluations'), 'd', 9)} {_f(r.get('jacobians'), 'd', 4)} "
            f"{_f(r['ext'], '.10f', 12)} {_f(r['ext_rel_err'], '.1e', 11)} {_f(r['a_rel_err'], '.1e', 9)} "
            f"{_f(r.get('final_loss'), '.1e', 9)} {_ratio(r):>8} {'—' if same is None else f'{same:.3g}×':>8}")
    log("  (wall: best of the timed calls, gflow's warm; 1st call: gflow's first (compile or cache load + run); short: "
        "gflow's warm call to t1·1e-13, its fixed cost per call; ratio: wall / gflow's at the same rtol, the default 1.49e-8 "
        "against gflow's 1e-8; same-acc: wall / the fastest gflow run whose final a is at least as accurate, errors below "
        f"{ACCURACY_FLOOR:g} counted as equal)")


def print_summary(cases, log):
    """One line per method and design: wall (ratio) and ext rel err over d."""
    dims = sorted({c["d"] for c in cases})
    for design in DESIGNS:
        cs = {c["d"]: c for c in cases if c["design"] == design}
        if not cs:
            continue
        log(f"\n=== summary, {design}: wall s (ratio to gflow at the same rtol) [ext rel err] per d")
        log(f"{'method':<36} " + " ".join(f"{'d = ' + str(d):>30}" for d in dims))
        names = [r["method"] + (f" rtol {r['rtol']:g}" if r["kind"] == "gflow" else "")
                 for r in next(iter(cs.values()))["rows"]]
        for i, name in enumerate(names):
            cells = []
            for d in dims:
                if d not in cs:
                    cells.append("")
                    continue
                r = cs[d]["rows"][i]
                rat = "" if r["kind"] == "gflow" else f" ({_ratio(r)})"
                cells.append(f"{_wall(r)}{rat} [{_f(r['ext_rel_err'], '.0e')}]")
            log(f"{name:<36} " + " ".join(f"{c:>30}" for c in cells))


# --------------------------------------------------------------------------------------------------
# the cold first call, in fresh processes
# --------------------------------------------------------------------------------------------------
def _probe(kind: str) -> dict:
    """Runs in a fresh process (``python bench/_ssm.py --probe``): import, then the d = 10 baseline flow."""
    d, design = 10, "baseline"
    t0 = _now()
    if kind == "gflow":
        import gflow  # noqa: F401

        imported = _now()
        loss, model0, t1 = gflow_problem(d, design)
        built = _now()
        traj, first = gflow_solve(loss, model0, t1, 1e-8)
        traj, second = gflow_solve(loss, model0, t1, 1e-8)
        return {"import_s": imported - t0, "build_s": built - imported, "first_solve_s": first,
                "second_solve_s": second, "steps": int(traj.stats["steps"]), "ext": ext_error(np.asarray(traj.final.A)),
                "cache_dir": gflow.COMPILATION_CACHE_DIR}
    from scipy.integrate import odeint  # noqa: F401

    imported = _now()
    r = odeint_run(d, design, ODEINT_DEFAULT_TOL, ODEINT_DEFAULT_TOL, False, 600.0)
    r2 = odeint_run(d, design, ODEINT_DEFAULT_TOL, ODEINT_DEFAULT_TOL, False, 600.0)
    return {"import_s": imported - t0, "first_solve_s": r["wall_s"], "second_solve_s": r2["wall_s"],
            "steps": r["steps"], "ext": ext_error(r["a"])}


def cold_start(log) -> dict:
    """gflow in a fresh process with an empty compilation cache, again from that cache, and scipy odeint in a fresh
    process: each timed by this process from spawn to exit, and inside (import, first and second solve)."""
    import tempfile

    out = {"problem": f"d = 10, baseline, t1 = {DESIGNS['baseline'][1]:g}; gflow default solver at rtol 1e-8, odeint "
                      f"at its defaults"}
    cmd = [sys.executable, os.path.abspath(__file__), "--probe"]
    with tempfile.TemporaryDirectory(prefix="gflow_ssm_cache_") as cache:
        env = dict(os.environ, GFLOW_CACHE_DIR=cache, GFLOW_COMPILATION_CACHE="1")
        env.pop("JAX_COMPILATION_CACHE_DIR", None)
        for label, kind in (("gflow_cold", "gflow"), ("gflow_cached", "gflow"), ("scipy", "scipy")):
            start = _now()
            done = subprocess.run(cmd + [kind], capture_output=True, text=True, env=env, timeout=900)
            wall = _now() - start
            if done.returncode != 0:
                out[label] = {"error": done.stderr[-2000:]}
                log(f"    {label}: failed\n{done.stderr[-2000:]}")
                continue
            r = json.loads(done.stdout.strip().splitlines()[-1])
            r["process_s"] = wall
            out[label] = r
            log(f"    {label:<13} process {wall:6.2f} s: import {r['import_s']:.2f} s, first solve "
                f"{r['first_solve_s']:.3f} s, second {r['second_solve_s']:.4f} s, ext {r['ext']:.10g}")
        out["cache_files"] = sum(len(f) for _, _, f in os.walk(cache))
    return out


# --------------------------------------------------------------------------------------------------
# the whole comparison
# --------------------------------------------------------------------------------------------------
def run(dims, cap_s: float, log) -> dict:
    cases = []
    for d in dims:
        for design in DESIGNS:
            cases.append(run_case(d, design, cap_s, log, radau_check=(d == min(dims))))
    print_summary(cases, log)
    log("\n=== the cold first call (fresh processes; d = 10 baseline)")
    cold = cold_start(log)
    return {"cases": cases, "cold_start": cold}


def checks(result) -> list[dict]:
    out = []
    for c in result["cases"]:
        if "radau_check" in c:
            rc = c["radau_check"]
            out.append({"target": f"d = {c['d']} {c['design']}: the reference agrees with Radau (rtol 1e-13): ext "
                                  f"rel diff ≤ 1e-7", "value": f"{rc['ext_rel_diff']:.1e}",
                        "passed": rc["ext_rel_diff"] <= 1e-7})
        if c["design"] == "baseline" and "reproduction" in c:
            rp = c["reproduction"]
            diff = abs(rp["elementwise_rhs_ext"] - rp["printed_ext"])
            out.append({"target": "d = 10 baseline: odeint at its defaults on the O(d) rhs reproduces the notebook's "
                                  "printed ext (seed 242) to its last digit (|Δ| ≤ 5e-11)", "value": f"{diff:.1e}",
                        "passed": diff <= 5e-11})
        out.append({"target": f"d = {c['d']} {c['design']}: numpy rhs = gflow's −∇L to 1e-12",
                    "value": f"{c['rhs_max_rel_diff_numpy_vs_gflow']:.1e}",
                    "passed": c["rhs_max_rel_diff_numpy_vs_gflow"] <= 1e-12})
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--probe", choices=["gflow", "scipy"], required=True,
                    help="one fresh-process measurement of the cold first call (bench/run.py --ssm runs these)")
    print(json.dumps(_probe(ap.parse_args().probe)))
