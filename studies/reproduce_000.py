"""Seed 000's extrapolation figures (Figs. 1a, 1b, 3a, 3b, 4, 5, 6) reproduced with the paper's own protocol: Adam,
as App. C.1 ran it, not gradient flow (studies/extrapolation_phase.py integrates the exact flow instead).

Panels (gflow.problems.reproduce_000; every panel is one stacked Adam call over its seeds × k × readings):

- fig1a (Sec. 5.1, App. C.1, C.2.1): Adam, lr 1e-3, 15K steps, on the population loss (eq. 3.4); balanced teacher
  d̂ = 5 under both readings of C.2.1 (eigenvalues "distribute uniformly between 0.6 and 1.05": i.i.d. draws, or
  an evenly spaced grid); diagonal students with balanced init, d = 40, 100, 200 (``--sizes-1a``; Sec. 5.1:
  "qualitatively identical"); init scale ``--init-1a`` = 1e-3 (ours: "the results were not sensitive to the
  initialization scale of the (balanced) student"); 3 seeds; mean ± std of the absolute ℓ∞ tail error
  max_{k ≤ j < H} |h_j − w_j| against k, log y.
- fig1b (Sec. 5.2): delay teacher d̂ = 10 (App. C.2.2), general (non-symmetric) students d = 50, 100, 200; Adam on
  the empirical loss with batches of 100 N(0, 1) sequences, at most 50K steps with early stopping; 3 seeds.
- fig3a (App. B.1.1): balanced teacher d̂ = 5 (both readings), general student d = 40, init 1e-5 (the paper's).
- fig3b (App. B.2): random unbalanced teacher d̂ = 5 (App. C.2.2), general student d = 50, "standard (small)" init.
- fig4 (App. B.1.2, App. C.1): Adam with MultiStepLR (milestones [5000, 10000, 15000, 30000], γ = 0.1), balanced
  teacher d̂ = 5 (both readings), general student d = 40, several init scales, on Fig. 3a's loss.
- fig5 (App. B.3): impulse responses of Fig. 1a's students (d = 40) trained with k = 10 and k = 20, on
  ``--fig5-seeds`` seeds; the figure shows the seeds that decide.
- fig6 (App. B.3): average impulse responses of Fig. 1b's students (d = 50) trained with k = 8, 18, 20, the
  per-seed responses beside.

Choices of ours where the paper gives no value (each an option; where it could matter two values are run, the
first deciding, the second judged alike and reported beside):

- early stopping: stop when the population loss (the loss on unlimited held-out data) reaches ``--stop-loss``
  (1e-6); the state where it first reached ``--stop-loss-beside`` (1e-4) is read too, from the saved steps;
- data: a fresh minibatch of N(0, 1) sequences at every step (App. C.1: "data is sampled from a Gaussian with zero
  mean and scale of 1"), not a fixed training set;
- the empirical-loss runs' learning rate ``--lr-empirical`` (1e-3, App. C.1's Sec. 5.1 value);
- Figs. 1b, 3b "standard near-zero" init ``--init-general`` (1e-3 deciding, 1e-2 beside);
- Fig. 3a's loss ``--fig3a-loss`` (empirical, as App. C.1 gives for the experiments outside Sec. 5.1; population
  the other reading);
- Fig. 4: init scales ``--fig4-scales`` (1e-4, 1e-3, 1e-2, 1e-1), initial learning rates ``--fig4-lr`` (1e-2
  deciding, 1e-3 beside), 50K steps;
- the evaluation horizon H = ``--horizon`` (100) and the k grids (2d̂ − 1, 2d̂, 2d̂ + 1 always included).

Judging (pre-registered: statistic, threshold and direction are constants of gflow.problems.reproduce_000, set
before any run): each figure against the sentence the paper writes about it (QUOTES, drawn in each figure and
kept in summary.json). The transition (Figs. 1a, 1b, 3a, 3b) is a sharp knee of the seed-mean curve (what the
paper plots) within ±2 of 2d̂ (reproduce_000.transition_knee); each seed's own knee is reported beside. Fig. 4:
the seed-mean error rises with the init scale (init_scale_rise). Fig. 5: the k = 10 behaviour in a quarter of
the seeds at least, k = 20 extrapolating in a majority, by exact binomial intervals (gflow.study.k_of_n;
the existence claim read as a least rate, as gflow.study.exists_in reads it). Fig. 6: seed averages over the paper's 3 seeds by Student-t intervals (gflow.study.seed_average), and
for k = 18 the horizon of the seed-mean |h_j − w_j| (a signed average cancels; it is reported beside). Whether
each student fits its training window is reported: under the paper's protocol Adam need not converge, so a knee
decides only when at least 80 % of its curve's students fit (reproduce_000.KNEE_FIT_MIN_FRACTION, registered before
the first run), and is inconclusive otherwise.

Wall time, an ESTIMATE (not a measurement of the full run) from the --quick run (2 min 4 s) and from timed slices
of the full panels on this 2-core CPU: fig1b costs ≈ 0.024 s per Adam step at d = 50 (96 members: 2 init scales ×
3 seeds × 16 k), ≈ 0.1 s at d = 100 and ≈ 0.3–0.4 s at d = 200, i.e. ≈ 20 min, 1.4 h and 4–6 h for 50K steps (less
where every member of a batch stops early; App. C.1: "most experiments required less than 10K steps"); fig4 (672
members, d = 40) ≈ 0.05–0.08 s per step, ≈ 1 h; fig3a, fig3b ≈ 15–20 min each; fig1a and fig5 (diagonal students,
15K steps) a few minutes. In all ≈ 7–9 h, so the full run is made in three parts, each recorded on its own
(``--part``, PARTS): ``main`` (every panel, Fig. 1b at d = 50 only: ≈ 2–3 h), ``fig1b-d100`` (≈ 1.4 h) and
``fig1b-d200`` (≈ 4–6 h: the GPU's part).

Example:  python studies/reproduce_000.py --quick --out out/reproduce_000
"""

from __future__ import annotations

import time

import numpy as np

from gflow import discrete, teachers
from gflow.problems import reproduce_000 as rp
from gflow.study import check, k_of_n, NegativeControl, QuickFull, run_study, save_figure, seed_average, study_parser

