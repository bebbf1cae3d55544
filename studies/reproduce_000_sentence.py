"""Seed 000's transition judged by the sentence the paper writes about it, on a third block of fresh seeds (Figs. 1a,
1b, 3a, 3b; Adam, App. C.1: the training of studies/reproduce_000.py, unchanged).

Sec. 5.1 and the Fig. 1 caption: "when k > 2d̂ extrapolation error is low, and when k falls below 2d̂ extrapolation
error is high. The gradual transition exhibited is due to numerical errors [...]"; Sec. 5.2 says the same of Fig. 1b,
App. B of Figs. 3a, 3b ("a similar phase transition"). The paper calls its transition gradual and says nothing of
k = 2d̂ itself. reproduce_000's knee and reproduce_000_transition's repaired knee ask for more: a sharp knee, and the
repair counts k = 2d̂ among the k "up to the knee" that must be high. On reproduce_000_transition's fresh seeds
100–102 the repair FAILed on all 12 curves, Fig. 1b at d = 50 and 100 only because the seed-mean is already low at
k = 2d̂. This check is the sentence as written, written after those runs (registered_after_run), before any run of
this study, and decides only on the block 200–202 (CONFIRMATORY_FIRST_SEED …), never used before; the verdicts of
both earlier checks stand beside it.

The check, per curve (reproduce_000_transition's curves: Fig. 1a per reading of C.2.1 and d = 40, 100, 200; Fig. 1b at
d = 50, 100, 200, init 1e-3; Fig. 3a per reading; Fig. 3b by App. C.3's ratio):

- each student's error as reproduce_000_transition saturates it (ℓ∞ tail error over max_j |w_j|, or App. C.3's
  ratio to the all-zero response's tail error, at most 1; NaN where App. C.3's ratio is not resolved), a student whose
  error is not finite (it exploded to inf or NaN) counted as 1, not left out of the mean;
- the seed-mean over the block's 3 seeds (what Figs. 1, 3 plot) is above LOW (0.1, reproduce_000's "extrapolates"
  bar) at every k < 2d̂ and at most LOW at every k > 2d̂; k = 2d̂ is free. The value is the share of the read k ≠ 2d̂
  on the sentence's side (registered: ≥ 1, every one);
- inconclusive where no k is read on one side, or fewer than 80 % of the curve's students fit their window
  (reproduce_000_transition's guard, relative to the teacher over the window).

Wall time: the panels of reproduce_000_transition, which trained them on one H200 in 198 s (its fresh block); on
the 2-core CPU ≈ 6–8 h, an ESTIMATE from reproduce_000's timed slices. ``--quick`` runs the code path in minutes.

Example:  python studies/reproduce_000_sentence.py --out out/reproduce_000_sentence
"""

from __future__ import annotations

import time

import numpy as np

import reproduce_000 as r0
import reproduce_000_transition as rt
from gflow.problems import reproduce_000 as rp
from gflow.study import (
    check,
    CONFIRMATORY,
    EXPLORATORY,
    NegativeControl,
    QuickFull,
    run_study,
    save_figure,
    SeedBlocks,
    SEEDS_BLOCKS,
    study_parser,
)

STUDY = "reproduce_000_sentence"
CONFIRMATORY_FIRST_SEED = 200  # the fresh block 200, 201, 202: never used (reproduce_000 0–2 and Fig. 5 0–19,
#                                reproduce_000_transition 0–2 and 100–102)
BLOCKS = SeedBlocks(CONFIRMATORY_FIRST_SEED, rp.SEEDS)
LOW = rt.LOW  # high is above this, low at most this
AGREEMENT = 1.0  # the share of the read k ≠ 2d̂ on the sentence's side that the check asks for: every one


