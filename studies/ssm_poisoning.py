"""Clean-label poisoning of a diagonal SSM's implicit bias (Slutzky et al., NeurIPS 2025, §4.2, Tables 1 and 3).

A diagonal SSM (A = diag(a) trained, B = C = 1 fixed, d = 10 at length L = 7 and d = 20 at L = 9) is trained by
gradient flow on impulse sequences of a teacher with A* = diag(1, 0), B* = C*ᵀ = (1, √(d − 1)) (impulse response
h*_0 = d, h*_j = 1). The "baseline" sequence (impulse at the first step) supervises the response at lag L − 1; the
"special" one (impulse at step L − 2), correctly labelled, supervises lag 1. The paper's claim: trained on the
baseline sequence alone the SSM extrapolates; adding the special sequence "poisons" its implicit bias and it does
not. gflow integrates both designs, seed by seed, and reads what the paper reads: the extrapolation error
max_{j<20} |h_j − h*_j| / max|h*| at the end of training.

The setup is that of the authors' gradient-flow notebook (standalone_ssm_theory_poison_experiments.ipynb of
github.com/YoniSlutzky98/imp-bias-ssm-poison; the paper's text was not available to us):

- A0 = the d draws sd_A·U[0, 1) of ``numpy.random.RandomState(seed).rand`` sorted descending, then
  A0[1] = A0[0] − diff (the top two entries a hair apart): sd_A = 1e-3, diff = 0.05·e^−15 at L = 7; sd_A = 5e-3,
  diff = 0.05/e^(10·log10 200) = 5.08e-12 at L = 9. Their seeds are 242, 243, 244, 246 (L = 7) and 342, 344, 345, 346
  (L = 9); ours are 242 … 253 and 342 … 353 (``--seeds``, 12 by default), which contain theirs. The seeds are
  numpy's legacy generator, not ``jax.random.key``: that is how their draws are reproduced exactly.
- Loss: the mean over the training sequences of the squared error, no ½: L = (h_{L−1} − 1)² (baseline) and
  ½(h_{L−1} − 1)² + ½(h_1 − 1)² (baseline + special), :meth:`gflow.PopulationLoss.at_lags`.
- Time: dA/dt = −∇L up to their t1: 1e11 (L = 7) and 1e13 (L = 9) for the baseline, 1e4 and 1e7 with the special
  sequence. We also run the special design to the baseline's t1 (reported: a poisoned solution that were only a
  transient would show there). They integrate with scipy's odeint (LSODA) at its default tolerance (1.49e-8); we
  integrate at ``--rtol`` (1e-8) and repeat at ``--tight-rtol`` (1e-11), and rerun their integrator on their seeds,
  at its default tolerance and at rtol = atol = 1e-13 on the same (O(d)) right-hand side, as a referee.

Reported per (L, design, seed): the extrapolation error at t1, and beside it max_{1≤j<20} |h_j − 1| (their error
divides by max|h*| = h*_0 = d, a lag every student matches by construction, so 0.01 is an absolute error of 0.1 at
d = 10); the escape time of lag L − 1 (first time L ≤ w_{L−1}/2) beside the blow-up estimate
a0^−(L−3)/(2(L−1)(L−3)) of da/dt = 2(L−1)a^(L−2) (ours); the final effective rank of A, its top |a_i|, and the
lag-1 gradient coefficient γ^(0) over time (summary.json).

Checks, thresholds fixed before the first full run (issue 27):

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
from typing import NamedTuple

import numpy as np
from scipy.integrate import odeint

import gflow
from gflow import analysis as an
from gflow.models import Frozen
from gflow.plot import figure_grid, label_axes
from gflow.study import bootstrap_interval, check, over_seeds, QuickFull, run_study, save_figure, study_parser

SOURCE = "Slutzky et al. (NeurIPS 2025), §4.2 Tables 1 and 3 (gradient flow per Theorem 1)"
MECHANISM = "Slutzky et al. (NeurIPS 2025), §4.1 (effective rank of A, Figs. 2, 3)"
HORIZON = 20  # lags h_0 … h_19 of the extrapolation error (their ext_end = 20)
TOP = 7  # top |a_i| they plot


class Setting(NamedTuple):
    d: int
    sd: float
    diff: float
    first_seed: int
    t1: dict  # design -> their t1
    their_seeds: tuple
    their_error: dict  # design -> their printed errors, in their_seeds' order
    their_grid: dict  # design -> the number of points of their odeint output grid linspace(0, t1, n)


SETTINGS = {
    7: Setting(10, 1e-3, 0.05 * np.exp(-15.0), 242, {"baseline": 1e11, "special": 1e4}, (242, 243, 244, 246),
               {"baseline": (0.0011832003, 0.0012250599, 0.0013671265, 0.0013053552),
                "special": (0.0491806233, 0.0458364960, 0.0543069234, 0.0510738592)},
               {"baseline": 1000, "special": 1000}),
    9: Setting(20, 5e-3, 0.05 / np.exp(10 * np.log10(200.0)), 342, {"baseline": 1e13, "special": 1e7},
               (342, 344, 345, 346),
               {"baseline": (0.0072810608, 0.0077195785, 0.0070785187, 0.0072796163),
                "special": (0.0350105140, 0.0352740546, 0.0349436314, 0.0352586253)},
               {"baseline": 10000, "special": 1000}),
}
DESIGNS = ("baseline", "special")
BASELINE_EXTRAPOLATES = 0.01  # 005-P1
POISON_RATIO = 2.0  # 005-P2
FITTED = 1e-20
GUARDED = ["005-P1", "005-P2", "005-P3"]  # the predictions whose numbers the sanity guards vouch for
RESOLVED = 1e-6  # pre-registered: decides
RESOLVED_POST_HOC = 1e-4  # proposed after a --quick run showed 9.1e-7 at L = 9 (shown beside, never decides)
REPRODUCES = 1e-2
SAME_SETUP = 1e-3


def parse_args(argv=None):
    p = study_parser(__doc__, "out/ssm_poisoning", "output folder (figure, summary.json)",
                     "two seeds per length, no referee (about a minute)")
    p.add_argument("--lengths", type=int, nargs="+", default=[7, 9], choices=sorted(SETTINGS),
                   help="sequence lengths L (d = 10 at 7, d = 20 at 9)")
    p.add_argument("--seeds", type=int, default=QuickFull(12, quick=2),
                   help="seeds per length: first_seed … first_seed + n − 1 (242 … at L = 7, 342 … at L = 9); "
                        "≥ 6 contains the authors' four")
    p.add_argument("--rtol", type=float, default=1e-8, help="solver rtol")
    p.add_argument("--tight-rtol", type=float, default=1e-11, help="the repeat that shows the answer is resolved")
    p.add_argument("--per-decade", type=int, default=20, help="saved times per decade of t (log-spaced from t = 1)")
    p.add_argument("--referee", action=argparse.BooleanOptionalAction, default=QuickFull(True, quick=False),
                   help="rerun the authors' integrator (scipy odeint) on their seeds")
    args = p.parse_args(argv)
    p.require_positive(args, "seeds", "rtol", "tight_rtol", "per_decade")
    if args.tight_rtol >= args.rtol:
        p.error(f"--tight-rtol ({args.tight_rtol:g}) must be below --rtol ({args.rtol:g})")
    return args


def teacher_of(d: int):
    b = np.array([1.0, np.sqrt(d - 1.0)])
    return gflow.LinearRNN(np.array([1.0, 0.0]), b, b, structure="diagonal")


def loss_of(L: int, design: str, teacher):
    return gflow.PopulationLoss.at_lags(teacher, {L - 1: 1.0} if design == "baseline" else {L - 1: 0.5, 1: 0.5})


def initial_a(setting: Setting, seed: int) -> np.ndarray:
    """Their A0: sorted descending sd_A·U[0, 1) draws of numpy's legacy generator, the runner-up moved to diff below."""
    a = np.flip(np.sort(setting.sd * np.random.RandomState(seed).rand(setting.d)))
    a[1] = a[0] - setting.diff
    return a