SOURCE = "seed 000 (Cohen-Karlik et al., ICLR 2023)"
STUDY = "reproduce_000"
PANELS = ("fig1a", "fig1b", "fig3a", "fig3b", "fig4", "fig5", "fig6")
# The parts of the full run (--part), each recorded on its own (validation/results/reproduce_000.part-<part>.json):
# every registered check is made in exactly one part (Fig. 1b's knees are per size; Fig. 6 reads the d = 50 students).
PARTS = {
    "main": {"panels": ("fig1a", "fig1b", "fig3a", "fig3b", "fig4", "fig5", "fig6"), "sizes_1b": (50,)},
    "fig1b-d100": {"panels": ("fig1b",), "sizes_1b": (100,)},
    "fig1b-d200": {"panels": ("fig1b",), "sizes_1b": (200,)},
}
SIZES_1A, SIZES_1B = [40, 100, 200], [50, 100, 200]  # the full run's student sizes of Figs. 1a and 1b (the paper's)
READINGS = {"random": "iid", "grid": "grid"}  # placement → the reading's name in the checks
READING_WORDS = {"iid": "C.2.1 read as i.i.d. draws", "grid": "C.2.1 read as an evenly spaced grid"}

# The sentences the paper writes about each figure (the claims judged)
QUOTES = {
    "fig1a": "Sec. 5.1: \"when k > 2d̂ extrapolation error is low, whereas when k falls below 2d̂ extrapolation error "
             "is high\"; Fig. 1 caption: \"The gradual transition exhibited is due to numerical errors introduced by "
             "the optimization not reaching an exact global minimum.\"",
    "fig1b": "Sec. 5.2: the delay teacher (d̂ = 10) shows the same transition, at k = 2d̂ = 20 (Fig. 1b).",
    "fig3a": "App. B.1.1: with a general (unbalanced, non-diagonal) student of init scale 1e-5 a \"similar phase "
             "transition\" appears.",
    "fig3b": "App. B.2: the phase transition is \"not limited to the specific teacher\"; App. C.3: \"A model is "
             "considered non-extrapolating if the extrapolation error is worse than the extrapolation error of a "
             "trivial solution which has an impulse response of zeros\".",
    "fig4": "App. B.1.2: \"Extrapolation error increases along with the scale of initialization\"; a larger scale "
            "\"requires longer training sequences\".",
    "fig5": "App. B.3: \"the student trained with k = 10 tracks the teacher several steps beyond the 10th time step "
            "and then decays to zero. For k = 20 we can see near perfect extrapolation\".",
    "fig6": "App. B.3: \"for k = 18 the student diverges from the teacher shortly after the 18th time step\"; k = 8 "
            "(all-zero targets) gives the 'zero' solution, k = 20 \"near perfect extrapolation\".",
}

KS_1A = sorted(set(range(4, 31, 2)) | {9, 11})
KS_1B = sorted(set(range(4, 31, 2)) | {19, 21})
KS_4 = list(range(4, 31, 2))


