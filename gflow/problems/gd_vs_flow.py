"""The two problems on which studies/gd_vs_flow.py compares gradient descent with the gradient flow it discretizes:
seed 000's balanced teacher and seed 001's memoryless teacher (w* > 0), each from a symmetric and a general start;
the reference flows, the GD sweep below the stability edge 2/λ_max, the short runs for the drift of Q in the early
phase, SGD and Adam from the symmetric start (seed 000 App. C.1 settings), and the study's figures (:data:`FIGURES`).

Functions that take ``args`` read the study's options from it."""

from __future__ import annotations

import equinox as eqx
import jax
import numpy as np

import gflow
from gflow import analysis as an, initializers, teachers

SOURCE_000 = "seed 000 (Cohen-Karlik et al., ICLR 2023)"


SOURCE_001 = "seed 001 (Cohen-Karlik et al., implicit bias of GD for temporal extrapolation)"


PROBLEMS = ("balanced", "memoryless")


STARTS = ("symmetric", "general")


EDGE_FACTORS = (0.9, 1.5)  # GD runs at these multiples of the stability edge (reported, not in the fit)


def symmetric_general_start(key, d, scale):
    """A = Aᵀ, B = Cᵀ stored as a *general* student, so that GD on (A, B, C) may leave the class (it must not)."""
    m = initializers.balanced(key, d, scale=scale, structure="symmetric")
    return gflow.LinearRNN(m.transition(), m.B, m.C, structure="general")


def build_problems(args):
    """Both problems ("balanced": seed 000's balanced teacher, "memoryless": seed 001's w*): teacher, loss, horizon,
    step-size count, source, the symmetric and general starts, the SGD dataset and the fresh-data loss."""
    key = jax.random.key(args.seed)
    k_teacher, k_sym, k_gen, k_data = jax.random.split(key, 4)
    balanced = teachers.balanced(k_teacher, args.teacher_dim)
    memoryless = teachers.memoryless(args.w_star)
    out = {}
    for name, teacher, d, horizon, n_eta, source in (
            ("balanced", balanced, args.d_balanced, args.horizon_balanced, args.n_eta_balanced, SOURCE_000),
            ("memoryless", memoryless, args.d_memoryless, args.horizon_memoryless, args.n_eta_memoryless, SOURCE_001)):
        out[name] = {
            "name": name, "teacher": teacher, "d": d, "horizon": horizon, "n_eta": n_eta, "source": source,
            "loss": gflow.PopulationLoss(teacher, args.k),
            "starts": {"symmetric": symmetric_general_start(k_sym, d, args.init_scale),
                       "general": initializers.gaussian(k_gen, d, scale=1.0, convention="normal")},
            "data": gflow.objectives.EmpiricalLoss.from_teacher(k_data, teacher, args.n_data, args.k),
            "fresh": gflow.objectives.FreshGaussianSequences(teacher, args.k),
        }
    return out


class FlowCache:
    """Reference flows at given save times, each solved once per (problem, start, rtol)."""

    def __init__(self, args):
        self.args, self.cache = args, {}

    def __call__(self, loss, model0, ts, rtol, tag):
        key = (tag, rtol, np.asarray(ts).tobytes())
        if key not in self.cache:
            traj = gflow.solve_flow(loss, model0, float(ts[-1]), save_at=ts, rtol=rtol, solver=self.args.solver,
                                    config={"study": "gd_vs_flow"})
            if traj.status != "completed":
                raise RuntimeError(f"reference flow {tag} did not complete: {traj.status} ({traj.message})")
            self.cache[key] = traj
        return self.cache[key]


tail_error_at = eqx.filter_jit(an.tail_error)  # compiled once: an eager call re-compiles the impulse response's scan


loss_at = eqx.filter_jit(lambda loss, model: loss(model))


def method_row(traj, loss, teacher, k):
    """What a run of any method gives: final loss, extrapolation (tail) error, status, steps, final time, wall time and
    the largest balance and symmetry defects along it."""
    return {"final_loss": float(loss_at(loss, traj.final)),
            "extrapolation_error": float(tail_error_at(traj.final, teacher, k)),
            "status": traj.status, "steps": traj.stats["steps"], "t_final": float(traj.ts[-1]),
            "wall_time_s": traj.stats["wall_time_s"],
            "balance_defect": float(np.max(an.along(traj, an.balance_defect))),
            "symmetry_defect": float(np.max(an.along(traj, an.symmetry_defect)))}


