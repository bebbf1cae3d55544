"""Seed 000's moment-matched teachers (Lemma A.1 / Cor. A.2): random students of three kinds on which the two
teachers' losses must agree, the loss identity itself, the batched gradient flows from one balanced start that
studies/moment_pairs.py trains on the pair, and its figure (:func:`figure`)."""

from __future__ import annotations

import jax
import numpy as np

import gflow
from gflow import analysis as an, initializers

KINDS = ("balanced", "symmetric", "gaussian")


def random_students(key, n, d):
    """n students the loss identity must hold for, stacked by kind (balanced symmetric, unbalanced symmetric,
    general; n split as evenly as possible, at least one each), scales uniform in [0.1, 0.5]: {kind: batched
    LinearRNN}."""
    out = {}
    for i, kind in enumerate(KINDS):
        keys = jax.random.split(jax.random.fold_in(key, i), max(1, n // len(KINDS) + (i < n % len(KINDS))))
        scales = np.asarray(jax.random.uniform(jax.random.fold_in(key, 10 + i), (len(keys),), minval=0.1, maxval=0.5))
        models = [getattr(initializers, kind)(k, d, scale=float(s)) for k, s in zip(keys, scales)]
        out[kind] = jax.tree_util.tree_map(lambda *xs: jax.numpy.stack(xs), *models)
    return out


def pair_identity(pair, students, d_hat, weighting="uniform"):
    """max relative |L(T1) − L(T2)| over students for k ≤ 2d̂ − 1, and the minimum relative gap at k = 2d̂."""
    T1, T2 = pair

    @jax.jit
    def losses(batch):
        return [[jax.vmap(gflow.PopulationLoss(T, k, weighting))(batch) for T in (T1, T2)]
                for k in range(1, 2 * d_hat + 1)]

    worst, gap_next = 0.0, np.inf
    for batch in students.values():
        for k, (a, b) in enumerate(losses(batch), start=1):
            a, b = np.asarray(a), np.asarray(b)
            rel = np.abs(a - b) / np.maximum(np.maximum(np.abs(a), np.abs(b)), 1e-300)
            if k <= 2 * d_hat - 1:
                worst = max(worst, float(np.max(rel)))
            else:
                gap_next = min(gap_next, float(np.min(rel)))
    return worst, gap_next


def run_flows(jobs, args, rtol):
    """Gradient flows for [(teacher, k, weighting), ...] from one balanced start: one batched ``solve_flows`` call
    per weighting (the losses are padded to the largest k, so a single compiled solve serves each group)."""
    model0 = initializers.balanced(jax.random.key(args.seed), args.d, scale=args.eps)
    k_max = max(k for _, k, _ in jobs)
    trajs = [None] * len(jobs)
    for weighting in dict.fromkeys(w for _, _, w in jobs):
        index = [i for i, (_, _, w) in enumerate(jobs) if w == weighting]
        losses = [gflow.PopulationLoss(jobs[i][0], jobs[i][1], weighting).padded_to(k_max) for i in index]
        group = gflow.solve_flows(losses, [model0] * len(losses), args.t1, rtol=rtol, save_at=120,
                                  config={"study": "moment_pairs", "weighting": weighting})
        for i, traj in zip(index, group):
            if traj.status != "completed":
                raise RuntimeError(f"flow did not complete: {traj.status} ({traj.message})")
            trajs[i] = traj
    return trajs


def figure(args, T1, T2, flows, teacher, student, k, d):
    """Draw moment_pairs.png (seed 000 Lemma A.1, Cor. A.2, Prop. 3): the impulse responses of the d̂ = 2
    moment-matched teachers (identical for j <= 2d̂ − 2) and their spectral measures (equal moments 0..2, different
    3rd moment); the k = 3 gradient-flow students trained on either teacher, which cannot tell them apart; and the
    Prop. 3 (Vandermonde) student: zero training loss, arbitrary values on [k, d).

    Args:
        args: the study's options (``horizon``, ``d``, ``eps``).
        T1: the first teacher of the pair.
        T2: the second teacher of the pair.
        flows: the students' trajectories by (k, teacher name).
        teacher: Prop. 3's balanced teacher.
        student: Prop. 3's student.
        k: its training length.
        d: its dimension.

    Returns:
        The matplotlib figure.
    """
    from gflow.plot import figure_grid, label_axes, plot_impulse_response

    H = args.horizon  # the teachers' impulse responses at one length (one compiled scan per model shape), sliced
    w1, w2 = (np.asarray(T.impulse_response(H)) for T in (T1, T2))
    fig, axes = figure_grid(2, 2)
    ax = axes[0, 0]
    ax.plot(np.arange(14), w1[:14], "o-", label="teacher 1: Â = diag(−1/2, 1/2)")
    ax.plot(np.arange(14), w2[:14], "s--", label="teacher 2: Â = diag(−1/4, 1)")
    ax.axvspan(-0.5, 2.5, color="gray", alpha=0.15, label="j <= 2d̂ − 2: identical")
    ax.axvline(3, color="k", lw=0.8, ls=":")
    label_axes(ax, xlabel="lag j", ylabel="ŵ_j", title="Lemma A.1: the d̂ = 2 moment-matched pair")

    ax = axes[0, 1]
    for T, fmt, name in ((T1, ("C0-", "C0o"), "teacher 1"), (T2, ("C1--", "C1s"), "teacher 2")):
        mu = an.spectral_measure(T)
        ax.stem(np.asarray(mu.atoms), np.asarray(mu.weights), linefmt=fmt[0], markerfmt=fmt[1], basefmt=" ",
                label=name)
    label_axes(ax, xlabel="atom λ", ylabel="weight g",
               title="Spectral measures: equal moments 0..2, different 3rd moment")

    ax = axes[1, 0]
    ax.plot(np.arange(30), w1[:30], "k-", lw=2, alpha=0.3, label="teacher 1")
    ax.plot(np.arange(30), w2[:30], "k--", lw=2, alpha=0.3, label="teacher 2")
    students = [(kk, name, traj) for (kk, name), traj in flows.items() if not name.endswith("acc")]  # acc: in summary
    for i, (kk, name, traj) in enumerate(students):
        plot_impulse_response(traj, ax=ax, horizon=30, label=f"student, k={kk}, trained on {name}", color=f"C{i}",
                              style=".-" if name == "T1" else "x:", shade=False)
    label_axes(ax, xlabel="lag j", ylabel="", legend=7,
               title=f"Gradient flow (balanced d={args.d}, ε={args.eps:g}): k=3 cannot tell the teachers apart")

    ax = axes[1, 1]
    n = min(H, d + 6)
    ax.plot(np.arange(n), np.asarray(teacher.impulse_response(H))[:n], "k-", label=f"balanced teacher d̂={teacher.d}")
    ax.plot(np.arange(n), np.asarray(student.impulse_response(H))[:n], "r.--", label=f"Prop. 3 student (d={d})")
    ax.axvline(k - 0.5, color="gray", ls=":", label=f"k = {k}")
    ax.axvline(d - 0.5, color="gray", ls="--", label=f"d = {d}")
    label_axes(ax, xlabel="lag j", title="Prop. 3: zero training loss, arbitrary values on [k, d)")
    return fig