def parse_args(argv=None):
    """The study's options (defaults: the paper's numbers, and ours where it gives none; see the module docstring).

    Args:
        argv: the command line (default: ``sys.argv[1:]``).

    Returns:
        The parsed options, with ``seed_list``.
    """
    p = study_parser(__doc__, "out/reproduce_000", "output folder (figures, summary.json)",
                     "small students, few k, 1–2 seeds, 1500 steps (a smoke run of every panel: under 3 minutes)")
    p.add_argument("--panels", nargs="+", choices=PANELS, default=list(PANELS),
                   help="panels to run (fig5 trains its own k = 10, 20 students; fig6 needs fig1b)")
    p.add_argument("--part", choices=list(PARTS), default=None,
                   help="run one part of the full study and record it as <study>.part-<part>.json beside the others "
                        "(the full run takes ≈ 7–9 h on 2 CPU cores): " + "; ".join(
                            f"{name}: {', '.join(spec['panels'])} with Fig. 1b at d = "
                            f"{', '.join(map(str, spec['sizes_1b']))}" for name, spec in PARTS.items()))
    p.add_argument("--seeds", type=int, default=QuickFull(rp.SEEDS, quick=2),
                   help="seeds per panel (the paper's 3 in Figs. 1, 3); seeds 0, 1, …")
    p.add_argument("--fig5-seeds", type=int, default=QuickFull(20, quick=2),
                   help="seeds of Fig. 5's k = 10, 20 students (ours: the paper shows two selected students; 20 "
                        "lets the exact binomial interval decide)")
    p.add_argument("--sizes-1a", type=int, nargs="+", default=QuickFull(SIZES_1A, quick=[16]),
                   help="Fig. 1a's student sizes d")
    p.add_argument("--sizes-1b", type=int, nargs="+", default=QuickFull(SIZES_1B, quick=[24]),
                   help="Fig. 1b's student sizes d (the first one is Fig. 6's)")
    p.add_argument("--ks-1a", type=int, nargs="+", default=QuickFull(KS_1A, quick=[4, 8, 10, 11, 12, 14]),
                   help="training lengths of Figs. 1a, 3a, 3b")
    p.add_argument("--ks-1b", type=int, nargs="+", default=QuickFull(KS_1B, quick=[8, 16, 18, 20, 22]),
                   help="training lengths of Fig. 1b (8, 18, 20 are Fig. 6's)")
    p.add_argument("--ks-4", type=int, nargs="+", default=QuickFull(KS_4, quick=[4, 10, 14]),
                   help="training lengths of Fig. 4")
    p.add_argument("--lr-population", type=float, default=rp.ADAM_LR,
                   help="Adam's learning rate on the population loss (App. C.1: 1e-3)")
    p.add_argument("--steps-population", type=int, default=QuickFull(rp.POPULATION_STEPS, quick=1500),
                   help="Adam steps on the population loss (App. C.1: 15K)")
    p.add_argument("--max-steps", type=int, default=QuickFull(rp.EMPIRICAL_MAX_STEPS, quick=1500),
                   help="most Adam steps on the empirical loss (App. C.1: 50K with early stopping)")
    p.add_argument("--lr-empirical", type=float, default=rp.EMPIRICAL_LR,
                   help="Adam's learning rate on the empirical loss (ours: App. C.1 gives none; 1e-3 as Sec. 5.1)")
    p.add_argument("--stop-loss", type=float, default=rp.STOP_LOSS,
                   help="early stopping (ours): a run stops when its population loss is at most this")
    p.add_argument("--stop-loss-beside", type=float, default=1e-4,
                   help="a second early-stopping level (ours), read from the saved steps and judged beside")
    p.add_argument("--init-1a", type=float, default=1e-3,
                   help="Fig. 1a's balanced init scale (ours; the paper: 'not sensitive')")
    p.add_argument("--init-general", type=float, nargs="+", default=[1e-3, 1e-2],
                   help="Figs. 1b, 3b 'standard near-zero' init scales (ours; the first decides, the others beside)")
    p.add_argument("--init-3a", type=float, default=1e-5, help="Fig. 3a's init scale (App. B.1.1: 1e-5)")
    p.add_argument("--fig3a-loss", choices=("empirical", "population"), default="empirical",
                   help="Fig. 3a's (and Fig. 4's) loss: App. C.1 names the population loss for Sec. 5.1 only")
    p.add_argument("--fig4-scales", type=float, nargs="+", default=QuickFull([1e-4, 1e-3, 1e-2, 1e-1],
                                                                             quick=[1e-3, 1e-1]),
                   help="Fig. 4's init scales (ours: the paper's are not given)")
    p.add_argument("--fig4-lr", type=float, nargs="+", default=QuickFull([1e-2, 1e-3], quick=[1e-2]),
                   help="Fig. 4's initial learning rates η_0 of MultiStepLR (ours; the first decides)")
    p.add_argument("--horizon", type=int, default=rp.HORIZON, help="evaluation horizon H (ours): the tail is [k, H)")
    args = p.parse_args(argv)
    whole = set(args.panels) == set(PANELS) and args.sizes_1a == SIZES_1A and args.sizes_1b == SIZES_1B
    if args.part is not None:
        if args.quick:
            p.error("--part is a part of the full run; --quick runs every panel small")
        spec = PARTS[args.part]
        if not whole:
            p.error("--part sets the panels and Fig. 1b's sizes itself and runs Fig. 1a at every size; leave --panels, "
                    "--sizes-1a and --sizes-1b out")
        args.panels, args.sizes_1b = list(spec["panels"]), list(spec["sizes_1b"])
    elif not args.quick and args.record and not whole:
        p.error("a full run of some panels or sizes would overwrite the whole study's record: run one of the parts "
                f"(--part {{{','.join(PARTS)}}}), or add --record '' to record nothing")
    args.record_part = args.part
    p.require_positive(args, "seeds", "fig5_seeds", "sizes_1a", "sizes_1b", "ks_1a", "ks_1b", "ks_4",
                       "lr_population", "steps_population", "max_steps", "lr_empirical", "stop_loss",
                       "stop_loss_beside", "init_1a", "init_general", "init_3a", "fig4_scales", "fig4_lr")
    for name in ("ks_1a", "ks_1b", "ks_4"):
        setattr(args, name, sorted(set(getattr(args, name))))
    if "fig6" in args.panels and not {8, 18, 20} <= set(args.ks_1b):
        p.error("fig6 needs 8, 18 and 20 among --ks-1b")
    if "fig6" in args.panels and "fig1b" not in args.panels:
        p.error("fig6 needs fig1b")
    if args.horizon <= max(args.ks_1a + args.ks_1b + args.ks_4 + [20]):
        p.error(f"--horizon {args.horizon} must exceed every k (largest "
                f"{max(args.ks_1a + args.ks_1b + args.ks_4 + [20])})")
    args.seed_list = list(range(args.seeds))
    return args


def main(argv=None):
    """Run the study.

    Args:
        argv: the command line.

    Returns:
        The exit code (non-zero only on an error or a failed sanity check).
    """
    return run_study(STUDY, parse_args, science, argv)


def science(args, checks, results):
    """Train every panel asked for, judge it, draw the figures.

    Args:
        args: the parsed options.
        checks: the list the check entries are appended to.
        results: the dict the numbers go to (summary.json).

    Returns:
        Entries that extend the configuration in summary.json (the quotes).
    """
    timings = {}
    rows_of = {}
    print(f"{STUDY}: panels {args.panels}, {args.seeds} seed(s){' (quick)' if args.quick else ''}", flush=True)
    for name in args.panels:
        if name == "fig6":
            continue
        start = time.perf_counter()
        print(f"{name}: training ...", flush=True)
        rows_of[name] = PANEL_RUNNERS[name](args)
        timings[name] = time.perf_counter() - start
        print(f"{name}: {len(rows_of[name]['rows'])} members in {timings[name]:.1f} s", flush=True)
    judged = {}
    for name in args.panels:
        c, r = JUDGES[name](args, rows_of)
        checks += c
        judged[name] = r
    results.update({"timings_s": timings, "quotes": {n: QUOTES[n] for n in args.panels}, **judged})
    draw(args, rows_of, judged)
    return {"quotes": QUOTES}


# ---------------------------------------------------------------------------------------------------- training
def _train(members_args, args, *, stream: bool, lr, steps: int, stop: bool):
    """One stacked call over ``members_args`` (a list of gflow.problems.reproduce_000.members keyword sets, e.g.
    one per init scale); returns (batch, rows)."""
    objectives, starts, rows = [], [], []
    for kw in members_args:
        o, s, r = rp.members(**kw, stream=stream)
        objectives += o
        starts += s
        rows += r
    batch = rp.train_members(objectives, starts, lr=lr, steps=steps, stream=stream,
                             stop_loss=args.stop_loss if stop else None, progress=True)
    return batch, rows


def run_fig1a(args):
    """Fig. 1a: one stacked Adam call per student size over both readings × seeds × k (population loss)."""
    out = {"rows": [], "beside": []}
    for d in args.sizes_1a:
        kw = dict(teacher="balanced", teacher_dim=5, student="diagonal_balanced", d=d, scale=args.init_1a,
                  ks=args.ks_1a, seeds=args.seed_list, placements=("random", "grid"))
        batch, rows = _train([kw], args, stream=False, lr=args.lr_population, steps=args.steps_population, stop=False)
        out["rows"] += rp.read_members(batch, rows, args.horizon)
    return out