def run_gd(problem, start, eta, save_steps):
    """GD at step ``eta`` from ``start`` of ``problem``, saved at the steps ``save_steps`` (the last one ends it)."""
    return gflow.discrete.run_gd(problem["loss"], problem["starts"][start], lr=float(eta), steps=int(save_steps[-1]),
                                 save_at=save_steps, config={"study": "gd_vs_flow", "problem": problem["name"],
                                                             "start": start})


def sweep_one_start(problem, start_name, args, flows, tight_rtol):
    """Flow, sharpness, GD sweep and edge runs from one start; returns the measurements."""
    loss, model0, horizon = problem["loss"], problem["starts"][start_name], problem["horizon"]
    tag = f"{problem['name']}/{start_name}"
    # sharpness along a first flow (log-spaced) -> stability edge
    probe = gflow.solve_flow(loss, model0, horizon, save_at=args.n_save, rtol=args.rtol, solver=args.solver)
    lam = an.sharpness_along(loss, probe)
    edge = an.stability_edge(float(np.max(lam)))
    etas = edge / 2.0 ** np.arange(1, problem["n_eta"] + 1)
    eta_max = etas[0]
    base_steps = gflow.discrete.log_save_steps(max(2, int(round(horizon / eta_max))), args.n_save)
    ts = eta_max * base_steps
    flow = flows(loss, model0, ts, args.rtol, tag)
    flow_tight = flows(loss, model0, ts, tight_rtol, tag)
    runs = []
    for eta in etas:
        ratio = int(round(eta_max / eta))
        traj = run_gd(problem, start_name, eta, base_steps * ratio)
        dist = an.distance_to_flow(traj, flow)
        dist_tight = an.distance_to_flow(traj, flow_tight)
        q = an.balance_matrix_drift(traj)
        runs.append({"eta": float(eta), "traj": traj, "distance": dist, "distance_tight": dist_tight, "q_drift": q})
        print(f"  {tag}: GD η = {eta:.3e} ({traj.stats['steps']} steps, {traj.stats['wall_time_s']:.2f} s) "
              f"{traj.status}; max distance to flow: θ {np.max(dist['parameters']):.3e} (relative), "
              f"h {np.max(dist['impulse_response']):.3e}, L {np.max(dist['loss']):.3e}; Q drift {q[-1]:.2e}",
              flush=True)
    edge_runs = []
    for factor in EDGE_FACTORS:
        eta = factor * edge
        steps = gflow.discrete.log_save_steps(max(2, int(round(horizon / eta))), args.n_save)
        traj = run_gd(problem, start_name, eta, steps)
        compare = traj.status == "completed" and factor < 1.0  # above the edge GD is not expected to follow
        dist = an.distance_to_flow(traj, flows(loss, model0, traj.ts, args.rtol, tag)) if compare else None
        edge_runs.append({"factor": factor, "eta": float(eta), "traj": traj, "distance": dist})
        more = (f"max relative distance to flow {np.max(dist['parameters']):.3e}" if dist is not None
                else traj.message)
        print(f"  {tag}: GD at {factor} × edge (η = {eta:.3e}): {traj.status}, final loss "
              f"{float(loss_at(loss, traj.final)):.3e}; {more}", flush=True)
    return {"probe": probe, "sharpness": lam, "edge": edge, "etas": etas, "flow": flow, "runs": runs,
            "edge_runs": edge_runs}


def early_window(traj, fraction=0.9):
    """Largest saved time at which the loss is still ≥ fraction · L(0): the gradients are about constant."""
    keep = np.asarray(traj.loss) >= fraction * traj.loss[0]
    return float(traj.ts[np.flatnonzero(keep)[-1]])


