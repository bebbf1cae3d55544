"""Is the GRU critical training length "around four times" the teacher's state dimension? GRU students trained with
Adam on GRU teachers of several state dimensions d̂_g (the finding 000-F2).

Seed 000 Sec. 5.3, Fig. 2: a GRU student (d_g = 100) trained on length-k_g sequences of a GRU teacher of state
dimension d̂_g = 10, "trained to mimic an arbitrarily chosen impulse response" (App. C.2.3), extrapolates from a
critical k_g ≈ 40, "around four times" d̂_g. One teacher cannot tell 4 d̂_g from a property of its response; here
teachers of several d̂_g are trained the paper's way at the scale a 2-core CPU allows (000-P15, Fig. 2 itself, stays
a reproduction prepared at paper scale for a GPU: gru_extrapolation part A). Two families of teachers
(``--families``), each over d̂_g ∈ --dims (default 2, 5, 10):

- ``same``: every teacher fitted to the same target, the damped oscillation 0.9^j cos(0.3 j) (the paper gives none:
  gflow.problems.gru_extrapolation.teacher_target, memory 0): if the critical k_g follows d̂_g here, it comes from the
  teacher's dimension, not its target;
- ``delayed``: the target delayed by m = d̂_g steps (the teacher revealed after d̂_g steps, like seed 000's linear
  delay teachers, App. C.2.2).

Each teacher: gflow.problems.gru_extrapolation.gru_teacher (hidden size d̂_g, init 1e-6, 1000 Adam steps at lr 1e-3,
App. C.2.3; key --teacher-seed). Students (ours where the paper's scale is a GPU's): GRU of width --width (32; paper
100), Adam at lr --lr (1e-2: gru_extrapolation part B's, which converged in 3000 steps in its probe; the paper's
1e-3 at 8 000 steps is part A's), --steps (3000), minibatches of 100 from --n-train (1000) training sequences of
length k_g (key 1000 + seed), init key 2000 + seed, Adam key 3000 + seed; the seeds of one (teacher, k_g) in one
batched Adam call. The error is seed 000 Fig. 2's, gru_extrapolation part A's: the mean over --n-test random
sequences of max_{k_g ≤ t < H} |student − teacher|, divided by the teacher's mean peak |output| (H = 2 max k_g).
A k_g extrapolates when that error is ≤ 0.1 (part A's bar); the critical k_g is the smallest grid k_g from which on
every k_g extrapolates (gflow.problems.gru_extrapolation.critical_length), of the seed-mean error and per seed
(beyond the grid counts as max k_g + 1, a lower bound).

Reported, tagged 000-F2 and deciding nothing (a finding is a measurement): per teacher, the critical k_g over d̂_g
against "around four" (read as [3, 5]: part A's 40 ± 10 at d̂_g = 10), each seed's critical k_g beside; per family,
the growth of the critical k_g from the smallest to the largest d̂_g against √(d̂_max / d̂_min), the geometric middle
between growth in proportion to d̂_g (the paper's 4 d̂_g) and no growth. Each teacher's measurement names its students'
worst window error; sanity, per family: every student fits its window (mean max |error| on t < k_g ≤ 0.05 of the
scale, part A's bar). Each teacher's fit to its target is printed and kept.
Compute (2 CPU cores): 2 families × 3 d̂_g × 8 k_g × 3 seeds = 144 students of 3000 steps, 38 min with the CPU shared
with another study; --quick (2 d̂_g, 3 k_g, 1 seed, width 8, 300 steps) a smoke test.

Example:  python studies/gru_critical_length.py --quick --out out/gru_critical_length_quick
"""

from __future__ import annotations

import time

import jax
import numpy as np

import gflow
from gflow.problems import gru_extrapolation as gp
from gflow.study import check, QuickFull, run_study, save_figure, study_parser

SOURCE = "seed 000 (Cohen-Karlik et al., ICLR 2023), Sec. 5.3, Fig. 2, App. C.2.3"
EXTRAPOLATES = 0.1  # tail error / scale (gru_extrapolation part A's EXTRAPOLATES)
FIT = 0.05  # window error / scale (part A's FIT)
AROUND_FOUR = (3.0, 5.0)  # "around four times" d̂_g: part A's 40 ± 10 at d̂_g = 10
FAMILIES = {"same": "the same target (memory 0)", "delayed": "the target delayed by d̂_g steps"}


