"""Extrapolation needs a small initialization: error against k for several init scales (seed 000: Fig. 4, App. B.1.2).

The body of App. B.1.2 is missing from the paper's text (spec 000 §5); its caption says "Extrapolation error increases
along with the scale of initialization" and App. B.1.1 that a larger scale "requires longer training sequences for
getting good extrapolation error" (spec 000 §6 P13). What the paper leaves open, and what we chose:

- setting: that of Fig. 3(a) (App. B.1.1): balanced teacher d̂ = 5 (App. C.2.1, redrawn per seed, key = seed),
  general student d = 40 with entries scale·N(0, 1) (key 1000 + seed);
- scales: 1e-5 (Fig. 3(a)'s), 1e-3, 1e-2 and 1e-1 (at 1e-1 the spectral radius of A is already ≈ 0.1·√40 ≈ 0.6);
- training: gradient flow on the population loss (the paper: Adam with a MultiStepLR schedule, steps and final loss
  unstated), integrated to t1 = 1e10 at rtol 1e-8 and read where the loss first reaches ``--level`` (default
  1e-9, above the ≈ 1e-11 to which rtol 1e-8 resolves the loss; the last valid state where it never does, counted
  in the figure legend);
- error: the relative ℓ∞ tail error of studies/extrapolation_sweeps.py on [k, H), H = 100;
- critical k of a scale: the smallest k of the grid from which on every median error is ≤ 0.1.

Checks: the mean over k of the median error does not decrease from one scale to the next; the critical k does not
decrease with the scale and is larger at the largest scale than at the smallest.

Example:  python studies/init_scale.py --quick --out out/init_scale
"""

from __future__ import annotations

import os
import time

import numpy as np

import extrapolation_sweeps as xs
from gflow import analysis as an
from gflow.study import check, dask_option, print_checks, save_figure, study_parser, write_summary
from gflow.sweep import dask_executor

SOURCE = "seed 000 (Cohen-Karlik et al., ICLR 2023), Fig. 4 / App. B.1.1–B.1.2"
PANEL = {"init_scale": {"teacher": "balanced", "teacher_dim": 5, "student": "general", "d": 40}}
EXTRAPOLATES = 0.1  # relative tail error at or below which a k counts as extrapolating (critical k)


def parse_args(argv=None):
    p = study_parser(__doc__, "out/init_scale", "output folder (figure, sweep, summary.json)",
                      "two scales, three k, one seed (about a minute)")
    p.add_argument("--scales", type=float, nargs="+", default=None,
                   help="initialization scales (default 1e-5 1e-3 1e-2 1e-1; quick: 1e-5 1e-1)")
    p.add_argument("--ks", type=int, nargs="+", default=None, help="training lengths (default 4, 6, …, 30; quick: 8 14 20)")
    p.add_argument("--seeds", type=int, default=None, help="seeds per (scale, k) (default 3; quick: 1)")
    p.add_argument("--level", type=float, default=None,
                   help="loss level (a power of ten) at which errors are read (default 1e-9)")
    p.add_argument("--t1", type=float, default=1e10, help="integration time of every flow")
    p.add_argument("--horizon", type=int, default=an.extrapolation.DEFAULT_HORIZON, help="evaluation horizon H")
    p.add_argument("--rtol", type=float, default=1e-8,
                   help="solver rtol (the computed loss is resolved only down to ≈ 1e-11 at rtol 1e-8 and ≈ 1e-14 "
                        "at 1e-10)")
    p.add_argument("--n-save", type=int, default=None, help="saved times per run (default 250; quick: 150)")
    p.add_argument("--batch-size", type=int, default=96, help="flows per batched solve (per task on Dask)")
    dask_option(p)
    p.add_argument("--max-steps", type=int, default=60_000,
                   help="solver steps per flow before it is stopped (the flows to L = 1e-9 need ≈ 25k at rtol 1e-8)")
    args = p.parse_args(argv)
    args.scales = sorted(args.scales or ([1e-5, 1e-1] if args.quick else [1e-5, 1e-3, 1e-2, 1e-1]))
    args.ks = sorted(args.ks or ([8, 14, 20] if args.quick else list(range(4, 31, 2))))
    args.seeds = args.seeds or (1 if args.quick else 3)
    args.level = args.level or 1e-9
    args.n_save = args.n_save or (150 if args.quick else 250)
    if len(args.scales) < 2 or any(s <= 0 for s in args.scales):
        p.error("--scales needs at least two positive scales")
    if min(args.ks) < 1 or max(args.ks) >= args.horizon:
        p.error("need 1 <= k < --horizon")
    return args