def q_drift_runs(problem, args):
    """Short GD runs from the general start, to 4 t_early with η ≤ t_early/50, resolving the early phase."""
    r = problem["results"]["general"]
    t_early = early_window(r["probe"])
    eta0 = min(r["edge"] / 2.0, t_early / 50.0)
    base = gflow.discrete.log_save_steps(int(round(4 * t_early / eta0)), args.n_save)
    runs = []
    for eta in eta0 / 2.0 ** np.arange(args.n_fit):
        ratio = int(round(eta0 / eta))
        traj = run_gd(problem, "general", eta, base * ratio)
        runs.append({"eta": float(eta), "traj": traj, "q_drift": an.balance_matrix_drift(traj)})
    at_early = ", ".join(f"{np.interp(t_early, run['traj'].ts, run['q_drift']):.2e}" for run in runs)
    etas = ", ".join(f"{run['eta']:.2e}" for run in runs)
    print(f"  {problem['name']}/general: early phase t <= {t_early:.3g}; relative Q drift there {at_early} "
          f"for η = {etas}", flush=True)
    return t_early, runs


def other_methods(problem, args):
    """SGD (finite data and fresh sequences) and Adam from the symmetric start; GD's smallest-η run joins them."""
    model0, eta_sgd = problem["starts"]["symmetric"], problem["results"]["symmetric"]["edge"] / 2.0
    cfg = {"save_at": args.n_save, "config": {"study": "gd_vs_flow", "problem": problem["name"], "start": "symmetric"}}
    sgd = {"lr": eta_sgd, "steps": max(2, int(round(problem["horizon"] / eta_sgd))), "batch_size": args.batch, **cfg}
    out = {"SGD (N data)": gflow.discrete.run_sgd(problem["data"], model0, key=jax.random.key(args.seed + 11), **sgd),
           "SGD (fresh)": gflow.discrete.run_sgd(problem["fresh"], model0, key=jax.random.key(args.seed + 12), **sgd),
           "Adam": gflow.discrete.run_adam(problem["loss"], model0, steps=args.adam_steps, lr=args.adam_lr, **cfg)}
    for name, traj in out.items():
        print(f"  {problem['name']}: {name} ({traj.stats['steps']} steps, {traj.stats['wall_time_s']:.2f} s): "
              f"{traj.status}, final full loss {traj.loss[-1]:.3e}", flush=True)
    return out, eta_sgd


def figure_distance_to_flow(args, problems):
    """Draw the distance ‖θ_GD(t) − θ_flow(t)‖ of every GD run (and the runs at the stability edge) to the gradient
    flow against t = η · step, per problem and start: GD tracks the flow to O(η) (seed 000 Sec. 5 trains by GD as
    a discretization of the flow; seed 001's Theorem 6.1 is a gradient-flow statement)."""
    import matplotlib.pyplot as plt

    from gflow.plot import figure_grid, label_axes

    fig, axes = figure_grid(2, 2)
    for (i, name), (j, start) in ((p, q) for p in enumerate(PROBLEMS) for q in enumerate(STARTS)):
        ax, r = axes[i, j], problems[name]["results"][start]
        for c, run in zip(plt.cm.viridis(np.linspace(0, 0.85, len(r["runs"]))), r["runs"]):
            ax.loglog(run["traj"].ts[1:], run["distance"]["parameters"][1:], color=c, label=f"GD η = {run['eta']:.2e}")
        for e in r["edge_runs"]:
            if e["distance"] is not None:
                ax.loglog(e["traj"].ts[1:], e["distance"]["parameters"][1:], "--", color="tab:red",
                          label=f"GD η = {e['factor']} × edge")
        label_axes(ax, xlabel="t (= η · step)", ylabel="‖θ_GD(t) − θ_flow(t)‖ / max ‖θ_flow‖", legend=7,
                   title=f"{name} teacher, {start} start (edge 2/λ_max = {r['edge']:.2e})")
    return fig


def figure_step_size_scaling(args, problems):
    """Draw max_t of the distance to the flow (parameters, impulse response, loss) against η, per problem and start,
    with the fitted log-log slopes (1 for a first-order discretization of the flow)."""
    import matplotlib.ticker

    from gflow.plot import figure_grid, label_axes

    fig, axes = figure_grid(1, 2)
    for ax, name in zip(axes, PROBLEMS):
        for start, marker in zip(STARTS, ("o", "s")):
            entry = problems[name]["summary"][start]
            for measure, ls in (("parameters", "-"), ("impulse_response", "--"), ("loss", ":")):
                ax.loglog(entry["etas"], entry[f"max_distance_{measure}"], marker + ls,
                          label=f"{start}: {measure} (slope {entry[f'exponent_{measure}']:.2f})")
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())  # minor labels of a short decade overlap
        label_axes(ax, xlabel="step size η", ylabel="max_t distance to the flow", legend=7,
                   title=f"{name} teacher: distance to the flow against η\n"
                         f"(slopes fitted on the {args.n_fit} smallest η)")
    return fig


