"""The nonlinear RNNs at random initialization, over a grid of widths m: input recovery (seed 002), hidden-state norms,
non-collinearity, backward decorrelation and the stability lemmas (backward stability, polynomial products, dropping
x*, re-randomization) of seed 004, and the convergence of the empirical NTK (seed 003).

No training happens here: every measurement is a pure function of the random initialization and a few input
sequences, computed for ``--seeds`` independent initializations (explicit keys, vmapped over seeds), float64.

A. Seed 002 (Panigrahi & Goyal), Thm 4.5 / Fig. 4. ReLU Elman RNN h_l = σ(W h_{l−1} + A x_l), W, A ~
   N(0, 2/m), on normalized sequences (Def. 3.1: x_1 = x_L = (0, …, 0, 1), x_l = (ε_x x̄_l, 0), ‖x̄_l‖ = 1). The
   decoder of Thm 4.5 is W̄^[1] = D0_1 A, W̄^[l] = [D0_l W W̄^[l−1], D0_l A]_r (an m × L·d matrix) with D0_l the
   activation patterns of the null sequence (middle tokens zero; seed 002 §3 leaves the base sequence open, seed 004
   uses the null sequence), so that h^(L) ≈ W̄^[L] [x_1; …; x_L]. Measured per (m, L), mean over ``--sequences``:
   - P1 (the paper's decoder): ‖[x_1..x_L] − W̄^[L]ᵀ h^(L)‖_∞, and the same with the naive W̄^[l] = 2[W W̄^[l−1], A]_r
     that Thm 4.5 says blows up exponentially in L;
   - P2 (least-squares decoding, 002-P2 asks for a linear readout): X̂ = (W̄^[L])⁺ h^(L), the error of the past
     true tokens max_l ‖X̂_l/ε_x − x̄_l‖ (l = 2 … L−1; relative, as ‖x̄_l‖ = 1).
   With each sequence's own patterns D instead of D0, h^(L) = W̄_D X exactly (ReLU is positively homogeneous): a
   sanity check of the construction. Per seed, ln err = a + p ln m + q ln L is fitted over the grid.
B. Seed 004 (Allen-Zhu & Li), §1 and App. B/C: the same RNN (only the readout B ~ N(0, 1/d_out) differs;
   scalar output here), inputs with ε_x = 1/L (the premise ε_x ≤ 1/L of Lemma C.1):
   - P8 (Lemma B.1 "done1a": ‖h_l‖ ∈ [0.9, 2]): max_l ‖h_l‖ / min_l ‖h_l‖ over l ≤ L, worst sequence per seed;
   - P11 (Lemma B.1 "done1k": ‖(I − ĥ ĥᵀ) h^(0)_{i'−1}‖ ≥ Ω(1/(L² log³ m)) for i' > i, ĥ = h^(0)_{i−1}/‖h^(0)_{i−1}‖,
     h^(0) on the null sequence): the minimum over pairs 1 ≤ l < l' ≤ L−1. The lemma states an order without
     constants: its bound with constant 1, 1/(L² ln³ m), is checked as a guard (a proven w.h.p. property of the
     initialization); the prediction is the constant-free part, that the minimum falls at most like L^(−2) (per-seed
     exponent in L ≥ −2), and, ours, that it does not shrink with m. The level check "median ≥ 1/L²" it replaces
     had its bar 100× below the value;
   - P9 (Lemma C.1, bound lost in the extraction): the rows u ᵀBack_{i→j}, Back_{i→j} = B D_j W ⋯ D_{i+1} W,
     Back_{j→j} = B, for all 1 ≤ i ≤ j ≤ L, u = 1; the mean |cosine| over pairs of rows whose lengths j − i differ
     (Lemma C.1's pairs, "very uncorrelated", plausibly like m^(−1/4) [derived here]); pairs of equal
     length are reported for contrast (the lemma claims nothing for them).
C. Seed 003 (Cayci & Eryilmaz), Prop. 2: diagonal tanh RNN, symmetric init (Def. 1, |W_ii| = α),
   F_t = (1/√m) Σ c_i H_t⁽ⁱ⁾. The empirical NTK K_t(X, X') = Σ_p ∂F_t(X)/∂θ_p ∂F_t(X')/∂θ_p
   (``gflow.analysis.empirical_ntk``) on N fixed sequences, against the limit κ_t of Prop. 2, evaluated from the
   paper's formula (sums over k, l from 0) by Monte Carlo over ``--ntk-reference`` neurons (u0 draws,
   both signs w0 = ±α exactly). Deviation ‖K^(m) − κ‖_F / ‖κ‖_F over all t, X, X'; Prop. 2 plus the law of large
   numbers over the m/2 independent neuron pairs predicts m^(−1/2).
D. Seed 004's stability lemmas at initialization (§3, App. B, D, E, F), the RNN and inputs of part B:
   - P4 (App. F "backward stability", Lemma C.9 of [Allen-Zhu, Li, Song] v3: ‖Back'_{i→j}‖₂ ≤ O(Δ^{1/3} ρ⁶ m^{1/3}) for
     every W' with ‖W'‖₂ ≤ Δ/√m, against ‖Back_{i→j}‖₂ ~ √m): W' = Δ/√m times a random signed permutation matrix
     (orthogonal, so ‖W'‖₂ = Δ/√m exactly), Back' = Back(W + W', its own patterns D') − Back(W, D); the maximum over
     1 ≤ i < j ≤ L of ‖Back'_{i→j}‖ / ‖Back_{i→j}‖ (scalar output: lengths of rows), its exponent in m ≤ −1/6. A
     random W' is one admissible W', far from the lemma's worst case: a pass shows the bound holds on
     a typical direction, not that it is tight;
   - P7 (Lemma B.1 "done1i": ‖D_j W ⋯ D_{i+1} W‖₂ ≤ O(L³) although ‖W‖₂ ≈ 2√2): at width ``--product-width`` and
     length ``--product-length``, i = 1, gaps k = j − i spaced geometrically in 1 … L − 1, exact spectral norms (SVD
     of the explicit product); the per-seed power of ‖·‖₂ in k ≤ 3 (‖W‖₂^k for contrast). The other half of
     004-P7 (steps, samples and width to reach ε grow polynomially in L) needs trainings and is not tested here;
   - P10 (Lemma D.1: ‖h_{i'−1} − h^(0)_{i'−1}‖ ≤ O(√L ε_x), x^(0) the null sequence, i.e. x with its L − 2 ε_x-scaled
     tokens set to zero): max_{i ≤ L} ‖h_i(x) − h_i(x^(0))‖, mean over the sequences, at the largest m; its exponent
     in ε_x (at the largest L) within [0.8, 1.2], and in the number L − 2 of dropped tokens (at ε_x = ``--eps-x``) at
     most 0.6. The difference accumulates over the dropped tokens; against L itself, √(L − 2) ≤ √L would fit a
     slope of 0.7 at L = 4 … 16 from the offset alone;
   - P15 (App. E: re-drawing a fixed set 𝒩 of N rows of [W, A] moves the states by τ_1 = Θ(ρ√N/√m); 004-P15
     [DERIVED]): max_{l ≤ L} ‖h̃_l − h_l‖ for nested random row sets with N/m ∈ {1/256 … 1/16}, the new rows drawn
     from the initialization, mean over the sequences at the largest L and m; its exponent in N at most 0.6 (App. E's
     upper bound; the pre-registered two-sided band [0.4, 0.6] is kept beside and decides nothing).

Every prediction check is decided over seeds by a bootstrap interval (``over_seeds``) on a per-seed quantity (a fitted
exponent, or a ratio at the largest size); thresholds are module constants fixed before any run, except 002-P1's
"falls with m" and "grows with L" margins (FALLS, GROWS), changed after the first run and decided only on the
confirmatory seed block 100–109 (``--seeds-block confirmatory``; the exploratory block 0–9 is shown beside). Our choices where
the papers are silent (defaults): d = 6, ε_x = 0.05 (< 1/L for every L ≤ 16, Thm 4.5's premise), L ∈ {4, 8, 12, 16},
m ∈ {256 … 4096}, 16 sequences per seed and L, 10 seeds (the papers report no seed counts: seed 002's Fig. 4 is in its
missing appendix, seeds 003/004 have no experiments); seed 003: tanh, α = 0.5, d = 4, T = 8, N = 8 sequences uniform
in the unit ball, m ∈ {64 … 16384}, 2^20 reference neurons; part D: Δ = 1 and a signed permutation for W' (O(m²);
a Gaussian scaled by its spectral norm would need an O(m³) SVD per seed and width), P7 at m = 512 and L = 32 (exact
norms of m × m products cost O(m³) per gap, so not at the largest m; quick: 256 and 16), one sequence for P4 and P7.

Example:  python studies/random_init.py --quick --out out/random_init_quick
"""