def parse_args(argv=None):
    """The study's options; the protocol's are reproduce_000's defaults (``--quick``: its quick ones).

    Args:
        argv: the command line (default: ``sys.argv[1:]``).

    Returns:
        The parsed options, with ``seed_list`` and reproduce_000_transition's protocol fields.
    """
    p = study_parser(__doc__, "out/reproduce_000_sentence", "output folder (figure, summary.json)",
                     "small students, few k, 2 seeds, 1500 steps (the code path, a few minutes)")
    p.add_argument("--panels", nargs="+", choices=rt.PANELS, default=list(rt.PANELS), help="panels to train and judge")
    p.add_argument("--seeds-block", choices=SEEDS_BLOCKS, default=CONFIRMATORY,
                   help=f"{CONFIRMATORY} (default): the fresh seeds {BLOCKS.confirmatory[0]} … "
                        f"{BLOCKS.confirmatory[-1]}, on which the check decides; {EXPLORATORY}: seeds 0, 1, … "
                        "(deciding nothing)")
    p.add_argument("--seeds", type=int, default=QuickFull(rp.SEEDS, quick=2),
                   help=f"seeds per curve (the paper's {rp.SEEDS})")
    p.add_argument("--sizes-1a", type=int, nargs="+", default=QuickFull(r0.SIZES_1A, quick=[16]),
                   help="Fig. 1a's student sizes d")
    p.add_argument("--sizes-1b", type=int, nargs="+", default=QuickFull(r0.SIZES_1B, quick=[24]),
                   help="Fig. 1b's student sizes d")
    args = p.parse_args(argv)
    p.require_positive(args, "seeds", "sizes_1a", "sizes_1b")
    try:
        args.seed_list = BLOCKS.seeds(args.seeds_block, args.seeds)
    except ValueError as e:  # GflowInputError: a block the seeds would leave
        p.error(str(e))
    protocol = r0.parse_args(["--out", args.out, "--record", ""] + (["--quick"] if args.quick else []))
    for name in rt.PROTOCOL:
        setattr(args, name, getattr(protocol, name))
    return args


def main(argv=None):
    """Run the study (the exit code: non-zero only on an error or a failed sanity check)."""
    return run_study(STUDY, parse_args, science, argv)


def science(args, checks, results):
    """Train the panels with reproduce_000's runners, judge each curve by the sentence, draw the figure."""
    print(f"{STUDY}: panels {args.panels}, seeds {args.seed_list} ({args.seeds_block} block)"
          f"{' (quick)' if args.quick else ''}", flush=True)
    rows_of, timings = {}, {}
    for name in args.panels:
        start = time.perf_counter()
        print(f"{name}: training ...", flush=True)
        rows_of[name] = r0.PANEL_RUNNERS[name](args)["rows"]
        timings[name] = time.perf_counter() - start
        print(f"{name}: {len(rows_of[name])} members in {timings[name]:.1f} s", flush=True)
    curves = {}
    for spec in specs(args):
        entries, numbers = judge_curve(spec, rows_of[spec["panel"]], args.seeds_block)
        checks += entries
        curves[spec["what"]] = numbers
        print(f"  {spec['what']}: {entries[0]['status']} ({numbers['agreement']:.0%} of the read k on the sentence's "
              f"side; {numbers['fit_fraction']:.0%} fit)", flush=True)
    results.update({"timings_s": timings, "curves": curves})
    draw(args, curves)


def specs(args) -> list[dict]:
    """reproduce_000_transition's curves, each with this study's check id (``…sentence…``)."""
    return [{**s, "check_id": s["check_id"].replace("saturated-knee", "sentence")} for s in rt.curve_specs(args)]


def student_error(row, ref: str) -> float:
    """A student's error as reproduce_000_transition saturates it (:func:`reproduce_000_transition.saturated_error`),
    a non-finite error counted as saturated (SATURATION) instead of NaN; NaN only where App. C.3's ratio is not
    resolved."""
    if ref == "zero" and row["zero"] / row["scale_w"] < rp.C3_RESOLVED:
        return float("nan")
    error = row["tail"] / (row["zero"] if ref == "zero" else row["scale_w"])
    return float(min(error, rt.SATURATION)) if np.isfinite(error) else rt.SATURATION


def curves_by_seed(rows, ref: str) -> tuple[list[int], dict]:
    """Per-seed curves of :func:`student_error` against k (NaN where a seed lacks a k)."""
    ks = sorted({r["k"] for r in rows})
    out = {}
    for r in rows:
        out.setdefault(r["seed"], np.full(len(ks), np.nan))[ks.index(r["k"])] = student_error(r, ref)
    return ks, out


