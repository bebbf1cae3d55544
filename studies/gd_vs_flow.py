"""Gradient descent, SGD and Adam against the gradient flow they are said to follow (seed 000 §3.1, App. C.1;
seed 001 §3.2).

Two problems: seed 000's balanced teacher (d̂ = 5, App. C.2.1) and seed 001's memoryless teacher (w* = 1), both
with the population loss over k lags (convention "L", no 1/2) and a general (A, B, C) student. Two starts each:
"symmetric" (A = Aᵀ, B = Cᵀ at scale ``--init-scale``, the theory's class, seed 000 Lemma 6 / seed 001 Thm 6.1)
and "general" (every parameter N(0, 1/n) per entry, so Q = AAᵀ − AᵀA + BBᵀ − CᵀC ≠ 0).

For every problem and start the flow is integrated to the problem's horizon, its sharpness λ_max(t) (top
Hessian eigenvalue, Lanczos) gives the stability edge η_edge = 2 / max_t λ_max(t), and GD runs at η = η_edge/2,
/4, ... (the sweep) and at 0.9 η_edge and 1.5 η_edge (the edge). GD is compared with the flow at the same times
t = η·n (parameters, impulse response, loss); first order is an η → 0 statement, so the exponent is fitted on the
three smallest step sizes (``--n-fit``) and the ratio of the distances at η and η/2 is reported for every pair.
From the symmetric start SGD (minibatches of 100 from N Gaussian sequences, and fresh sequences every step) and
Adam at the paper's setting (lr 1e-3, 15 000 steps) run too; every method's final population loss and
extrapolation error (ℓ∞ tail of the impulse response on [k, 100)) are reported.

Checks. *Predictions* (seed 000 Lemma 6 / E.7, seed 001 Thm 6.1 (1)): the drift of Q under GD from
the general start scales like η, both at the horizon and in the early phase (the loss within 10 % of L(0); short
GD runs with η ≤ t_early/50 resolve it) — Q is conserved by the flow and changed by O(η²) per GD step, so by
O(η) over the t/η steps to a fixed t (exponent in [0.8, 1.2]); the flow, GD, SGD and Adam from the symmetric start
keep A = Aᵀ and B = Cᵀ to rounding (max relative defect ≤ 1e-12). *Sanity* checks (numerics, not
the papers): GD is first order (fitted exponent of its distance to the flow in η within [0.8, 1.2]: Euler's
method); the drift of Q grows like t in the early phase (the window in which the gradients are about constant);
GD below the edge stays stable; and the flow's tolerance does not move the measured distances (rtol and rtol/100
agree to 1 % of the smallest distance). Everything runs from one seed (``--seed``: teacher, starts, data).

Example:  python studies/gd_vs_flow.py --quick --out out/gd_vs_flow
"""

from __future__ import annotations

import numpy as np

from gflow import analysis as an
from gflow.problems import gd_vs_flow as gvf
from gflow.study import (
    check,
    QuickFull,
    rtol_option,
    run_study,
    save_figure,
    save_trajectories,
    study_parser,
    tight_rtol,
    tolerance_agreement,
)