from __future__ import annotations

import math

import jax
import numpy as np

import gflow
from gflow import GflowInputError
from gflow.problems import random_init as ri
from gflow.study import (
    check,
    CONFIRMATORY,
    EXPLORATORY,
    NegativeControl,
    over_seeds,
    QuickFull,
    require_positive,
    run_study,
    save_figure,
    SeedBlocks,
    SEEDS_BLOCKS,
    study_parser,
)

SRC002 = "seed 002 (Panigrahi & Goyal 2021)"
SRC003 = "seed 003 (Cayci & Eryilmaz)"
SRC004 = "seed 004 (Allen-Zhu & Li 2019)"

# Thresholds, fixed before any run (a priori), except FALLS and GROWS (below).
# "falls with m" / "grows with L": median per-seed exponent p < FALLS, q > GROWS. Registered at 0 (the flat line
# itself) before the first run, which then could not tell a decoder that does not concentrate (a flat error:
# inconclusive) from one that does; changed after that run (2026-11-29) to a quarter power, half the smaller of the
# measured |p| = 0.46 and q = 0.90 and twice the median's interval half-width there (±0.12): decided on the
# confirmatory block only.
FALLS = -0.25
GROWS = 0.25
EXPONENTIAL_RATE = math.log(2.0) / 2  # d ln err / dL per step: ≥ this is "exponential" (a factor √2 per step)
NORM_BAND = (0.9, 2.0)  # Lemma B.1 (done1a): ‖h_l‖ ∈ [0.9, 2], so max/min ≤ 2/0.9
RATIO_MAX = NORM_BAND[1] / NORM_BAND[0]
BOUNDED_EXPONENT = 0.1  # "bounded in m (in L)": fitted exponent of the ratio at most this (ours)
COLLINEARITY_ORDER_IN_L = -2.0  # 004-P11: Lemma B.1's Ω(1/(L² log³ m)) falls like L^(−2); exponent in L must be ≥ this
NOT_SHRINKING = -0.1  # "not shrinking with m": fitted exponent of the non-collinearity at least this (ours)
DECORRELATION_RATE = -0.25  # derived here: |cos| ≲ m^(−1/4); one-sided, the exponent must be ≤ this
NTK_BAND = (-0.6, -0.4)  # 003-P7: deviation ∝ m^(−1/2), fitted exponent within ±0.1
IDENTITY_RTOL = 1e-10  # sanity: exact identities in float64
BACKWARD_RATE = -1.0 / 6  # 004-P4: ‖Back'‖/‖Back‖ ≤ O(Δ^(1/3) m^(1/3)) / Θ(√m) = m^(−1/6); exponent must be ≤ this
PRODUCT_POWER = 3.0  # 004-P7 (done1i): ‖D W ⋯ D W‖₂ ≤ O(L³): the fitted power in the gap must be ≤ 3
DROP_EPS_BAND = (0.8, 1.2)  # 004-P10 (Lemma D.1): linear in ε_x, fitted exponent within ±0.2 (tolerance ours)
DROP_LENGTH_POWER = 0.6  # 004-P10 (Lemma D.1): at most √L, fitted exponent ≤ 0.5 + 0.1 (tolerance ours)
RERANDOMIZE_BAND = (0.4, 0.6)  # 004-P15 (App. E, τ_1 ∝ √(N/m) [DERIVED]): fitted exponent in N within ±0.1 (ours)
REFERENCE_SHARE = 0.25  # sanity: Monte-Carlo error of κ at most this share of the smallest measured deviation
# the registered deciding checks of 002-P1 (validation/registry.toml [[check]]); registered before the first run, on
# seeds 0-9; falls-with-m and grows-with-L changed after it (FALLS, GROWS above)
P1_CHECK_ID = {"falls": "002-P1.falls-with-m", "grows": "002-P1.grows-with-L",
               "not_exponential": "002-P1.not-exponential", "naive_exponential": "002-P1.naive-exponential"}
