"""Why k > 2d̂ is needed, and why zero loss alone is not enough (seed 000: Lemma A.1, Cor. A.2, Prop. 3, Lemma 7).

Part 1 — Lemma A.1 / Corollary A.2 (000-P8). Two balanced, stable teachers of dimension d̂ whose
impulse responses agree for j ≤ 2d̂ − 2 and differ at j = 2d̂ − 1 (``gflow.teachers.moment_matched_pair``; for
d̂ = 2 the explicit pair Â = diag(−1/2, 1/2), B̂ = (√.5, √.5) and Â = diag(−1/4, 1), B̂ = (√.8, √.2)). For
k ≤ 2d̂ − 1 the two population losses are the same function of the student, checked on random students to
rounding; gradient flow from one start then follows one path for both teachers, and whatever it learns misses
one of them by at least |ŵ_{2d̂−1} − ŵ'_{2d̂−1}| / 2 on the tail. With k = 2d̂ + 1 a balanced student trained on
each teacher extrapolates (Theorem 5 / Lemma 7). App. D: everything above is repeated with the
accumulating loss (weights k − i): the same equal-loss identity, the same shared path at k = 3, and the same
extrapolation at k = 5.

Part 2 — Proposition 3. For d > k the Vandermonde construction
(``gflow.teachers.vandermonde_student``) gives a symmetric student with zero loss whose impulse response takes
arbitrary values at j = k .. d − 1: zero training loss does not imply extrapolation. Lemma 7 says such a student
must be unbalanced once k > 2d̂: its spectral measure needs a negative weight.

Check classes: the pairs, the loss identities, the Vandermonde student and Lemma 7 on constructed
students hold by construction or are identities: *sanity* checks. The *prediction* checks are the trained flows:
at k = 2d̂ − 1 < d gradient flow reaches (near) zero loss, a point that cannot extrapolate both teachers (Cor. A.2;
an instance of Prop. 3 reached by training), and at k = 2d̂ + 1 it extrapolates (uniform and accumulating loss).
No check is a statistic over seeds.

Example:  python studies/moment_pairs.py --quick --out out/moment_pairs
"""

from __future__ import annotations

import jax
import numpy as np

import gflow
from gflow import analysis as an, teachers
from gflow.problems import moment_pairs as mp
from gflow.study import (
    both_tolerances,
    check,
    QuickFull,
    rtol_option,
    run_study,
    save_figure,
    save_trajectories,
    study_parser,
    tolerance_agreement,
)

SOURCE = "seed 000 (Cohen-Karlik et al., ICLR 2023)"


def parse_args(argv=None):
    p = study_parser(__doc__, "out/moment_pairs", "output folder for figures, trajectories, summary.json",
                      "fewer random students and a shorter flow")
    p.add_argument("--students", type=int, default=QuickFull(200, quick=20), help="random students for the "
                   "equal-loss check, split as evenly as possible over the three kinds")
    p.add_argument("--d", type=int, default=8, help="student dimension for the flows (d > k)")
    p.add_argument("--eps", type=float, default=1e-3, help="balanced initialization scale of the flows")
    p.add_argument("--t1", type=float, default=QuickFull(1e6, quick=1e4), help="flow horizon")
    rtol_option(p)
    p.add_argument("--horizon", type=int, default=100, help="tail window [k, horizon) of the extrapolation error")
    p.add_argument("--extrapolation-threshold", type=float, default=1e-2,
                   help="tail error below which a k = 2d̂ + 1 student counts as extrapolating (our choice)")
    p.add_argument("--general-d-hat", type=int, nargs="+", default=QuickFull([3, 4], quick=[3]),
                   help="further d̂ for the general pair construction")
    p.add_argument("--prop3-teacher-dim", type=int, default=5, help="d̂ of the balanced teacher in Part 2")
    p.add_argument("--prop3-k", type=int, default=8, help="training length k of the Prop. 3 student (k <= 2d̂ here)")
    p.add_argument("--prop3-d", type=int, default=14, help="student dimension d > k of the Prop. 3 student")
    p.add_argument("--lemma7-tails", type=int, default=QuickFull(100, quick=20),
                   help="random tails for the Lemma 7 check at k = 2d̂ + 1")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    p.require_positive(args, "d", "horizon", "prop3_teacher_dim", "prop3_k", "lemma7_tails", "general_d_hat", "t1",
                       "eps")
    if args.prop3_d <= args.prop3_k:
        p.error("--prop3-d must exceed --prop3-k (Proposition 3 needs d > k)")
    if args.students < len(mp.KINDS):
        p.error(f"--students must be >= {len(mp.KINDS)} (one per kind)")
    check_horizon(p, args)
    return args