def student(a0: np.ndarray):
    d = a0.size
    return gflow.LinearRNN(a0, Frozen(np.ones(d)), Frozen(np.ones(d)), structure="diagonal")


def save_times(t1: float, per_decade: int) -> np.ndarray:
    decades = int(np.ceil(np.log10(t1)))
    return np.concatenate([[0.0], np.geomspace(1.0, t1, decades * per_decade + 1)])


def diagnostics_for(loss, teacher):
    return {"extrapolation_error": lambda m: an.relative_extrapolation_error(m, teacher, HORIZON),
            "effective_rank": an.effective_rank,
            "top_abs_a": lambda m: an.top_eigenvalue_magnitudes(m, TOP),
            "gamma0": lambda m: an.lag_gradient_coefficients(loss, m)[0]}


def escape_time(traj, L: int, design: str) -> float:
    """The escape of lag L − 1: the first time L ≤ w_{L−1}/2, half the loss its term alone carries on the plateau
    (w_{L−1} = 1 baseline, ½ with the special sequence, whose lag-1 term is fitted at t ≈ 1), by
    :func:`gflow.analysis.escape_time`; nan if never."""
    weight = 1.0 if design == "baseline" else 0.5
    return float(an.escape_time(traj.ts, traj.loss, reference=weight))


