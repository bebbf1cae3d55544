"""Regular-language recognition by seed 002's Elman RNN: train and held-out test accuracy against width (seed 002 §4).

Seed 002 (Panigrahi & Goyal 2021) says that D_{L1} (exactly one 1) and pattern matching (contains a substring) are
efficiently representable in its concept class, that PARITY is "easily expressible", and that RNNs "perform well on
regular language recognition" in experiments of an appendix that our copy lacks (spec 002 §4: probably Tomita
grammars and an RMSProp-type optimizer; no sizes, languages, seed counts or numbers survive). So this setup is ours:

- strings of L = 10 bits; per language and seed a label-balanced training set (N = 256) and a balanced test set
  (512) of *held-out* strings (:func:`held_out_split`): no test string is a training string. A class with enough
  strings gives both sets distinct strings; a class too small for that (D_{L1}'s L members, its "near misses" with
  zero or two 1s, the strings avoiding the pattern) is split, 30 % of its strings (at least one) for the test set
  and the rest for training, each set cycling through its strings. So D_{L1}'s test members have their 1 at
  positions never seen in training;
- D_{L1}'s non-members are half near misses, half other non-members (so the task is not "few 1s vs many");
- bits encoded as seed 002's normalized sequences (Def. 3.1, d = 4, ε_x = 0.1, bias tokens first and last;
  gflow.objectives.encode_strings), so each string is a sequence of L + 2 tokens;
- the paper's model (gflow.models.elman_panigrahi_goyal: ReLU, W, A ~ N(0, 2/m) trained, B ~ N(0, 2) fixed, λ = 1),
  square loss on the last output against labels ±1, full-batch Adam (lr 3e-3, 600 steps) at widths m = 16 … 256;
  the label is sign(F_L); 10 seeds (ours: the paper's count is lost), each seed its own split and initialization.

Checks (thresholds fixed before the runs; medians over seeds with bootstrap 95 % intervals, gflow.study.over_seeds):
spec 002 P6, every language (D_{L1}, substring, PARITY) reaches held-out test accuracy ≥ 0.75 (chance 0.5) at the
largest width; spec 002 P5, for the representable languages (D_{L1}, substring) the train–test gap does not grow with
width (per seed, gap at the largest width − gap at the smallest ≤ 0.1). Sanity (preconditions, never evidence): the
test strings are held out, and every language is fitted at the largest width (train accuracy ≥ 0.95, worst seed).

Example:  python studies/regular_language.py --quick --out out/regular_language_quick
"""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np

import gflow
from gflow import GflowInputError
from gflow.objectives import TOKEN_DIM
from gflow.plot import figure_grid
from gflow.study import check, over_seeds, QuickFull, require_positive, run_study, save_figure, study_parser

SOURCE = "seed 002 (Panigrahi & Goyal, NeurIPS 2021)"
REPRESENTABLE = ("d_l1", "contains")  # spec 002 §4: efficiently representable in the concept class
NAMES = {"d_l1": "D_L1 (exactly one 1)", "parity": "PARITY", "contains": "contains '{pattern}'"}
HELD_OUT = 0.3  # share of a small class's strings kept for the test set (ours)
FIT = 0.95  # train accuracy of the precondition (ours)
GAP_GROWTH = 0.1  # P5: gap(largest m) − gap(smallest m) ≤ this (ours)


def parse_args(argv=None):
    p = study_parser(__doc__, "out/regular_language", "output folder for figures, summary.json",
                     "two widths, two seeds, smaller sets", validate=validate)
    p.add_argument("--languages", nargs="+", default=list(gflow.objectives.LANGUAGES), help="languages (d_l1 parity contains)")
    p.add_argument("--pattern", default="101", help="substring of the 'contains' language")
    p.add_argument("--length", type=int, default=10, help="string length L (sequences have L + 2 tokens)")
    p.add_argument("--widths", type=int, nargs="+", default=QuickFull([16, 32, 64, 128, 256], quick=[16, 128]),
                   help="widths m")
    p.add_argument("--seeds", type=int, default=QuickFull(10, quick=2),
                   help="seeds per (language, width), each its own split and init (10 is ours: the paper's count is "
                        "lost)")
    p.add_argument("--n-train", type=int, default=QuickFull(256, quick=128), help="training strings")
    p.add_argument("--n-test", type=int, default=QuickFull(512, quick=256), help="test strings")
    p.add_argument("--steps", type=int, default=600, help="full-batch Adam steps")
    p.add_argument("--lr", type=float, default=3e-3, help="Adam learning rate")
    p.add_argument("--eps-x", type=float, default=0.1, help="ε_x of the normalized sequences (seed 002 Def. 3.1)")
    p.add_argument("--output-scale", type=float, default=1.0, help="λ (seed 002's small output factor)")
    p.add_argument("--min-test", type=float, default=0.75, help="P6 threshold on test accuracy at the largest width")
    return p.parse_args(argv)