def sentence(ks, curve, k_critical: int) -> dict:
    """Sec. 5.1's sentence on an error curve: above LOW at every read k < 2d̂, at most LOW at every read k > 2d̂.

    Args:
        ks: the training lengths.
        curve: the errors (seed-mean, or one seed's); NaN is not read.
        k_critical: 2d̂.

    Returns:
        ``agreement`` (the share of the read k ≠ 2d̂ on the sentence's side; NaN when no k is read on one side),
        ``low_below`` and ``high_above`` (the k against it), ``holds``.
    """
    ks, curve = np.asarray(ks, float), np.asarray(curve, float)
    read = np.isfinite(curve)
    below, above = read & (ks < k_critical), read & (ks > k_critical)
    low_below = ks[below & (curve <= LOW)].astype(int).tolist()
    high_above = ks[above & (curve > LOW)].astype(int).tolist()
    n = int(below.sum() + above.sum())
    agreement = 1.0 - (len(low_below) + len(high_above)) / n if below.any() and above.any() else float("nan")
    return {"agreement": agreement, "low_below": low_below, "high_above": high_above,
            "holds": bool(agreement >= AGREEMENT)}


def judge_curve(spec: dict, rows: list[dict], block: str) -> tuple[list[dict], dict]:
    """One curve's registered check and the per-seed readings beside.

    Args:
        spec: :func:`specs`'s entry.
        rows: the panel's members.
        block: the seed block they were trained on.

    Returns:
        ``(entries, numbers)``: the check entry in a list, and the curve's numbers.
    """
    mine = [r for r in rows if all(r[f] == v for f, v in spec["select"].items())]
    k_critical = rt.K_CRITICAL[spec["panel"]]
    ks, by_seed = curves_by_seed(mine, spec["ref"])
    mean = rp.seed_mean(by_seed)
    info = sentence(ks, mean, k_critical)
    fit = [rt.fits_window(r) for r in mine]
    fitting = float(np.mean(fit)) if fit else float("nan")
    reference = ("App. C.3's ratio (its tail error over the all-zero response's)" if spec["ref"] == "zero"
                 else "ℓ∞ tail error relative to max_j |w_j|")
    claim = (f"{spec['what']}: Sec. 5.1's sentence: each student's {reference}, saturated at {rt.SATURATION:g} (not "
             f"finite: {rt.SATURATION:g}); its seed-mean over {len(by_seed)} seeds is above {LOW:g} at every k < 2d̂ "
             f"and at most {LOW:g} at every k > 2d̂ (2d̂ = {k_critical}, free): the share of the read k ≠ 2d̂ on that "
             f"side ≥ {AGREEMENT:g}; decided when a k is read on both sides and ≥ {rp.KNEE_FIT_MIN_FRACTION:.0%} of "
             f"the students fit their window (max_(j<k) |h_j − w_j| ≤ {rp.FIT_TOLERANCE:g}·max_(j<k) |w_j|), else "
             "inconclusive" + (f" (against it: low at k = {info['low_below']} below 2d̂, high at k = "
                               f"{info['high_above']} above)" if not info["holds"] else ""))
    extra = {"reading": spec["reading"]} if spec["reading"] else {}
    per_seed = {str(s): sentence(ks, c, k_critical)["holds"] for s, c in by_seed.items()}
    entry = check(claim, f"{r0.SOURCE}, {r0.QUOTES_SHORT[spec['panel']]}", info["agreement"], AGREEMENT,
                  direction=">=", kind="prediction", predictions=[spec["prediction"]], check_id=spec["check_id"],
                  statistic="mean", seeds=sorted(by_seed), registered_after_run=True, seeds_block=block,
                  sentence=info, seed_mean=mean, ks=ks, per_seed_sentence=per_seed, fit_fraction=fitting, **extra)
    if not np.isfinite(info["agreement"]):
        entry.update(status="inconclusive", passed=False, reason="no k is read on one side of 2d̂")
    elif not fitting >= rp.KNEE_FIT_MIN_FRACTION:
        entry.update(status="inconclusive", passed=False,
                     reason=f"{fitting:.0%} of the students fit their training window, fewer than "
                            f"{rp.KNEE_FIT_MIN_FRACTION:.0%}")
    numbers = {"ks": ks, "mean": mean, "per_seed": {str(s): c for s, c in by_seed.items()}, "k_critical": k_critical,
               "agreement": info["agreement"], "holds": info["holds"], "fit_fraction": fitting, "status": entry["status"]}
    return [entry], numbers