def critical_k(ks, medians, threshold=EXTRAPOLATES) -> float:
    """The smallest k from which on every median error is ≤ threshold (inf if the last one is not)."""
    ok = np.asarray(medians) <= threshold
    if not ok[-1]:
        return float("inf")
    first_bad_from_end = np.flatnonzero(~ok)
    return float(ks[first_bad_from_end[-1] + 1]) if first_bad_from_end.size else float(ks[0])


def main(argv=None):
    started = time.time()
    args = parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    print(f"init_scale: scales {args.scales}, k ∈ {args.ks}, {args.seeds} seed(s), read at L ≤ {args.level:g} "
          f"(t1 = {args.t1:g}), H = {args.horizon}{' (quick)' if args.quick else ''}", flush=True)
    with dask_executor(args.dask) as executor:
        runs = xs.run_panel("init_scale", PANEL, args.ks, range(args.seeds), args.scales, args.t1, out=args.out,
                            n_save=args.n_save, rtol=args.rtol, horizon=args.horizon, batch_size=args.batch_size,
                            max_steps=args.max_steps, executor=executor)
    table = xs.errors_at_levels(runs, PANEL, [args.level], args.horizon)
    scale_of_run = np.array([r.config["scale"] for r in runs])
    ks = np.asarray(args.ks)
    medians, means, crit, reached = [], [], [], []
    for s in args.scales:
        sel = scale_of_run == s
        med, _, _ = xs.by_k(table["error"][0][sel], table["k"][sel], ks)
        medians.append(med)
        means.append(float(np.nanmean(med)))
        crit.append(critical_k(ks, med))
        reached.append(float(np.mean(table["reached"][0][sel])))
        print(f"  scale {s:.0e} ({100 * reached[-1]:.0f}% reached L ≤ {args.level:g}): mean error {means[-1]:.3g}, "
              f"critical k {crit[-1]:g}; by k " + " ".join(f"{k}:{m:.2g}" for k, m in zip(ks, med)), flush=True)
    n_bad = int((~table["converged"]).sum())
    if n_bad:
        print(f"  {n_bad} of {len(runs)} runs not carried through by the solver (loss rose: "
              f"{int(table['solver_failed'].sum())}); their last valid state is used", flush=True)
    means, crit = np.array(means), np.array(crit)
    mean_steps = np.diff(means)
    crit_up = crit[1:] >= crit[:-1]  # inf ≥ inf holds (np.diff would give NaN)
    checks = [
        check("mean over k of the median error does not decrease from one init scale to the next (P13)", SOURCE,
              float(np.min(mean_steps)), 0.0, bool(np.all(mean_steps >= 0)), mean_error_per_scale=means, predictions=["000-P13"]),
        check(f"critical k (median error ≤ {EXTRAPOLATES:g} from there on) does not decrease with the init scale",
              SOURCE, crit, "non-decreasing", bool(np.all(crit_up)), critical_k_per_scale=crit, predictions=["000-P13"]),
        check("critical k is larger at the largest scale than at the smallest ('requires longer training sequences')",
              SOURCE, [float(crit[0]), float(crit[-1])], "crit[-1] > crit[0]", bool(crit[-1] > crit[0]), predictions=["000-P13"]),
    ]
    results = {"scales": args.scales, "ks": args.ks, "median_error": medians, "mean_error_per_scale": means,
               "critical_k": crit, "fraction_reached_level": reached, "error_per_run": table["error"][0],
               "loss_read_per_run": table["loss"][0], "k_of_run": table["k"], "seed_of_run": table["seed"],
               "scale_of_run": scale_of_run, "zero_baseline": table["zero"],
               "statuses": [r.status for r in runs], "solver_failed": table["solver_failed"],
               "converged": table["converged"]}
    for entry in checks:
        entry.update(runs=len(runs), solver_failed=int(table["solver_failed"].sum()), not_converged=n_bad)
    make_figure(args, table, scale_of_run, crit)
    summary = write_summary(args.out, "init_scale", vars(args), checks, results, started)
    print()
    print_checks(checks)
    print(f"wrote {args.out}/summary.json and init_scale.png in {time.time() - started:.1f} s")
    return 0 if summary["all_passed"] else 1


def make_figure(args, table, scale_of_run, crit):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    curves = []
    for s, c in zip(args.scales, crit):
        sel = scale_of_run == s
        curves.append((f"init scale {s:.0e} (critical k {c:g})", table["error"][0][sel], table["k"][sel],
                       table["reached"][0][sel]))
    xs.plot_error_curves(ax, args.ks, curves, (table["k"], table["zero"]), 10,
                         f"Fig. 4 (App. B.1.2): balanced teacher d̂=5, general student d=40, gradient flow read at "
                         f"L ≤ {args.level:g}\n({args.seeds} seed(s); H = {args.horizon})")
    ax.axhline(EXTRAPOLATES, color="gray", lw=0.6, ls="--")
    save_figure(fig, args.out, "init_scale.png")


if __name__ == "__main__":
    raise SystemExit(main())
