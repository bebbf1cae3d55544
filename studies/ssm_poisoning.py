"""Clean-label poisoning of a diagonal SSM's implicit bias (Slutzky et al., NeurIPS 2025, §4.2, Tables 1 and 3).

A diagonal SSM (A = diag(a) trained, B = C = 1 fixed, d = 10 at length L = 7 and d = 20 at L = 9) is trained by
gradient flow on impulse sequences of a teacher with A* = diag(1, 0), B* = C*ᵀ = (1, √(d − 1)) (impulse response
h*_0 = d, h*_j = 1). The "baseline" sequence (impulse at the first step) supervises the response at lag L − 1; the
"special" one (impulse at step L − 2), correctly labelled, supervises lag 1. The paper's claim: trained on the
baseline sequence alone the SSM extrapolates; adding the special sequence "poisons" its implicit bias and it does
not. gflow integrates both designs, seed by seed, and reads what the paper reads: the extrapolation error
max_{j<20} |h_j − h*_j| / max|h*| at the end of training.

The setup is that of the authors' gradient-flow notebook (gflow.problems.ssm_poisoning; the paper's text was not
available to us): their A0 recipe (numpy's legacy generator, the top two entries a hair apart), their loss (no ½) and
their t1 (1e11 / 1e13 for the baseline at L = 7 / 9, 1e4 / 1e7 with the special sequence). Their seeds are 242,
243, 244, 246 (L = 7) and 342, 344, 345, 346 (L = 9); ours are 242 … 253 and 342 … 353 (``--seeds``, 12 by default),
which contain theirs. We also run the special design to the baseline's t1 (a poisoned solution that were only a
transient would show there). They integrate with scipy's odeint (LSODA) at its default tolerance (1.49e-8); we
integrate at ``--rtol`` (1e-8) and repeat at ``--tight-rtol`` (1e-11), and rerun their integrator on their seeds, at
its default tolerance and at rtol = atol = 1e-13 on the same (O(d)) right-hand side, as a referee.

Reported per (L, design, seed): the extrapolation error at t1, and beside it max_{1≤j<20} |h_j − 1| (their error
divides by max|h*| = h*_0 = d, a lag every student matches by construction, so 0.01 is an absolute error of 0.1 at
d = 10); the escape time of lag L − 1 (first time L ≤ w_{L−1}/2) beside the blow-up estimate
a0^−(L−3)/(2(L−1)(L−3)) of da/dt = 2(L−1)a^(L−2) (ours); the final effective rank of A, its top |a_i|, and the
lag-1 gradient coefficient γ^(0) over time (summary.json).

Checks, thresholds fixed before the first full run:

- *predictions* (Slutzky et al. Tables 1, 3 and §4.1), per L, each decided over seeds by a bootstrap 95 % interval
  of the median: (005-P1) the baseline-only error ≤ 0.01 (their table: 0.0013 and 0.0073); (005-P2) the special
  sequence raises the error: per seed, error(special)/error(baseline) from the same A0 ≥ 2, and > 1 on every seed;
  (005-P3) with the special sequence the learned A has a larger effective rank (per seed difference > 0).
- *sanity*: every flow ends fitted (L(t1) ≤ 1e-20) with status "completed"; the error agrees with the tighter-rtol
  repeat, and on their seeds with the tight referee, to 1e-6 relative (pre-registered; it decides). A bar of 1e-4
  was proposed after a --quick run showed 9.1e-7 at L = 9 and is shown beside, never deciding: the runner-up's
  near-tie with the top entry (diff = 5e-12) makes the final state ill-conditioned there, moving a0[1] by 1e-15 or
  1e-14 relative moves the error by 1.2e-7 or 1.1e-6 relative at L = 9, by 5e-12 or 1e-10 at L = 7 (seeds 342, 242,
  rtol 1e-11), so ~1e-6 is float64's floor at L = 9, not the solver's. On their seeds our error agrees with their
  printed numbers to 1e-2 relative (a bar set after a first run had shown ≤ 8.8e-4: their default tolerance), and
  their integrator rerun on our right-hand side reproduces their printed numbers to 1e-3 (set after a run showed
  ≤ 1.9e-5).

Example:  python studies/ssm_poisoning.py --quick --out out/ssm_poisoning
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import gflow
from gflow.problems import ssm_poisoning as sp
from gflow.study import check, NegativeControl, over_seeds, QuickFull, rtol_option, run_study, save_figure, study_parser

SOURCE = "Slutzky et al. (NeurIPS 2025), §4.2 Tables 1 and 3 (gradient flow per Theorem 1)"
MECHANISM = "Slutzky et al. (NeurIPS 2025), §4.1 (effective rank of A, Figs. 2, 3)"
BASELINE_EXTRAPOLATES = 0.01  # 005-P1
POISON_RATIO = 2.0  # 005-P2
FITTED = 1e-20
GUARDED = ["005-P1", "005-P2", "005-P3"]  # the predictions whose numbers the sanity guards vouch for
RESOLVED = 1e-6  # pre-registered: decides
RESOLVED_POST_HOC = 1e-4  # proposed after a --quick run showed 9.1e-7 at L = 9 (shown beside, never decides)
REPRODUCES = 1e-2
SAME_SETUP = 1e-3
REFEREE_RTOL = 1e-13  # the tight referee: scipy odeint at rtol = atol/sd_A = 1e-13


def parse_args(argv=None):
    p = study_parser(__doc__, "out/ssm_poisoning", "output folder (figure, summary.json)",
                     "two seeds per length, no referee (about a minute)", validate=validate)
    p.add_argument("--lengths", type=int, nargs="+", default=[7, 9], choices=sorted(sp.SETTINGS),
                   help="sequence lengths L (d = 10 at 7, d = 20 at 9)")
    p.add_argument("--seeds", type=int, default=QuickFull(12, quick=2),
                   help="seeds per length: first_seed … first_seed + n − 1 (242 … at L = 7, 342 … at L = 9); "
                        "≥ 6 contains the authors' four")
    rtol_option(p, repeat=False)
    rtol_option(p, 1e-11, flag="--tight-rtol", what="the repeat that shows the answer is resolved", repeat=False)
    p.add_argument("--per-decade", type=int, default=20, help="saved times per decade of t (log-spaced from t = 1)")
    p.add_argument("--referee", action=argparse.BooleanOptionalAction, default=QuickFull(True, quick=False),
                   help="rerun the authors' integrator (scipy odeint) on their seeds")
    return p.parse_args(argv)


def validate(args):
    gflow.study.require_positive(args, "seeds", "per_decade")
    if args.tight_rtol >= args.rtol:
        raise gflow.GflowInputError(f"--tight-rtol ({args.tight_rtol:g}) must be below --rtol ({args.rtol:g})")


def solve(L, design, setting, seeds, t1, rtol, per_decade):
    teacher = sp.teacher_of(setting.d)
    loss = sp.loss_of(L, design, teacher)
    return gflow.solve_flows([loss] * len(seeds), [sp.student(sp.initial_a(setting, s)) for s in seeds], t1, rtol=rtol,
                             save_at=sp.save_times(t1, per_decade), diagnostics=sp.diagnostics_for(loss, teacher),
                             progress=False, config={"study": "ssm_poisoning", "L": L, "design": design})


def relative_gap(a, b) -> float:
    """max |a − b| / b."""
    return float(np.max(np.abs(np.asarray(a) - b) / b))


def main(argv=None):
    return run_study("ssm_poisoning", parse_args, science, argv)


def science(args, checks, results):
    print(f"ssm_poisoning: L ∈ {args.lengths}, {args.seeds} seeds each, rtol {args.rtol:g} (repeat "
          f"{args.tight_rtol:g}){' (quick)' if args.quick else ''}", flush=True)
    runs = {}
    for L in args.lengths:
        setting = sp.SETTINGS[L]
        seeds = list(range(setting.first_seed, setting.first_seed + args.seeds))
        r = {"seeds": seeds}
        for design in sp.DESIGNS:
            t1 = setting.t1[design]
            started = time.perf_counter()
            r[design] = solve(L, design, setting, seeds, t1, args.rtol, args.per_decade)
            r[design + "_tight"] = solve(L, design, setting, seeds, t1, args.tight_rtol, args.per_decade)
            print(f"  L = {L} {design:8s} t1 = {t1:.0e}: {time.perf_counter() - started:.1f} s, error median "
                  f"{np.median(sp.at_end(r[design])):.6g}, steps {int(np.max(r[design].steps))} (max)", flush=True)
        r["special_long"] = solve(L, "special", setting, seeds, setting.t1["baseline"], args.rtol, args.per_decade)
        if args.referee:
            started = time.perf_counter()
            r["referee"] = {design: {"default": sp.referee(L, design, setting, None),
                                     "tight": sp.referee(L, design, setting, REFEREE_RTOL)} for design in sp.DESIGNS}
            print(f"  L = {L} referee (scipy odeint on their seeds): {time.perf_counter() - started:.1f} s", flush=True)
        runs[L] = r
    for L in args.lengths:
        checks += length_checks(L, runs[L], args)
    results.update(collect(runs, args))
    make_figure(runs, args)
    print()


def prediction_checks(L: int, seeds, error: dict, effective_rank: dict) -> list[dict]:
    """The four registered prediction checks at one length L, judged on the measured numbers (Slutzky et al. §4.1,
    §4.2, Tables 1, 3): 005-P1 (the baseline-only error, median ≤ 0.01), 005-P2 (per seed error(special) /
    error(baseline), median ≥ 2; error(special) > error(baseline) on every seed) and 005-P3 (per seed effective rank
    of A with the special sequence minus without, median > 0), each with its registered check id
    (validation/registry.toml: ``005-P1.L7`` … ``005-P3.rank-L9``) and the seeds it was decided on. A pure function
    of the numbers: :func:`length_checks` calls it on a run's flows, :func:`negative_controls` on alternatives.

    Args:
        L: the length (7 or 9).
        seeds: the seeds, in the order of the values.
        error: design ("baseline", "special") → the extrapolation error max_{j<20} |h_j − h*_j| / max|h*| at t1,
            one per seed.
        effective_rank: design → the effective rank of the learned A at t1, one per seed.

    Returns:
        The four check entries.
    """
    setting = sp.SETTINGS[L]
    seeds = list(seeds)
    base, special = np.asarray(error["baseline"], dtype=float), np.asarray(error["special"], dtype=float)
    erank = {design: np.asarray(effective_rank[design], dtype=float) for design in sp.DESIGNS}
    n = len(seeds)
    where = f"L = {L}, d = {setting.d}, gradient flow to their t1"
    return [
        over_seeds(f"{where}: baseline sequence only, extrapolation error max_j<{sp.HORIZON} |h_j − h*_j|/max|h*|, "
                   f"median over {n} seeds ≤ {BASELINE_EXTRAPOLATES:g} (the SSM extrapolates)", SOURCE, base,
                   BASELINE_EXTRAPOLATES, "<=", predictions=["005-P1"], check_id=f"005-P1.L{L}", seeds=seeds),
        over_seeds(f"{where}: per seed (same A0), extrapolation error with the special sequence / without, median "
                   f"over {n} seeds ≥ {POISON_RATIO:g} (clean labels poison the implicit bias)", SOURCE,
                   special / base, POISON_RATIO, ">=", predictions=["005-P2"], check_id=f"005-P2.ratio-L{L}",
                   seeds=seeds),
        check(f"{where}: the special sequence raises the extrapolation error on every seed (fraction of {n} seeds "
              f"with error(special) > error(baseline) = 1)", SOURCE, float(np.mean(special > base)), 1.0,
              direction=">=", kind="prediction", predictions=["005-P2"], check_id=f"005-P2.every-seed-L{L}",
              seeds=seeds),
        over_seeds(f"{where}: per seed, effective rank (exp of the entropy of |a_i|/Σ|a_j|) of the learned A with "
                   f"the special sequence minus without, median over {n} seeds > 0", MECHANISM,
                   erank["special"] - erank["baseline"], 0.0, ">", predictions=["005-P3"], check_id=f"005-P3.rank-L{L}",
                   seeds=seeds),
    ]


def length_checks(L: int, r: dict, args) -> list[dict]:
    """The checks at one length L (Slutzky et al. §4.1, §4.2, Tables 1, 3): each deciding one carries its registered
    check id (validation/registry.toml: ``005-P1.L7``, ``005-P2.ratio-L7``, ``005-P2.every-seed-L7``,
    ``005-P3.rank-L7`` and the same at L = 9) and the seeds it was decided on (242 … 253 at L = 7, 342 … 353 at L = 9
    by default).

    Args:
        L: the length (7 or 9).
        r: the flows at L (:func:`science`): ``seeds``, and per design the batch of flows at --rtol, --tight-rtol.
        args: the study's options.

    Returns:
        The check entries.
    """
    setting = sp.SETTINGS[L]
    seeds = r["seeds"]
    base, special = sp.at_end(r["baseline"]), sp.at_end(r["special"])
    where = f"L = {L}, d = {setting.d}, gradient flow to their t1"
    out = prediction_checks(L, seeds, {"baseline": base, "special": special},
                            {design: sp.at_end(r[design], "effective_rank") for design in sp.DESIGNS})
    batches = [r[k] for k in ("baseline", "special", "baseline_tight", "special_tight", "special_long")]
    worst_loss = max(float(np.max(sp.at_end(b, "loss"))) for b in batches)
    statuses = sorted({b[i].status for b in batches for i in range(len(seeds))})
    out.append(check(f"{where}: every flow (both designs, both rtols, and the special design to t1 = "
                     f"{setting.t1['baseline']:.0e}) completes and ends fitted, max L(t1) ≤ {FITTED:g}", SOURCE,
                     worst_loss, FITTED, worst_loss <= FITTED and statuses == ["completed"], kind="sanity",
                     predictions=GUARDED, statuses=statuses))
    tight = np.concatenate([sp.at_end(r["baseline_tight"]), sp.at_end(r["special_tight"])])
    ours = np.concatenate([base, special])
    post_hoc = "pass" if relative_gap(ours, tight) <= RESOLVED_POST_HOC else "FAIL"
    out.append(gflow.study.tolerance_agreement(
        f"{where}: extrapolation errors at rtol {args.rtol:g} against the repeat at {args.tight_rtol:g}, max relative "
        f"difference ≤ {RESOLVED:g} (pre-registered; a bar of {RESOLVED_POST_HOC:g} proposed after a --quick run "
        f"showed 9.1e-7 at L = 9 gives {post_hoc}: at L = 9 the final state is ill-conditioned, moving a0[1] by 1e-14 "
        "relative moves the error by 1.1e-6)", SOURCE, ours, tight, RESOLVED, predictions=GUARDED,
        post_hoc_threshold=RESOLVED_POST_HOC, status_at_post_hoc=post_hoc))
    shared = [s for s in setting.their_seeds if s in seeds]  # their seeds among ours: compared with their numbers
    if shared:
        at = [seeds.index(s) for s in shared]
        which = [setting.their_seeds.index(s) for s in shared]
        printed = np.concatenate([np.asarray(setting.their_error[d])[which] for d in sp.DESIGNS])
        gap = relative_gap(np.concatenate([sp.at_end(r[d])[at] for d in sp.DESIGNS]), printed)
        out.append(check(f"{where}: on their seeds {shared}, our extrapolation errors against their printed ones "
                         f"(odeint at its default tolerance), max relative difference ≤ {REPRODUCES:g} (bar set after "
                         f"a first run showed ≤ 8.8e-4)", SOURCE, gap, REPRODUCES, direction="<=", kind="sanity",
                         predictions=GUARDED))
        if "referee" in r:
            gap = relative_gap(np.concatenate([r["referee"][d]["default"][which] for d in sp.DESIGNS]), printed)
            out.append(check(f"{where}: on their seeds {shared}, their integrator rerun (scipy odeint at its default "
                             f"tolerance on their output grid, our O(d) right-hand side) against their printed errors, "
                             f"max relative difference ≤ {SAME_SETUP:g} (our setup is theirs; bar set after a run "
                             f"showed ≤ 1.9e-5)", SOURCE, gap, SAME_SETUP, direction="<=", kind="sanity",
                             predictions=GUARDED))
            gap = relative_gap(np.concatenate([sp.at_end(r[d + "_tight"])[at] for d in sp.DESIGNS]),
                               np.concatenate([r["referee"][d]["tight"][which] for d in sp.DESIGNS]))
            out.append(check(f"{where}: on their seeds {shared}, our extrapolation errors (rtol {args.tight_rtol:g}) "
                             f"against scipy odeint at rtol = 1e-13, max relative difference ≤ {RESOLVED:g}", SOURCE,
                             gap, RESOLVED, direction="<=", kind="sanity", predictions=GUARDED))
    return out


def negative_controls() -> list[NegativeControl]:
    """The eight registered checks judged by :func:`prediction_checks` on plausible alternatives, on the registered
    seeds (242 … 253 at L = 7, 342 … 353 at L = 9: a full run's), each of which must FAIL
    (gflow.study.control_problems). Per length L:

    - 005-P1 (baseline extrapolates): the baseline-only SSM does not extrapolate, its error at the level of the
      authors' own poisoned runs (the median of their printed special-design errors, 0.050 at L = 7 and 0.035 at
      L = 9, times per-seed noise e^{0.1 z}, z standard normal): a non-extrapolating error of the size their tables show.
    - 005-P2 (ratio ≥ 2; worse on every seed): the special sequence has no effect, error(special) = error(baseline)
      × e^{0.25 z} per seed around the authors' baseline level (ratio ≈ 1); and, for the every-seed check, the
      poisoning holds at their ratio on 10 of the 12 seeds but lowers the error (ratio 0.8) on 2.
    - 005-P3 (effective rank rises): the special sequence does not spread A: under both designs only the top entry
      grows, to the teacher's a = 1; the baseline's other entries stay at their A0 (their recipe,
      gflow.problems.ssm_poisoning.initial_a), the special design's are shifted together until h_1 = Σ a_i = 1
      (the lag-1 term's gradient is the same on every entry, B = C = 1): the teacher's own solution, which fits
      both training lags, with the rest's |a_i| smaller, so a slightly lower effective rank (by 0.008 … 0.24),
      measured with the study's own diagnostic. A difference scattered around 0 would leave the check inconclusive
      rather than FAIL (the bootstrap interval of the median straddles 0); it FAILs on an effective rank that does
      not rise on most seeds.

    Deterministic (numpy seeds fixed per L), no flow integrated, nothing written.

    Returns:
        The controls, five per length (two for the every-seed check).
    """
    args = parse_args([])
    result = {"study": "ssm_poisoning", "config": {"quick": False, "lengths": args.lengths, "seeds": args.seeds}}
    out = []
    for L in args.lengths:
        setting = sp.SETTINGS[L]
        seeds = list(range(setting.first_seed, setting.first_seed + args.seeds))
        n = len(seeds)
        rng = np.random.default_rng(L)
        level = {design: float(np.median(setting.their_error[design])) for design in sp.DESIGNS}
        unread = {"baseline": np.ones(n), "special": np.ones(n)}  # effective ranks the P1 and P2 checks do not read

        def control(words, check_id, error, effective_rank=unread, L=L, seeds=seeds):
            entry = next(e for e in prediction_checks(L, seeds, error, effective_rank) if e["check_id"] == check_id)
            out.append(NegativeControl(check_id, f"L = {L}: {words}", entry, result))

        base = level["special"] * np.exp(0.1 * rng.standard_normal(n))
        control(f"the baseline-only SSM does not extrapolate: its error at their poisoned runs' level "
                f"({level['special']:.3g}, per seed × e^(0.1 z))", f"005-P1.L{L}",
                {"baseline": base, "special": base * level["special"] / level["baseline"]})
        base = level["baseline"] * np.exp(0.1 * rng.standard_normal(n))
        no_effect = {"baseline": base, "special": base * np.exp(0.25 * rng.standard_normal(n))}
        words = "the special sequence has no effect: error(special) = error(baseline) × e^(0.25 z) per seed"
        control(words, f"005-P2.ratio-L{L}", no_effect)
        control(words, f"005-P2.every-seed-L{L}", no_effect)
        ratio = level["special"] / level["baseline"] * np.exp(0.1 * rng.standard_normal(n))
        ratio[[3, 8]] = 0.8
        control(f"the special sequence poisons at their ratio on {n - 2} of {n} seeds and lowers the error "
                f"(ratio 0.8) on 2", f"005-P2.every-seed-L{L}", {"baseline": base, "special": base * ratio})
        teacher = sp.teacher_of(setting.d)
        a = {"baseline": [], "special": []}
        for seed in seeds:
            grown = sp.initial_a(setting, seed)
            grown[0] = 1.0
            a["baseline"].append(grown)
            a["special"].append(np.r_[1.0, grown[1:] - np.mean(grown[1:])])
        measure = {design: sp.diagnostics_for(sp.loss_of(L, design, teacher), teacher) for design in sp.DESIGNS}
        measured = {name: {design: np.array([float(measure[design][name](sp.student(x))) for x in a[design]])
                           for design in sp.DESIGNS} for name in ("extrapolation_error", "effective_rank")}
        control("the special sequence does not spread A: under both designs only the top entry grows (to 1); the "
                "special design's others shifted together to h_1 = 1 (the teacher's solution), the baseline's at A0",
                f"005-P3.rank-L{L}", measured["extrapolation_error"], measured["effective_rank"])
    return out


def collect(runs: dict, args) -> dict:
    out = {}
    for L, r in runs.items():
        setting = sp.SETTINGS[L]
        a0 = [sp.initial_a(setting, s) for s in r["seeds"]]
        entry = {"d": setting.d, "seeds": r["seeds"], "t1": setting.t1, "their_seeds": setting.their_seeds,
                 "their_error": setting.their_error, "blow_up_estimate": [sp.blow_up_estimate(a, L) for a in a0]}
        for design in sp.DESIGNS + ("special_long",):
            b = r[design]
            entry[design] = {
                "extrapolation_error": sp.at_end(b),
                "escape_time": [sp.escape_time(b[i], "baseline" if design == "baseline" else "special")
                                for i in range(len(r["seeds"]))],
                "final_loss": sp.at_end(b, "loss"), "effective_rank": sp.at_end(b, "effective_rank"),
                "top_abs_a": sp.at_end(b, "top_abs_a"), "steps": b.steps,
                "max_abs_error_beyond_lag_0": [sp.max_error_beyond_lag_0(b[i].final) for i in range(len(b))],
                "gamma0_over_time": {"ts": [b[i].ts for i in range(len(b))],
                                     "gamma0": [b[i].diagnostics["gamma0"] for i in range(len(b))]},
                "wall_time_s": b.wall_time_s}
            entry[design]["extrapolation_error_median_interval"] = gflow.study.bootstrap_interval(sp.at_end(b), "median")
            if design in sp.DESIGNS:
                entry[design]["extrapolation_error_tight"] = sp.at_end(r[design + "_tight"])
        base, special = entry["baseline"]["extrapolation_error"], entry["special"]["extrapolation_error"]
        entry["ratio_special_to_baseline"] = special / base
        if "referee" in r:
            entry["referee"] = r["referee"]
        out[f"L{L}"] = entry
        print(f"  L = {L}: error baseline median {np.median(base):.6g} [{np.min(base):.4g}, {np.max(base):.4g}], "
              f"special {np.median(special):.6g} [{np.min(special):.4g}, {np.max(special):.4g}], ratio median "
              f"{np.median(special / base):.3g}; escape (baseline) median "
              f"{np.median(entry['baseline']['escape_time']):.3g} vs estimate "
              f"{np.median(entry['blow_up_estimate']):.3g}; special run on to t1 = {setting.t1['baseline']:.0e}: error "
              f"median {np.median(entry['special_long']['extrapolation_error']):.6g}", flush=True)
    return out


def make_figure(runs: dict, args):
    save_figure(sp.figure(runs, BASELINE_EXTRAPOLATES), args.out, "ssm_poisoning.png",
                title="Slutzky et al. (NeurIPS 2025) Tables 1 and 3, gradient flow per Theorem 1: "
                f"diagonal SSM, rtol {args.rtol:g}")


if __name__ == "__main__":
    raise SystemExit(main())