def check_horizon(p, args) -> None:
    """Every lag a part reads lies within ``--horizon``: the lengths the parts derive from the user's numbers
    (Lemma 7's k = 2d̂ + 1 and its student d = k + 4, the general pairs' lag 2d̂ − 1, Prop. 3's tail [k, d)), checked
    here rather than after the flows of Part 1."""
    k7 = 2 * args.prop3_teacher_dim + 1
    if k7 + 4 > args.horizon:
        p.error(f"--horizon {args.horizon} is too short for --prop3-teacher-dim {args.prop3_teacher_dim}: the Lemma 7 "
                f"check reads lags up to d = k + 4 = {k7 + 4} (k = 2d̂ + 1 = {k7}); use --horizon >= {k7 + 4}")
    if args.prop3_d > args.horizon:
        p.error(f"--horizon {args.horizon} is too short for --prop3-d {args.prop3_d}: Prop. 3's tail [k, d) is read "
                f"up to lag d; use --horizon >= {args.prop3_d}")
    if 2 * max(args.general_d_hat) > args.horizon:
        dh = max(args.general_d_hat)
        p.error(f"--horizon {args.horizon} is too short for --general-d-hat {dh}: the pair differs at lag 2d̂ − 1 = "
                f"{2 * dh - 1}; use --horizon >= {2 * dh}")


def main(argv=None):
    return run_study("moment_pairs", parse_args, science, argv)


D_HAT = 2  # the pair of Lemma A.1 that Part 1 trains on
SRC_PAIR = f"{SOURCE}, Lemma A.1 / Cor. A.2"
SRC_ACC = f"{SOURCE}, App. D (accumulating loss, weights k − i)"


def science(args, checks, results):
    T1, T2, students, h_gap = part_1_pair(args, checks, results)
    flows = part_1_flows(args, T1, T2, h_gap, checks, results)
    part_1b_general_pairs(args, students, checks, results)
    teacher, student = part_2_prop3(args, checks, results)
    part_2_lemma7(args, teacher, checks, results)
    save_figure(mp.figure(args, T1, T2, flows, teacher, student, args.prop3_k, args.prop3_d), args.out,
                "moment_pairs.png", title="seed 000: moment-matched teachers (Lemma A.1, Cor. A.2) and the Vandermonde "
                "student (Prop. 3)")


