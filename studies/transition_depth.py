"""Does Fig. 1a's transition at k = 2d̂ sharpen into a step as exact gradient flow drives the loss to 0? (seed 000,
Fig. 1 caption; the finding 000-F1).

Seed 000's Fig. 1 caption: "The gradual transition exhibited is due to numerical errors introduced by the
optimization not reaching an exact global minimum." The paper has no run at exact minima; gradient flow integrated
to a stated tolerance can go there. This study reads Fig. 1a's error curve at falling loss levels, down to
L = 1e-20, and measures the knee at 2d̂ = 10 (gflow.problems.extrapolation.knee: its fall and its sharpness against
the curve's other steps) level by level. It is a measurement, reported without pass or fail.

Setup, as studies/extrapolation_phase.py's fig1a (gflow.problems.extrapolation.PANELS): balanced teacher d̂ = 5
(App. C.2.1, key = seed) under both readings of "distribute uniformly between 0.6 and 1.05" (i.i.d. draws; an evenly
spaced grid), diagonal student with balanced init 1e-3 (key 1000 + seed) of sizes d = 40, 100 and 200, gradient flow
on the population loss (eq. 3.4), relative ℓ∞ tail error on [k, H), H = 100. What is ours: the k grid (around 2d̂,
where the knee is; default 6, 8, 9, 10, 11, 12, 14, 20), 3 seeds (the paper's count in Fig. 1), t1 = 1e18 (below 2d̂
the flow reaches L = 0 in rounding by t ≈ 1e9; at and above 2d̂ the loss falls like a power of t, measured on seed 0,
d = 40, k = 10: L = 1e-11 at t = 2e9, 1e-14 at 2.6e11, 4e-18 at t = 1e14 and 0 in rounding by t = 1e18; with
t1 = 1e14, 67 % of seed 0's d = 40 runs reached 1e-17 and 33 % 1e-20; the fraction that reaches each level is
reported), and the levels.

Accuracy: every flow is run at --rtol and again at rtol / --tight-factor (ours: 10); the figure draws both (the
spread is the error bar of each point) and summary.json keeps, per level, the largest |log10| difference of a run's
error between the two. It matters at depth: on seed 0, d = 40, k = 2d̂, the error read at L ≤ 1e-20 was 0.143,
0.099, 0.120 and 0.161 at rtol 1e-8, 1e-9, 1e-10 and 1e-11 (at L ≤ 1e-11: 0.501, 0.505, 0.500, 0.504).
Checks: one measurement per student size and reading at the shallowest level and at the deepest level that at least
80 % of the runs reach (the knee's fall, median over seeds, with each seed's knee, sharpness and location beside),
tagged 000-F1; they carry no bar and decide nothing.

Parts (``--part``, PARTS): one student size each, recorded as transition_depth.part-<part>.json beside the others.
Cost, measured on one flow of seed 0, k = 2d̂, to t1 = 1e18 (2-core CPU, the other core busy): at d = 40, 6.5 s
(248 k steps) at rtol 1e-9, 9.4 s (392 k) at 1e-10, 85 s (354 k Rodas5P steps) at 1e-11; at d = 200, 17 s (275 k),
57 s (1.05 M) and 142 s (498 k): the full run is 144 flows at each rtol, lock-step batches of 24 (8 k × 3 seeds). A step
is a sequential chain of small kernels: a GPU's step is slower than a CPU core's (≈ 1 ms, bench/results/
gpu_h200_ssm.json), so the flows run on CPU cores, split over host devices (``XLA_FLAGS=
--xla_force_host_platform_device_count=N``; gflow splits each batch over every local device). The quick run (d = 16,
one seed, k = 6, 10, 14, t1 = 1e11) takes about half a minute.

Example:  python studies/transition_depth.py --quick --out out/transition_depth
"""

from __future__ import annotations

import numpy as np