def _empirical(args, kws):
    batch, rows = _train(kws, args, stream=True, lr=args.lr_empirical, steps=args.max_steps, stop=True)
    return {"rows": rp.read_members(batch, rows, args.horizon),
            "beside": rp.read_members(batch, rows, args.horizon, level=args.stop_loss_beside)}


def run_fig1b(args):
    """Fig. 1b: one stacked Adam call per student size over init scales × seeds × k (empirical loss)."""
    out = {"rows": [], "beside": []}
    for d in args.sizes_1b:
        kws = [dict(teacher="delay", teacher_dim=10, student="general", d=d, scale=s, ks=args.ks_1b,
                    seeds=args.seed_list) for s in args.init_general]
        r = _empirical(args, kws)
        out["rows"] += r["rows"]
        out["beside"] += r["beside"]
    return out


def run_fig3a(args):
    """Fig. 3a: one stacked Adam call over both readings × seeds × k (general student, init 1e-5)."""
    kw = dict(teacher="balanced", teacher_dim=5, student="general", d=40 if not args.quick else 16,
              scale=args.init_3a, ks=args.ks_1a, seeds=args.seed_list, placements=("random", "grid"))
    if args.fig3a_loss == "population":
        batch, rows = _train([kw], args, stream=False, lr=args.lr_population, steps=args.steps_population,
                             stop=False)
        return {"rows": rp.read_members(batch, rows, args.horizon), "beside": []}
    return _empirical(args, [kw])


def run_fig3b(args):
    """Fig. 3b: one stacked Adam call over init scales × seeds × k (random unbalanced teacher)."""
    kws = [dict(teacher="random_unbalanced", teacher_dim=5, student="general", d=50 if not args.quick else 16,
                scale=s, ks=args.ks_1a, seeds=args.seed_list) for s in args.init_general]
    return _empirical(args, kws)


def run_fig4(args):
    """Fig. 4: one stacked Adam call (MultiStepLR) over initial rates × init scales × readings × seeds × k."""
    d = 40 if not args.quick else 16
    kws = [dict(teacher="balanced", teacher_dim=5, student="general", d=d, scale=s, ks=args.ks_4,
                seeds=args.seed_list, placements=("random", "grid")) for s in args.fig4_scales]
    objectives, starts, rows = [], [], []
    for lr0 in args.fig4_lr:
        for kw in kws:
            o, s, r = rp.members(**kw, stream=args.fig3a_loss == "empirical")
            objectives += o
            starts += s
            rows += [{**x, "lr0": lr0} for x in r]
    schedules = [discrete.multistep_schedule(r["lr0"], rp.MILESTONES, rp.GAMMA) for r in rows]
    stream = args.fig3a_loss == "empirical"
    batch = rp.train_members(objectives, starts, lr=schedules, steps=args.max_steps, stream=stream,
                             stop_loss=args.stop_loss if stream else None, progress=True)
    return {"rows": rp.read_members(batch, rows, args.horizon), "beside": []}


def run_fig5(args):
    """Fig. 5: one stacked Adam call over both readings × --fig5-seeds seeds × k ∈ {10, 20} (as Fig. 1a, d = 40)."""
    d = 40 if not args.quick else 16
    kw = dict(teacher="balanced", teacher_dim=5, student="diagonal_balanced", d=d, scale=args.init_1a, ks=[10, 20],
              seeds=list(range(args.fig5_seeds)), placements=("random", "grid"))
    batch, rows = _train([kw], args, stream=False, lr=args.lr_population, steps=args.steps_population, stop=False)
    return {"rows": rp.read_members(batch, rows, args.horizon), "beside": []}


# A panel's runner takes the parsed options and returns {"rows": the members read at their final (early-stopped)
# state, "beside": the same read where the population loss first reached --stop-loss-beside (empirical-loss panels;
# else empty)}.
PANEL_RUNNERS = {"fig1a": run_fig1a, "fig1b": run_fig1b, "fig3a": run_fig3a, "fig3b": run_fig3b, "fig4": run_fig4,
                 "fig5": run_fig5}


# ---------------------------------------------------------------------------------------------------- judging
def knee_check(name, rows, k_critical, *, predictions, check_id=None, value="tail", what="", reading=None,
               decides=True):
    """The transition at 2d̂ on the seed-mean curve of ``rows`` (gflow.problems.reproduce_000.transition_knee),
    each seed's knee beside (seed 000 Sec. 5.1, Figs. 1, 3).

    Args:
        name: the panel.
        rows: its members (k, seed, tail, zero, scale_w).
        k_critical: 2d̂.
        predictions: the registry ids it decides.
        check_id: its registration.
        value: ``"tail"`` (the absolute tail error) or ``"c3"`` (App. C.3's tail error / all-zero error).
        what: the claim's start (panel, size, reading).
        reading: the reading of App. C.2.1 ("iid", "grid"), where the panel has one.
        decides: False for a varied choice, judged alike and reported beside (no ids, no registration).

    Returns:
        ``(entry, numbers)``: the check entry (value: the knee's midpoint, NaN without a sharp knee; band 2d̂ ± 2)
        and the curves for summary.json.
    """
    ks, by_seed = rp.curves(rows, value)
    mean = rp.seed_mean(by_seed)
    info = rp.transition_knee(ks, mean, k_critical)
    fitting = rp.fit_fraction(rows)
    per_seed = {s: rp.transition_knee(ks, c, k_critical) for s, c in by_seed.items()}
    low, high = k_critical - rp.KNEE_WINDOW, k_critical + rp.KNEE_WINDOW
    curve = "App. C.3's curve (tail error / all-zero error)" if value == "c3" else "the absolute ℓ∞ tail error"
    claim = (f"{what}: the seed-mean of {curve} over {len(by_seed)} seeds has a sharp knee (fall ≥ {rp.KNEE_DROP:g}×, "
             f"≥ {rp.KNEE_SHARPNESS:g}× the typical rate) whose midpoint lies in [{low:g}, {high:g}] (2d̂ = "
             f"{k_critical}), decided when ≥ {rp.KNEE_FIT_MIN_FRACTION:.0%} of its students fit their training "
             f"window (else inconclusive)" + ("" if decides else " (a varied choice, beside: decides nothing)"))
    extra = {"reading": reading} if reading else {}
    entry = check(claim, f"{SOURCE}, {QUOTES_SHORT.get(what.split(' ')[0], '')}", info["location"], [low, high],
                  direction="in", kind="prediction", predictions=predictions if decides else [],
                  check_id=check_id if decides else None, statistic="mean", seeds=sorted(by_seed), knee=info,
                  per_seed_knee_midpoint={str(s): v["midpoint"] if "midpoint" in v else None
                                          for s, v in per_seed.items()},
                  per_seed_transition={str(s): v["transition"] for s, v in per_seed.items()}, fit_fraction=fitting,
                  **extra)
    if not fitting >= rp.KNEE_FIT_MIN_FRACTION:  # untrained students decide nothing (NaN: no members)
        entry.update(status="inconclusive", passed=False,
                     reason=f"{fitting:.0%} of the students fit their training window, fewer than "
                            f"{rp.KNEE_FIT_MIN_FRACTION:.0%}: the knee is not one of trained students")
    return entry, {"ks": ks, "mean": mean, "per_seed": {str(s): c for s, c in by_seed.items()}, "knee": info}