def blow_up_estimate(a0: np.ndarray, L: int) -> float:
    """t* = a0^−(L−3)/(2(L−1)(L−3)): the top entry's blow-up time under da/dt = 2(L−1)a^(L−2) (residual −1)."""
    return float(np.max(a0) ** -(L - 3) / (2 * (L - 1) * (L - 3)))


def solve(L, design, setting, seeds, t1, rtol, per_decade):
    teacher = teacher_of(setting.d)
    loss = loss_of(L, design, teacher)
    models = [student(initial_a(setting, s)) for s in seeds]
    batch = gflow.solve_flows([loss] * len(seeds), models, t1, rtol=rtol, save_at=save_times(t1, per_decade),
                              diagnostics=diagnostics_for(loss, teacher), progress=False,
                              config={"study": "ssm_poisoning", "L": L, "design": design})
    return batch


def at_end(batch, name: str = "extrapolation_error") -> np.ndarray:
    """A diagnostic (or the loss, ``name="loss"``) of every flow of a batch at the last time it reached."""
    return np.array([(batch[i].loss if name == "loss" else batch[i].diagnostics[name])[-1] for i in range(len(batch))])


def final_errors(batch) -> np.ndarray:
    return at_end(batch)


def referee(L: int, design: str, setting: Setting, rtol: float | None) -> np.ndarray:
    """Their integrator on their seeds: scipy odeint (LSODA) on their output grid linspace(0, t1, n) (LSODA's steps
    depend on it), on the O(d) right-hand side of their flow (their notebook's, without its d × d matrices);
    ``rtol=None`` is odeint's default (theirs), else rtol = atol/sd_A."""
    lags = [(L - 1, 1.0)] if design == "baseline" else [(L - 1, 0.5), (1, 0.5)]

    def field(a, t):
        out = np.zeros_like(a)
        for lag, w in lags:
            out -= 2.0 * w * (np.sum(a ** lag) - 1.0) * lag * a ** (lag - 1)
        return out

    kw = {} if rtol is None else {"rtol": rtol, "atol": rtol * setting.sd}
    h_star = np.r_[setting.d, np.ones(HORIZON - 1)]
    out = []
    for seed in setting.their_seeds:
        grid = np.linspace(0.0, setting.t1[design], setting.their_grid[design])
        a = odeint(field, initial_a(setting, seed), grid, **({} if rtol is None else {"mxstep": 10**7}), **kw)[-1]
        h = np.array([np.sum(a ** j) for j in range(HORIZON)])
        out.append(np.max(np.abs(h - h_star)) / setting.d)
    return np.asarray(out)


