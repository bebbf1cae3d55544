"""Seed 000's Prop. 9 setting (near-zero initialization leads to balancedness, Lemmas E.12–E.14): general students
at scale ε, batched gradient flows on a balanced teacher's population loss read at τ_ε, the sweep over ε and seeds at
rtol and rtol/100, the sign-swapped (w0 < 0) sweep, the per-seed fits that studies/balance_limit.py decides its
checks on, and its figure (:func:`figure`).

Functions that take ``args`` read the study's options from it (``d``, ``k``, ``eps``, ``seeds``, ``sign_seeds``,
``horizon``, ``n_save``, ``solver``, ``init_convention``, ``convention``, ``rtol``)."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import gflow
from gflow import analysis as an, initializers, teachers

DIAGNOSTICS = {
    "rho_bal": an.balance_ratio,
    "imbalance_norm": an.imbalance_norm,
    "balance_norm": an.balance_norm,
    "A_over_W": an.transition_to_balance_ratio,
    "Q": an.balance_matrix,
    "Q_scale": an.balance_matrix_scale,
}


def run_seeds(loss, models0, tau, args, rtol):
    """Every seed's flow for one ε in one batched call (``models0`` stacked): [(trajectory, measurements)]."""
    t1 = args.horizon * tau
    ts = np.union1d(np.linspace(0.0, t1, args.n_save), [tau])
    n = gflow.stacking.batch_length(models0)
    batch = gflow.solve_flows(gflow.stacking.repeat(loss, n), models0, t1, rtol=rtol, save_at=ts,
                              diagnostics=DIAGNOSTICS, solver=args.solver, config={"study": "balance_limit"})
    return [(traj, measure(traj, tau, n)) for traj in batch]


def measure(traj, tau, batch_size: int) -> dict:
    """What one flow gives at τ_ε: ρ_bal(τ_ε), min_t ρ_bal and when, ‖A‖/‖B + Cᵀ‖ at τ_ε, the early-phase rates of
    ‖B ∓ Cᵀ‖ on [0, τ_ε], the drift of Q and of ‖B‖² − ‖C‖², steps and the wall time per flow of its batch."""
    if traj.status != "completed":
        raise RuntimeError(f"flow did not complete: {traj.status} ({traj.message})")
    i_tau = int(np.argmin(np.abs(traj.ts - tau)))
    rho = traj.diagnostics["rho_bal"]
    return {
        "rho_tau": float(rho[i_tau]),
        "rho_min": float(np.min(rho)),
        "t_min_over_tau": float(traj.ts[int(np.argmin(rho))] / tau),
        "A_over_W_tau": float(traj.diagnostics["A_over_W"][i_tau]),
        "rate_imbalance": an.fit_exponential_rate(traj.ts, traj.diagnostics["imbalance_norm"], t_max=tau),
        "rate_balance": an.fit_exponential_rate(traj.ts, traj.diagnostics["balance_norm"], t_max=tau),
        "Q_relative_drift": an.relative_drift(traj.diagnostics["Q"], traj.diagnostics["Q_scale"]),
        "norm_difference_drift": an.drift(np.trace(traj.diagnostics["Q"], axis1=1, axis2=2)),
        "steps": traj.stats["steps"],
        "wall_time_s": traj.stats["wall_time_s"] / batch_size,  # the batch's time, shared by its flows
    }


def student_start(seed: int, eps: float, args):
    """The general student at scale ε for seed ``seed``: the same starts for both signs of w0."""
    return initializers.gaussian(jax.random.key(1000 + seed), args.d, scale=eps, convention=args.init_convention)


def student_starts(seeds, eps: float, args):
    """The students of :func:`student_start` at scale ε of the given seeds, stacked (one compiled call).

    Args:
        seeds: the student seeds (a count n: seeds 0 … n − 1).
        eps: the scale ε.
        args: the study's options (``d``, ``init_convention``).

    Returns:
        The stacked students.
    """
    seeds = jnp.arange(seeds) if isinstance(seeds, int) else jnp.asarray(seeds)
    return eqx.filter_vmap(lambda s: student_start(s, eps, args))(seeds)


def negated_teacher(teacher):
    """The teacher with its output negated (Ĉ → −Ĉ): every h_j, and w0 = ĈB̂, change sign."""
    return eqx.tree_at(lambda t: t.C, teacher, -teacher.C)