def parse_args(argv=None):
    p = study_parser(__doc__, "out/gd_vs_flow", "output folder for figures, trajectories, summary.json",
                     "small sizes that finish in well under a minute")
    p.add_argument("--d-balanced", type=int, default=QuickFull(40, quick=20),
                   help="student dimension, seed-000 problem (40 as in seed 000 Fig. 1a)")
    p.add_argument("--d-memoryless", type=int, default=20, help="student dimension, seed-001 problem")
    p.add_argument("--teacher-dim", type=int, default=5, help="balanced teacher dimension d̂")
    p.add_argument("--w-star", type=float, default=1.0, help="memoryless teacher w*")
    p.add_argument("--k", type=int, default=20, help="training length (lags of the population loss)")
    p.add_argument("--init-scale", type=float, default=1e-2, help="scale of the symmetric balanced start")
    p.add_argument("--horizon-balanced", type=float, default=QuickFull(10.0, quick=5.0),
                   help="seed-000 problem: flow and GD are compared on t ∈ [0, horizon]")
    p.add_argument("--horizon-memoryless", type=float, default=40.0,
                   help="seed-001 problem: the horizon (its stability edge is ~100× larger, so more time)")
    p.add_argument("--n-eta-balanced", type=int, default=QuickFull(5, quick=3),
                   help="seed-000 problem: step sizes η_edge/2, /4, ...")
    p.add_argument("--n-eta-memoryless", type=int, default=QuickFull(8, quick=6),
                   help="seed-001 problem: step sizes η_edge/2, /4, ... (its runs are cheap)")
    p.add_argument("--n-fit", type=int, default=3, help="fit the exponents on this many of the smallest η")
    p.add_argument("--n-save", type=int, default=40, help="log-spaced saved steps per run")
    rtol_option(p, 1e-10, what="flow rtol")
    p.add_argument("--solver", default="tsit5", help="solver of the reference flows (not stiff up to the horizon)")
    p.add_argument("--adam-lr", type=float, default=1e-3, help="Adam learning rate (seed 000 App. C.1)")
    p.add_argument("--adam-steps", type=int, default=15_000, help="Adam steps (seed 000 App. C.1)")
    p.add_argument("--n-data", type=int, default=QuickFull(10_000, quick=1000),
                   help="Gaussian sequences in the SGD dataset (10000 as in seed 000 Sec. 5.1)")
    p.add_argument("--batch", type=int, default=100, help="SGD minibatch size (seed 000 App. C.1)")
    p.add_argument("--seed", type=int, default=0, help="seed of the teacher, starts and data")
    args = p.parse_args(argv)
    p.require_positive(args, "d_balanced", "d_memoryless", "teacher_dim", "k", "init_scale", "horizon_balanced",
                       "horizon_memoryless", "adam_lr", "adam_steps", "n_data", "batch")
    if args.n_fit < 2 or min(args.n_eta_balanced, args.n_eta_memoryless) < args.n_fit:
        p.error("--n-fit must be >= 2 and at most --n-eta-balanced and --n-eta-memoryless")
    if args.n_save < 2:
        p.error(f"--n-save must be >= 2, got {args.n_save}")
    if args.batch > args.n_data:
        p.error("--batch must not exceed --n-data")
    if not (np.isfinite(args.w_star) and args.w_star != 0):  # w* = 0: a zero teacher, nothing to learn
        p.error(f"--w-star must be a nonzero number, got {args.w_star:g}")
    return args


def main(argv=None):
    return run_study("gd_vs_flow", parse_args, science, argv)


def science(args, checks, results):
    problems = gvf.build_problems(args)
    flows = gvf.FlowCache(args)
    print(f"gd_vs_flow: k={args.k}, horizons t={args.horizon_balanced:g} (balanced), {args.horizon_memoryless:g} "
          f"(memoryless), {args.n_eta_balanced} / {args.n_eta_memoryless} step sizes below the edge, "
          f"rtol {args.rtol:g} (and {tight_rtol(args.rtol):g}), Adam lr {args.adam_lr:g} × {args.adam_steps} steps, "
          f"SGD on N={args.n_data} / fresh sequences, batch {args.batch}", flush=True)
    for name, problem in problems.items():
        print(f"{name} teacher (d = {problem['d']}):", flush=True)
        problem["results"] = {s: gvf.sweep_one_start(problem, s, args, flows, tight_rtol(args.rtol))
                              for s in gvf.STARTS}
        problem["t_early"], problem["q_runs"] = gvf.q_drift_runs(problem, args)
        problem["methods"], eta_sgd = gvf.other_methods(problem, args)
        results[name] = summarize_problem(problem, args, eta_sgd, checks)
    for name, draw in gvf.FIGURES.items():
        save_figure(draw(args, problems), args.out, name)
    save_trajectories(args.out, kept_trajectories(problems))
    print()
    for name in gvf.PROBLEMS:
        r = results[name]
        print(f"{name}: edge 2/λ_max = {r['symmetric']['edge']:.3e} (symmetric start), "
              f"{r['general']['edge']:.3e} (general); distance exponents θ "
              f"{r['symmetric']['exponent_parameters']:.3f} / {r['general']['exponent_parameters']:.3f}; "
              f"Q drift ∝ η^{r['q_drift']['eta_exponent_at_horizon']:.3f} t^{r['q_drift']['t_exponent_early']:.3f} "
              f"(early, t ≤ {r['q_drift']['t_early']:.3g}); Adam final loss {r['methods']['Adam']['final_loss']:.3e}")


def summarize_problem(problem, args, eta_sgd, checks):
    """One problem's checks and results: each start, the Q drift, and the methods."""
    out = problem["summary"] = {"d": problem["d"], "eta_sgd": eta_sgd}
    for start in gvf.STARTS:
        out[start] = start_checks(problem, start, args, checks)
    out["q_drift"] = q_drift_checks(problem, args, checks)
    out["methods"] = problem["table"] = method_checks(problem, args, checks)
    out["zero_solution_error"] = problem["zero_error"] = float(an.zero_solution_error(problem["teacher"], args.k))
    return out