def negative_controls() -> list[NegativeControl]:
    """Every registered check judged on a plausible alternative on which it must FAIL, every student fitting: for
    Figs. 1a, 1b, 3a, the same sharp transition moved to 2d̂ + 6 (error 1, then 1e-3); for Fig. 3b, the all-zero
    solution (App. C.3's ratio 1 at every k)."""
    args = parse_args(["--out", "unused"])
    result = {"study": STUDY, "config": {"seeds": args.seeds, "seed_list": args.seed_list,
                                         "seeds_block": args.seeds_block}}
    out = []
    for spec in specs(args):
        k_critical = rt.K_CRITICAL[spec["panel"]]
        ks = args.ks_1b if spec["panel"] == "fig1b" else args.ks_1a
        if spec["ref"] == "zero":
            words, error = "the all-zero solution (App. C.3's ratio 1 at every k)", dict.fromkeys(ks, 1.0)
        else:
            words = "the transition moved to 2d̂ + 6 (error 1 below it, 1e-3 from it on)"
            error = {k: 1.0 if k < k_critical + 6 else 1e-3 for k in ks}
        rows = [rt.synthetic_member(k, s, error[k], spec) for s in args.seed_list for k in ks]
        out.append(NegativeControl(spec["check_id"], words, judge_curve(spec, rows, args.seeds_block)[0][0], result))
    return out


def draw(args, curves):
    """sentence.png: every judged curve against k in the paper's axes (seed-mean thick, each seed thin), 2d̂ and LOW
    marked, the k against the sentence circled red."""
    import matplotlib.pyplot as plt

    n = len(curves)
    cols = min(n, 4)
    fig, axes = plt.subplots(-(-n // cols), cols, figsize=(4.2 * cols, 3.4 * -(-n // cols)), squeeze=False,
                             sharey=True)
    for ax, (what, c) in zip(axes.flat, curves.items()):
        ks, mean = np.asarray(c["ks"]), np.asarray(c["mean"])
        for i, curve in enumerate(c["per_seed"].values()):
            ax.semilogy(ks, np.maximum(curve, 1e-9), color="gray", lw=0.7, alpha=0.6,
                        label="each seed" if i == 0 else None)
        ax.semilogy(ks, np.maximum(mean, 1e-9), "o-", ms=3, color="C0", label="seed mean")
        against = ((ks < c["k_critical"]) & (mean <= LOW)) | ((ks > c["k_critical"]) & (mean > LOW))
        ax.plot(ks[against], np.maximum(mean[against], 1e-9), "o", ms=8, mfc="none", color="C3",
                label="against the sentence")
        ax.axvline(c["k_critical"], color="gray", ls=":", lw=0.8, label="k = 2d̂")
        ax.axhline(LOW, color="C3", ls="--", lw=0.8, label=f"LOW = {LOW:g}")
        ax.set_title(f"{what}\n{c['status']}: {c['agreement']:.0%} of k on the sentence's side; "
                     f"{c['fit_fraction']:.0%} fit", fontsize=7)
        ax.set(xlabel="training length k")
        ax.legend(fontsize=6)
    for ax in axes[:, 0]:
        ax.set_ylabel("saturated error min(tail / ref, 1)")
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    fig.suptitle(f"seed 000 Sec. 5.1's sentence, saturated errors (Adam, App. C.1); seeds {args.seed_list} "
                 f"({args.seeds_block} block)", fontsize=9)
    fig.tight_layout()
    save_figure(fig, args.out, "sentence.png")


if __name__ == "__main__":
    raise SystemExit(main())
