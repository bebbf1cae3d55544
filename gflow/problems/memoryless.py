"""Seed 001's problem (Cohen-Karlik, Ben David, Cohen, Globerson): a linear RNN student trained on a memoryless
teacher h_0 = w*, h_j = 0 (j ≥ 1). Its starts (symmetric class, Fig. 4's, residual), the Cayley–Hamilton bound of
Thm 4.1's proof, the cyclic shift of Prop. 5.1, the balance gap that the conserved Q predicts, the MIMO teacher of
App. C, Lemma 3.1's Monte-Carlo rates, the batched flows and per-run measurements that studies/memoryless.py
decides its checks on, and its figures (:func:`figures`).

Functions that take ``args`` read the study's options from it (``d``, ``k``, ``horizon``, ``seeds``,
``fig4_eps``)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import gflow
from gflow import analysis as an, initializers, teachers


def cayley_hamilton_bound(model, k, H):
    """Bound b_j >= |h_j| for k <= j < H from the in-window values alone (Theorem 4.1's proof, k > d):
    h_j = −Σ_i a_i h_{j−i} with the characteristic polynomial λ^d + a_1 λ^{d−1} + … + a_d, so
    b_j = Σ_i |a_i| b_{j−i}, started from b_j = |h_j| for j < k."""
    a = np.abs(np.poly(np.asarray(model.transition())))[1:]
    h = np.abs(np.asarray(model.impulse_response(H)))
    b = np.concatenate([h[:k], np.zeros(H - k)])
    for j in range(k, H):
        b[j] = np.dot(a, b[j - len(a):j][::-1])
    return h[k:], b[k:]


def symmetric_start(seed, d, sigma, *, structure="symmetric"):
    """A_0 = s (G + Gᵀ)/√2, B_0 = C_0ᵀ = s N(0, I), s = σ/√d (the balanced initializer); on the symmetric class."""
    m = initializers.balanced(jax.random.key(seed), d, scale=sigma / np.sqrt(d))
    if structure == "symmetric":
        return m
    return gflow.LinearRNN(np.asarray(m.transition()), m.B, m.C)


def fig4_start(reading, eps, seed, d):
    """B_0, C_0 ~ ε N(0, I) independent; A_0 = I + ε G ("identity") or ε G ("iid"), G ~ N(0, 1/d) entries."""
    kA, kB, kC = jax.random.split(jax.random.key(100 + seed), 3)
    G = np.asarray(jax.random.normal(kA, (d, d))) / np.sqrt(d)
    A = eps * G + (np.eye(d) if reading == "identity" else 0.0)
    return gflow.LinearRNN(A, eps * jax.random.normal(kB, (d,)), eps * jax.random.normal(kC, (d,)))


def predicted_balance_gap(h0, trace_q, K):
    """‖B − sign(h_0) Cᵀ‖ implied by Q (SISO): with b = B, c = Cᵀ, ‖bbᵀ − ccᵀ‖_F² = ‖b‖⁴ + ‖c‖⁴ − 2 h_0² = K²
    (K = ‖Q_0 − (AAᵀ − AᵀA)‖_F) and ‖b‖² − ‖c‖² = tr Q_0, so ‖b‖² + ‖c‖² = √(2K² + 4h_0² − (tr Q_0)²) and
    ‖b ∓ c‖² = ‖b‖² + ‖c‖² − 2|h_0|."""
    s = np.sqrt(np.maximum(2 * K**2 + 4 * h0**2 - trace_q**2, 0.0))
    return np.sqrt(np.maximum(s - 2 * np.abs(h0), 0.0))


def relative_imbalance(model):
    """‖B − Cᵀ‖ / min(‖B‖, ‖C‖): "‖B − Cᵀ‖ small relative to ‖B‖, ‖C‖"; √2 for orthogonal B, Cᵀ
    of equal norm, about √2 for independent Gaussian B_0, C_0 in high dimension, 0 on the balanced class."""
    B, C = np.asarray(model.B), np.asarray(model.C)
    return float(np.linalg.norm(B - C) / min(np.linalg.norm(B), np.linalg.norm(C)))


def norms(model):
    """‖A − Aᵀ‖, ‖B − Cᵀ‖, ‖A‖, ‖B‖ and h_0 = C B of a model (a diagnostic saved along the general runs)."""
    A, B, C = model.transition(), model.B, model.C
    return jnp.stack([jnp.linalg.norm(A - A.T), jnp.linalg.norm(B - C), jnp.linalg.norm(A), jnp.linalg.norm(B),
                      C @ B])


GENERAL_DIAGNOSTICS = {"Q": an.balance_matrix, "Q_scale": an.balance_matrix_scale,
                       "symmetry_defect": an.symmetry_defect, "balance_defect": an.balance_defect, "norms": norms}


SYMMETRIC_DIAGNOSTICS = {"readout_residual": an.readout_slackness_residual, "residual": an.slackness_residual,
                         "balance_defect": an.balance_defect, "spectral_radius": an.spectral_radius}


def batch(jobs, t1, rtol, diagnostics, *, stop_loss=None):
    """[(name, loss, model0)] → {name: Trajectory}: one batched solve (losses padded to the largest k)."""
    k_max = max(loss.n_lags for _, loss, _ in jobs)
    trajs = gflow.solve_flows([loss.padded_to(k_max) for _, loss, _ in jobs], [m for _, _, m in jobs], t1,
                              rtol=rtol, save_at=160, diagnostics=diagnostics, stop_loss=stop_loss,
                              config={"study": "memoryless"})
    print(f"    {len(jobs)} flows (rtol {rtol:g}) in {trajs.wall_time_s:.1f} s, at most {int(np.max(trajs.steps))} steps",
          flush=True)
    out = {}
    for (name, _, _), traj in zip(jobs, trajs):
        if traj.status not in ("completed", "stopped_at_loss"):
            raise RuntimeError(f"flow {name} did not complete: {traj.status} ({traj.message})")
        out[name] = traj
    return out


def symmetric_row(args, name, traj, tight):
    """What part B measures on the symmetric-class run ``name`` (``tight``: its final model at rtol/100)."""
    k, H, m = args.k, args.horizon, traj.final
    kk = int(name.split("_")[0][1:])
    modes = an.slackness_modes(m)
    L = traj.loss
    ratio = traj.diagnostics["readout_residual"] / np.maximum(an.slackness_bound(L), 1e-300)
    # the late phase, where the fit of log residual against log L is read: points with L = 0 exactly (the engine
    # resolves L to its floor since the descent guard) or a zero residual have no logarithm and are left out
    late = (L <= 1e-4 * L[0]) & (L > 0) & (traj.diagnostics["readout_residual"] > 0)
    rho = float(an.spectral_radius(m))
    h = np.abs(np.asarray(m.impulse_response(H)))
    j = np.arange(2, H)
    ir_ratio = (float(np.max(h[2:] / np.maximum(an.impulse_response_bound(L[-1], rho, j), 1e-300)))
                if kk == k else None)  # the bound needs k >= 3
    loaded = np.abs(np.asarray(modes.readout_projection)) ** 2 > 1e-3 * float(np.sum(np.asarray(m.C) ** 2))
    lam_loaded = np.asarray(modes.eigenvalues)[loaded]
    r = {
        "k": kk, "final_loss": float(L[-1]), "readout_residual": float(traj.diagnostics["readout_residual"][-1]),
        "readout_residual_tight": float(an.readout_slackness_residual(tight)),
        "readout_residual_max": float(np.max(traj.diagnostics["readout_residual"])),
        "residual": float(traj.diagnostics["residual"][-1]), "bound": float(an.slackness_bound(L[-1])),
        "max_ratio_to_bound": float(np.max(ratio)),
        "slope_residual_vs_loss": (an.fit_power_law(L[late], traj.diagnostics["readout_residual"][late])
                                   if late.sum() >= 2 else float("nan")),
        "A_norm": float(np.linalg.norm(np.asarray(m.transition()))), "spectral_radius": rho,
        "tail": float(np.max(h[kk:])), "ir_bound_ratio": ir_ratio,
        "max_balance_defect": float(np.max(traj.diagnostics["balance_defect"])),
        "mixed_sign_loaded": bool(lam_loaded.size and lam_loaded.min() < 0 < lam_loaded.max()),
    }
    print(f"  {name}: L={r['final_loss']:.1e}, max|λc̃|={r['readout_residual']:.1e} (bound L^1/4 "
          f"{r['bound']:.1e}), ‖A‖={r['A_norm']:.2f}, ρ={rho:.2f}, tail {r['tail']:.1e}", flush=True)
    return r


def invariance_jobs(args, teacher):
    """Part B's general-parameterization runs from the symmetric class (σ = 0.3 per seed, σ = 1, and σ = 1 with a
    1e-12 skew seeded into A): [(name, loss, model0)]."""
    d = args.d
    loss = gflow.PopulationLoss(teacher, args.k)
    jobs = [(f"inv_sigma0.3_s{s}", loss, symmetric_start(s, d, 0.3, structure="general")) for s in range(args.seeds)]
    base = symmetric_start(0, d, 1.0, structure="general")
    jobs.append(("inv_sigma1_s0", loss, base))
    skew = 1e-12 * (np.triu(np.ones((d, d)), 1) - np.tril(np.ones((d, d)), -1))
    jobs.append(("inv_sigma1_s0_seeded1e-12", loss, gflow.LinearRNN(np.asarray(base.A) + skew, base.B, base.C)))
    return jobs


def residual_jobs(args, teacher):
    """Part E's runs from the residual initialization A_0 = I, B_0 = C_0ᵀ, one per seed: [(name, loss, model0)]."""
    loss = gflow.PopulationLoss(teacher, args.k)
    return [(f"residual_s{s}", loss, initializers.residual(jax.random.key(s), args.d, scale=0.3, structure="general"))
            for s in range(args.seeds)]