def start_checks(problem, start, args, checks) -> dict:
    """GD against the flow from one start: first-order distance, stability below the edge, the tolerance floor."""
    name, res = problem["name"], problem["results"]
    r = res[start]
    etas = np.asarray([run["eta"] for run in r["runs"]])
    entry = {"edge": r["edge"], "lambda_max": float(np.max(r["sharpness"])), "etas": etas,
             "sharpness": r["sharpness"], "sharpness_ts": r["probe"].ts}
    fit = slice(len(etas) - args.n_fit, None)  # the smallest step sizes: the asymptotic regime
    for measure in ("parameters", "impulse_response", "loss"):
        values = np.asarray([np.max(run["distance"][measure]) for run in r["runs"]])
        scaling = an.step_size_scaling(etas, values)
        entry[f"max_distance_{measure}"] = values
        entry[f"exponent_{measure}"] = an.step_size_scaling(etas[fit], values[fit])["exponent"]
        entry[f"exponent_all_eta_{measure}"] = scaling["exponent"]
        entry[f"ratios_eta_over_half_{measure}"] = scaling["ratios"][::-1]
    floor = max(float(np.max(np.abs(run["distance"]["parameters"] - run["distance_tight"]["parameters"])))
                for run in r["runs"])
    smallest = float(np.min(entry["max_distance_parameters"]))
    entry["tolerance_floor"] = floor
    entry["edge_runs"] = [{"factor": e["factor"], "eta": e["eta"], "status": e["traj"].status,
                           "message": e["traj"].message,
                           "final_loss": float(gvf.loss_at(problem["loss"], e["traj"].final)),
                           "max_distance_parameters": None if e["distance"] is None
                           else float(np.max(e["distance"]["parameters"]))} for e in r["edge_runs"]]
    p, n = entry["exponent_parameters"], len(etas)
    checks.append(check(f"{name}/{start} start (seed {args.seed}): GD is first order: max_t relative distance "
                        f"||theta_GD(t) - theta_flow(t)||/max||theta_flow|| (t <= {problem['horizon']:g}) ∝ η^p "
                        f"with p in [0.8, 1.2], fitted on the {args.n_fit} smallest of η_edge/2 … η_edge/2^{n}",
                        "GD = Euler method for the flow (seed 000 §3.1, seed 001 §3.2); Euler's global error is "
                        "O(η) (numerical analysis, not a paper prediction)", p, [0.8, 1.2], direction="in",
                        kind="sanity", predictions=["000-P2"] if start == "general" else None,
                        ratios_eta_over_half=entry["ratios_eta_over_half_parameters"], etas=etas,
                        exponent_all_eta=entry["exponent_all_eta_parameters"]))
    stable = [run["traj"].status for run in r["runs"]] + [r["edge_runs"][0]["traj"].status]
    checks.append(check(f"{name}/{start} start: GD at each of the {n} η = η_edge/2 … η_edge/2^{n} and at "
                        f"0.9 η_edge (η_edge = 2/max_t λ_max along the flow) completes without diverging",
                        "linear stability of GD: η < 2/λ_max", int(sum(s == "completed" for s in stable)),
                        len(stable), direction=">=", kind="sanity"))
    checks.append(tolerance_agreement(
        f"{name}/{start} start: solving the flow at rtol/100 instead of rtol {args.rtol:g} moves every GD-to-flow "
        f"parameter distance (all {n} η, all saved t) by <= 1% of the smallest max_t distance",
        "tolerance check (docs/design.md)", [run["distance"]["parameters"] for run in r["runs"]],
        [run["distance_tight"]["parameters"] for run in r["runs"]], 0.01 * smallest, relative=False))
    return entry


