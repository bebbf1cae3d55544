"""Extrapolation needs a small initialization: error against k for several init scales (seed 000: Fig. 4, App. B.1.2).

The body of App. B.1.2 is missing from the paper's text; its caption says "Extrapolation error increases
along with the scale of initialization" and App. B.1.1 that a larger scale "requires longer training sequences for
getting good extrapolation error". What the paper leaves open, and what we chose:

- setting: that of Fig. 3(a) (App. B.1.1): balanced teacher d̂ = 5 (App. C.2.1, redrawn per seed, key = seed),
  general student d = 40 with entries scale·N(0, 1) (key 1000 + seed);
- scales: 1e-5 (Fig. 3(a)'s), 1e-3, 1e-2 and 1e-1 (at 1e-1 the spectral radius of A is already ≈ 0.1·√40 ≈ 0.6);
- training: gradient flow on the population loss (the paper: Adam with a MultiStepLR schedule, steps and final loss
  unstated), integrated to t1 = 1e10 at rtol 1e-8 and read where the loss first reaches ``--level`` (default
  1e-9, above the ≈ 1e-11 to which rtol 1e-8 resolves the loss; the last valid state where it never does, counted
  in the figure legend);
- error: the relative ℓ∞ tail error on [k, H), H = 100 (gflow.problems.extrapolation.errors_at_levels);
- critical k of a scale and seed: the smallest k of the grid from which on every error of that seed is ≤ 0.1
  (k_max + 2, "beyond the grid", where its largest k is not);
- seeds: 10 by default (the paper does not say how many it used for Fig. 4); seed s draws the teacher with key s at
  every scale, so the scales of one seed share a teacher and are compared seed by seed.

What decides: seed 000's figures are reproductions decided by studies/reproduce_000.py with the paper's protocol
(Adam, App. C.1). The checks below keep their ids (000-P10 … 000-P14) and their thresholds, but VALIDATION.md
shows them as measurements of the finding 000-F1 (what exact flow does), deciding nothing
(gflow.study.report.as_measurements).

Checks, all *predictions* of 000-P13, each decided on one value per seed by a bootstrap 95 %
interval of the median over seeds (gflow.study.over_seeds): for each pair of neighbouring scales, the seed's mean over
k of the relative tail error at the larger scale minus that at the smaller is ≥ 0; and the seed's critical k is
larger at the largest scale than at the smallest. The seed's critical k never decreasing from one scale to the next
(its smallest step ≥ 0) is reported and decides nothing (on a k grid of step 2 most steps are exactly 0,
so it could hardly fail). There is no sanity check; the study exits non-zero only on an error.

Example:  python studies/init_scale.py --quick --out out/init_scale
"""

from __future__ import annotations

import numpy as np

from gflow import analysis as an
from gflow.plot import figure_grid
from gflow.problems import extrapolation as xs
from gflow.study import (
    over_seeds_by_seed,
    QuickFull,
    rtol_option,
    run_study,
    save_figure,
    study_parser,
    sweep_options,
)
from gflow.sweep import dask_executor

SOURCE = "seed 000 (Cohen-Karlik et al., ICLR 2023), Fig. 4 / App. B.1.1–B.1.2"
PANEL = {"init_scale": {"teacher": "balanced", "teacher_dim": 5, "student": "general", "d": 40}}
EXTRAPOLATES = 0.1  # relative tail error at or below which a k counts as extrapolating (critical k)
SEEDS = 10