def fig4_jobs(args, teacher):
    """Part F's runs from Fig. 4's starts (:func:`fig4_start`), both readings, every ε and seed: [(name, loss,
    model0)]."""
    loss = gflow.PopulationLoss(teacher, args.k)
    return [(f"fig4_{reading}_eps{eps:g}_s{s}", loss, fig4_start(reading, eps, s, args.d))
            for reading in ("identity", "iid") for eps in args.fig4_eps for s in range(args.seeds)]


def fig4_exponents(iid_rows, eps_list, seeds):
    """Per seed s, the exponent p of ‖B − Cᵀ‖/‖B‖ ∝ ε^p at the end of the runs "fig4_iid_eps{ε}_s{s}" (one value per
    seed, normalized per seed by ‖B‖, for :func:`gflow.study.over_seeds`)."""
    return [an.fit_power_law(eps_list, [iid_rows[f"fig4_iid_eps{e:g}_s{s}"]["BC_gap"]
                                        / iid_rows[f"fig4_iid_eps{e:g}_s{s}"]["B_norm"] for e in eps_list])
            for s in range(seeds)]


def monte_carlo_rates(teacher, student, k, ns, seeds, draws):
    """Lemma 3.1 by Monte Carlo: ``seeds`` independent experiments, each drawing ``draws`` Gaussian datasets of
    every size N in ``ns`` (experiment s owns draws s·draws … (s + 1)·draws − 1, so its samples are its own);
    returns rms[i, s] = rms over experiment s's draws of L_N − L at N = ns[i], each experiment's fitted exponent p
    of rms ∝ N^p, and the exponent of the rms pooled over all draws."""
    population = float(gflow.PopulationLoss(teacher, k)(student))
    keys = [[jax.random.fold_in(jax.random.key(7000 + i), r) for r in range(seeds * draws)] for i in range(len(ns))]
    err = np.array([[float(gflow.objectives.EmpiricalLoss.from_teacher(key, teacher, int(n), k)(student)) - population
                     for key in keys[i]] for i, n in enumerate(ns)])
    rms = np.sqrt(np.mean(err.reshape(len(ns), seeds, draws) ** 2, axis=2))
    slopes = [an.fit_power_law(ns, rms[:, s]) for s in range(seeds)]
    return rms, slopes, an.fit_power_law(ns, np.sqrt(np.mean(err**2, axis=1)))