from gflow import analysis as an
from gflow.plot import figure_grid
from gflow.problems import extrapolation as xs
from gflow.study import check, QuickFull, rtol_option, run_study, save_figure, study_parser, sweep_options
from gflow.sweep import dask_executor

SOURCE = "seed 000 (Cohen-Karlik et al., ICLR 2023), Fig. 1 caption, Sec. 5.1, App. C.2.1"
READINGS = {"iid": "fig1a", "grid": "fig1a_grid"}  # reading → extrapolation_phase's panel it copies
SIZES = [40, 100, 200]  # the full run's student sizes (Sec. 5.1)
PARTS = {f"d{d}": d for d in SIZES}  # a part of the full run: one student size, both readings
K_CRITICAL = 10  # 2d̂
REACHED_SHARE = 0.8  # the deepest level reported is the deepest that at least this share of the runs reach


def parse_args(argv=None):
    p = study_parser(__doc__, "out/transition_depth", "output folder (figure, sweeps, summary.json)",
                     "d = 16, one seed, k = 6, 10, 14, t1 = 1e11 (about a minute)")
    p.add_argument("--sizes", type=int, nargs="+", default=QuickFull(SIZES, quick=[16]),
                   help="student sizes d (Sec. 5.1: 40; 100 and 200 'qualitatively identical')")
    p.add_argument("--part", choices=list(PARTS), default=None,
                   help="run one student size of the full study (both readings) and record it as "
                        "<study>.part-<part>.json beside the others")
    p.add_argument("--readings", nargs="+", choices=list(READINGS), default=list(READINGS),
                   help="readings of App. C.2.1: i.i.d. eigenvalues, an evenly spaced grid")
    p.add_argument("--ks", type=int, nargs="+", default=QuickFull([6, 8, 9, 10, 11, 12, 14, 20], quick=[6, 10, 14]),
                   help="training lengths (ours: around 2d̂ = 10, where the knee is)")
    p.add_argument("--seeds", type=int, default=QuickFull(3, quick=1), help="seeds (the paper's 3 in Fig. 1)")
    p.add_argument("--levels", type=float, nargs="+",
                   default=QuickFull([1e-4, 1e-8, 1e-11, 1e-14, 1e-17, 1e-20], quick=[1e-4, 1e-8, 1e-11]),
                   help="loss levels (powers of ten, down to 1e-20) at which the error is read")
    p.add_argument("--t1", type=float, default=QuickFull(1e18, quick=1e11), help="integration time of every flow")
    p.add_argument("--horizon", type=int, default=an.extrapolation.DEFAULT_HORIZON, help="evaluation horizon H")
    rtol_option(p, 1e-9, what="solver rtol (every flow runs at rtol and at rtol / --tight-factor: their spread is each "
                               "point's error bar)")
    p.add_argument("--tight-factor", type=float, default=10.0,
                   help="the repeat's rtol is rtol / this (ours: 10; at 100 the repeat runs at 1e-11, where gflow's "
                        "auto solver is Rodas5P, 8× a base flow's cost at d = 200)")
    sweep_options(p)
    p.add_argument("--max-steps", type=int, default=2_000_000, help="solver steps per flow before it is stopped")
    args = p.parse_args(argv)
    whole = args.sizes == SIZES and sorted(args.readings) == sorted(READINGS)
    if args.part is not None:
        if args.quick or not whole:
            p.error("--part sets the student size itself and runs it at full scale with both readings: leave --quick, "
                    "--sizes and --readings out")
        args.sizes = [PARTS[args.part]]
    elif not args.quick and args.record and not whole:
        p.error("a full run of some sizes or readings would overwrite the whole study's record: run one of the parts "
                f"(--part {{{','.join(PARTS)}}}), or add --record '' to record nothing")
    args.record_part = args.part
    args.levels = sorted(set(args.levels), reverse=True)
    args.ks = sorted(set(args.ks))
    p.require_positive(args, "sizes", "ks", "seeds", "t1", "n_save", "batch_size", "max_steps")
    if not args.tight_factor > 1:
        p.error(f"--tight-factor must be above 1 (the repeat is the tighter run), got {args.tight_factor}")
    if args.slots is not None:
        p.require_positive(args, "slots")
    if any(not (1e-20 <= lv < 1 and np.isclose(np.log10(lv), np.round(np.log10(lv)))) for lv in args.levels):
        p.error(f"--levels must be powers of ten from 1e-20 to 0.1, got {args.levels}")
    if len(args.ks) < 3:
        p.error(f"--ks needs at least three training lengths for a knee, got {args.ks}")
    if max(args.ks) >= args.horizon:
        p.error(f"--ks must be below --horizon {args.horizon}, got {args.ks}")
    return args