def parse_args(argv=None):
    p = study_parser(__doc__, "out/gru_critical_length", "output folder (figure, summary.json)",
                     "2 teacher dimensions, 3 k_g, 1 seed, width 8, 300 Adam steps")
    p.add_argument("--dims", type=int, nargs="+", default=QuickFull([2, 5, 10], quick=[2, 4]),
                   help="teacher state dimensions d̂_g")
    p.add_argument("--families", nargs="+", choices=sorted(FAMILIES), default=["same", "delayed"],
                   help="same: every teacher fitted to one target; delayed: the target delayed by d̂_g steps")
    p.add_argument("--kg", type=int, nargs="+", default=QuickFull([2, 4, 8, 12, 16, 24, 32, 48], quick=[2, 6, 12]),
                   help="training lengths k_g")
    p.add_argument("--seeds", type=int, default=QuickFull(3, quick=1), help="student seeds 0, 1, … per (teacher, k_g)")
    p.add_argument("--width", type=int, default=QuickFull(32, quick=8), help="GRU student width (paper: 100)")
    p.add_argument("--steps", type=int, default=QuickFull(3000, quick=300), help="Adam steps per student")
    p.add_argument("--lr", type=float, default=1e-2, help="Adam learning rate")
    p.add_argument("--batch", type=int, default=100, help="minibatch size (paper: 100)")
    p.add_argument("--n-train", type=int, default=QuickFull(1000, quick=200), help="training sequences per student")
    p.add_argument("--n-test", type=int, default=QuickFull(200, quick=50), help="random test sequences")
    p.add_argument("--teacher-seed", type=int, default=0, help="key of every teacher's initialization")
    args = p.parse_args(argv)
    args.dims, args.kg, args.families = sorted(set(args.dims)), sorted(set(args.kg)), sorted(set(args.families))
    p.require_positive(args, "dims", "kg", "seeds", "width", "steps", "lr", "batch", "n_train", "n_test")
    if len(args.dims) < 2:
        p.error(f"--dims needs at least two teacher dimensions to compare, got {args.dims}")
    if len(args.kg) < 2:
        p.error(f"--kg needs at least two training lengths, got {args.kg}")
    args.horizon = 2 * max(args.kg)
    return args


def main(argv=None):
    return run_study("gru_critical_length", parse_args, science, argv)


def memory_of(family: str, dim: int) -> int:
    """The delay of a teacher's fit target: 0 for the ``same`` family, d̂_g for ``delayed``."""
    return dim if family == "delayed" else 0


def train_teacher(args, family, dim):
    """One teacher's students over the k_g grid and seeds: tails and fits (len(kg), seeds), the teacher's fit."""
    jax.config.update("jax_enable_x64", True)
    t0 = time.time()
    teacher, _, teacher_fit = gp.gru_teacher(args.teacher_seed, dim, memory_of(family, dim))
    x_test = gflow.objectives.gaussian_sequences(jax.random.key(777), args.n_test, args.horizon)
    y_test = gp.outputs(teacher, x_test)
    scale = float(np.mean(np.abs(y_test).max(axis=1)))
    tails, fits = np.zeros((len(args.kg), args.seeds)), np.zeros((len(args.kg), args.seeds))
    statuses = []
    for i, k in enumerate(args.kg):
        losses = [gflow.objectives.SampleLoss.from_teacher(jax.random.key(1000 + s), teacher, args.n_train, k)
                  for s in range(args.seeds)]
        students = [gflow.models.gru(jax.random.key(2000 + s), args.width) for s in range(args.seeds)]
        keys = jax.numpy.stack([jax.random.key(3000 + s) for s in range(args.seeds)])
        batch = gflow.discrete.run_adam_batch(losses, students, steps=args.steps, lr=args.lr, batch_size=args.batch,
                                              key=keys, save_at=np.array([0]), progress=False,
                                              config={"study": "gru_critical_length", "family": family, "d_g": dim,
                                                      "k_g": k})
        for s, traj in enumerate(batch):
            e = gp.linf_errors(gp.outputs(traj.final, x_test), y_test, k, scale)
            tails[i, s], fits[i, s] = e["tail"], e["fit"]
            statuses.append(traj.status)
        print(f"  {family} d̂_g = {dim:2d} k_g = {k:3d}: tail error per seed "
              + ", ".join(f"{v:.3g}" for v in tails[i]) + f" (fit worst {fits[i].max():.3g})", flush=True)
    print(f"  {family} d̂_g = {dim}: teacher fit max |IR − target| = {teacher_fit:.3g}, scale {scale:.3g}, "
          f"{time.time() - t0:.0f} s", flush=True)
    return {"tails": tails, "fits": fits, "teacher_fit": teacher_fit, "scale": scale, "statuses": statuses}


def critical(args, tails) -> dict:
    """The critical k_g of the seed-mean error and of each seed (beyond the grid: max k_g + 1, a lower bound)."""
    beyond = max(args.kg) + 1
    mean = gp.critical_length(args.kg, tails.mean(axis=1), EXTRAPOLATES)
    return {"mean": beyond if mean is None else mean, "beyond_grid": mean is None,
            "per_seed": gp.seed_critical_lengths(args.kg, tails, EXTRAPOLATES).astype(int).tolist()}