def mimo_teacher(n, seed):
    """W* = V diag(λ) Vᵀ, symmetric PSD with eigenvalues λ evenly spaced in [0.5, 2] (seed 001 App. C; our choice)."""
    V, _ = np.linalg.qr(np.asarray(jax.random.normal(jax.random.key(seed), (n, n))))
    return teachers.memoryless(V @ np.diag(np.linspace(2.0, 0.5, n)) @ V.T)


def cyclic_shift(d, w):
    """Prop. 5.1's zero-loss point for k <= d: A the cyclic shift, B = e_1, C = w* e_1ᵀ."""
    return gflow.LinearRNN(np.roll(np.eye(d), 1, axis=0), np.eye(d)[0], w * np.eye(d)[0])


def lemma63_family(args, teacher):
    """Lemma 6.3's family A = diag(0, λ), C = (√w*, δ), B = Cᵀ against its closed form L_q = δ⁴(λ^{2q} − 1)/(λ² − 1).

    Args:
        args: the study's options (``lemma63_lambda``, ``w``, ``k``).
        teacher: the memoryless teacher (for the library loss).

    Returns:
        ``(model, closed, q, deltas, curves, worst, targets, satisfied, slope)``: the model and the closed form as
        functions of δ (and q), the curves L_q (q = k … 60) at δ ∈ {1e-1, 1e-2, 1e-3}, the worst relative error of
        the library loss and the curves, the target ε, whether each has a member with L_k < ε and L_q > 1, and the
        fitted growth rate of ln L_q.
    """
    lam, w, k = args.lemma63_lambda, args.w, args.k

    def model(delta):
        c = np.array([np.sqrt(w), delta])
        return gflow.LinearRNN(np.diag([0.0, lam]), c, c, structure="symmetric")

    def closed(delta, q):
        return delta**4 * (lam ** (2 * q) - 1) / (lam**2 - 1)

    qs = np.arange(k, 61)
    deltas = [1e-1, 1e-2, 1e-3]
    curves = {}
    worst = 0.0
    for delta in deltas:
        m = model(delta)
        h = np.asarray(m.impulse_response(qs[-1]))
        lq = np.cumsum((h - np.r_[w, np.zeros(len(h) - 1)]) ** 2)[qs - 1]
        curves[delta] = lq
        worst = max(worst, float(np.max(np.abs(lq - closed(delta, qs)) / closed(delta, qs))))
    lib = float(gflow.PopulationLoss(teacher, k)(model(deltas[0])))
    worst = max(worst, abs(lib - closed(deltas[0], k)) / closed(deltas[0], k))
    targets = [1e-2, 1e-6, 1e-10]
    satisfied = []
    for eps in targets:  # δ(ε) with L_k = ε/2, then the first q with L_q > 1
        delta = (0.5 * eps * (lam**2 - 1) / (lam ** (2 * k) - 1)) ** 0.25
        q_star = int(np.ceil(np.log(1 + (lam**2 - 1) / delta**4) / (2 * np.log(lam))))
        satisfied.append(bool(closed(delta, k) < eps and closed(delta, q_star) > 1.0))
    slope = an.fit_exponential_rate(qs, curves[deltas[0]])
    return model, closed, qs, deltas, curves, worst, targets, satisfied, slope