def q_drift_checks(problem, args, checks) -> dict:
    """Q drift from the general start: ∝ η at the horizon (main sweep), ∝ η and ∝ t in the early phase."""
    name, res = problem["name"], problem["results"]
    runs = res["general"]["runs"][-args.n_fit:]
    p_end = an.step_size_scaling([run["eta"] for run in runs], [run["q_drift"][-1] for run in runs])["exponent"]
    q_runs, t_early = problem["q_runs"], problem["t_early"]
    q_args = ([run["eta"] for run in q_runs], [run["traj"].ts for run in q_runs], [run["q_drift"] for run in q_runs])
    p_early, q_t = an.fit_drift_exponents(*q_args, t_max=t_early)
    _, q_all = an.fit_drift_exponents(*q_args)
    sym_q = max(float(np.nanmax(run["q_drift"])) for run in res["symmetric"]["runs"])
    q_drift = {"eta_exponent_at_horizon": p_end, "eta_exponent_early": p_early, "t_exponent_early": q_t,
               "t_early": t_early, "t_exponent_to_4_t_early": q_all,
               "relative_drift_at_horizon": [float(run["q_drift"][-1]) for run in runs],
               "etas_at_horizon": [run["eta"] for run in runs], "etas_early": q_args[0],
               "symmetric_start_max_drift": sym_q}
    src = "seed 000 Lemma E.7: Q conserved by the flow, changed by O(η²) per GD step"
    q_what = "relative drift ||Q(t) - Q(0)||_F / max_t(||AA^T|| + ||A^TA|| + ||BB^T|| + ||C^TC||)"
    early = (f"early phase t <= {t_early:.3g} (L >= 0.9 L(0)), joint fit drift ∝ η^p t^q over short GD runs at "
             f"the {len(q_runs)} step sizes {', '.join(f'{e:.2e}' for e in q_args[0])}")
    checks.append(check(f"{name}/general start (seed {args.seed}): {q_what} at t = {problem['horizon']:g} ∝ η^p, "
                        f"p in [0.8, 1.2] ({args.n_fit} smallest η of the sweep)", src, p_end, [0.8, 1.2],
                        direction="in", kind="prediction", eta_exponent_early=p_early, predictions=["000-P2"]))
    checks.append(check(f"{name}/general start: Q drift ∝ η^p with p in [0.8, 1.2] in the {early}", src, p_early,
                        [0.8, 1.2], direction="in", kind="prediction", predictions=["000-P2"]))
    checks.append(check(f"{name}/general start: Q drift ∝ t^q with q in [0.8, 1.2] in the same fit (gradients about "
                        f"constant there, so a per-step change accumulates linearly; guards the early window)",
                        src, q_t, [0.8, 1.2], direction="in", kind="sanity", t_exponent_to_4_t_early=q_all,
                        predictions=["000-P2"]))
    return q_drift


def method_checks(problem, args, checks) -> dict:
    """Every method from the symmetric start keeps the class (balancedness, symmetry); their table of results."""
    name, source, res = problem["name"], problem["source"], problem["results"]
    loss, teacher, k = problem["loss"], problem["teacher"], args.k
    methods = {"flow": problem["results"]["symmetric"]["flow"]}
    methods.update({f"GD η={run['eta']:.2e}": run["traj"] for run in res["symmetric"]["runs"]})
    methods.update(problem["methods"])
    table = {m: gvf.method_row(traj, loss, teacher, k) for m, traj in methods.items()}

    def defect(prefix):
        return max(max(table[m]["balance_defect"], table[m]["symmetry_defect"]) for m in table if m.startswith(prefix))

    n_eta = len(res["symmetric"]["runs"])
    for label, prefix, ids in (
            (f"the flow ({args.solver}, rtol {args.rtol:g})", "flow", ["000-P1", "001-5"]),
            (f"GD at each of the {n_eta} η = η_edge/2 … η_edge/2^{n_eta}", "GD", ["000-P1", "001-5"]),
            (f"SGD (η_edge/2, batch {args.batch}; N = {args.n_data} sequences and fresh ones)", "SGD", ["001-5"]),
            (f"Adam (lr {args.adam_lr:g}, {args.adam_steps} steps)", "Adam", ["000-P1", "001-5"])):
        value = defect(prefix)
        checks.append(check(f"{name} (seed {args.seed}): {label} from A = Aᵀ, B = Cᵀ keeps max|A − Aᵀ|/max|A| and "
                            f"max|B − Cᵀ|/max(max|B|, max|C|) <= 1e-12 at every saved step (log-spaced, {args.n_save} per run)",
                            f"{source}; seed 000 Lemma 6/E.6, seed 001 Thm 6.1 (1)",
                            value, 1e-12, direction="<=", kind="prediction", predictions=ids))
    return table


def kept_trajectories(problems) -> dict:
    """From the symmetric start of each problem: the flow, GD at the largest η, SGD and Adam, by file name."""
    kept = {}
    for name, problem in problems.items():
        r = problem["results"]["symmetric"]
        kept.update({f"{name}_flow": r["flow"], f"{name}_gd_eta{r['runs'][0]['eta']:.2e}": r["runs"][0]["traj"]})
        kept.update({f"{name}_{method.split()[0].lower()}" + ("_fresh" if "fresh" in method else ""): traj
                     for method, traj in problem["methods"].items()})
    return kept


if __name__ == "__main__":
    raise SystemExit(main())