P1_CHANGED = ("falls", "grows")
# Seed blocks (--seeds-block): the exploratory block 0 … 9 is the one the study was first run on; the confirmatory
# block 100 … 109, declared after that run (never used before: every stream's key folds in the seed, and no run
# reached seed 10), is where the changed checks decide (and the others may).
CONFIRMATORY_FIRST_SEED = 100
CONFIRMATORY_SEEDS = 10
BLOCKS = SeedBlocks(CONFIRMATORY_FIRST_SEED, CONFIRMATORY_SEEDS)


def parse_args(argv=None):
    p = study_parser(__doc__, "out/random_init", "output folder for the figure and summary.json",
                     "widths 128 … 512, L ∈ {4, 8}, 3 seeds, NTK widths 64 … 1024, products at m = 256, L = 16",
                     validate=validate)
    p.add_argument("--seeds", type=int, default=QuickFull(10, quick=3), help="random initializations")
    p.add_argument("--seeds-block", choices=SEEDS_BLOCKS, default=EXPLORATORY,
                   help=f"{EXPLORATORY}: seeds 0, 1, … (the block the study was first run on); {CONFIRMATORY}: the "
                        f"fresh block {CONFIRMATORY_FIRST_SEED}, {CONFIRMATORY_FIRST_SEED + 1}, … on which 002-P1's "
                        "checks changed after the first run decide")
    p.add_argument("--widths", type=int, nargs="+", default=QuickFull([256, 512, 1024, 2048, 4096], quick=[128, 256, 512]),
                   help="widths m of the ReLU RNN, parts A/B")
    p.add_argument("--lengths", type=int, nargs="+", default=QuickFull([4, 8, 12, 16], quick=[4, 8]),
                   help="sequence lengths L ≥ 3")
    p.add_argument("--d", type=int, default=6, help="token dimension d ≥ 3 (parts A/B)")
    p.add_argument("--sequences", type=int, default=QuickFull(16, quick=8),
                   help="normalized sequences per seed and length")
    p.add_argument("--eps-x", type=float, default=0.05,
                   help="token scale ε_x of part A's checks (Thm 4.5 needs ε_x < 1/L)")
    p.add_argument("--eps-x-scan", type=float, nargs="*", default=[0.01, 0.1],
                   help="further ε_x values for part A, reported (results, figure), not checked")
    p.add_argument("--product-width", type=int, default=QuickFull(512, quick=256),
                   help="width m of 004-P7's products D W ⋯ D W, part D")
    p.add_argument("--product-length", type=int, default=QuickFull(32, quick=16),
                   help="sequence length L ≥ 3 of 004-P7, gaps 1 … L − 1")
    p.add_argument("--ntk-widths", type=int, nargs="+",
                   default=QuickFull([2**k for k in range(6, 15)], quick=[64, 128, 256, 512, 1024]),
                   help="even widths m of seed 003's RNN, part C")
    p.add_argument("--ntk-length", type=int, default=8, help="sequence length T of part C")
    p.add_argument("--ntk-d", type=int, default=4, help="input dimension d of part C")
    p.add_argument("--ntk-sequences", type=int, default=8, help="input sequences N of part C (fixed for all seeds)")
    p.add_argument("--ntk-reference", type=int, default=QuickFull(2**20, quick=2**15),
                   help="Monte-Carlo neurons for the limit kernel κ_t")
    p.add_argument("--alpha", type=float, default=0.5, help="|W_ii(0)| = α of seed 003 (the paper assumes α ∈ (0, 1))")
    p.add_argument("--activation", default="tanh", choices=("tanh", "logistic", "gaussian"),
                   help="seed 003's C² activation")
    return p.parse_args(argv)


def validate(args):
    """Clear errors for bad input, naming the flag, before any compilation (argparse errors through the parser)."""
    require_positive(args, "seeds", "sequences", "ntk_length", "ntk_d", "ntk_sequences", "product_width")
    args.block_seeds = BLOCKS.seeds(args.seeds_block, args.seeds)
    for name, minimum in (("widths", 2), ("lengths", 3), ("ntk_widths", 2)):
        values = sorted(set(int(v) for v in getattr(args, name)))
        if len(values) < 2 or values[0] < minimum:
            raise GflowInputError(f"--{name.replace('_', '-')} needs at least two distinct values >= {minimum} "
                                  f"(exponents are fitted), got {getattr(args, name)}")
        setattr(args, name, values)
    if any(m % 2 for m in args.ntk_widths):
        raise GflowInputError(f"--ntk-widths must be even (seed 003's paired initialization), got {args.ntk_widths}")
    if args.d < 3:
        raise GflowInputError(f"--d must be >= 3 (normalized sequences), got {args.d}")
    if args.product_length < 3:
        raise GflowInputError(f"--product-length must be >= 3 (normalized sequences), got {args.product_length}")
    if len(set(ri.rerandomized_counts(args.widths[-1]))) < 2:
        raise GflowInputError(f"--widths: the largest must be >= 24 (004-P15 re-draws m/256 … m/16 rows, at least "
                              f"two distinct counts), got {args.widths[-1]}")
    for value in (args.eps_x, *args.eps_x_scan, args.alpha):
        if not (math.isfinite(value) and value > 0):
            raise GflowInputError(f"--eps-x, --eps-x-scan and --alpha must be positive numbers, got {value}")
    if args.ntk_reference < 2 * max(args.ntk_widths):
        raise GflowInputError(f"--ntk-reference ({args.ntk_reference}) must be at least twice the largest NTK width")
    args.eps_xs = [args.eps_x] + [e for e in args.eps_x_scan if e != args.eps_x]
    if len(set(args.eps_xs + [1.0 / args.lengths[-1]])) < 2:
        raise GflowInputError("--eps-x-scan needs a value other than --eps-x = 1/L (004-P10 fits an exponent in ε_x "
                              "over --eps-x, --eps-x-scan and 1/L)")