def part_1_pair(args, checks, results):
    """Part 1: the d̂ = 2 moment-matched pair, its impulse responses and equal losses on random students."""
    T1, T2 = teachers.moment_matched_pair()
    d_hat, H = D_HAT, args.horizon
    w1, w2 = np.asarray(T1.impulse_response(H)), np.asarray(T2.impulse_response(H))
    print(f"moment_pairs: d̂ = 2 pair, IRs {np.round(w1[:5], 6)} and {np.round(w2[:5], 6)}", flush=True)
    students = mp.random_students(jax.random.key(args.seed), args.students, args.d)
    n_students = sum(int(np.shape(b.B)[0]) for b in students.values())
    worst, gap_next = mp.pair_identity((T1, T2), students, d_hat)
    worst_acc, gap_next_acc = mp.pair_identity((T1, T2), students, d_hat, "accumulating")
    h_gap = abs(w1[2 * d_hat - 1] - w2[2 * d_hat - 1])
    agree = float(np.max(np.abs(w1[:2 * d_hat - 1] - w2[:2 * d_hat - 1])))
    max_abs_a = float(max(np.max(np.abs(T1.A)), np.max(np.abs(T2.A))))
    checks += [
        check("d̂=2 pair: impulse responses agree for j <= 2d̂-2 = 2 (to rounding; by construction)", SRC_PAIR, agree,
              1e-15, direction="<=", kind="sanity", predictions=["000-P8"]),
        check("d̂=2 pair: |ŵ_3 − ŵ'_3| equals the hand-computed 0.1875 (arithmetic)", SRC_PAIR, float(h_gap),
              0.1875, passed=abs(h_gap - 0.1875) <= 1e-14, kind="sanity", predictions=["000-P8"]),
        check(f"d̂=2 pair: identical losses for every k <= 3 on {n_students} random students (max relative "
              "difference; an identity once the IRs agree on j <= 2)", SRC_PAIR, worst, 1e-12, direction="<=",
              kind="sanity", predictions=["000-P8"]),
        check(f"d̂=2 pair: at k = 2d̂ = 4 the losses differ on each of the {n_students} students (min relative gap; "
              "generic once ŵ_3 ≠ ŵ'_3)", SRC_PAIR, float(gap_next), 1e-6, direction=">", kind="sanity",
              predictions=["000-P8"]),
        check("both teachers are balanced (B̂ = Ĉᵀ), stable (max|Â| <= 1) and non-degenerate (Ĉ B̂ = 1): the "
              "construction; value max|Â|", SRC_PAIR, max_abs_a, 1.0,
              passed=max_abs_a <= 1.0 and abs(w1[0] - 1) < 1e-14 and abs(w2[0] - 1) < 1e-14
              and float(an.balance_ratio(T1)) == 0.0 and float(an.balance_ratio(T2)) == 0.0, kind="sanity",
              predictions=["000-P8"]),
    ]
    checks.append(check(f"accumulating loss: identical losses for every k <= 3 on the same {n_students} students "
                        "(max relative difference) and different at k = 4 (an identity, as for the uniform loss)",
                        SRC_ACC, worst_acc, 1e-12, passed=worst_acc <= 1e-12 and gap_next_acc > 1e-6, kind="sanity",
                        min_gap_k_4=gap_next_acc, predictions=["000-P16"]))
    results["pair"] = {"atoms": [np.asarray(T1.A), np.asarray(T2.A)], "weights": [np.asarray(T1.B) ** 2,
                       np.asarray(T2.B) ** 2], "ir": [w1[:8], w2[:8]], "max_relative_loss_difference_k_le_3": worst,
                       "min_relative_loss_gap_k_4": gap_next, "w1_teachers": an.wasserstein1(T1, T2)}
    return T1, T2, students, h_gap