def sign_swap(teacher, args) -> dict:
    """Prop. 9's sign dependence: for w0 < 0 the roles of B ± Cᵀ swap. Runs the ε sweep with the
    negated teacher at the default rtol and returns ‖B + Cᵀ‖/‖B − Cᵀ‖ at τ_{ε} (|w0| in τ_ε) and the early rates."""
    neg = negated_teacher(teacher)
    w0 = teachers.first_markov_parameter(neg)
    loss = gflow.PopulationLoss(neg, args.k, convention=args.convention)
    n_eps, n_seed = len(args.eps), args.sign_seeds
    ratio, rate_Y, rate_W = (np.full((n_eps, n_seed), np.nan) for _ in range(3))
    for i, eps in enumerate(args.eps):
        tau = an.balancing_time(eps, abs(w0), args.convention)
        for s, (traj, r) in enumerate(run_seeds(loss, student_starts(n_seed, eps, args), tau, args, args.rtol)):
            i_tau = int(np.argmin(np.abs(traj.ts - tau)))
            ratio[i, s] = 1.0 / traj.diagnostics["rho_bal"][i_tau]
            rate_Y[i, s], rate_W[i, s] = r["rate_imbalance"], r["rate_balance"]
        print(f"  w0 < 0, ε={eps:.0e}: median ‖B+Cᵀ‖/‖B−Cᵀ‖ at τ_ε = {np.median(ratio[i]):.3e}", flush=True)
    slope = np.array([an.fit_power_law(np.asarray(args.eps), ratio[:, s]) for s in range(n_seed)])
    return {"w0": w0, "swapped_ratio_tau": ratio, "slope_swapped_ratio": slope, "rate_imbalance": rate_Y,
            "rate_balance": rate_W, "rate_targets": [an.early_phase_rate("imbalance", w0, args.convention),
                                                     an.early_phase_rate("balance", w0, args.convention)]}


def falls_as_eps_falls(values) -> np.ndarray:
    """Per seed (column), 1.0 if ``values`` (rows: ε from largest to smallest) falls strictly at every step of the
    ε grid, else 0.0: the per-seed indicator behind Prop. 9's "with probability at least 0.75"."""
    return np.all(np.diff(np.asarray(values, dtype=float), axis=0) < 0, axis=0).astype(float)


TOLERANCE_FIELDS = ("rho_tau", "rho_min")  # repeated at rtol/100 and compared


FIELDS = ["rho_tau", "rho_min", "t_min_over_tau", "A_over_W_tau", "rate_imbalance", "rate_balance",
          "Q_relative_drift", "norm_difference_drift", "steps", "wall_time_s"]


def sweep_eps(args, loss, w0, tolerances):
    """Every (ε, seed) flow of Prop. 9's sweep over ``args.seed_list`` at the default tolerance, and over its first
    ``args.tight_seeds`` at the tight one.

    Args:
        args: the study's options (``eps``, ``convention``, ``seed_list``, ``tight_seeds``).
        loss: the teacher's population loss.
        w0: the teacher's first Markov parameter (sets τ_ε).
        tolerances: ``(name, rtol)`` pairs (``gflow.study.both_tolerances``: "default" and "tight").

    Returns:
        ``(results, curves)``: {name: {field: (ε, seed) array}} of :func:`measure`'s fields (the tight one over the
        first ``args.tight_seeds`` seeds), and the trajectories {(i_ε, column): trajectory} at the default tolerance.
    """
    n_eps = len(args.eps)
    seeds = {"default": args.seed_list, "tight": args.seed_list[:args.tight_seeds]}
    res = {tol: {f: np.full((n_eps, len(seeds[tol])), np.nan) for f in FIELDS} for tol, _ in tolerances}
    curves = {}
    for i, eps in enumerate(args.eps):
        tau = an.balancing_time(eps, w0, args.convention)
        for tol_name, rtol in tolerances:
            for s, (traj, r) in enumerate(run_seeds(loss, student_starts(seeds[tol_name], eps, args), tau, args,
                                                    rtol)):
                for f in FIELDS:
                    res[tol_name][f][i, s] = r[f]
                if tol_name == "default":
                    curves[(i, s)] = traj
        for s, seed in enumerate(args.seed_list):
            tight = f" (tight {res['tight']['rho_tau'][i, s]:.3e})" if s < args.tight_seeds else ""
            print(f"  ε={eps:.0e} seed {seed}: ρ(τ_ε)={res['default']['rho_tau'][i, s]:.3e}{tight}, "
                  f"min ρ={res['default']['rho_min'][i, s]:.3e} at {res['default']['t_min_over_tau'][i, s]:.1f} τ_ε, "
                  f"{int(res['default']['steps'][i, s])} steps, {res['default']['wall_time_s'][i, s]:.2f} s",
                  flush=True)
    return res, curves


def fits(args, w0, res) -> dict:
    """Per-seed log-log slopes against ε, early-phase rate errors and the tolerance comparison."""
    eps = np.asarray(args.eps)
    d, t = res["default"], res["tight"]
    f = {"eps": eps, "d": d, "t": t}
    for name, field in (("slope_tau", "rho_tau"), ("slope_min", "rho_min"), ("slope_A", "A_over_W_tau")):
        f[name] = np.array([an.fit_power_law(eps, d[field][:, s]) for s in range(args.seeds)])
    f["falls"] = falls_as_eps_falls(d["rho_tau"])
    f["fraction"] = float(np.mean(f["falls"]))
    f["rate_target_Y"] = an.early_phase_rate("imbalance", w0, args.convention)
    f["rate_target_W"] = an.early_phase_rate("balance", w0, args.convention)
    rel_diff = {name: np.abs(d[name] - t[name]) / np.abs(t[name]) for name in TOLERANCE_FIELDS}
    f["worst_rel"] = float(max(np.max(v) for v in rel_diff.values()))
    f["floor"] = float(max(np.max(np.abs(d[name] - t[name])) for name in TOLERANCE_FIELDS))
    f["q_drift"], f["q_drift_tight"] = float(np.max(d["Q_relative_drift"])), float(np.max(t["Q_relative_drift"]))
    return f