def p1_checks(args, p1, naive) -> tuple[list[dict], dict]:
    """The four registered checks of 002-P1 (seed 002 Thm 4.5 / Fig. 4), judged on the decoders' errors: a pure
    function of the measured numbers, which the run (:func:`part_a_checks`) and :func:`negative_controls` call.

    Args:
        args: the study's options (``widths``, ``lengths``, ``seeds``, ``sequences``, ``eps_x``).
        p1: the Thm 4.5 decoder's error ‖X − W̄ᵀh‖_∞ per seed, width and length, (S, n_m, n_L), at ``args.eps_x``.
        naive: the naive decoder 2[W W̄, A]_r's error, the same shape.

    Returns:
        ``(entries, fits)``: the check entries (falls with m, grows with L, not exponential in L, naive exponential;
        each carrying its registered ``check_id``), and the per-seed fits ``p``, ``q``, ``rate_in_L`` (the decoder's)
        and ``rate_naive``.
    """
    ms, Ls, S = args.widths, args.lengths, args.seeds
    grid = f"m ∈ {ms}, L ∈ {Ls}, ε_x = {args.eps_x:g}, {args.sequences} sequences per seed and L, {S} seeds"
    seeds = list(args.block_seeds)  # ri.seed_keys: seed s folds s into the stream's key
    block = args.seeds_block

    def changed(key):  # how a check changed after the first run is recorded
        return {"registered_after_run": True} if key in P1_CHANGED else {}
    p, q = ri.fit_grid(ms, Ls, p1)
    rate_used = ri.fit_rate_in_length(ms, Ls, p1)
    rate_naive = ri.fit_rate_in_length(ms, Ls, naive)
    entries = [
        over_seeds(
            f"[002-P1] Thm 4.5 decoder W̄^[L]ᵀh^(L) (null-sequence patterns): the error ‖X − W̄ᵀh‖_∞ falls with m: "
            f"per-seed exponent p of ln err = a + p ln m + q ln L, median < {FALLS:g} ({grid}; written after the first run: decides on the confirmatory block only; this "
            f"run: {block} block)",
            f"{SRC002}, Thm 4.5 / Fig. 4", p, FALLS, "<", predictions=["002-P1"], check_id=P1_CHECK_ID["falls"],
            seeds=seeds, seeds_block=block, **changed("falls")),
        over_seeds(
            f"[002-P1] the same fit: the error grows with L, median q > {GROWS:g} (written after the first run: decides on "
            f"the confirmatory block only; this run: {block} block)",
            f"{SRC002}, Thm 4.5 / Fig. 4", q, GROWS, ">", predictions=["002-P1"], check_id=P1_CHECK_ID["grows"],
            seeds=seeds, seeds_block=block, **changed("grows")),
        over_seeds(
            f"[002-P1] the Thm 4.5 decoder's error is not exponential in L: per-seed rate r of ln err = a + b ln m + "
            f"r L, median < ln2/2 = {EXPONENTIAL_RATE:.3g} per step",
            f"{SRC002}, Thm 4.5 (\"polynomial dependence on ε_x and L\")", rate_used, EXPONENTIAL_RATE, "<",
            predictions=["002-P1"], check_id=P1_CHECK_ID["not_exponential"],
            seeds=seeds, seeds_block=block),
        over_seeds(
            f"[002-P1] the naive decoder 2[W W̄, A]_r blows up exponentially in L: per-seed rate r (same fit), "
            f"median >= ln2/2 = {EXPONENTIAL_RATE:.3g} per step",
            f"{SRC002}, Thm 4.5 (naive construction, error exponential in L)", rate_naive, EXPONENTIAL_RATE, ">=",
            predictions=["002-P1"], check_id=P1_CHECK_ID["naive_exponential"],
            seeds=seeds, seeds_block=block)]
    return entries, {"p": p, "q": q, "rate_in_L": rate_used, "rate_naive": rate_naive}


def part_a_checks(args, per_width, checks, results):
    ms, Ls, S = args.widths, args.lengths, args.seeds
    grid = f"m ∈ {ms}, L ∈ {Ls}, ε_x = {args.eps_x:g}, {args.sequences} sequences per seed and L, {S} seeds"
    p1 = ri.stack(per_width, "p1")[..., 0]
    naive = ri.stack(per_width, "naive")[..., 0]
    p2 = ri.stack(per_width, "p2")[..., 0]
    entries, fits = p1_checks(args, p1, naive)
    checks += entries
    p, q, rate_used, rate_naive = fits["p"], fits["q"], fits["rate_in_L"], fits["rate_naive"]
    p_ls, q_ls = ri.fit_grid(ms, Ls, p2)
    checks.append(over_seeds(
        f"[002-P2] least-squares decoding X̂ = (W̄^[L])⁺h^(L) recovers the past true tokens x̄_2 … x̄_(L−1) with a "
        f"relative error max_l ‖X̂_l/ε_x − x̄_l‖ that falls with m: per-seed exponent p (same fit), median < {FALLS:g} "
        f"({grid})", f"{SRC002}, Thm 4.5 (a least-squares variant of the paper's decoder)", p_ls, FALLS,
        "<", predictions=["002-P2"]))
    identity = max(float(np.max(per_width[ms[0]]["identity"])), 0.0)
    checks.append(check(
        f"[002] construction: with each sequence's own activation patterns, h^(L) = W̄_D X exactly (max relative "
        f"residual, m = {ms[0]}, every L and seed) <= {IDENTITY_RTOL:g}", "seed 002 §3.1 (ReLU positive homogeneity)",
        identity, IDENTITY_RTOL, direction="<=", kind="sanity", predictions=["002-P1", "002-P2"]))
    eps_table = {f"{e:g}": {name: np.median(ri.stack(per_width, name)[..., i], axis=0)
                            for name in ("p1", "p1_middle", "naive", "p2")} for i, e in enumerate(args.eps_xs)}
    results["002"] = {"widths": ms, "lengths": Ls, "eps_x": args.eps_xs, "median_over_seeds": eps_table,
                      "fits": {"p1": {"p": p, "q": q, "rate_in_L": rate_used}, "naive": {"rate_in_L": rate_naive},
                               "p2": {"p": p_ls, "q": q_ls}}}