QUOTES_SHORT = {"fig1a": "Fig. 1a, Sec. 5.1", "fig1b": "Fig. 1b, Sec. 5.2", "fig3a": "Fig. 3a, App. B.1.1",
                "fig3b": "Fig. 3b, App. B.2, C.3", "fig4": "Fig. 4, App. B.1.2", "fig5": "Fig. 5, App. B.3",
                "fig6": "Fig. 6, App. B.3"}


def window_entry(what, rows):
    """How many students fit their training window (max_{j<k}|h_j − w_j| ≤ 0.01·max|w|): reported beside the knee,
    which it gates (:func:`knee_check`; under the paper's protocol Adam need not converge).

    Args:
        what: the claim's start.
        rows: the members.

    Returns:
        The entry (value: the fraction that fit).
    """
    fit = [rp.fits_window(r) for r in rows]
    return check(f"{what}: students that fit their training window (max_(j<k) |h_j − w_j| ≤ "
                 f"{rp.FIT_TOLERANCE:g}·max|w|), of {len(rows)} (reported; a knee decides only when ≥ "
                 f"{rp.KNEE_FIT_MIN_FRACTION:.0%} fit)", f"{SOURCE}, App. C.1", rp.fit_fraction(rows), 0.0,
                 direction=">=", kind="prediction", predictions=[], fitting=int(sum(fit)))


def judge_fig1a(args, rows_of):
    """Fig. 1a: the knee of each reading's and size's seed-mean curve at 2d̂ = 10 (000-P10)."""
    rows = rows_of["fig1a"]["rows"]
    checks, out = [], {}
    for placement, reading in READINGS.items():
        for d in args.sizes_1a:
            mine = [r for r in rows if r["placement"] == placement and r["d"] == d]
            what = f"fig1a d = {d} [{READING_WORDS[reading]}]"
            c, r = knee_check("fig1a", mine, 10, predictions=["000-P10"], check_id=f"000-P10.knee-{reading}-d{d}",
                              what=what, reading=reading)
            checks += [c, window_entry(what, mine)]
            out[f"{reading}_d{d}"] = r
    return checks, out


def _by_scale(rows, scale):
    return [r for r in rows if r["scale"] == scale]


def judge_fig1b(args, rows_of):
    """Fig. 1b: the knee at 2d̂ = 20 per size; the second init scale and the second stopping level beside (000-P11)."""
    rows, beside = rows_of["fig1b"]["rows"], rows_of["fig1b"]["beside"]
    checks, out = [], {}
    for d in args.sizes_1b:
        for i, s in enumerate(args.init_general):
            for tag, source in (("", rows), (f" read at L ≤ {args.stop_loss_beside:g}", beside)):
                mine = [r for r in _by_scale(source, s) if r["d"] == d]
                what = f"fig1b d = {d}, init {s:g}{tag}"
                decides = i == 0 and not tag
                c, r = knee_check("fig1b", mine, 20, predictions=["000-P11"], check_id=f"000-P11.knee-d{d}",
                                  what=what, decides=decides)
                checks.append(c)
                out[what] = r
                if not tag:
                    checks.append(window_entry(what, mine))
    return checks, out


def judge_fig3a(args, rows_of):
    """Fig. 3a: the knee at 2d̂ = 10 per reading (000-P12)."""
    rows = rows_of["fig3a"]["rows"]
    checks, out = [], {}
    for placement, reading in READINGS.items():
        mine = [r for r in rows if r["placement"] == placement]
        what = f"fig3a [{READING_WORDS[reading]}]"
        c, r = knee_check("fig3a", mine, 10, predictions=["000-P12"], check_id=f"000-P12.knee-3a-{reading}",
                          what=what, reading=reading)
        checks += [c, window_entry(what, mine)]
        out[reading] = r
    return checks, out


def judge_fig3b(args, rows_of):
    """Fig. 3b: the knee of App. C.3's curve at 2d̂ = 10; the error itself and the second init scale beside (000-P12)."""
    rows = rows_of["fig3b"]["rows"]
    checks, out = [], {}
    for i, s in enumerate(args.init_general):
        mine = _by_scale(rows, s)
        what = f"fig3b init {s:g}"
        c, r = knee_check("fig3b", mine, 10, predictions=["000-P12"], check_id="000-P12.knee-3b-c3", value="c3",
                          what=what, decides=i == 0)
        c2, r2 = knee_check("fig3b", mine, 10, predictions=[], what=what + " (error itself)", decides=False)
        checks += [c, c2, window_entry(what, mine)]
        out[what] = {"c3": r, "error": r2}
    return checks, out