def max_error_beyond_lag_0(model, d: int) -> float:
    """max_{1 ≤ j < 20} |h_j − 1|: the error on the lags the student does not match by construction (h_0 = d always),
    not divided by max|h*| = d (reported beside their relative error, which is that divided by d)."""
    return float(np.max(np.abs(np.asarray(model.impulse_response(HORIZON))[1:] - 1.0)))


def main(argv=None):
    return run_study("ssm_poisoning", parse_args, science, argv)


def science(args, checks, results):
    print(f"ssm_poisoning: L ∈ {args.lengths}, {args.seeds} seeds each, rtol {args.rtol:g} (repeat "
          f"{args.tight_rtol:g}){' (quick)' if args.quick else ''}", flush=True)
    runs = {}
    for L in args.lengths:
        setting = SETTINGS[L]
        seeds = list(range(setting.first_seed, setting.first_seed + args.seeds))
        long_t1 = setting.t1["baseline"]
        r = {"seeds": seeds}
        for design in DESIGNS:
            t1 = setting.t1[design]
            started = time.perf_counter()
            r[design] = solve(L, design, setting, seeds, t1, args.rtol, args.per_decade)
            r[design + "_tight"] = solve(L, design, setting, seeds, t1, args.tight_rtol, args.per_decade)
            print(f"  L = {L} {design:8s} t1 = {t1:.0e}: {time.perf_counter() - started:.1f} s, error median "
                  f"{np.median(final_errors(r[design])):.6g}, steps {int(np.max(r[design].steps))} (max)", flush=True)
        r["special_long"] = solve(L, "special", setting, seeds, long_t1, args.rtol, args.per_decade)
        if args.referee:
            started = time.perf_counter()
            r["referee"] = {design: {"default": referee(L, design, setting, None),
                                     "tight": referee(L, design, setting, 1e-13)} for design in DESIGNS}
            print(f"  L = {L} referee (scipy odeint on their seeds): {time.perf_counter() - started:.1f} s", flush=True)
        runs[L] = r
    for L in args.lengths:
        checks += length_checks(L, runs[L], args)
    results.update(collect(runs, args))
    make_figure(runs, args)
    print()