def remark62_mimo_runs(args, teacher):
    """Remark 6.2 (w* < 0 with B_0 = −C_0ᵀ, the part-B starts mirrored) and App. C (a MIMO teacher W* symmetric PSD,
    :func:`mimo_teacher`): symmetric-class flows at the first two σ of ``args.sigmas``.

    Args:
        args: the study's options.
        teacher: the memoryless teacher (w* > 0).

    Returns:
        ``(sigmas, rows, W*)``: the σ used, one row per run (final loss, tail, readout residual and its drop, ‖A‖,
        class defect of the w* < 0 runs), and the MIMO teacher.
    """
    d, k, H, w = args.d, args.k, args.horizon, args.w
    sigmas = args.sigmas[:2]
    negative = teachers.memoryless(-w)
    neg_jobs = []
    for sig in sigmas:
        for s_ in range(args.seeds):
            m = symmetric_start(s_, d, sig, structure="general")
            neg_jobs.append((f"neg_sigma{sig:g}_s{s_}", gflow.PopulationLoss(negative, k),
                             gflow.LinearRNN(np.asarray(m.transition()), -np.asarray(m.C), m.C)))
    w_mimo = mimo_teacher(args.mimo_n, 11)
    mimo_jobs = [(f"mimo_sigma{sig:g}_s{s_}", gflow.PopulationLoss(w_mimo, k),
                  initializers.balanced(jax.random.key(300 + s_), d, scale=sig / np.sqrt(d), n=args.mimo_n))
                 for sig in sigmas for s_ in range(args.seeds)]
    print(f"G. Remark 6.2 / App. C: {len(neg_jobs)} flows with w* = {-w:g}, B_0 = −C_0ᵀ and {len(mimo_jobs)} MIMO flows "
          f"(n = {args.mimo_n}) …", flush=True)
    diag = {"readout_residual": lambda m: an.readout_slackness_residual(m, symmetrize=True),
            "symmetry_defect": an.symmetry_defect, "anti_balance": lambda m: jnp.linalg.norm(m.B + m.C.T)
            / jnp.maximum(jnp.linalg.norm(m.B), 1e-300)}
    runs = {**batch(neg_jobs, args.t1, args.rtol, diag), **batch(mimo_jobs, args.t1, args.rtol,
                                                               {"readout_residual": an.readout_slackness_residual})}
    rows = {}
    for name, traj in runs.items():
        m, r = traj.final, traj.diagnostics["readout_residual"]
        h = np.asarray(m.impulse_response(H))
        tail = float(np.max(np.abs(h[1:]))) if h.ndim == 1 else float(np.max(np.linalg.norm(h[1:], axis=(1, 2))))
        rows[name] = {"final_loss": float(traj.loss[-1]), "tail_j_ge_1": tail, "readout_residual": float(r[-1]),
                      "residual_drop": float(r[-1] / np.max(r)), "A_norm": float(np.linalg.norm(np.asarray(m.transition())))}
        if name.startswith("neg_"):
            rows[name]["max_class_defect"] = float(max(np.max(traj.diagnostics["symmetry_defect"]),
                                                       np.max(traj.diagnostics["anti_balance"])))
        print(f"  {name}: L={rows[name]['final_loss']:.1e}, max|λ|‖Cu‖={rows[name]['readout_residual']:.1e}, "
              f"tail (j >= 1) {tail:.1e}, ‖A‖={rows[name]['A_norm']:.2f}", flush=True)
    return sigmas, rows, w_mimo