def main(argv=None):
    return run_study("transition_depth", parse_args, science, argv)


def panels_of(args) -> dict:
    """The study's panels: extrapolation_phase's fig1a (and fig1a_grid) at each size, integrated to --t1."""
    return {f"depth_{reading}_d{d}": {**xs.PANELS[panel], "d": d, "t1": args.t1}
            for reading, panel in ((r, READINGS[r]) for r in args.readings) for d in args.sizes}


def knees_by_seed(table, level_index: int) -> dict:
    """{seed: its :func:`gflow.problems.extrapolation.knee` and :func:`knee_at`} on the runs that reached the level
    (a seed with fewer than three such k has no knee)."""
    out = {}
    for seed in np.unique(table["seed"]):
        sel = (table["seed"] == seed) & table["reached"][level_index]
        info = xs.knee(table["k"][sel], table["error"][level_index][sel])
        out[int(seed)] = None if info is None else {**info, **xs.knee_at(info, K_CRITICAL)}
    return out


def tolerance_spread(table, tight) -> list[float]:
    """Per level, the largest |log10 error(rtol) − log10 error(tighter rtol)| over the runs both reached it on (NaN
    where none did); errors below 1e-16 (rounding) count as 1e-16."""
    out = []
    for i in range(len(table["error"])):
        both = table["reached"][i] & tight["reached"][i]
        a, b = (np.log10(np.maximum(t["error"][i][both], xs.RATIO_FLOOR)) for t in (table, tight))
        out.append(float(np.max(np.abs(a - b))) if both.any() else float("nan"))
    return out