def parse_args(argv=None):
    p = study_parser(__doc__, "out/init_scale", "output folder (figure, sweep, summary.json)",
                      "two scales, three k, one seed (under a minute)")
    p.add_argument("--scales", type=float, nargs="+", default=QuickFull([1e-5, 1e-3, 1e-2, 1e-1], quick=[1e-5, 1e-1]),
                   help="initialization scales")
    p.add_argument("--ks", type=int, nargs="+", default=QuickFull(list(range(4, 31, 2)), quick=[8, 14, 20]),
                   help="training lengths")
    p.add_argument("--seeds", type=int, default=QuickFull(SEEDS, quick=1), help="seeds per (scale, k)")
    p.add_argument("--level", type=float, default=1e-9, help="loss level (a power of ten) at which errors are read")
    p.add_argument("--t1", type=float, default=1e10, help="integration time of every flow")
    p.add_argument("--horizon", type=int, default=an.extrapolation.DEFAULT_HORIZON, help="evaluation horizon H")
    rtol_option(p, what="solver rtol (gflow resolves the loss relative to itself down to its rounding floor; before "
                        "the descent guard it was resolved only down to ≈ 1e-11 at rtol 1e-8)", repeat=False)
    sweep_options(p)
    p.add_argument("--max-steps", type=int, default=60_000,
                   help="solver steps per flow before it is stopped (the flows to L = 1e-9 need ≈ 25k at rtol 1e-8)")
    args = p.parse_args(argv)
    args.scales = sorted(args.scales)
    args.ks = sorted(args.ks)
    p.require_positive(args, "scales", "seeds", "level", "t1", "n_save", "batch_size", "max_steps")
    if args.slots is not None:
        p.require_positive(args, "slots")
    if len(args.scales) < 2:
        p.error("--scales needs at least two scales")
    p.require_positive(args, "ks")
    if max(args.ks) >= args.horizon:
        p.error(f"--ks must be below --horizon {args.horizon}, got {args.ks}")
    return args


def critical_k(ks, medians, threshold=EXTRAPOLATES) -> float:
    """The smallest k from which on every error (one per k, e.g. a seed's or a median) is ≤ threshold (inf if the
    last one is not)."""
    ok = np.asarray(medians) <= threshold
    if not ok[-1]:
        return float("inf")
    first_bad_from_end = np.flatnonzero(~ok)
    return float(ks[first_bad_from_end[-1] + 1]) if first_bad_from_end.size else float(ks[0])


def main(argv=None):
    return run_study("init_scale", parse_args, science, argv)


def science(args, checks, results):
    print(f"init_scale: scales {args.scales}, k ∈ {args.ks}, {args.seeds} seed(s), read at L ≤ {args.level:g} "
          f"(t1 = {args.t1:g}), H = {args.horizon}{' (quick)' if args.quick else ''}", flush=True)
    with dask_executor(args.dask) as executor:
        runs = xs.run_panel("init_scale", PANEL, args.ks, range(args.seeds), args.scales, args.t1, out=args.out,
                            n_save=args.n_save, rtol=args.rtol, horizon=args.horizon, batch_size=args.batch_size,
                            max_steps=args.max_steps, executor=executor, slots=args.slots)
    table = xs.errors_at_levels(runs, PANEL, [args.level], args.horizon)
    scale_of_run = np.array([r.config["scale"] for r in runs])
    ks = np.asarray(args.ks)
    beyond = float(ks[-1] + 2)  # the critical k of a seed whose largest k does not extrapolate
    medians, reached, mean_by_seed, crit_by_seed = [], [], [], []
    for s in args.scales:
        sel = scale_of_run == s
        med, _, _ = xs.by_k(table["error"][0][sel], table["k"][sel], ks)
        medians.append(med)
        reached.append(float(np.mean(table["reached"][0][sel])))
        mean_by_seed.append(xs.per_seed(table["error"][0], table["seed"], sel, reduce=np.mean))
        crit_by_seed.append(seed_critical_k(table, sel, ks, beyond))
        print(f"  scale {s:.0e} ({100 * reached[-1]:.0f}% reached L ≤ {args.level:g}): critical k of the median "
              f"{critical_k(ks, med):g}; median error by k " + " ".join(f"{k}:{m:.2g}" for k, m in zip(ks, med)),
              flush=True)
    n_bad = int((~table["converged"]).sum())
    if n_bad:
        print(f"  {n_bad} of {len(runs)} runs not carried through by the solver (loss rose: "
              f"{int(table['solver_failed'].sum())}); their last valid state is used", flush=True)
    checks += scale_checks(args, mean_by_seed, crit_by_seed, beyond)
    results.update({"scales": args.scales, "ks": args.ks, "median_error": medians,
               "critical_k_of_median": [critical_k(ks, m) for m in medians],
               "mean_error_by_seed": [{str(k): v for k, v in m.items()} for m in mean_by_seed],
               "critical_k_by_seed": [{str(k): v for k, v in c.items()} for c in crit_by_seed],
               "fraction_reached_level": reached, "error_per_run": table["error"][0],
               "loss_read_per_run": table["loss"][0], "k_of_run": table["k"], "seed_of_run": table["seed"],
               "scale_of_run": scale_of_run, "zero_baseline": table["zero"],
               "statuses": [r.status for r in runs], "solver_failed": table["solver_failed"],
               "converged": table["converged"]})
    for entry in checks:
        entry.update(runs=len(runs), solver_failed=int(table["solver_failed"].sum()), not_converged=n_bad)
    make_figure(args, table, scale_of_run, [critical_k(ks, m) for m in medians])
    print()


