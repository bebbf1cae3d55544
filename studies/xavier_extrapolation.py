"""Does gradient descent from a standard initialization extrapolate? Linear RNN students trained by exact gradient flow
and by GD from Xavier init on seed 001's memoryless and memory teachers (the finding 001-F1).

Seed 001 §6: "GD with standard initialization entails an implicit bias towards solutions that do extrapolate", a remark
without a figure or a protocol (§7 decides its figures with Adam: gru_extrapolation part B, 001-16, 001-17). Here the
sentence is put to the optimizer it names, without Adam's per-coordinate scaling and without sampling noise: the
linear student (gflow.LinearRNN, general A, width d = 16) from Xavier-uniform init (key 4000 + seed: the initial
students of gru_extrapolation's part B), trained on the exact population loss of length-k sequences (k = 8, every
output supervised: the accumulating weighting) by

- gradient flow to t1 (default 1e6, stopping at loss 1e-20), at --rtol and at rtol/100, and
- GD with step size η for --steps-gd steps, at each η of --lr-gd (default 1e-3, 3e-3, 1e-2, 2e-2: ours; in a probe
  of seed 0 GD diverged on the memoryless teacher at 3e-2, so the grid stops below it). GD at small η follows the
  flow; the grid shows where the step size starts to matter.

Teachers (gru_extrapolation part B's): memoryless y_t = x_t (seed 001 Fig. 1) and linear teachers of memory
d_T ∈ {1, 2, 3, 4, 6, 8, 12, 16} (gflow.problems.gru_extrapolation.memory_teacher: A_T = 0.9·Q, Q Haar-orthogonal, key
500 + d_T). The measure is seed 001's relative MSE (gru_extrapolation's): E(ŷ_t − y_t)² summed over a window over
E y_t² on it, on fresh N(0, 1) sequences of length T = 3k; the window k < t ≤ T ("extrapolation") or t ≤ k ("fit").

Reported, tagged 001-F1 and deciding nothing (a finding is a measurement): per optimizer, the fraction of seeds whose
student extrapolates (relative MSE ≤ 0.05, gru_extrapolation's bar) on the memoryless teacher, on the small memories
d_T ≤ k/4 (worst of them), the middle ones k/4 < d_T < k (worst) and the large ones d_T ≥ k (median), with its exact
binomial interval and every seed's error. Sanity checks: every student that did not diverge fits its window (relative
MSE ≤ 0.01); the flow's extrapolation errors agree at rtol/100 (relative difference ≤ 1e-3).
Compute (2 CPU cores): the default (10 seeds × 9 teachers; 2 × 90 flows, 4 × 90 GD runs of 20 000 steps, each set in
one batched call) takes about a minute; --quick a few seconds after compilation.

Example:  python studies/xavier_extrapolation.py --quick --out out/xavier_extrapolation_quick
"""

from __future__ import annotations

import jax
import numpy as np

import gflow
from gflow import initializers, teachers
from gflow.problems import gru_extrapolation as gp
from gflow.study import (
    both_tolerances,
    check,
    k_of_n,
    QuickFull,
    rtol_option,
    run_study,
    save_figure,
    study_parser,
    tolerance_agreement,
)

SOURCE = "seed 001 (Cohen-Karlik, Ben David, Cohen, Globerson), §6"
EXTRAPOLATES = 0.05  # relative MSE beyond k (gru_extrapolation's MSE_EXTRAPOLATES)
FIT = 0.01  # relative MSE on t ≤ k (gru_extrapolation's MSE_FIT)
MAJORITY = 0.5  # the fraction of seeds the interval is read against (gru_extrapolation's B_MAJORITY)
TOLERANCE_AGREEMENT = 1e-3
FLOW = "flow"


def parse_args(argv=None):
    p = study_parser(__doc__, "out/xavier_extrapolation", "output folder (figure, summary.json)",
                     "2 seeds, 3 memory teachers, 2000 GD steps")
    p.add_argument("--seeds", type=int, default=QuickFull(10, quick=2), help="seeds 0, 1, … (Xavier init key 4000 + s)")
    p.add_argument("--k", type=int, default=8, help="training length k (gru_extrapolation part B's)")
    p.add_argument("--width", type=int, default=16, help="student width d")
    p.add_argument("--eval-factor", type=int, default=3, help="test length T = eval_factor × k")
    p.add_argument("--dT", type=int, nargs="+", default=QuickFull([1, 2, 3, 4, 6, 8, 12, 16], quick=[1, 4, 8]),
                   help="memories d_T of the linear teachers (the memoryless teacher is always run)")
    p.add_argument("--radius", type=float, default=0.9, help="modulus of every eigenvalue of the memory teachers")
    p.add_argument("--lr-gd", type=float, nargs="+", default=[1e-3, 3e-3, 1e-2, 2e-2], help="GD step sizes η")
    p.add_argument("--steps-gd", type=int, default=QuickFull(20000, quick=2000), help="GD steps")
    p.add_argument("--t1", type=float, default=1e6, help="gradient-flow horizon (the flow stops at loss 1e-20)")
    rtol_option(p)
    p.add_argument("--n-test", type=int, default=1000, help="fresh test sequences for the MSEs")
    args = p.parse_args(argv)
    args.dT = sorted(set(args.dT))
    args.lr_gd = sorted(set(args.lr_gd))
    p.require_positive(args, "seeds", "k", "width", "dT", "steps_gd", "n_test", "t1")
    if args.eval_factor < 2:
        p.error(f"--eval-factor must be at least 2, got {args.eval_factor}")
    if not 0 < args.radius < 1:
        p.error(f"--radius must lie in (0, 1), got {args.radius}")
    if min(args.lr_gd) <= 0:
        p.error(f"--lr-gd must be positive, got {args.lr_gd}")
    return args