def theorem_4_1_runs(args, teacher, shift):
    """Part A's flows (Thm 4.1): Xavier starts of dimension ``args.d41`` at k around d (fewer under ``--quick``), and
    one run at k = d + 1 from the cyclic shift, each to L = 1e-24.

    Args:
        args: the study's options.
        teacher: the memoryless teacher.
        shift: the cyclic shift (:func:`cyclic_shift`).

    Returns:
        ``(trajectories, rows)``: by run name, and per run its k, final loss, tail error (bounded by
        :func:`cayley_hamilton_bound` when k > d), spectral radius and end time.
    """
    d, H = args.d41, args.horizon
    ks = [d, d + 1] if args.quick else [d - 2, d, d + 1, d + 3]
    jobs = [(f"xavier_k{k}_s{s}", gflow.PopulationLoss(teacher, k), initializers.xavier(jax.random.key(s), d))
            for k in ks for s in range(args.seeds)]
    jobs.append(("shift_k_d+1", gflow.PopulationLoss(teacher, d + 1), shift))
    print(f"A. Theorem 4.1 / Prop. 5.1: {len(jobs)} flows (general A, d={d}, Xavier starts, k ∈ {ks}) …", flush=True)
    trajs = batch(jobs, args.t1, args.rtol, None, stop_loss=1e-24)
    rows = {}
    for (name, loss, _), (_, traj) in zip(jobs, trajs.items()):
        m = traj.final
        k = loss.training_length
        tails, bound = cayley_hamilton_bound(m, k, H) if k > d else (np.abs(np.asarray(m.impulse_response(H)))[k:],
                                                                     None)
        rows[name] = {"k": k, "final_loss": float(traj.loss[-1]), "tail": float(np.max(tails)),
                      "spectral_radius": float(an.spectral_radius(m)), "t_end": float(traj.ts[-1]),
                      "ch_ratio": None if bound is None else float(np.max(tails / np.maximum(bound, 1e-300)))}
        print(f"  {name}: L={rows[name]['final_loss']:.1e} at t={rows[name]['t_end']:.1e}, tail {rows[name]['tail']:.2e}, "
              f"ρ(A)={rows[name]['spectral_radius']:.3f}", flush=True)
    return trajs, rows