def figure(args, eps, w0, res, curves, slope_tau, slope_min):
    """Draw balance_limit.png (seed 000 Prop. 9, Lemmas E.12 and E.14): ρ_bal over time against t/ln(1/ε) for every
    seed; ρ_bal(τ_ε) and min_t ρ_bal against ε with the bound O(ε^{1/2}); ‖B ∓ Cᵀ‖ of seed 0 at the smallest ε
    against the early-phase rates e^{∓2 w0 t}; the drift of the conserved Q at rtol and rtol/100.

    Args:
        args: the study's options (``seeds``, ``convention``, ``rtol``).
        eps: the scales ε, largest first.
        w0: the teacher's first Markov parameter.
        res: :func:`sweep_eps`'s measurements by tolerance (``"default"``, ``"tight"``).
        curves: the trajectories by (ε index, seed).
        slope_tau: the per-seed log-log slopes of ρ_bal(τ_ε) against ε.
        slope_min: the per-seed log-log slopes of min_t ρ_bal against ε.

    Returns:
        The matplotlib figure (2 × 2 panels).
    """
    import matplotlib.pyplot as plt

    from gflow.plot import figure_grid, label_axes, plot_diagnostic

    colors = plt.cm.viridis(np.linspace(0, 0.9, len(eps)))
    fig, axes = figure_grid(2, 2, panel=(6, 4.5))
    ax = axes[0, 0]
    for (i, s), traj in curves.items():
        ax.semilogy(traj.ts / np.log(1 / eps[i]), traj.diagnostics["rho_bal"], color=colors[i],
                    alpha=1.0 if s == 0 else 0.25, lw=1.5 if s == 0 else 0.8,
                    label=f"ε = {eps[i]:.0e}" if s == 0 else None)
    scale = 1.0 / (8 * w0) if args.convention == "L" else 1.0 / (4 * w0)
    ax.axvline(scale, color="k", ls="--", lw=1, label="τ_ε / ln(1/ε)")
    label_axes(ax, xlabel="t / ln(1/ε)", ylabel="ρ_bal = ‖B − Cᵀ‖ / ‖B + Cᵀ‖",
               title="Balancedness over time (all seeds; seed 0 bold)")

    ax = axes[0, 1]
    d = res["default"]
    for name, slope, marker, label in (("rho_tau", slope_tau, "o", "ρ_bal(τ_ε)"),
                                       ("rho_min", slope_min, "s", "min_t ρ_bal")):
        ax.loglog(np.repeat(eps, args.seeds), d[name].ravel(), marker, alpha=0.3, ms=4)
        ax.loglog(eps, np.median(d[name], axis=1), marker + "-", label=f"{label}: slope {np.median(slope):.2f}")
    ax.loglog(eps, np.median(d["rho_tau"], axis=1)[0] * np.sqrt(eps / eps[0]), "k--", label=r"bound $O(\varepsilon^{1/2})$")
    label_axes(ax, xlabel="initialization scale ε", ylabel="ρ_bal", title="Balancedness at τ_ε and over the run")

    ax = axes[1, 0]
    i = len(eps) - 1
    traj = curves[(i, 0)]
    tau = an.balancing_time(eps[i], w0, args.convention)
    for name, label, color in (("imbalance_norm", "‖B − Cᵀ‖", "C0"), ("balance_norm", "‖B + Cᵀ‖", "C1")):
        plot_diagnostic(traj, name, ax, log_x=False, log_y=True, label=label, color=color)
        rate = an.early_phase_rate(name.split("_")[0], w0, args.convention)
        early = traj.ts <= tau
        ax.semilogy(traj.ts[early], traj.diagnostics[name][0] * np.exp(rate * traj.ts[early]), "k:" if color == "C0"
                    else "k--", label=f"$e^{{{rate:+g} t}}$")
    ax.axvline(tau, color="gray", lw=0.8)
    label_axes(ax, xlabel=f"t (convention {args.convention})", ylabel="",
               title=f"Early phase, ε = {eps[i]:.0e}, seed 0")

    ax = axes[1, 1]
    for tol, marker, rtol in (("default", "o-", args.rtol), ("tight", "s--", args.rtol / 100)):
        ax.loglog(eps, np.max(res[tol]["Q_relative_drift"], axis=1), marker,
                  label=f"max relative Q drift, rtol {rtol:g}")
        ax.axhline(rtol, color="gray", lw=0.8, ls=":")
    label_axes(ax, xlabel="initialization scale ε", title="Conserved Q: drift against tolerance")
    return fig