def part_b_checks(args, per_width, checks, results):
    ms, Ls, S = args.widths, args.lengths, args.seeds
    ratio = ri.stack(per_width, "ratio")  # (S, n_m, n_L)
    nc = ri.stack(per_width, "noncollinear")
    L, m = Ls[-1], ms[-1]
    setup = f"ε_x = 1/L, {args.sequences} sequences per seed, {S} seeds"
    checks.append(over_seeds(
        f"[004-P8] hidden-state norms Θ(1) across time: max_l ‖h_l‖ / min_l ‖h_l‖ (l ≤ L, worst sequence per seed) at "
        f"m = {m}, L = {L}, median <= 2/0.9 = {RATIO_MAX:.3g} (Lemma B.1's band [0.9, 2]; {setup})",
        f"{SRC004}, Lemma B.1 (done1a) / C.1 premise ε_x ≤ 1/L", ratio[:, -1, -1], RATIO_MAX, "<=",
        predictions=["004-P8"]))
    checks.append(over_seeds(
        f"[004-P8] the norm ratio does not grow with m: per-seed exponent in m at L = {L} (m ∈ {ms}), median <= "
        f"{BOUNDED_EXPONENT:g} (ours)", f"{SRC004}, Lemma B.1", ri.fit_exponent(ms, ratio[:, :, -1]),
        BOUNDED_EXPONENT, "<=", predictions=["004-P8"]))
    checks.append(over_seeds(
        f"[004-P8] the norm ratio does not grow with L: per-seed exponent in L at m = {m} (L ∈ {Ls}), median <= "
        f"{BOUNDED_EXPONENT:g} (ours)", f"{SRC004}, Lemma B.1", ri.fit_exponent(Ls, ratio[:, -1, :]),
        BOUNDED_EXPONENT, "<=", predictions=["004-P8"]))
    lemma_bound = 1.0 / (L**2 * math.log(m) ** 3)
    checks.append(check(
        f"[004-P11] Lemma B.1 (done1k)'s bound itself: min over 1 ≤ l < l' ≤ L−1 of ‖(I − ĥ_l ĥ_lᵀ) h_l'‖ (null "
        f"sequence) at m = {m}, L = {L}, worst seed >= 1/(L² ln³ m) = {lemma_bound:.3g} (the lemma's order "
        f"Ω(1/(L² log³ m)) with constant 1 and the natural log: the lemma states no constant, the 1 is ours; a "
        f"proven w.h.p. bound on the initialization, so a guard, not evidence; {S} seeds)",
        f"{SRC004}, Lemma B.1 (done1k)", float(np.min(nc[:, -1, -1])), lemma_bound,
        direction=">=", kind="sanity", predictions=["004-P11"]))
    checks.append(over_seeds(
        f"[004-P11] hidden states of the null sequence do not become collinear faster than Lemma B.1 (done1k) "
        f"allows: the min over 1 ≤ l < l' ≤ L−1 of ‖(I − ĥ_l ĥ_lᵀ) h_l'‖ at m = {m} falls at most like L^(−2) "
        f"(the lemma's order in L, Ω(1/(L² log³ m)); constant-free): per-seed exponent in L (L ∈ {Ls}), median >= "
        f"{COLLINEARITY_ORDER_IN_L:g} ({S} seeds). Replaces the check 'median >= 1/L² at m = {m}, L = {L}', whose bar "
        f"was 100× below the value; the lemma gives only an order, so no fixed level can decide it; this "
        f"bar is set before the rerun", f"{SRC004}, Lemma B.1 (done1k)",
        ri.fit_exponent(Ls, nc[:, -1, :]), COLLINEARITY_ORDER_IN_L, ">=", predictions=["004-P11"]))
    checks.append(over_seeds(
        f"[004-P11] the non-collinearity does not shrink with m: per-seed exponent in m at L = {L}, median >= "
        f"{NOT_SHRINKING:g} (ours; the lemma's bound allows 1/log³ m)", f"{SRC004}, Lemma B.1 (done1k)",
        ri.fit_exponent(ms, nc[:, :, -1]), NOT_SHRINKING, ">=", predictions=["004-P11"]))
    corr = ri.stack(per_width, "corr_different")  # (S, n_m)
    checks.append(over_seeds(
        f"[004-P9] backward decorrelation at init: mean |cos| between rows uᵀBack_(i→j) of different lengths j − i "
        f"(all 1 ≤ i ≤ j ≤ L = {L}, one sequence per seed, ε_x = 1/L) falls with m at least like m^(−1/4): per-seed "
        f"exponent in m (m ∈ {ms}), median <= {DECORRELATION_RATE:g}",
        f"{SRC004}, Lemma C.1 (bound lost in the extraction; rate m^(−1/4) derived here)",
        ri.fit_exponent(ms, corr), DECORRELATION_RATE, "<=", predictions=["004-P9"]))
    results["004"] = {
        "widths": ms, "lengths": Ls,
        "norm_ratio_median": np.median(ratio, axis=0), "norm_min": np.min(ri.stack(per_width, "norm_min"), axis=0),
        "norm_max": np.max(ri.stack(per_width, "norm_max"), axis=0),
        "noncollinearity_median": np.median(nc, axis=0),
        "sigma_min_median": np.median(ri.stack(per_width, "sigma_min"), axis=0),
        "corr_different_median": np.median(corr, axis=0),
        "corr_max_median": np.median(ri.stack(per_width, "corr_max"), axis=0),
        "corr_same_length_median": np.median(ri.stack(per_width, "corr_same"), axis=0),
        "ratio_exponent_in_m": ri.fit_exponent(ms, ratio[:, :, -1]),
        "ratio_exponent_in_L": ri.fit_exponent(Ls, ratio[:, -1, :]),
        "noncollinearity_exponent_in_m": ri.fit_exponent(ms, nc[:, :, -1]),
        "noncollinearity_exponent_in_L": ri.fit_exponent(Ls, nc[:, -1, :]),
        "corr_exponent_in_m": ri.fit_exponent(ms, corr),
        "infinite_width_ratio": [math.sqrt(2.0 + (L_ - 2) / L_**2) for L_ in Ls]}