def judge_fig4(args, rows_of):
    """Fig. 4: the error rises with the init scale, per reading; the second initial rate beside (000-P13)."""
    rows = rows_of["fig4"]["rows"]
    checks, out = [], {}
    for i, lr0 in enumerate(args.fig4_lr):
        for placement, reading in READINGS.items():
            mine = [r for r in rows if r["lr0"] == lr0 and r["placement"] == placement]
            means, rel_means, crit = [], [], {}
            for s in args.fig4_scales:
                ks, by_seed = rp.curves(_by_scale(mine, s))
                means.append(rp.seed_mean(by_seed))
                rel = {seed: c / next(r["scale_w"] for r in mine if r["seed"] == seed) for seed, c in by_seed.items()}
                rel_means.append(rp.seed_mean(rel))
                crit[f"{s:g}"] = rp.critical_k(ks, rel_means[-1], rp.EXTRAPOLATES)
            info = rp.init_scale_rise(args.fig4_scales, means)
            decides = i == 0
            what = f"fig4 η_0 = {lr0:g} [{READING_WORDS[reading]}]"
            checks.append(check(
                f"{what}: the seed-mean error (geometric mean over k) at the largest init scale ≥ {rp.INIT_RISE:g}× "
                f"the smallest's, and no larger scale below a smaller one by more than {rp.INIT_SLACK:g}×"
                + ("" if decides else " (a varied choice, beside: decides nothing)"),
                f"{SOURCE}, {QUOTES_SHORT['fig4']}", info["rise"] if info["worst_fall"] <= rp.INIT_SLACK else 0.0,
                rp.INIT_RISE, direction=">=", kind="prediction", predictions=["000-P13"] if decides else [],
                check_id=f"000-P13.rise-{reading}" if decides else None, statistic="mean", seeds=args.seed_list,
                reading=reading, rise=info, critical_k=crit))
            out[what] = {"ks": ks, "scales": args.fig4_scales, "mean": means, "rise": info, "critical_k": crit}
    return checks, out


def judge_fig5(args, rows_of):
    """Fig. 5: the k = 10 behaviour in a quarter of the seeds at least, k = 20 extrapolating in a majority (000-P14)."""
    rows = rows_of["fig5"]["rows"]
    checks, out = [], {}
    for placement, reading in READINGS.items():
        by = {k: {r["seed"]: rp.fig5_outcomes(r["h"], r["w"], k) for r in rows
                  if r["placement"] == placement and r["k"] == k} for k in (10, 20)}
        k10 = {s: o["as_k10"] for s, o in by[10].items()}
        k20 = {s: o["extrapolates"] for s, o in by[20].items()}
        words = READING_WORDS[reading]
        # an existence claim ("two selected students") read as a least rate (gflow.study.exists_in's reading), by
        # k_of_n so that the entry keeps the reading of C.2.1 in its ``reading`` field
        checks.append(k_of_n(
            f"fig5 [{words}]: k = 10 students track the teacher to a horizon in [11, {10 + rp.SEVERAL}] (|h_j − w_j| ≤ "
            f"{rp.TRACK_REL:g}·|w_j|) and then decay (last 10 lags ≤ {rp.DECAYED:g}× the teacher's): fraction of "
            f"seeds ≥ {rp.FIG5_MIN_FRACTION:g}", f"{SOURCE}, {QUOTES_SHORT['fig5']}", k10, rp.FIG5_MIN_FRACTION,
            predictions=["000-P14"], check_id=f"000-P14.k10-{reading}", reading=reading,
            any_seed=any(k10.values())))
        checks.append(k_of_n(
            f"fig5 [{words}]: k = 20 students extrapolate (tail error ≤ {rp.EXTRAPOLATES:g}·max|w|): fraction of seeds "
            f"≥ {rp.FIG5_MAJORITY:g}", f"{SOURCE}, {QUOTES_SHORT['fig5']}", k20, rp.FIG5_MAJORITY,
            predictions=["000-P14"], check_id=f"000-P14.k20-{reading}", reading=reading))
        out[reading] = {"k10": {str(s): o for s, o in by[10].items()}, "k20": {str(s): o for s, o in by[20].items()},
                        "seeds_shown_k10": [s for s, v in k10.items() if v]}
    return checks, out


def judge_fig6(args, rows_of):
    """Fig. 6 (Fig. 1b's first size and init scale): k = 8 zero, k = 18 diverging shortly after 18, k = 20 extrapolating (000-P11)."""
    d = args.sizes_1b[0]
    s0 = args.init_general[0]
    rows = [r for r in rows_of["fig1b"]["rows"] if r["d"] == d and r["scale"] == s0]
    by = {k: sorted((r for r in rows if r["k"] == k), key=lambda r: r["seed"]) for k in (8, 18, 20)}
    w = by[18][0]["w"]
    src = f"{SOURCE}, {QUOTES_SHORT['fig6']}"
    n = len(by[8])
    zero = {r["seed"]: rp.zero_response(r["h"], r["w"]) for r in by[8]}
    # the whole response, window included: the delay teacher's tail beyond 10 is 0, so the tail error alone is
    # passed by the all-zero solution
    tail20 = {r["seed"]: float(np.max(np.abs(r["h"] - r["w"]))) / r["scale_w"] for r in by[20]}
    h18 = np.array([r["h"] for r in by[18]])
    horizon = rp.deviation_horizon(h18, w)
    per_seed = {r["seed"]: rp.deviation_horizon(r["h"][None], w) for r in by[18]}
    checks = []
    if n >= 2:
        checks += [
            seed_average(f"fig6 (d = {d}): k = 8 gives the zero solution: max_j |h_j| / max|w|, mean over {n} seeds ≤ "
                         f"{rp.ZERO_SOLUTION:g}", src, zero, rp.ZERO_SOLUTION, "<=", paper_n=rp.SEEDS,
                         allow_other_n=True, predictions=["000-P11"], check_id="000-P11.fig6-k8"),
            seed_average(f"fig6 (d = {d}): k = 20 extrapolates: max_(j<H) |h_j − w_j| / max|w| (the window "
                         f"included: the all-zero response's tail error is 0), mean over {n} seeds ≤ "
                         f"{rp.EXTRAPOLATES:g}", src, tail20, rp.EXTRAPOLATES, "<=", paper_n=rp.SEEDS,
                         allow_other_n=True, predictions=["000-P11"], check_id="000-P11.fig6-k20")]
    checks.append(check(
        f"fig6 (d = {d}): k = 18 diverges shortly after step 18: the seed-mean of |h_j − w_j| over {n} seeds stays ≤ "
        f"{rp.FIG6_EPS:g} up to a horizon in [18, {18 + rp.SHORTLY_AFTER}] (the signed average, which cancels, and "
        "each seed's horizon beside)", src, horizon, [18, 18 + rp.SHORTLY_AFTER], direction="in",
        kind="prediction", predictions=["000-P11"], check_id="000-P11.fig6-k18", statistic="mean",
        seeds=[r["seed"] for r in by[18]], signed_average_horizon=rp.signed_average_horizon(h18, w),
        per_seed_horizon={str(s): v for s, v in per_seed.items()}))
    return checks, {"k8_zero": zero, "k20_tail": tail20, "k18_horizon_mean_abs": horizon,
                    "k18_horizon_signed": rp.signed_average_horizon(h18, w), "k18_per_seed": per_seed}