def seed_critical_k(table, select, ks, beyond: float) -> dict:
    """{seed: its critical k} among the runs ``select``ed (one scale), ``beyond`` where it is inf; a seed missing a
    finite error at some k of the grid is left out."""
    out = {}
    for seed in np.unique(table["seed"][select]):
        sel = select & (table["seed"] == seed)
        err = dict(zip(table["k"][sel].astype(int), table["error"][0][sel]))
        curve = [err.get(int(k), np.nan) for k in ks]
        if np.all(np.isfinite(curve)):
            c = critical_k(ks, curve)
            out[int(seed)] = beyond if np.isinf(c) else c
    return out


def scale_checks(args, mean_by_seed, crit_by_seed, beyond) -> list[dict]:
    """P13 on one value per seed: mean error over k per neighbouring pair of scales, then the critical k."""
    grid = f"k ∈ {{{args.ks[0]}, {args.ks[1]}, …, {args.ks[-1]}}}" if len(args.ks) > 3 else f"k ∈ {args.ks}"
    what = (f"relative tail error on [k, {args.horizon}) read at L ≤ {args.level:g} (balanced teacher d̂ = 5, "
            f"general student d = 40)")
    checks = []
    for i in range(len(args.scales) - 1):
        lo, hi = mean_by_seed[i], mean_by_seed[i + 1]
        diff = {s: hi[s] - lo[s] for s in lo if s in hi}
        checks.append(over_seeds_by_seed(
            f"per seed, mean over {grid} of the {what}: at init scale {args.scales[i + 1]:g} minus at "
            f"{args.scales[i]:g}, median over {len(diff)} seeds ≥ 0 (the error does not decrease with the scale)",
            SOURCE, diff, 0.0, ">=", predictions=["000-P13"]))
    common = [s for s in crit_by_seed[0] if all(s in c for c in crit_by_seed)]
    steps = {s: min(crit_by_seed[i + 1][s] - crit_by_seed[i][s] for i in range(len(args.scales) - 1))
             for s in common}
    up = {s: crit_by_seed[-1][s] - crit_by_seed[0][s] for s in common}
    crit = (f"critical k (smallest k of the grid from which on the seed's error is ≤ {EXTRAPOLATES:g}; "
            f"{beyond:g} if its largest k is not)")
    if len(args.scales) > 2:  # with two scales this would be the check below
        checks.append(
            over_seeds_by_seed(f"per seed, the smallest step of its {crit} from one init scale to the next "
                          f"({' → '.join(f'{s:g}' for s in args.scales)}): median over {len(steps)} seeds ≥ 0 "
                          f"(the critical k does not decrease with the scale; reported, decides nothing: on a k grid "
                          f"of step 2 most per-seed steps are exactly 0, so it could hardly fail; the "
                          f"two checks around it decide 000-P13)", SOURCE, steps, 0.0, ">=", predictions=[]))
    checks.append(
        over_seeds_by_seed(f"per seed, its {crit} at init scale {args.scales[-1]:g} minus at {args.scales[0]:g}: "
                      f"median over {len(up)} seeds > 0 ('requires longer training sequences')", SOURCE, up, 0.0,
                      ">", predictions=["000-P13"]))
    return checks


def make_figure(args, table, scale_of_run, crit):
    fig, ax = figure_grid(panel=(6.5, 4.5))
    curves = [(f"init scale {s:.0e} (critical k {c:g})", table["error"][0][sel], table["k"][sel],
               table["reached"][0][sel]) for s, c in zip(args.scales, crit) for sel in [scale_of_run == s]]
    xs.plot_error_curves(ax, args.ks, curves, (table["k"], table["zero"]), 10,
                         f"Fig. 4 (App. B.1.2): balanced teacher d̂=5, general student d=40, gradient flow read at "
                         f"L ≤ {args.level:g}\n({args.seeds} seed(s); H = {args.horizon})")
    ax.axhline(EXTRAPOLATES, color="gray", lw=0.6, ls="--")
    save_figure(fig, args.out, "init_scale.png")


if __name__ == "__main__":
    raise SystemExit(main())