def backward_identity_check(args, checks):
    key = jax.random.fold_in(jax.random.key(2), 0)
    m, L, d = args.widths[0], args.lengths[0], args.d
    model = gflow.models.elman_allen_zhu_li(jax.random.fold_in(jax.random.split(key)[0], m), m, d)
    x = gflow.objectives.normalized_token_sequences(jax.random.key(6), 1, L, d, eps_x=1.0 / L)[0]
    err = ri.backward_identity_error(model, x)
    checks.append(check(
        f"[004] construction: uᵀBack_(i→j) D_i A equals autodiff's ∂(B h_j)/∂x_i for all i ≤ j (m = {m}, L = {L}; max "
        f"relative difference) <= {IDENTITY_RTOL:g}", "seed 004 §1 / seed 002 §3.1 (chain rule)", err, IDENTITY_RTOL,
        direction="<=", kind="sanity", predictions=["004-P9"]))


def part_d_checks(args, per_width, products, checks, results):
    ms, Ls, m, L = args.widths, args.lengths, args.widths[-1], args.lengths[-1]
    back = ri.stack(per_width, "back_ratio")  # (S, n_m)
    checks.append(over_seeds(
        f"[004-P4] backward stability: max over 1 ≤ i < j ≤ L = {L} of ‖Back'_(i→j)‖/‖Back_(i→j)‖ (Back' = Back with "
        f"W + W' and its own patterns − Back; scalar output) for one random W' with ‖W'‖₂ = Δ/√m exactly (Δ = "
        f"{ri.PERTURBATION_DELTA:g}, signed permutation; one sequence per seed, ε_x = 1/L) falls at least like "
        "m^(−1/6): "
        f"per-seed exponent in m (m ∈ {ms}), median <= {BACKWARD_RATE:.3g}",
        f"{SRC004}, App. F backward stability (Lemma C.9 of Allen-Zhu, Li, Song v3) over ‖Back‖₂ ~ √m",
        ri.fit_exponent(ms, back), BACKWARD_RATE, "<=", predictions=["004-P4"]))
    gaps, norms = products["gaps"], products["norms"]
    checks.append(over_seeds(
        f"[004-P7] ‖D_j W ⋯ D_(i+1) W‖₂ grows polynomially in j − i (power ≤ 3), not like ‖W‖₂^(j−i): per-seed slope of "
        f"ln‖·‖₂ against ln(j − i) for i = 1, j − i ∈ {list(gaps)} (m = {args.product_width}, L = "
        f"{args.product_length}, one sequence per seed, ε_x = 1/L), median <= {PRODUCT_POWER:g}; the other half of "
        f"004-P7 (steps, samples, width to reach ε polynomial in L) is not tested",
        f"{SRC004}, Lemma B.1 (done1i)", ri.fit_exponent(gaps, norms), PRODUCT_POWER, "<=",
        predictions=["004-P7"]))
    drop = ri.stack(per_width, "drop")[:, -1]  # (S, n_L, E + 1) at the largest m
    scales = args.eps_xs + [1.0 / L]
    setup = f"x^(0) the null sequence (x with its L − 2 scaled tokens zeroed), mean over {args.sequences} sequences"
    checks.append(over_seeds(
        f"[004-P10] dropping x*: max_(i ≤ L) ‖h_i(x) − h_i(x^(0))‖ grows linearly in ε_x: per-seed exponent in ε_x ∈ "
        f"{sorted(set(round(e, 4) for e in scales))} at m = {m}, L = {L} ({setup}), median in "
        f"[{DROP_EPS_BAND[0]:g}, {DROP_EPS_BAND[1]:g}]", f"{SRC004}, Lemma D.1",
        ri.fit_exponent(scales, drop[:, -1, :]), list(DROP_EPS_BAND), "in", predictions=["004-P10"]))
    checks.append(over_seeds(
        f"[004-P10] the same distance grows at most like √L: per-seed exponent in the number L − 2 of dropped tokens "
        f"(L ∈ {Ls}, ε_x = {args.eps_x:g}, m = {m}), median <= {DROP_LENGTH_POWER:g} (0.5 + 0.1, ours)",
        f"{SRC004}, Lemma D.1: O(√L ε_x)", ri.fit_exponent(np.asarray(Ls) - 2, drop[:, :, 0]),
        DROP_LENGTH_POWER, "<=", predictions=["004-P10"]))
    counts = ri.rerandomized_counts(m)
    shift = ri.stack(per_width, "rerandomized")  # (S, n_m, K)
    exponents = ri.fit_exponent(counts, shift[:, -1])
    checks.append(over_seeds(
        f"[004-P15] re-drawing N rows of [W, A] (nested random sets, N ∈ {list(counts)}, m = {m}) moves the states "
        f"at most like √(N/m), App. E's upper bound for N ≪ m: per-seed exponent in N of max_(l ≤ L) ‖h̃_l − h_l‖ "
        f"(L = {L}, ε_x = 1/L, mean over {args.sequences} sequences), median <= {RERANDOMIZE_BAND[1]:g} (post hoc, "
        f"App. E states an upper bound, so the pre-registered two-sided band [{RERANDOMIZE_BAND[0]:g}, "
        f"{RERANDOMIZE_BAND[1]:g}] tested a lower bound the paper does not state; it is kept beside, deciding "
        "nothing)", f"{SRC004}, App. E (τ_1 = O(ρ√N/√m) for N ≪ m)", exponents,
        RERANDOMIZE_BAND[1], "<=", predictions=["004-P15"]))
    checks.append(over_seeds(
        f"[004-P15, pre-registered, not deciding] the same exponent in the two-sided band [{RERANDOMIZE_BAND[0]:g}, "
        f"{RERANDOMIZE_BAND[1]:g}] ('moves like √(N/m)', a reading of App. E's upper bound as an order)",
        f"{SRC004}, App. E", exponents, list(RERANDOMIZE_BAND), "in", predictions=[]))
    perturbation = ri.perturbation_norm_error(ms[0])
    checks.append(check(
        f"[004] construction: the perturbation of 004-P4 has every singular value Δ/√m (m = {ms[0]}; max relative "
        f"difference) <= {IDENTITY_RTOL:g}", "seed 004 App. F premise ‖W'‖₂ ≤ Δ/√m", perturbation, IDENTITY_RTOL,
        direction="<=", kind="sanity", predictions=["004-P4"]))
    results["004_stability"] = {
        "widths": ms, "lengths": Ls, "delta": ri.PERTURBATION_DELTA,
        "back_ratio_max_median": np.median(back, axis=0),
        "back_ratio_median_median": np.median(ri.stack(per_width, "back_ratio_median"), axis=0),
        "back_exponent_in_m": ri.fit_exponent(ms, back),
        "product_width": args.product_width, "product_length": args.product_length, "gaps": list(gaps),
        "product_norm_median": np.median(norms, axis=0), "w_norm_median": float(np.median(products["w_norm"])),
        "w_norm_power_median": np.median(products["w_norm"][:, None] ** np.asarray(gaps)[None, :], axis=0),
        "product_power": ri.fit_exponent(gaps, norms),
        "drop_eps_x": [args.eps_xs + [1.0 / L_] for L_ in Ls],
        "drop_median": np.median(ri.stack(per_width, "drop"), axis=0),
        "drop_exponent_in_eps_x": ri.fit_exponent(scales, drop[:, -1, :]),
        "drop_exponent_in_dropped_tokens": ri.fit_exponent(np.asarray(Ls) - 2, drop[:, :, 0]),
        "drop_exponent_in_L": ri.fit_exponent(Ls, drop[:, :, 0]),
        "rerandomized_counts": {mm: ri.rerandomized_counts(mm) for mm in ms},
        "rerandomized_shift_median": np.median(shift, axis=0),
        "rerandomized_exponent_in_N": ri.fit_exponent(counts, shift[:, -1])}