def validate(args):
    """Clear errors for bad input, naming the flag (argparse errors through the parser)."""
    args.widths = sorted(args.widths)
    bad = [lang for lang in args.languages if lang not in gflow.objectives.LANGUAGES]
    if bad or not args.languages:
        raise GflowInputError(f"--languages must be among {gflow.objectives.LANGUAGES}, got {args.languages}")
    if not set(REPRESENTABLE) & set(args.languages):
        raise GflowInputError(f"--languages must include one of {REPRESENTABLE} (the checked ones)")
    if len(args.widths) < 2 or min(args.widths) < 1:
        raise GflowInputError(f"--widths needs at least two positive widths, got {args.widths}")
    require_positive(args, "seeds", "n_train", "n_test", "steps")
    if args.n_train % 2 or args.n_test % 2:
        raise GflowInputError("--n-train and --n-test must be even (balanced label sets)")
    if not 3 <= args.length <= 20:
        raise GflowInputError(f"--length must lie in 3 … 20, got {args.length}")
    if not set(args.pattern) <= {"0", "1"} or not args.pattern or len(args.pattern) > args.length:
        raise GflowInputError(f"--pattern must be a 0/1 string no longer than --length, got {args.pattern!r}")
    if not all(v > 0 for v in (args.lr, args.eps_x, args.output_scale)) or not 0.5 < args.min_test < 1:
        raise GflowInputError("--lr, --eps-x, --output-scale must be positive and --min-test in (0.5, 1)")