def fig4_rows(runs):
    """What part F reads off each Fig. 4 run.

    Args:
        runs: ``{"default": {name: trajectory}, "tight": {…}}`` (rtol and rtol/100).

    Returns:
        By run name: ‖A − Aᵀ‖, ‖B − Cᵀ‖ and the gap Q predicts (:func:`predicted_balance_gap`), ‖A‖, ‖B‖, the
        relative imbalance at the start and end, and the drift of Q at both tolerances.
    """
    runs_d = runs["default"]
    fig4 = {n: t for n, t in runs_d.items() if n.startswith("fig4_")}
    rows = {}
    for n, t in fig4.items():
        Q = t.diagnostics["Q"]
        nA = t.diagnostics["norms"]
        m = t.final
        A = np.asarray(m.transition())
        K = float(np.linalg.norm(Q[0] - (A @ A.T - A.T @ A)))
        h0 = float(nA[-1, 4])
        pred = float(predicted_balance_gap(h0, float(np.trace(Q[0])), K))
        rows[n] = {"A_asym": float(nA[-1, 0]), "BC_gap": float(nA[-1, 1]), "A_norm": float(nA[-1, 2]),
                   "B_norm": float(nA[-1, 3]), "A_asym_ratio_0": float(nA[0, 0] / nA[0, 2]),
                   "A_asym_ratio_end": float(nA[-1, 0] / nA[-1, 2]), "BC_gap_predicted_from_Q": pred,
                   "BC_imbalance_0": relative_imbalance(t.model_at(0)), "BC_imbalance_end": relative_imbalance(m),
                   "K": K, "final_loss": float(t.loss[-1]),
                   "Q_relative_drift": an.relative_drift(Q, t.diagnostics["Q_scale"]),
                   "Q_relative_drift_tight": an.relative_drift(runs["tight"][n].diagnostics["Q"],
                                                               runs["tight"][n].diagnostics["Q_scale"])}
    return rows


def figures(args, part_a_rows, sym_runs, sym_rows, gen_runs, qs, curves) -> dict:
    """The study's three figures (:func:`figure_theorem_4_1`, :func:`figure_slackness`,
    :func:`figure_lemma63_residual_fig4`).

    Args:
        args: the study's options.
        part_a_rows: part A's rows by run name (``k``, ``tail``).
        sym_runs: the symmetric-start trajectories by name (``k{k}_sigma{σ}_s{seed}``).
        sym_rows: their summary rows (``final_loss``).
        gen_runs: the general-start trajectories by name (``residual_s0``, ``fig4_{reading}_eps{ε}_s0``).
        qs: the test lengths q of Lemma 6.3's curves.
        curves: L_q of Lemma 6.3's family by δ.

    Returns:
        {file name: matplotlib figure}.
    """
    return {"theorem_4_1.png": figure_theorem_4_1(args, part_a_rows),
            "complementary_slackness.png": figure_slackness(args, sym_runs, sym_rows),
            "lemma63_residual_fig4.png": figure_lemma63_residual_fig4(args, gen_runs, qs, curves)}