def figure_q_drift(args, problems):
    """Draw the relative drift of Q = AAᵀ − AᵀA + BBᵀ − CᵀC along GD divided by η, per problem (general start): Q is
    conserved by the flow (seed 000 Lemma E.7), so GD's drift is O(η), and the curves collapse."""
    from gflow.plot import figure_grid, label_axes

    fig, axes = figure_grid(1, 2)
    for ax, name in zip(axes, PROBLEMS):
        p = problems[name]
        for runs, style, lw, what in ((p["results"]["general"]["runs"], "-", 1, ""),
                                      (p["q_runs"], "--", 1.5, "short run ")):
            for run in runs:
                ax.loglog(run["traj"].ts[1:], run["q_drift"][1:] / run["eta"], style, lw=lw,
                          label=f"{what}η = {run['eta']:.2e}")
        run = p["q_runs"][-1]
        ts = run["traj"].ts[1:]
        ax.loglog(ts, run["q_drift"][1] / run["eta"] * ts / ts[0], "k:", label="∝ t")
        ax.axvline(p["t_early"], color="gray", lw=0.8)
        label_axes(ax, xlabel="t", ylabel="relative drift of Q, divided by η", legend=6,
                   title=f"{name} teacher, general start: Q drift / η\n"
                         "(curves collapse: ∝ η; gray: end of the early phase)")
    return fig


def figure_methods(args, problems):
    """Draw the final population loss and the extrapolation error (ℓ∞ tail, j ∈ [k, 100)) of every method (flow, GD,
    SGD, Adam as in seed 000 App. C.1) from the symmetric start, per problem, against the zero solution's error."""
    from gflow.plot import figure_grid, label_axes

    fig, axes = figure_grid(2, 2, panel=(6.5, 4))
    for j, name in enumerate(PROBLEMS):
        rows = problems[name]["table"]
        for i, (field, title) in enumerate((("final_loss", "final population loss"),
                                            ("extrapolation_error", "extrapolation error (ℓ∞ tail, j ∈ [k, 100))"))):
            ax = axes[i, j]
            ax.bar(range(len(rows)), [max(row[field], 1e-300) for row in rows.values()], color="tab:blue")
            ax.set_xticks(range(len(rows)), list(rows), rotation=35, ha="right", fontsize=7)
            if field == "extrapolation_error":
                ax.axhline(problems[name]["zero_error"], color="k", ls="--", label="zero solution")
            label_axes(ax, yscale="log", title=f"{name} teacher, symmetric start:\n{title}",
                       legend=7 if field == "extrapolation_error" else None)
    return fig


def figure_sharpness(args, problems):
    """Draw the sharpness λ_max(∇²L) along the flow against 2/η of every GD run (GD is stable below it)."""
    from gflow.plot import figure_grid, label_axes

    fig, axes = figure_grid(1, 2)
    for ax, name in zip(axes, PROBLEMS):
        for start, color in zip(STARTS, ("tab:blue", "tab:orange")):
            r = problems[name]["results"][start]
            ax.loglog(r["probe"].ts[1:], r["sharpness"][1:], color=color, label=f"{start} start: λ_max(t)")
            for eta in list(r["etas"]) + [e["eta"] for e in r["edge_runs"]]:
                ax.axhline(2.0 / eta, ls=":", lw=0.7, color=color)
        label_axes(ax, xlabel="t", ylabel="λ_max(∇²L(θ_flow(t)))", legend=7,
                   title=f"{name} teacher: sharpness along the flow\n(dotted: 2/η of every GD run; stable below)")
    return fig


# the study's figures by file name: each draws from the study's summarized problems (``results``, ``summary``,
# ``table``, ``q_runs``, ``t_early``, ``zero_error`` filled in by studies/gd_vs_flow.py) and returns the figure
FIGURES = {"distance_to_flow.png": figure_distance_to_flow, "step_size_scaling.png": figure_step_size_scaling,
           "q_drift.png": figure_q_drift, "methods.png": figure_methods, "sharpness.png": figure_sharpness}