def held_out_split(seed: int, language: str, length: int, n_train: int, n_test: int, *, pattern: str = "101",
                   held_out: float = HELD_OUT):
    """Label-balanced training and test strings with no string in both: (z_train, y_train, z_test, y_test).

    Each class (members; non-members, for D_{L1} split into near misses with zero or two 1s and the rest, a quarter
    and a quarter of each set) is shuffled; a class with at least as many strings as both sets need gives each set
    distinct strings, a smaller one is split, ``held_out`` of its strings (at least one) for the test set and the
    rest for training, each set cycling through its own strings (so every string appears about equally often)."""
    if not 0 < held_out < 1:
        raise GflowInputError(f"`held_out` must lie in (0, 1), got {held_out!r}")
    if n_train % 2 or n_test % 2 or n_train < 2 or n_test < 2:
        raise GflowInputError(f"`n_train` and `n_test` must be even and positive, got {n_train}, {n_test}")
    rng = np.random.default_rng(seed)
    every = (np.arange(2 ** length)[:, None] >> np.arange(length)[::-1]) & 1
    labels = gflow.objectives.membership(language, every, pattern=pattern)
    ones = every.sum(axis=1)
    if language == "d_l1":
        near = (labels == 0) & np.isin(ones, (0, 2))
        classes = [(labels == 1, n_train // 2, n_test // 2), (near, n_train // 4, n_test // 4),
                   ((labels == 0) & ~near, n_train // 2 - n_train // 4, n_test // 2 - n_test // 4)]
    else:
        classes = [(labels == 1, n_train // 2, n_test // 2), (labels == 0, n_train // 2, n_test // 2)]
    train, test = [], []
    for mask, c_tr, c_te in classes:
        pool = rng.permutation(np.flatnonzero(mask))
        if len(pool) >= c_tr + c_te:
            test_pool, train_pool = pool[:c_te], pool[c_te:c_te + c_tr]
        else:
            if len(pool) < 2:
                raise GflowInputError(f"{language} of length {length}: a class of {len(pool)} string(s) cannot be "
                                      "split into training and held-out test strings")
            cut = min(max(1, round(held_out * len(pool))), len(pool) - 1)
            test_pool, train_pool = pool[:cut], pool[cut:]
        train.append(np.resize(train_pool, c_tr))
        test.append(np.resize(test_pool, c_te))
    tr, te = rng.permutation(np.concatenate(train)), rng.permutation(np.concatenate(test))
    return every[tr], labels[tr], every[te], labels[te]


def dataset(args, language, seed):
    """(train inputs, train labels ±1, test inputs, test labels ±1, fraction of test strings seen in training:
    0 by construction, measured as a sanity check)."""
    z_tr, y_tr, z_te, y_te = held_out_split(1000 + seed, language, args.length, args.n_train, args.n_test,
                                            pattern=args.pattern)
    seen = {tuple(z) for z in z_tr}
    overlap = float(np.mean([tuple(z) in seen for z in z_te]))
    enc = lambda z: gflow.objectives.encode_strings(z, args.eps_x)  # noqa: E731
    return enc(z_tr), 2.0 * y_tr - 1.0, enc(z_te), 2.0 * y_te - 1.0, overlap


@jax.jit
def _accuracy(model, x, y):
    return jnp.mean(jnp.sign(jax.vmap(model)(x)[:, -1]) == y)


def train(args, x_tr, y_tr, m, seed):
    labels = np.zeros((len(y_tr), args.length + 2))
    labels[:, -1] = y_tr
    loss = gflow.objectives.SampleLoss(x_tr, labels, steps="last")  # (1/N) Σ_n (λ F_L(x_n) − y_n)²
    model0 = gflow.models.elman_panigrahi_goyal(jax.random.key(seed), m, TOKEN_DIM, output_scale=args.output_scale)
    return gflow.discrete.run_adam(loss, model0, steps=args.steps, lr=args.lr, save_at=20, progress=False,
                          config={"study": "regular_language", "m": m})


def make_checks(args, per_seed) -> list[dict]:
    """The study's checks from ``per_seed(language, m, key)`` (one value per seed, seeds in order; key "train",
    "test" or "test_seen_in_train")."""
    lo, hi, n = args.widths[0], args.widths[-1], args.seeds
    src = f"{SOURCE}, §4 regular languages (spec 002 §4, P6)"
    held = f"{args.n_test} held-out test strings (none in the seed's {args.n_train} training strings)"
    seen = max(float(per_seed(lang, m, "test_seen_in_train").max()) for lang in args.languages for m in args.widths)
    checks = [check("test strings are held out: fraction of test strings that are training strings (worst language "
                    "and seed) = 0", f"{src}; our split (held_out_split)", seen, 0.0, seen == 0.0, kind="sanity")]
    for lang in args.languages:
        name = NAMES[lang].format(pattern=args.pattern)
        worst = float(per_seed(lang, hi, "train").min())
        checks.append(check(f"{name}: fitted at the largest width m = {hi}: train accuracy ≥ {FIT:g} (worst of {n} "
                            "seeds; precondition of the test-accuracy and gap checks)", src, worst, FIT, worst >= FIT,
                            kind="sanity", predictions=["002-P6"]))
        where = " (members: the 1 at positions never seen in training)" if lang == "d_l1" else ""
        checks.append(over_seeds(f"{name}: test accuracy on {held}{where} at the largest width m = {hi} ≥ "
                                 f"{args.min_test:g} (chance 0.5; median over {n} seeds)", src,
                                 per_seed(lang, hi, "test"), args.min_test, ">=", predictions=["002-P6"]))
        if lang in REPRESENTABLE:  # PARITY's gap is dominated by how well each width fits: reported, not checked
            growth = ((per_seed(lang, hi, "train") - per_seed(lang, hi, "test"))
                      - (per_seed(lang, lo, "train") - per_seed(lang, lo, "test")))
            checks.append(over_seeds(f"{name} (representable languages only): the train–test gap on held-out strings "
                                     f"does not grow with width: gap at m = {hi} − gap at m = {lo} ≤ {GAP_GROWTH:g} "
                                     f"(per seed; median over {n} seeds)",
                                     f"{SOURCE}, Thm 3.1 sample complexity free of m (spec 002 P5)", growth,
                                     GAP_GROWTH, "<=", predictions=["002-P5"]))
    return checks


def make_figure(args, rows):
    fig, axes = figure_grid(1, len(args.languages), panel=(5, 4.2), squeeze=False)
    for ax, lang in zip(axes[0], args.languages):
        for split, style in (("train", "o--"), ("test", "s-")):
            med = [np.median([r[split] for r in rows if r["language"] == lang and r["m"] == m]) for m in args.widths]
            pts = [(r["m"], r[split]) for r in rows if r["language"] == lang]
            ax.semilogx(*zip(*pts), style[0], alpha=0.3, color="C0" if split == "train" else "C3")
            ax.semilogx(args.widths, med, style, color="C0" if split == "train" else "C3",
                        label=f"{split} (median of {args.seeds})")
        ax.axhline(0.5, color="gray", ls=":", label="chance")
        if lang in REPRESENTABLE:
            ax.axhline(args.min_test, color="k", ls="--", lw=0.8, label=f"P6 threshold {args.min_test:g}")
        ax.set_xticks(args.widths, [str(m) for m in args.widths], minor=False)
        ax.set_xticks([], minor=True)
        ax.set(ylim=(0, 1.05), xlabel="width m", ylabel="accuracy of sign(F_L)",
               title=f"{NAMES[lang].format(pattern=args.pattern)}, L = {args.length}")
        ax.legend(fontsize=8, loc="lower right")
    save_figure(fig, args.out, "accuracy_vs_width.png", title_size=10, title=f"Elman ReLU RNN (seed 002 init, W & A "
                f"trained), Adam lr {args.lr:g}, {args.steps} steps, N = {args.n_train}")


def main(argv=None):
    return run_study("regular_language", parse_args, science, argv)


def science(args, checks, results):
    rows = train_all(args)

    def per_seed(lang, m, key):
        return np.array([r[key] for r in sorted(rows, key=lambda r: r["seed"]) if r["language"] == lang and r["m"] == m])

    def med(lang, m, key):
        return float(np.median(per_seed(lang, m, key)))

    hi = args.widths[-1]
    checks += make_checks(args, per_seed)
    findings = {lang: {"test_at_largest_width": med(lang, hi, "test"), "train_at_largest_width": med(lang, hi, "train"),
                       "test_by_width": [med(lang, m, "test") for m in args.widths],
                       "train_by_width": [med(lang, m, "train") for m in args.widths],
                       "test_seen_in_train": float(np.mean([r["test_seen_in_train"] for r in rows
                                                            if r["language"] == lang]))}
                for lang in args.languages}
    results.update(rows=rows, findings=findings)
    make_figure(args, rows)
    for lang, f in findings.items():
        print(f"  {lang}: test accuracy at m = {hi}: {f['test_at_largest_width']:.3f} "
              f"(train {f['train_at_largest_width']:.3f}; medians over {args.seeds} seeds; held-out test strings)")
    return {"model": "gflow.models.elman_panigrahi_goyal (ReLU; W, A ~ N(0, 2/m) trained; B ~ N(0, 2) fixed)",
            "token_encoding": "seed 002 Def. 3.1, d = 4: x̄(0) = (√3/2, 0, 1/2), x̄(1) = (0, √3/2, 1/2)",
            "loss": "SampleLoss, last step, (1/N) Σ (λ F_L − y)², y = ±1",
            "optimizer": "full-batch Adam (the paper's appendix, missing, probably used RMSProp)",
            "scaled_down": "widths up to 256 on 2 shared CPU cores (brief suggested up to 1024)"}


def train_all(args) -> list[dict]:
    """One row per (language, seed, width): train and test accuracy, losses, relative movement."""
    rows = []
    total = len(args.languages) * len(args.widths) * args.seeds
    print(f"regular_language: {args.languages}, L = {args.length}, widths {args.widths}, {args.seeds} seed(s), "
          f"N = {args.n_train}/{args.n_test}, Adam {args.steps} steps: {total} runs", flush=True)
    count = 0
    for lang in args.languages:
        for seed in range(args.seeds):
            x_tr, y_tr, x_te, y_te, overlap = dataset(args, lang, seed)
            for m in args.widths:
                count += 1
                t0 = time.time()
                traj = train(args, x_tr, y_tr, m, seed)
                if traj.status != "completed":
                    raise RuntimeError(f"{lang} m={m} seed {seed}: {traj.status} ({traj.message})")
                final = traj.final
                row = {"language": lang, "m": m, "seed": seed, "train": float(_accuracy(final, x_tr, y_tr)),
                       "test": float(_accuracy(final, x_te, y_te)), "loss0": float(traj.loss[0]),
                       "loss": float(traj.loss[-1]), "test_seen_in_train": overlap,
                       "relative_movement": float(gflow.analysis.relative_movement(traj.model_at(0), final))}
                rows.append(row)
                print(f"  [{count}/{total}] {lang} m={m} seed {seed}: loss {row['loss0']:.3g} → {row['loss']:.3g}, "
                      f"train {row['train']:.3f}, test {row['test']:.3f} ({time.time() - t0:.1f} s)", flush=True)
    return rows


if __name__ == "__main__":
    raise SystemExit(main())