def figure_theorem_4_1(args, part_a_rows):
    """Draw theorem_4_1.png (seed 001 Theorem 4.1, Prop. 5.1): the tail error max_{k<=j<H} |h_j| of Xavier starts
    trained to L ≈ 0 against k (k > d forces extrapolation), and the impulse response of the cyclic shift, which has
    L_k = 0 at k = d but h_{md} = w*.

    Args:
        args: the study's options (``horizon``, ``d41``, ``w``, ``extrapolation_threshold``).
        part_a_rows: part A's rows by run name (``k``, ``tail``).

    Returns:
        The matplotlib figure.
    """
    from gflow.plot import figure_grid, label_axes

    H, d = args.horizon, args.d41
    fig, (ax, ax_shift) = figure_grid(1, 2)
    labelled = set()
    for name, r in part_a_rows.items():
        if name.startswith("xavier"):
            above = r["k"] > d
            label = None if above in labelled else ("Xavier start, k > d" if above else "Xavier start, k <= d")
            labelled.add(above)
            ax.semilogy(r["k"], max(r["tail"], 1e-17), "o", color="C0" if above else "C3", alpha=0.7, label=label)
    r = part_a_rows["shift_k_d+1"]
    ax.semilogy(r["k"], max(r["tail"], 1e-17), "k*", ms=12, label="from the cyclic shift")
    ax.axvline(d + 0.5, color="gray", ls="--", label=f"k = d = {d}")
    ax.axhline(args.extrapolation_threshold, color="gray", ls=":", label="threshold")
    label_axes(ax, xlabel="training length k", ylabel=f"tail error max_(k<=j<{H}) |h_j|",
               title="Thm 4.1: k > d forces extrapolation (Xavier starts, L ≈ 0)")
    ax_shift.stem(np.arange(4 * d), np.asarray(cyclic_shift(d, args.w).impulse_response(H))[:4 * d], basefmt=" ")
    ax_shift.axvspan(-0.5, d - 0.5, color="gray", alpha=0.15, label=f"training window k = d = {d}")
    label_axes(ax_shift, xlabel="lag j", ylabel="h_j", title="Prop. 5.1: the cyclic shift has L_k = 0 but h_(md) = w*")
    return fig


def figure_slackness(args, sym_runs, sym_rows):
    """Draw complementary_slackness.png (seed 001 Fig. 3, Theorem 6.1): |λ_i| and |c̃_i| per eigen-mode at the end of
    symmetric flows, the residual max_i |λ_i c̃_i| against the loss with its bound L^{1/4}, and impulse responses at
    k = 2 (mixed-sign eigenvalues cancel, no extrapolation) against k >= 3.

    Args:
        args: the study's options (``horizon``, ``sigmas``, ``k``, ``d``).
        sym_runs: the symmetric-start trajectories by name (``k{k}_sigma{σ}_s{seed}``).
        sym_rows: their summary rows (``final_loss``).

    Returns:
        The matplotlib figure.
    """
    from gflow.plot import figure_grid, label_axes

    H, n = args.horizon, max(2, len(args.sigmas))
    fig, axes = figure_grid(2, n, panel=(5.5, 4.5))
    for ax, sig in zip(axes[0], args.sigmas):
        modes = an.slackness_modes(sym_runs[f"k{args.k}_sigma{sig:g}_s0"].final)
        idx = np.arange(args.d)
        ax.bar(idx - 0.2, np.maximum(np.abs(np.asarray(modes.eigenvalues)), 1e-18), width=0.4, label="|λ_i|")
        ax.bar(idx + 0.2, np.maximum(np.abs(np.asarray(modes.readout_projection)), 1e-18), width=0.4,
               label="|c̃_i| = |(C U)_i|")
        label_axes(ax, yscale="log", xlabel="eigen-mode i (ascending λ)",
                   title=f"seed 001 Fig. 3 analog: k={args.k}, σ={sig:g}, "
                         f"L={sym_rows[f'k{args.k}_sigma{sig:g}_s0']['final_loss']:.0e}")
    ax = axes[1, 0]
    for name, t in sym_runs.items():
        if name.startswith(f"k{args.k}_"):
            ax.loglog(t.loss, t.diagnostics["readout_residual"], lw=1, alpha=0.8, label=name)
    Ls = np.geomspace(1e-18, 10, 50)
    ax.loglog(Ls, an.slackness_bound(Ls), "k--", label="bound L^(1/4)")
    ax.invert_xaxis()
    label_axes(ax, xlabel="loss L (decreasing →)", ylabel="max_i |λ_i c̃_i|", legend=6,
               title="Complementary-slackness residual vs bound")
    ax = axes[1, 1]
    for name, t in sym_runs.items():
        if name.endswith("_s0") and ("sigma0.3" in name or name.startswith("k2_")):
            ax.semilogy(np.arange(H), np.maximum(np.abs(np.asarray(t.final.impulse_response(H))), 1e-20), label=name)
    label_axes(ax, xlabel="lag j", ylabel="|h_j|", legend=7,
               title="k = 2 fails (mixed-sign eigenvalues cancel), k >= 3 extrapolates")
    for extra in axes[1, 2:]:
        extra.axis("off")
    return fig