# A panel's judge takes the parsed options and panel → its runner's output, and returns (checks, results): the check
# entries and the numbers for summary.json.
JUDGES = {"fig1a": judge_fig1a, "fig1b": judge_fig1b, "fig3a": judge_fig3a, "fig3b": judge_fig3b,
          "fig4": judge_fig4, "fig5": judge_fig5, "fig6": judge_fig6}


def negative_controls() -> list[NegativeControl]:
    """Every registered check of this study judged by its own panel judge, with the paper's defaults (sizes, k grids,
    seeds), on a plausible alternative on which it must FAIL (gflow.study.control_problems), every student fitting
    its window: for the transition (Figs. 1a, 1b, 3a), an error that falls evenly with k (low above 2d̂ and high below,
    as the paper's, but without a knee); for Fig. 3b, the all-zero response (App. C.3's ratio 1 at every k); for
    Fig. 4, an error flat in the init scale; for Fig. 5, students that track the teacher at every lag (k = 10: no
    decay) and the zero response (k = 20); for Fig. 6, the teacher itself at k = 8 and k = 18 (not zero, no
    divergence) and the zero response at k = 20."""
    args = parse_args(["--out", "unused"])
    result = {"study": "reproduce_000", "config": {"seeds": args.seeds, "seed_list": args.seed_list}}
    smooth = {"error": lambda k: 10.0 ** (-0.15 * (k - 4)), "zero": lambda k: 1.0}
    zero_solution = {"error": lambda k: 0.5 ** k, "zero": lambda k: 0.5 ** k}

    def members(ks, curve, seeds=None, **fields):
        return [{"k": k, "seed": s, "tail": curve["error"](k), "zero": curve["zero"](k), "scale_w": 1.0,
                 "window": 1e-4, **fields} for s in (args.seed_list if seeds is None else seeds) for k in ks]

    rows_of = {
        "fig1a": {"rows": [r for p in READINGS for d in args.sizes_1a
                           for r in members(args.ks_1a, smooth, placement=p, d=d)]},
        "fig3a": {"rows": [r for p in READINGS for r in members(args.ks_1a, smooth, placement=p)]},
        "fig3b": {"rows": [r for sc in args.init_general for r in members(args.ks_1a, zero_solution, scale=sc)]},
        "fig4": {"rows": [r for lr0 in args.fig4_lr for p in READINGS for sc in args.fig4_scales
                          for r in members(args.ks_4, smooth, placement=p, lr0=lr0, scale=sc)]}}
    fig1b = [r for d in args.sizes_1b for sc in args.init_general for r in members(args.ks_1b, smooth, d=d, scale=sc)]
    w6 = np.asarray(teachers.delay(10).impulse_response(args.horizon))
    for r in fig1b:  # Fig. 6 reads Fig. 1b's members: the teacher itself at k = 8, 18; the zero response at k = 20
        r.update(w=w6, h=np.zeros_like(w6) if r["k"] == 20 else w6)
    rows_of["fig1b"] = {"rows": fig1b, "beside": fig1b}
    w5 = 0.9 ** np.arange(args.horizon) + 0.2
    rows_of["fig5"] = {"rows": [{"k": k, "seed": s, "placement": p, "w": w5, "h": w5 if k == 10 else 0 * w5}
                                for p in READINGS for s in range(args.fig5_seeds) for k in (10, 20)]}
    words = {"knee": "an error that falls evenly with k (0.15 decades per unit k: low above 2d̂, high below, no knee)",
             "3b-c3": "the all-zero response (App. C.3's ratio is 1 at every k)",
             "rise": "an error flat in the init scale",
             "k10": "students that track the teacher at every lag (no decay after the window)",
             "k20": "the zero response", "fig6-k8": "the teacher itself (not the zero solution)",
             "fig6-k18": "the teacher itself (no divergence after step 18)", "fig6-k20": "the zero response"}
    out = []
    for judge in JUDGES.values():
        for e in judge(args, rows_of)[0]:
            cid = e.get("check_id")
            if cid:
                key = next(w for w in ("fig6-k8", "fig6-k18", "fig6-k20", "3b-c3", "knee", "rise", "k10", "k20")
                           if w in cid)
                out.append(NegativeControl(cid, words[key], e, result))
    return out


# ---------------------------------------------------------------------------------------------------- figures
def _quote(fig, *names):
    """Write the paper's sentences about the figures ``names`` (QUOTES) under ``fig``.

    Args:
        fig: a matplotlib figure.
        *names: the panels quoted.

    Returns:
        None.
    """
    import textwrap

    lines = [line for name in names for line in textwrap.wrap(QUOTES[name], 150)]
    fig.text(0.01, -0.02, "\n".join(lines), fontsize=7, va="top", style="italic")


def _mean_std_curve(ax, rows, label, value="tail", **style):
    ks, by_seed = rp.curves(rows, value)
    stack = np.array(list(by_seed.values()))
    mean = rp.seed_mean(by_seed)
    std = np.nanstd(stack, axis=0)
    line, = ax.semilogy(ks, mean, marker="o", ms=3, label=label, **{"ls": "-", **style})
    ax.fill_between(ks, np.maximum(mean - std, mean / 100), mean + std, color=line.get_color(), alpha=0.15)


def _error_axes(ax, k_critical, title, ylabel="extrapolation error max_(k≤j<H) |h_j − w_j|"):
    ax.axvline(k_critical, color="gray", ls=":", lw=0.8, label="k = 2d̂")
    ax.set(xlabel="training length k", ylabel=ylabel)
    ax.set_title(title, fontsize=8)
    ax.legend(fontsize=7)