def science(args, checks, results):
    panels = panels_of(args)
    print(f"transition_depth: sizes {args.sizes}, readings {args.readings}, k ∈ {args.ks}, {args.seeds} seed(s), "
          f"levels {args.levels}, t1 = {args.t1:g}, rtol {args.rtol:g} and {args.rtol / args.tight_factor:g}"
          f"{' (quick)' if args.quick else ''}", flush=True)
    tables = {}
    with dask_executor(args.dask) as executor:
        for name in panels:
            for tag, rtol in (("", args.rtol), ("_tight", args.rtol / args.tight_factor)):
                print(f"{name}{tag}: integrating ...", flush=True)
                runs = xs.run_panel(name, panels, args.ks, range(args.seeds), [panels[name]["scale"]], args.t1,
                                    out=args.out, n_save=args.n_save, rtol=rtol, horizon=args.horizon,
                                    batch_size=args.batch_size, max_steps=args.max_steps, tag=tag, executor=executor,
                                    slots=args.slots)
                tables[name + tag] = xs.errors_at_levels(runs, panels, args.levels, args.horizon)
    for name, p in panels.items():
        table, tight = tables[name], tables[name + "_tight"]
        reached = table["reached"].mean(axis=1)
        knees = [knees_by_seed(table, i) for i in range(len(args.levels))]
        spread = tolerance_spread(table, tight)
        deepest = max((i for i in range(len(args.levels)) if reached[i] >= REACHED_SHARE), default=0)
        results[name] = {"d": p["d"], "reading": p["reading"], "ks": args.ks, "levels": args.levels,
                         "reached": reached, "error": table["error"], "error_tight": tight["error"],
                         "k_of_run": table["k"], "seed_of_run": table["seed"], "knees": knees,
                         "tolerance_spread_decades": spread, "final_loss": table["final_loss"],
                         "converged": table["converged"], "deepest_level": args.levels[deepest]}
        for i in sorted({0, deepest}):
            found = {s: kn for s, kn in knees[i].items() if kn is not None}
            drops = [kn["drop"] for kn in found.values()]
            value = float(np.median(drops)) if drops else float("nan")
            checks.append(check(
                f"fig1a d = {p['d']} [{xs.READINGS[p['reading']]}], exact gradient flow read at L ≤ "
                f"{args.levels[i]:g} ({100 * reached[i]:.0f}% of {table['k'].size} runs reach it): the knee of the "
                f"error against k, its fall (median over {len(drops)} seeds; per seed: fall, sharpness, k before → "
                f"after, at 2d̂ = {K_CRITICAL}: " + "; ".join(
                    f"seed {s}: {kn['drop']:.3g}×, {kn['sharpness']:.3g}, {kn['k_before']} → {kn['k_after']}, "
                    f"{'at 2d̂' if kn['transition'] else 'not at 2d̂ or not sharp'}" for s, kn in found.items())
                + f"); rtol spread {spread[i]:.2g} decades (a measurement: decides nothing)",
                SOURCE, value, None, passed=True, kind="prediction", predictions=["000-F1"],
                seeds=sorted(found), statistic="median", n=len(drops), reading=p["reading"]))
        print(f"  {name}: reached " + ", ".join(f"{lv:g}: {100 * r:.0f}%" for lv, r in zip(args.levels, reached))
              + "; median knee fall " + ", ".join(
                  f"{lv:g}: {np.median([kn['drop'] for kn in k.values() if kn]) if any(k.values()) else float('nan'):.3g}"
                  for lv, k in zip(args.levels, knees)), flush=True)
    make_figure(args, panels, tables)


def make_figure(args, panels, tables):
    """Median error against k per level, one panel per size (columns) and reading (rows); the tighter repeat dashed."""
    import matplotlib.pyplot as plt

    fig, axes = figure_grid(len(args.readings), len(args.sizes), panel=(5.2, 4.2), squeeze=False)
    colors = plt.cm.viridis(np.linspace(0.0, 0.9, len(args.levels)))
    for row, reading in enumerate(args.readings):
        for col, d in enumerate(args.sizes):
            ax, name = axes[row][col], f"depth_{reading}_d{d}"
            for i, (lv, color) in enumerate(zip(args.levels, colors)):
                for tag, style in (("", "o-"), ("_tight", "--")):
                    t = tables[name + tag]
                    err = np.where(t["reached"][i], t["error"][i], np.nan)
                    med, _, _ = xs.by_k(err, t["k"], np.asarray(args.ks))
                    ax.semilogy(args.ks, np.maximum(med, xs.RATIO_FLOOR), style, ms=3, lw=1 if tag else 1.4,
                                color=color, label=f"L ≤ {lv:g}" if not tag else None)
            ax.axvline(K_CRITICAL, color="gray", lw=0.8, ls=":")
            ax.set(xlabel="training length k", ylabel="tail error / max |w_j| (median over seeds)")
            ax.set_title(f"d = {d}, {xs.READINGS[panels[name]['reading']]}\n(dashed: rtol "
                         f"{args.rtol / args.tight_factor:g}; runs that reached the level)", fontsize=8)
            ax.legend(fontsize=6)
    fig.suptitle("Seed 000 Fig. 1a under exact gradient flow: does the transition at k = 2d̂ sharpen as L → 0?",
                 fontsize=9)
    save_figure(fig, args.out, "transition_depth.png")


if __name__ == "__main__":
    raise SystemExit(main())