def part_c_checks(args, ntk, checks, results):
    ms = args.ntk_widths
    dev = np.stack([ntk["deviation"][m] for m in ms], axis=1)  # (S, n_m)
    exps = ri.fit_exponent(ms, dev)
    checks.append(over_seeds(
        f"[003-P7] the empirical NTK converges to Prop. 2's κ_t like m^(−1/2): per-seed exponent of ‖K^(m) − κ‖_F/‖κ‖_F "
        f"in m (m ∈ {ms}; T = {args.ntk_length}, N = {args.ntk_sequences} fixed sequences, {args.activation}, "
        f"α = {args.alpha:g}; κ from the paper's formula with {args.ntk_reference} Monte-Carlo neurons), median in "
        f"[{NTK_BAND[0]:g}, {NTK_BAND[1]:g}]", f"{SRC003}, Prop. 2", exps, list(NTK_BAND), "in",
        predictions=["003-P7"]))
    checks.append(check(
        f"[003] construction: gflow's empirical NTK (autodiff) equals (1/m) Σ_i f_i·f_i with Prop. 2's per-neuron sums "
        f"(m = {ms[0]}, max relative difference) <= {IDENTITY_RTOL:g}", "seed 003 Props. 1–2 (identity)",
        ntk["identity"], IDENTITY_RTOL, direction="<=", kind="sanity", predictions=["003-P7"]))
    smallest = float(np.median(dev[:, -1]))
    share = ntk["reference_error"] / smallest
    checks.append(check(
        f"[003] the reference κ is precise enough: its Monte-Carlo standard error (relative, Frobenius) is at most "
        f"{REFERENCE_SHARE:g} of the median deviation at m = {ms[-1]}", "numerical guard (our choice)", share,
        REFERENCE_SHARE, direction="<=", kind="sanity", predictions=["003-P7"]))
    results["003"] = {"widths": ms, "deviation_median": np.median(dev, axis=0), "deviation": dev, "exponents": exps,
                      "reference_relative_error": ntk["reference_error"], "kappa": ntk["kappa"]}


def _decoder_errors(args, p: float, growth: float, *, in_length: str, rng) -> np.ndarray:
    """Synthetic decoder errors over the run's grid, (S, n_m, n_L): per seed s, ln err = −1 + p_s ln m + g_s·f(L) +
    a cell noise of sd 0.05, with p_s = p + 0.15 z and g_s = growth + 0.15 z' (0.15: about the seed-to-seed scatter
    of the measured exponents); f(L) = ln L for ``in_length="power"``, L for ``"rate"`` (then g_s = growth + 0.02 z',
    the measured scatter of the rate)."""
    S, lnm = args.seeds, np.log(np.asarray(args.widths, float))[None, :, None]
    L = np.asarray(args.lengths, float)[None, None, :]
    slope = p + 0.15 * rng.standard_normal((S, 1, 1))
    if in_length == "power":
        length_term = (growth + 0.15 * rng.standard_normal((S, 1, 1))) * np.log(L)
    else:
        length_term = (growth + 0.02 * rng.standard_normal((S, 1, 1))) * L
    return np.exp(-1.0 + slope * lnm + length_term + 0.05 * rng.standard_normal((S, lnm.shape[1], L.shape[2])))