def draw(args, rows_of, judged):
    """One PNG per figure, in the paper's axes (error against k, log y; responses against j), the paper's sentence
    under each: fig1a.png, fig1b.png, fig3.png, fig4.png, fig5.png, fig6.png in ``--out``.

    Args:
        args: the parsed options.
        rows_of: panel → its trained members.
        judged: panel → its judged numbers (Fig. 5: the seeds that show the k = 10 behaviour).

    Returns:
        None.
    """
    import matplotlib.pyplot as plt

    n = args.seeds
    if "fig1a" in rows_of:
        fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
        for ax, (placement, reading) in zip(axes, READINGS.items()):
            for d in args.sizes_1a:
                _mean_std_curve(ax, [r for r in rows_of["fig1a"]["rows"] if r["placement"] == placement
                                     and r["d"] == d], f"d = {d}")
            _error_axes(ax, 10, f"seed 000 Fig. 1a reproduced: Adam lr {args.lr_population:g}, "
                                f"{args.steps_population} steps, population loss\nbalanced d̂ = 5, "
                                f"{READING_WORDS[reading]}; mean ± std of {n} seeds")
        _quote(fig, "fig1a")
        save_figure(fig, args.out, "fig1a.png")
    if "fig1b" in rows_of:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for d in args.sizes_1b:
            for i, s in enumerate(args.init_general):
                _mean_std_curve(ax, [r for r in _by_scale(rows_of["fig1b"]["rows"], s) if r["d"] == d],
                                f"d = {d}, init {s:g}", ls="-" if i == 0 else "--")
        _error_axes(ax, 20, f"seed 000 Fig. 1b reproduced: Adam lr {args.lr_empirical:g}, batch {rp.BATCH}, ≤ "
                            f"{args.max_steps} steps, early stop at L ≤ {args.stop_loss:g}\ndelay teacher d̂ = 10; "
                            f"mean ± std of {n} seeds")
        _quote(fig, "fig1b")
        save_figure(fig, args.out, "fig1b.png")
    panels3 = [p for p in ("fig3a", "fig3b") if p in rows_of]
    if panels3:
        fig, axes = plt.subplots(1, len(panels3), figsize=(6.5 * len(panels3), 4.5), squeeze=False)
        for ax, p in zip(axes[0], panels3):
            rows = rows_of[p]["rows"]
            if p == "fig3a":
                for placement, reading in READINGS.items():
                    _mean_std_curve(ax, [r for r in rows if r["placement"] == placement], READING_WORDS[reading])
                title = (f"seed 000 Fig. 3a reproduced: general student d = {rows[0]['d']}, init {args.init_3a:g} "
                         f"({args.fig3a_loss} loss)")
            else:
                for s in args.init_general:
                    _mean_std_curve(ax, _by_scale(rows, s), f"init {s:g}")
                ks, zero = rp.curves(rows, "zero")
                ax.semilogy(ks, rp.seed_mean(zero), "k--", lw=1, label="all-zero response (App. C.3)")
                title = f"seed 000 Fig. 3b reproduced: random unbalanced teacher d̂ = 5, d = {rows[0]['d']}"
            _error_axes(ax, 10, title + f"; mean ± std of {n} seeds")
        _quote(fig, *panels3)
        save_figure(fig, args.out, "fig3.png")
    if "fig4" in rows_of:
        fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
        lr0 = args.fig4_lr[0]
        for ax, (placement, reading) in zip(axes, READINGS.items()):
            for s in args.fig4_scales:
                _mean_std_curve(ax, [r for r in rows_of["fig4"]["rows"] if r["lr0"] == lr0 and r["scale"] == s
                                     and r["placement"] == placement], f"init {s:g}")
            _error_axes(ax, 10, f"seed 000 Fig. 4 reproduced: MultiStepLR η_0 = {lr0:g}, milestones "
                                f"{list(rp.MILESTONES)}, γ = {rp.GAMMA:g}\n{READING_WORDS[reading]}; {n} seeds")
        _quote(fig, "fig4")
        save_figure(fig, args.out, "fig4.png")
    if "fig5" in rows_of:
        fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
        for ax, (placement, reading) in zip(axes, READINGS.items()):
            shown = judged["fig5"][reading]["seeds_shown_k10"]
            seed = shown[0] if shown else 0
            mine = {r["k"]: r for r in rows_of["fig5"]["rows"] if r["placement"] == placement and r["seed"] == seed}
            j = np.arange(args.horizon)
            ax.plot(j, mine[10]["w"], "k-", lw=2.5, alpha=0.5, label="teacher")
            for k, c in ((10, "C0"), (20, "C1")):
                ax.plot(j, mine[k]["h"], color=c, label=f"student k = {k}")
                ax.axvline(k, color=c, ls=":", lw=0.8)
            note = (f"seed {seed}: one of {len(shown)} seeds that show the k = 10 behaviour" if shown
                    else "no seed shows the k = 10 behaviour: seed 0 shown")
            ax.set(xlabel="j", ylabel="impulse response h_j")
            ax.set_title(f"seed 000 Fig. 5 reproduced ({READING_WORDS[reading]})\n{note}", fontsize=8)
            ax.legend(fontsize=7)
        _quote(fig, "fig5")
        save_figure(fig, args.out, "fig5.png")
    if "fig6" in judged and "fig1b" in rows_of:
        d, s0 = args.sizes_1b[0], args.init_general[0]
        fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
        j = np.arange(args.horizon)
        rows = [r for r in rows_of["fig1b"]["rows"] if r["d"] == d and r["scale"] == s0]
        for ax, per_seed in zip(axes, (False, True)):
            ax.plot(j, rows[0]["w"], "k-", lw=2.5, alpha=0.5, label="teacher")
            for k, c in ((8, "C0"), (18, "C1"), (20, "C2")):
                hs = np.array([r["h"] for r in rows if r["k"] == k])
                if per_seed:
                    for i, h in enumerate(hs):
                        ax.plot(j, h, color=c, lw=0.8, alpha=0.7, label=f"k = {k}" if i == 0 else None)
                else:
                    ax.plot(j, hs.mean(axis=0), color=c, label=f"k = {k} (mean of {len(hs)} seeds)")
                ax.axvline(k, color=c, ls=":", lw=0.8)
            ax.set(xlabel="j", ylabel="impulse response h_j", xlim=(0, min(args.horizon, 40)))
            ax.set_title(f"seed 000 Fig. 6 reproduced (d = {d}): {'each seed' if per_seed else 'average'}",
                         fontsize=8)
            ax.legend(fontsize=7)
        _quote(fig, "fig6")
        save_figure(fig, args.out, "fig6.png")


if __name__ == "__main__":
    raise SystemExit(main())