def figure_lemma63_residual_fig4(args, gen_runs, qs, curves):
    """Draw lemma63_residual_fig4.png: L_q of Lemma 6.3's family A = diag(0, λ), C = (√w*, δ) against the test length
    q (seed 001 Lemma 6.3), the eigenvalue paths of A from the residual init A_0 = I, and seed 001 Fig. 4's weight
    dynamics (‖A − Aᵀ‖, ‖B − Cᵀ‖, ‖A‖ and the drift of Q) from A_0 = I + εG and εG.

    Args:
        args: the study's options (``k``, ``lemma63_lambda``, ``fig4_eps``).
        gen_runs: the general-start trajectories by name (``residual_s0``, ``fig4_{reading}_eps{ε}_s0``).
        qs: the test lengths q of Lemma 6.3's curves.
        curves: L_q by δ.

    Returns:
        The matplotlib figure.
    """
    from gflow.plot import figure_grid, label_axes, plot_diagnostic, plot_loss

    fig, axes = figure_grid(2, 2)
    ax = axes[0, 0]
    for delta, lq in curves.items():
        ax.semilogy(qs, lq, label=f"δ = {delta:g}")
    ax.axvline(args.k, color="gray", ls=":", label=f"training length k = {args.k}")
    label_axes(ax, xlabel="test length q", ylabel="L_q",
               title=f"Lemma 6.3: A = diag(0, {args.lemma63_lambda:g}), C = (√w*, δ)")
    ax = axes[0, 1]
    t = gen_runs["residual_s0"]
    ax.semilogx(t.ts[1:], np.real(an.eigenvalue_paths(t)[1:]), color="C0", lw=1)
    label_axes(ax, xlabel="t", ylabel="eigenvalues of A", legend=None,
               title="Residual init A_0 = I: one eigenvalue 1 → 0, the rest stay 1")
    label_axes(plot_loss(t, ax.twinx(), color="k"), xlabel="", ylabel="loss (right)", title="", legend=None)
    eps = min(args.fig4_eps)
    for ax, reading in zip(axes[1], ("identity", "iid")):
        t = gen_runs[f"fig4_{reading}_eps{eps:g}_s0"]
        for entry, label in enumerate(("‖A − Aᵀ‖", "‖B − Cᵀ‖", "‖A‖")):  # the first three of norms()
            plot_diagnostic(t, "norms", ax, log_y=True, entry=entry, label=label, color=f"C{entry}")
        ax.loglog(t.ts[1:], np.maximum(an.drift_series(t.diagnostics["Q"])[1:], 1e-18), "C3:", label="‖Q(t) − Q(0)‖")
        label_axes(ax, xlabel="t", ylabel="",
                   title=f"seed 001 Fig. 4 analog, A_0 = {'I + εG' if reading == 'identity' else 'εG'}, ε = {eps:g}")
    return fig