def part_1_flows(args, T1, T2, h_gap, checks, results):
    """Part 1: gradient flows on the pair at k = 2d̂ − 1 (cannot tell them apart) and k = 2d̂ + 1 (extrapolates)."""
    d_hat, H = D_HAT, args.horizon
    # gradient flows: k = 3 (= 2d̂ − 1) and k = 5 (= 2d̂ + 1), each teacher, rtol and rtol/100; the
    # accumulating-loss flows (App. D) are named "T1acc", "T2acc"
    flows, flow_res = {}, {}
    jobs = [(k, name + suffix, T, weighting) for k in (2 * d_hat - 1, 2 * d_hat + 1)
            for suffix, weighting in (("", "uniform"), ("acc", "accumulating")) for name, T in (("T1", T1), ("T2", T2))]
    for tol_name, rtol in both_tolerances(args.rtol):
        for (k, name, T, _), traj in zip(jobs, mp.run_flows([(T, k, w) for k, _, T, w in jobs], args, rtol)):
            m = traj.final
            flow_res[(k, name, tol_name)] = {
                "final_loss": float(traj.loss[-1]), "tail_T1": float(an.tail_error(m, T1, k, H)),
                "tail_T2": float(an.tail_error(m, T2, k, H)), "W1_to_own_teacher": an.wasserstein1(m, T),
                "support_size": an.effective_support_size(m), "steps": traj.stats["steps"]}
            if tol_name == "default":
                flows[(k, name)] = traj
                save_trajectories(args.out, {f"k{k}_{name}": traj})
    for k, name, _, _ in jobs:
        r = flow_res[(k, name, "default")]
        print(f"  k={k} teacher {name}: L={r['final_loss']:.2e}, tail error vs T1 {r['tail_T1']:.3e}, vs T2 "
              f"{r['tail_T2']:.3e}, W1 to own teacher {r['W1_to_own_teacher']:.2e}, support {r['support_size']}",
              flush=True)
    k_short, k_long = 2 * d_hat - 1, 2 * d_hat + 1
    same_path = float(np.max(np.abs(flows[(k_short, "T1")].params - flows[(k_short, "T2")].params))
                      / np.max(np.abs(flows[(k_short, "T1")].params)))
    short_losses = [flow_res[(k_short, n, "default")]["final_loss"] for n in ("T1", "T2")]
    unavoidable = max(flow_res[(k_short, "T1", "default")]["tail_T1"], flow_res[(k_short, "T1", "default")]["tail_T2"])
    long_tails = [flow_res[(k_long, n, "default")][f"tail_{n}"] for n in ("T1", "T2")]
    long_tails_tight = [flow_res[(k_long, n, "tight")][f"tail_{n}"] for n in ("T1", "T2")]
    checks += [
        check(f"k = {k_short}: the gradient flows for the two teachers coincide (max relative parameter difference; "
              "the two losses are the same function, so this guards the solver)", SRC_PAIR, same_path, 1e-8,
              direction="<=", kind="sanity", predictions=["000-P8"]),
        check(f"k = {k_short} = 2d̂ − 1: gradient flow from one balanced start (d = {args.d}, ε = {args.eps:g}, "
              f"t1 = {args.t1:g}) reaches L <= 1e-10 for both teachers (max final loss): the zero-loss point of "
              "Cor. A.2 (and, with d > k, an instance of Prop. 3 reached by training), which then misses one teacher "
              "by >= |ŵ_3 − ŵ'_3|/2", f"{SOURCE}, Cor. A.2 / Prop. 3", max(short_losses), 1e-10,
              direction="<=", kind="prediction", predictions=["000-P8", "000-P9"]),
        check(f"k = {k_short}: the learned student misses one teacher by >= |ŵ_3 − ŵ'_3|/2 on the tail (the "
              "triangle inequality: true of any student)", f"{SOURCE}, Cor. A.2", unavoidable,
              h_gap / 2 - 1e-12, direction=">=", kind="sanity", predictions=["000-P8"]),
        check(f"k = {k_long} > 2d̂: the balanced students trained on each teacher extrapolate, max tail error on "
              f"[{k_long}, {H}) over both teachers <= {args.extrapolation_threshold:g} (our threshold)",
              f"{SOURCE}, Thm 5 / Lemma 7 / Thm 8 (P6-P7)", max(long_tails), args.extrapolation_threshold,
              direction="<=", kind="prediction", tight_rtol=max(long_tails_tight),
              predictions=["000-P6"]),
        tolerance_agreement(f"k = {k_long} tail errors agree between rtol and rtol/100 (absolute difference <= 1e-3 "
                            "of the threshold)", "tolerance check (docs/design.md)", long_tails, long_tails_tight,
                            1e-3 * args.extrapolation_threshold, relative=False, predictions=["000-P6"]),
    ]
    same_acc = float(np.max(np.abs(flows[(k_short, "T1acc")].params - flows[(k_short, "T2acc")].params))
                     / np.max(np.abs(flows[(k_short, "T1acc")].params)))
    acc_tails = [flow_res[(k_long, n + "acc", "default")][f"tail_{n}"] for n in ("T1", "T2")]
    checks += [
        check(f"accumulating loss, k = {k_short}: the flows for the two teachers coincide (max relative parameter "
              "difference; same loss function, a solver guard)", SRC_ACC, same_acc, 1e-8, direction="<=",
              kind="sanity", predictions=["000-P16"]),
        check(f"accumulating loss, k = {k_long} > 2d̂: the balanced students trained on each teacher extrapolate, "
              f"max tail error on [{k_long}, {H}) over both teachers <= {args.extrapolation_threshold:g} "
              "(our threshold)", SRC_ACC, max(acc_tails), args.extrapolation_threshold,
              direction="<=", kind="prediction", predictions=["000-P16"]),
    ]
    results["flows"] = {f"k{k}_{n}_{t}": v for (k, n, t), v in flow_res.items()}
    results["flows"]["same_path_relative_difference"] = same_path
    return flows