def measurement_checks(args, runs) -> list[dict]:
    """000-F2's measurements, tagged 000-F2 only (deciding nothing): per teacher the critical k_g over d̂_g against
    "around four"; per family the growth of the critical k_g from the smallest to the largest d̂_g."""
    out = []
    lo, hi = args.dims[0], args.dims[-1]
    for family in args.families:
        crit = {d: critical(args, runs[family][d]["tails"]) for d in args.dims}
        worst = {d: float(np.max(runs[family][d]["fits"])) for d in args.dims}
        for d, c in crit.items():
            out.append(check(
                f"000-F2, {FAMILIES[family]}: GRU students (width {args.width}, Adam lr {args.lr:g}, {args.steps} "
                f"steps) of the teacher d̂_g = {d}: critical k_g of the seed-mean tail error (≤ {EXTRAPOLATES:g} from "
                f"there on) = {c['mean']}{' (beyond the grid: a lower bound)' if c['beyond_grid'] else ''}, over d̂_g "
                f"against 'around four times' {list(AROUND_FOUR)}; per seed {c['per_seed']}; its students' worst window "
                f"error {worst[d]:.3g} ({'all fit' if worst[d] <= FIT else f'not all fit: > {FIT:g}, read with care'}) "
                "(a measurement, deciding nothing)", SOURCE, c["mean"] / d, list(AROUND_FOUR), direction="in",
                kind="prediction", predictions=["000-F2"], family=family, d_g=d, critical_k_g=c["mean"],
                beyond_grid=c["beyond_grid"], per_seed_critical_k_g=c["per_seed"], worst_fit=worst[d]))
        growth = crit[hi]["mean"] / crit[lo]["mean"]
        unfit = [d for d in (lo, hi) if worst[d] > FIT]
        caveat = f"; students of d̂_g = {unfit} do not all fit their windows: read with care" if unfit else ""
        out.append(check(
            f"000-F2, {FAMILIES[family]}: the critical k_g grows from d̂_g = {lo} to {hi} by {growth:.3g}× "
            f"({crit[lo]['mean']} → {crit[hi]['mean']}), against √({hi}/{lo}) = {np.sqrt(hi / lo):.3g}, the middle "
            f"between growth in proportion to d̂_g ({hi / lo:g}×, the paper's 4 d̂_g) and none (1×){caveat} (a "
            "measurement, deciding nothing)", SOURCE, growth, float(np.sqrt(hi / lo)), direction=">=", kind="prediction",
            predictions=["000-F2"], family=family))
    return out


def fit_checks(args, runs) -> list[dict]:
    """Sanity, one per family: every student of its teachers fits its training window (the worst, and where)."""
    out = []
    for family in args.families:
        worst = {d: float(np.max(runs[family][d]["fits"])) for d in args.dims}
        at = max(worst, key=worst.get)
        n = sum(runs[family][d]["fits"].size for d in args.dims)
        out.append(check(f"every GRU student of the teachers fitted to {FAMILIES[family]} ({n}) fits its window t < k_g: "
                         f"mean max |error| / scale ≤ {FIT:g} (worst, at d̂_g = {at}; per d̂_g "
                         + ", ".join(f"{d}: {w:.3g}" for d, w in worst.items()) + ")",
                         f"{SOURCE} (precondition, ours: gru_extrapolation part A's bar)", worst[at], FIT,
                         direction="<=", kind="sanity", predictions=["000-F2"], family=family))
    return out


def figure(args, runs):
    """Seed 000 Fig. 2(a)'s axes: tail error against k_g, one curve per d̂_g (seed mean; each seed thin), 4 d̂_g
    dotted; one panel per family."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(args.families), figsize=(6.5 * len(args.families), 4.8), squeeze=False)
    for ax, family in zip(axes[0], args.families):
        for i, d in enumerate(args.dims):
            tails = runs[family][d]["tails"]
            for s in range(args.seeds):
                ax.semilogy(args.kg, tails[:, s], "-", color=f"C{i}", lw=0.6, alpha=0.4)
            ax.semilogy(args.kg, tails.mean(axis=1), "o-", color=f"C{i}", label=f"d̂_g = {d} (mean of {args.seeds})")
            ax.axvline(4 * d, color=f"C{i}", ls=":", lw=1)
        ax.axhline(EXTRAPOLATES, color="gray", ls="--", lw=1, label=f"extrapolates ≤ {EXTRAPOLATES:g}")
        ax.set(xlabel="training length k_g (dotted: 4 d̂_g)", ylabel="ℓ∞ tail error / teacher scale",
               title=f"teachers fitted to {FAMILIES[family]}")
        ax.legend(fontsize=8)
    save_figure(fig, args.out, "gru_critical_length.png", title_size=9,
                title=f"000-F2: GRU critical k_g against d̂_g (students width {args.width}, Adam lr {args.lr:g}, "
                      f"{args.steps} steps; seed 000 Fig. 2(a)'s axes)")


def science(args, checks, results):
    runs = {family: {d: train_teacher(args, family, d) for d in args.dims} for family in args.families}
    checks += fit_checks(args, runs)
    checks += measurement_checks(args, runs)
    results["k_g"] = args.kg
    results["teachers"] = {family: {f"d{d}": {"tail_errors": r["tails"], "fit_errors": r["fits"],
                                              "teacher_target_max_error": r["teacher_fit"], "scale": r["scale"],
                                              "critical_k_g": critical(args, r["tails"]), "statuses": r["statuses"]}
                                    for d, r in fam.items()} for family, fam in runs.items()}
    figure(args, runs)


if __name__ == "__main__":
    raise SystemExit(main())