def main(argv=None):
    return run_study("xavier_extrapolation", parse_args, science, argv)


def teacher_names(args):
    """The teachers' names: the memoryless teacher, then the memory teachers by d_T."""
    return ["memoryless"] + [f"dT{d}" for d in args.dT]


def teacher_list(args):
    """(name, memory, teacher): the memoryless teacher (memory 0), then the memory teachers."""
    return [(name, d, teachers.memoryless(1.0) if d == 0 else gp.memory_teacher(jax.random.key(500 + d), d, args.radius))
            for name, d in zip(teacher_names(args), [0, *args.dT])]


def gd_step_sizes(args) -> dict:
    """The GD methods' names → their step sizes η."""
    return {f"GD (η = {lr:g})": lr for lr in args.lr_gd}


def methods(args):
    """The optimizers: the flow, then GD at each step size."""
    return [FLOW, *gd_step_sizes(args)]


def train(args, rtol, names):
    """Every (method, teacher, seed) student of the methods ``names``: method → array (seeds, teachers) of results;
    the flow at ``rtol``."""
    jax.config.update("jax_enable_x64", True)
    ts = teacher_list(args)
    jobs = [(t, s) for s in range(args.seeds) for t in ts]
    losses = [gflow.PopulationLoss(t[2], args.k, weighting="accumulating") for t, _ in jobs]
    models = [initializers.xavier(jax.random.key(4000 + s), args.width) for _, s in jobs]
    x = gflow.objectives.gaussian_sequences(jax.random.key(888), args.n_test, args.eval_factor * args.k)
    references = {name: gp.outputs(teacher, x) for name, _, teacher in ts}
    runs = {}
    for name in names:
        if name == FLOW:
            trajs = gflow.solve_flows(losses, models, args.t1, rtol=rtol, save_at=40, stop_loss=1e-20,
                                      progress=False, config={"study": "xavier_extrapolation"})
        else:
            trajs = gflow.discrete.run_gd_batch(losses, models, lr=gd_step_sizes(args)[name],
                                                steps=args.steps_gd, save_at=12, progress=False,
                                                config={"study": "xavier_extrapolation"})
        rows = []
        for (t, _), traj in zip(jobs, trajs):
            m = gp.relative_mse(gp.outputs(traj.final, x), references[t[0]], args.k)
            rows.append({"status": traj.status, "final_loss": float(traj.loss[-1]), "fit": float(m["fit"]),
                         "extrapolation": float(m["extrapolation"])})
        runs[name] = np.array(rows, dtype=object).reshape(args.seeds, len(ts))
    return runs


def errors(runs, key="extrapolation"):
    """method → (seeds, teachers) array of ``key``."""
    return {m: np.vectorize(lambda r: r[key], otypes=[np.float64])(rows) for m, rows in runs.items()}


def groups(args):
    """(label, column selector, reduction) of each teacher group read by the measurement."""
    memories = np.array([0] + args.dT)
    small = (memories > 0) & (memories <= args.k / 4)
    middle = (memories > args.k / 4) & (memories < args.k)
    large = memories >= args.k
    out = [("the memoryless teacher", memories == 0, np.max)]
    for label, sel, how, reduce in (("small", small, "worst", np.max), ("middle", middle, "worst", np.max),
                                    ("large", large, "median", np.median)):
        if sel.any():
            out.append((f"{label} memories d_T ∈ {memories[sel].tolist()} ({how})", sel, reduce))
    return out