def length_checks(L: int, r: dict, args) -> list[dict]:
    setting = SETTINGS[L]
    seeds = r["seeds"]
    base, special = final_errors(r["baseline"]), final_errors(r["special"])
    erank = {design: at_end(r[design], "effective_rank") for design in DESIGNS}
    n = len(seeds)
    where = f"L = {L}, d = {setting.d}, gradient flow to their t1"
    out = [
        over_seeds(f"{where}: baseline sequence only, extrapolation error max_j<{HORIZON} |h_j − h*_j|/max|h*|, "
                   f"median over {n} seeds ≤ {BASELINE_EXTRAPOLATES:g} (the SSM extrapolates)", SOURCE, base,
                   BASELINE_EXTRAPOLATES, "<=", predictions=["005-P1"]),
        over_seeds(f"{where}: per seed (same A0), extrapolation error with the special sequence / without, median "
                   f"over {n} seeds ≥ {POISON_RATIO:g} (clean labels poison the implicit bias)", SOURCE,
                   special / base, POISON_RATIO, ">=", predictions=["005-P2"]),
        check(f"{where}: the special sequence raises the extrapolation error on every seed (fraction of {n} seeds "
              f"with error(special) > error(baseline) = 1)", SOURCE, float(np.mean(special > base)), 1.0,
              bool(np.all(special > base)), kind="prediction", predictions=["005-P2"]),
        over_seeds(f"{where}: per seed, effective rank (exp of the entropy of |a_i|/Σ|a_j|) of the learned A with "
                   f"the special sequence minus without, median over {n} seeds > 0", MECHANISM,
                   erank["special"] - erank["baseline"], 0.0, ">", predictions=["005-P3"]),
    ]
    batches = [r[k] for k in ("baseline", "special", "baseline_tight", "special_tight", "special_long")]
    worst_loss = max(float(np.max(at_end(b, "loss"))) for b in batches)
    statuses = sorted({b[i].status for b in batches for i in range(len(seeds))})
    out.append(check(f"{where}: every flow (both designs, both rtols, and the special design to t1 = "
                     f"{setting.t1['baseline']:.0e}) completes and ends fitted, max L(t1) ≤ {FITTED:g}", SOURCE,
                     worst_loss, FITTED, worst_loss <= FITTED and statuses == ["completed"], kind="sanity", predictions=GUARDED,
                     statuses=statuses))
    tight = np.concatenate([final_errors(r["baseline_tight"]), final_errors(r["special_tight"])])
    ours = np.concatenate([base, special])
    resolved = float(np.max(np.abs(ours - tight) / tight))
    post_hoc = "pass" if resolved <= RESOLVED_POST_HOC else "FAIL"
    out.append(check(f"{where}: extrapolation errors at rtol {args.rtol:g} against the repeat at "
                     f"{args.tight_rtol:g}, max relative difference ≤ {RESOLVED:g} (pre-registered; a bar of "
                     f"{RESOLVED_POST_HOC:g} proposed after a --quick run showed 9.1e-7 at L = 9 gives {post_hoc}: "
                     "at L = 9 the final state is ill-conditioned, moving a0[1] by 1e-14 relative moves the error by "
                     "1.1e-6)", SOURCE, resolved, RESOLVED, resolved <= RESOLVED, kind="sanity", predictions=GUARDED,
                     post_hoc_threshold=RESOLVED_POST_HOC, status_at_post_hoc=post_hoc))
    shared = [s for s in setting.their_seeds if s in seeds]  # their seeds among ours: compared with their numbers
    if shared:
        at = [seeds.index(s) for s in shared]
        which = [setting.their_seeds.index(s) for s in shared]
        ours_theirs = np.concatenate([final_errors(r[d])[at] for d in DESIGNS])
        printed = np.concatenate([np.asarray(setting.their_error[d])[which] for d in DESIGNS])
        gap = float(np.max(np.abs(ours_theirs - printed) / printed))
        out.append(check(f"{where}: on their seeds {shared}, our extrapolation errors against their printed ones "
                         f"(odeint at its default tolerance), max relative difference ≤ {REPRODUCES:g} (bar set after "
                         f"a first run showed ≤ 8.8e-4)", SOURCE, gap, REPRODUCES, gap <= REPRODUCES, kind="sanity", predictions=GUARDED))
        if "referee" in r:
            theirs_again = np.concatenate([r["referee"][d]["default"][which] for d in DESIGNS])
            gap = float(np.max(np.abs(theirs_again - printed) / printed))
            out.append(check(f"{where}: on their seeds {shared}, their integrator rerun (scipy odeint at its default "
                             f"tolerance on their output grid, our O(d) right-hand side) against their printed errors, "
                             f"max relative difference ≤ {SAME_SETUP:g} (our setup is theirs; bar set after a run "
                             f"showed ≤ 1.9e-5)", SOURCE, gap, SAME_SETUP, gap <= SAME_SETUP, kind="sanity", predictions=GUARDED))
            ref = np.concatenate([r["referee"][d]["tight"][which] for d in DESIGNS])
            ours_tight = np.concatenate([final_errors(r[d + "_tight"])[at] for d in DESIGNS])
            gap = float(np.max(np.abs(ours_tight - ref) / ref))
            out.append(check(f"{where}: on their seeds {shared}, our extrapolation errors (rtol {args.tight_rtol:g}) "
                             f"against scipy odeint at rtol = 1e-13, max relative difference ≤ {RESOLVED:g}", SOURCE,
                             gap, RESOLVED, gap <= RESOLVED, kind="sanity", predictions=GUARDED))
    return out