def part_1b_general_pairs(args, students, checks, results):
    """Part 1b: the general construction of Lemma A.1 for further d̂."""
    H = args.horizon
    n_students = sum(int(np.shape(b.B)[0]) for b in students.values())
    results["general_pairs"] = {}
    for dh in args.general_d_hat:
        A, B = teachers.moment_matched_pair(dh)
        wa, wb = np.asarray(A.impulse_response(H)), np.asarray(B.impulse_response(H))  # one length: one compile
        agree_g = float(np.max(np.abs(wa[:2 * dh - 1] - wb[:2 * dh - 1])))
        differ_g = float(abs(wa[2 * dh - 1] - wb[2 * dh - 1]))
        worst_g, _ = mp.pair_identity((A, B), students, dh)
        results["general_pairs"][f"d_hat_{dh}"] = {"agree_max": agree_g, "differ_at_2dhat_minus_1": differ_g,
                                                   "max_relative_loss_difference": worst_g}
        checks.append(check(f"d̂={dh} pair (construction): IRs agree for j <= {2 * dh - 2} (<= 1e-14), differ at "
                            f"j = {2 * dh - 1} (>= 1e-4), equal losses for k <= {2 * dh - 1} on the {n_students} "
                            "students (relative <= 1e-10)", f"{SOURCE}, Lemma A.1", differ_g, 1e-4,
                            passed=agree_g <= 1e-14 and differ_g >= 1e-4 and worst_g <= 1e-10, kind="sanity",
                            agree_max=agree_g, max_relative_loss_difference=worst_g, predictions=["000-P8"]))
        print(f"  d̂={dh} pair: agree to {agree_g:.1e} for j <= {2 * dh - 2}, differ by {differ_g:.4g} at "
              f"j = {2 * dh - 1}; loss difference {worst_g:.1e}", flush=True)


def part_2_prop3(args, checks, results):
    """Part 2: Prop. 3's zero-loss student with a prescribed wrong tail on [k, d)."""
    H = args.horizon
    teacher = teachers.balanced(jax.random.key(args.seed), args.prop3_teacher_dim)
    k, d = args.prop3_k, args.prop3_d
    student = teachers.vandermonde_student(teacher, k, d, key=jax.random.fold_in(jax.random.key(args.seed), 7))
    scale = float(np.sum(np.asarray(teacher.impulse_response(H))[:k] ** 2))
    loss_p3 = float(gflow.PopulationLoss(teacher, k)(student)) / scale
    h, w = np.asarray(student.impulse_response(H)), np.asarray(teacher.impulse_response(H))
    tail_p3 = float(np.max(np.abs(h[k:d] - w[k:d])))
    weights = np.asarray(an.spectral_measure(student).weights)
    src_p3 = f"{SOURCE}, Prop. 3 / E.2"
    checks += [
        check(f"Prop. 3 student (d̂={args.prop3_teacher_dim}, k={k}, d={d}): relative training loss ≈ 0 (by "
              "construction)", src_p3, loss_p3, 1e-20, direction="<=", kind="sanity", predictions=["000-P9"]),
        check("Prop. 3 student: the impulse response is off by the prescribed 1 on j = k..d-1 (max error >= 0.99; "
              "by construction)", src_p3, tail_p3, 0.99, direction=">=", kind="sanity", predictions=["000-P9"]),
    ]
    results["prop3"] = {"teacher_dim": args.prop3_teacher_dim, "k": k, "d": d, "relative_loss": loss_p3,
                        "tail_error_k_to_d": tail_p3, "weights": weights, "negative_weights": int(np.sum(weights < 0))}
    print(f"  Prop. 3: relative loss {loss_p3:.1e}, tail error on [k, d) {tail_p3:.3f}, "
          f"{int(np.sum(weights < 0))} negative weights", flush=True)
    return teacher, student


def part_2_lemma7(args, teacher, checks, results):
    """Part 2: Lemma 7: for k > 2d̂ every zero-loss student whose IR deviates somewhere must be unbalanced (a
    g_i < 0)."""
    H = args.horizon
    k7 = 2 * args.prop3_teacher_dim + 1
    d7 = k7 + 4
    rng = np.random.default_rng(args.seed)
    min_weights = []
    for _ in range(args.lemma7_tails):
        tail = np.asarray(teacher.impulse_response(H))[k7:d7] + rng.normal(size=d7 - k7)
        s7 = teachers.vandermonde_student(teacher, k7, d7, tail_values=tail)
        min_weights.append(float(np.min(np.asarray(an.spectral_measure(s7).weights))))
    worst_min = float(max(min_weights))
    checks.append(check(f"k = {k7} > 2d̂: every zero-loss Vandermonde student with a wrong tail has a negative "
                        f"spectral weight ({args.lemma7_tails} random tails; largest min_i g_i; Lemma 7 on "
                        "constructed students, a moment identity)",
                        f"{SOURCE}, Lemma 7 (balanced + L = 0 + k > 2d̂ ⇒ extrapolation)", worst_min, 0.0,
                        direction="<", kind="sanity", predictions=["000-P6", "000-P9"]))
    results["prop3"].update(lemma7_k=k7, lemma7_d=d7, lemma7_min_weights=min_weights)
    print(f"  Lemma 7 at k={k7}: largest min weight {worst_min:.3g}", flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