def measurement_checks(args, runs) -> list[dict]:
    """001-F1's measurements: per method and teacher group, the fraction of seeds extrapolating (exact binomial
    interval against MAJORITY, each seed's error beside), tagged 001-F1 only (deciding nothing)."""
    e = errors(runs)
    T = args.eval_factor * args.k
    out = []
    for name in methods(args):
        how = (f"gradient flow to loss 1e-20 (or t = {args.t1:g})" if name == FLOW else
               f"{name} for {args.steps_gd} steps")
        diverged = sum(r["status"] == "diverged" for r in runs[name].ravel())
        for what, sel, reduce in groups(args):
            values = {s: float(reduce(e[name][s, sel])) for s in range(args.seeds)}
            out.append(k_of_n(f"001-F1: linear student (d = {args.width}, k = {args.k}) by {how} from Xavier init "
                              f"extrapolates on {what}: relative MSE on k < t ≤ {T} ≤ {EXTRAPOLATES:g}, in ≥ "
                              f"{MAJORITY:.0%} of {args.seeds} seeds ({diverged} of its runs diverged; a measurement, "
                              "deciding nothing)", SOURCE, {s: v <= EXTRAPOLATES for s, v in values.items()}, MAJORITY,
                              predictions=["001-F1"], per_seed={str(s): v for s, v in values.items()}))
    return out


def fit_check(args, runs) -> dict:
    """Sanity: every student that did not diverge fits its training window."""
    fits = [r["fit"] for rows in runs.values() for r in rows.ravel() if r["status"] != "diverged"]
    n = sum(rows.size for rows in runs.values())
    return check(f"every student that did not diverge ({len(fits)} of {n}) fits its window t ≤ k: relative MSE ≤ "
                 f"{FIT:g} (worst)", f"{SOURCE} (precondition, ours)", max(fits), FIT, direction="<=",
                 kind="sanity", predictions=["001-F1"])


def figure(args, runs):
    """Extrapolation MSE against the teacher's memory (0: memoryless) per optimizer: medians, every seed thin."""
    import matplotlib.pyplot as plt

    x = [0] + args.dT
    e = errors(runs)
    fig, ax = plt.subplots(figsize=(7.5, 5))
    for i, name in enumerate(methods(args)):
        diverged = np.vectorize(lambda r: r["status"] == "diverged")(runs[name])
        for row in np.where(diverged, np.nan, e[name]):  # a diverged run's error (up to 1e21) is not drawn
            ax.semilogy(x, np.maximum(row, 1e-16), "-", color=f"C{i}", lw=0.6, alpha=0.3)
        ax.semilogy(x, np.maximum(np.median(e[name], axis=0), 1e-16), "o-" if name == FLOW else "x--",
                    color=f"C{i}", lw=2 if name == FLOW else 1.2,
                    label=f"{'gradient flow' if name == FLOW else name}: median of {args.seeds} seeds"
                          + (f" ({diverged.sum()} diverged runs, not drawn thin)" if diverged.any() else ""))
    ax.axhline(EXTRAPOLATES, color="gray", ls=":", lw=1, label=f"extrapolates ≤ {EXTRAPOLATES:g}")
    ax.axvline(args.k, color="gray", ls="--", lw=1, label=f"k = {args.k}")
    ax.set(xlabel="teacher memory d_T (0: memoryless)",
           ylabel=f"relative extrapolation MSE on k < t ≤ {args.eval_factor * args.k}")
    ax.legend(fontsize=8)
    save_figure(fig, args.out, "xavier_extrapolation.png", title_size=9,
                title=f"seed 001 §6 (001-F1): linear students (d = {args.width}, k = {args.k}) from Xavier init, "
                      f"population loss: gradient flow and GD ({args.steps_gd} steps)")


def science(args, checks, results):
    (_, rtol), (_, tight) = both_tolerances(args.rtol)
    runs = train(args, rtol, methods(args))
    e_all = errors(runs)
    e, e_tight = e_all[FLOW], errors(train(args, tight, [FLOW]))[FLOW]
    names = teacher_names(args)
    for name in methods(args):
        med = np.median(e_all[name], axis=0)
        print(f"  {name:14s} median extrapolation MSE per teacher: "
              + ", ".join(f"{t} {v:.3g}" for t, v in zip(names, med)), flush=True)
    checks.append(fit_check(args, runs))
    checks.append(tolerance_agreement("gradient flow: every student's extrapolation MSE at rtol and rtol/100",
                                      "tolerance check (docs/design.md)", e, e_tight, TOLERANCE_AGREEMENT,
                                      predictions=["001-F1"]))
    checks += measurement_checks(args, runs)
    gd_vs_flow = {name: float(np.median(np.abs(e_all[name] - e) / e)) for name in gd_step_sizes(args)}
    print(f"  GD against the flow, median relative difference of the extrapolation MSE: {gd_vs_flow}", flush=True)
    results["teachers"] = names
    results["extrapolation_mse"] = e_all
    results["fit_mse"] = errors(runs, "fit")
    results["flow_extrapolation_mse_tight"] = e_tight
    results["status"] = {m: np.vectorize(lambda r: r["status"])(rows).tolist() for m, rows in runs.items()}
    results["gd_vs_flow_median_relative_difference"] = gd_vs_flow
    figure(args, runs)


if __name__ == "__main__":
    raise SystemExit(main())