def collect(runs: dict, args) -> dict:
    out = {}
    for L, r in runs.items():
        setting = SETTINGS[L]
        a0 = [initial_a(setting, s) for s in r["seeds"]]
        entry = {"d": setting.d, "seeds": r["seeds"], "t1": setting.t1, "their_seeds": setting.their_seeds,
                 "their_error": setting.their_error, "blow_up_estimate": [blow_up_estimate(a, L) for a in a0]}
        for design in DESIGNS + ("special_long",):
            b = r[design]
            entry[design] = {
                "extrapolation_error": final_errors(b),
                "escape_time": [escape_time(b[i], L, "baseline" if design == "baseline" else "special")
                                for i in range(len(r["seeds"]))],
                "final_loss": at_end(b, "loss"), "effective_rank": at_end(b, "effective_rank"),
                "top_abs_a": at_end(b, "top_abs_a"), "steps": b.steps,
                "max_abs_error_beyond_lag_0": [max_error_beyond_lag_0(b[i].final, setting.d) for i in range(len(b))],
                "gamma0_over_time": {"ts": [b[i].ts for i in range(len(b))],
                                     "gamma0": [b[i].diagnostics["gamma0"] for i in range(len(b))]},
                "wall_time_s": b.wall_time_s}
            entry[design]["extrapolation_error_median_interval"] = bootstrap_interval(final_errors(b), "median")
            if design in DESIGNS:
                entry[design]["extrapolation_error_tight"] = final_errors(r[design + "_tight"])
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
    lengths = list(runs)
    fig, axes = figure_grid(len(lengths), 4, panel=(4.6, 3.6), squeeze=False)
    colors = {"baseline": "C0", "special": "C3"}
    labels = {"baseline": "baseline only", "special": "baseline + special"}
    for row, L in zip(axes, lengths):
        r, setting = runs[L], SETTINGS[L]
        for design in DESIGNS:
            b = r[design]
            for i in range(len(r["seeds"])):
                ts = b.ts[i, 1:]
                kw = {"color": colors[design], "lw": 0.8, "alpha": 0.6, "label": labels[design] if i == 0 else None}
                row[0].loglog(ts, np.maximum(b.loss[i, 1:], 1e-33), **kw)
                row[1].loglog(ts, np.asarray(b.diagnostics["extrapolation_error"])[i, 1:], **kw)
                row[2].semilogx(ts, np.asarray(b.diagnostics["effective_rank"])[i, 1:], **kw)
            errors = final_errors(b)
            x = DESIGNS.index(design)
            row[3].scatter(np.full(errors.size, x) + np.linspace(-0.15, 0.15, errors.size), errors, s=14,
                           color=colors[design], label=f"gflow, {len(errors)} seeds" if x == 0 else None)
            row[3].scatter([x + 0.3] * 4, setting.their_error[design], marker="x", color="k",
                           label="their printed numbers (4 seeds)" if x == 0 else None)
        where = f"L = {L}, d = {setting.d}"
        label_axes(row[0], xlabel="t", ylabel="training loss", title=f"{where}: loss")
        label_axes(row[1], xlabel="t", ylabel="max_j<20 |h_j − h*_j| / max|h*|", title=f"{where}: extrapolation error",
                   legend=None)
        label_axes(row[2], xlabel="t", ylabel="effective rank of A", title=f"{where}: effective rank", legend=None)
        row[3].set_yscale("log")
        row[3].set_xticks([0, 1], [labels[d] for d in DESIGNS])
        row[3].axhline(BASELINE_EXTRAPOLATES, color="gray", lw=0.6, ls="--")
        label_axes(row[3], ylabel="extrapolation error at t1",
                   title=f"{where}: Table {1 if L == 7 else 3}'s numbers", legend=7)
    save_figure(fig, args.out, "ssm_poisoning.png",
                title="Slutzky et al. (NeurIPS 2025) Tables 1 and 3, gradient flow per Theorem 1: diagonal SSM, "
                      f"rtol {args.rtol:g}")


if __name__ == "__main__":
    raise SystemExit(main())