MEASURED_P, MEASURED_Q = -0.46, 0.9  # the first full run's medians of p and q (validation/results/random_init.json)


def negative_controls() -> list[NegativeControl]:
    """The four registered checks of 002-P1 judged by :func:`p1_checks`, with the run's defaults (grid m ∈ 256 …
    4096, L ∈ 4 … 16) on the confirmatory block 100–109, where they decide, on plausible alternatives of seed 002
    Fig. 4 on which each must FAIL (gflow.study.control_problems). Synthetic errors (:func:`_decoder_errors`, numpy
    seed 0) scattered from seed to seed as the measured exponents are:

    - falls with m: a flat error (p = 0 per seed: the decoder does not concentrate with width). With the bar at the
      flat line itself, as first registered, this was judged inconclusive (the check could FAIL only on an error
      rising with m); the quarter-power margin makes it FAIL;
    - grows with L: a flat error in L (q = 0), likewise;
    - not exponential: the Thm 4.5 decoder's error doubling per step of L (rate ln 2, the factor 2 of the naive
      construction), Thm 4.5's exponential alternative;
    - naive exponential: the naive decoder as polynomial as the Thm 4.5 decoder measured (p = −0.46, q = 0.9: a
      rate of about 0.1 per step), i.e. no blow-up.

    Returns:
        One control per registered check of 002-P1.
    """
    args = parse_args(["--out", "unused", "--seeds-block", CONFIRMATORY])
    result = {"study": "random_init", "seeds_block": CONFIRMATORY,
              "config": {"seeds": args.seeds, "seeds_block": CONFIRMATORY, "block_seeds": list(args.block_seeds)}}
    rng = np.random.default_rng(0)
    polynomial = _decoder_errors(args, MEASURED_P, MEASURED_Q, in_length="power", rng=rng)
    alternatives = {
        "falls": ("a flat error in m: the decoder does not concentrate with width (per-seed exponent p = 0 ± 0.15)",
                  _decoder_errors(args, 0.0, MEASURED_Q, in_length="power", rng=rng), polynomial),
        "grows": ("a flat error in L (per-seed exponent q = 0 ± 0.15)",
                  _decoder_errors(args, MEASURED_P, 0.0, in_length="power", rng=rng), polynomial),
        "not_exponential": ("the Thm 4.5 decoder's error doubles with each step of L (rate ln 2 per step, like the "
                            "naive construction's factor 2)",
                            _decoder_errors(args, MEASURED_P, math.log(2.0), in_length="rate", rng=rng), polynomial),
        "naive_exponential": ("the naive decoder does not blow up: its error is as polynomial in L as the Thm 4.5 "
                              "decoder's measured one (p = −0.46, q = 0.9)", polynomial,
                              _decoder_errors(args, MEASURED_P, MEASURED_Q, in_length="power", rng=rng))}
    out = []
    for key, (words, p1, naive) in alternatives.items():
        entry = next(e for e in p1_checks(args, p1, naive)[0] if e["check_id"] == P1_CHECK_ID[key])
        out.append(NegativeControl(entry["check_id"], words, entry, result))
    return out


def main(argv=None):
    return run_study("random_init", parse_args, science, argv)


def science(args, checks, results):
    print(f"random_init: widths {args.widths}, L ∈ {args.lengths}, d = {args.d}, ε_x ∈ {args.eps_xs}, {args.seeds} "
          f"seeds; NTK widths {args.ntk_widths}", flush=True)
    print("A/B. seeds 002 and 004 at initialization", flush=True)
    per_width = ri.run_widths(args)
    part_a_checks(args, per_width, checks, results)
    part_b_checks(args, per_width, checks, results)
    backward_identity_check(args, checks)
    print("D. seed 004's products D W ⋯ D W", flush=True)
    part_d_checks(args, per_width, ri.run_products(args), checks, results)
    print("C. the empirical NTK of seed 003", flush=True)
    ntk = ri.run_ntk(args)
    part_c_checks(args, ntk, checks, results)
    save_figure(ri.figure(args, results, NORM_BAND, BACKWARD_RATE, PRODUCT_POWER), args.out, "random_init.png",
                title_size=10, title=f"Random initialization: medians over {args.seeds} seeds (ε_x = {args.eps_x:g} in "
                "the top row)")
    return dict(a_priori_thresholds={
        "falls": FALLS, "grows": GROWS, "exponential_rate": EXPONENTIAL_RATE, "ratio_max": RATIO_MAX,
        "bounded_exponent": BOUNDED_EXPONENT, "not_shrinking": NOT_SHRINKING,
        "decorrelation_rate": DECORRELATION_RATE, "ntk_band": list(NTK_BAND), "identity_rtol": IDENTITY_RTOL,
        "reference_share": REFERENCE_SHARE, "perturbation_delta": ri.PERTURBATION_DELTA, "backward_rate": BACKWARD_RATE,
        "product_power": PRODUCT_POWER, "drop_eps_band": list(DROP_EPS_BAND), "drop_length_power": DROP_LENGTH_POWER,
        "rerandomize_band": list(RERANDOMIZE_BAND), "rerandomized_shares": list(ri.RERANDOMIZED_SHARES)},
        models={"002": "elman_panigrahi_goyal (W, A ~ N(0, 2/m))", "004": "elman_allen_zhu_li (same W, A; B ~ N(0, 1))",
                "003": f"elman_cayci_eryilmaz ({args.activation}, α = {args.alpha:g})"},
        inputs={"002/004": "normalized_token_sequences (uniform true tokens), null_sequence",
                "003": "unit_ball_sequences, fixed across seeds"})


if __name__ == "__main__":
    raise SystemExit(main())
