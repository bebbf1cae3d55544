"""Seed 000's GRU teacher (Cohen-Karlik et al., ICLR 2023, Sec. 5.3, App. C.2.3) and seed 001's memory teachers and
error measures (Cohen-Karlik, Ben David, Cohen, Globerson, §7, App. D): what studies/gru_extrapolation.py trains its
gated and linear students on, and how it reads their extrapolation.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import gflow
from gflow import GflowInputError, teachers
from gflow.objectives import nonlinear_teachers as nt


def _grid(values, errors, name):
    values = np.asarray(values)
    errors = np.asarray(errors, dtype=np.float64)
    if values.ndim != 1 or values.size == 0 or errors.shape != values.shape:
        raise GflowInputError(f"`{name}` and `errors` must be non-empty 1-d arrays of one length, got "
                              f"{values.shape} and {errors.shape}")
    if np.any(np.diff(values) <= 0):
        raise GflowInputError(f"`{name}` must be strictly increasing, got {values.tolist()}")
    return values, errors


def critical_length(ks, errors, threshold: float):
    """Seed 000 Fig. 2(a)'s critical training length, read on a grid.

    Args:
        ks: the training lengths, strictly increasing.
        errors: one error per k (NaN counts as a failure).
        threshold: an error ≤ this extrapolates.

    Returns:
        The smallest k of the grid from which on every error is ≤ ``threshold``; None if the largest k fails.
    """
    ks, errors = _grid(ks, errors, "ks")
    ok = errors <= threshold
    if not ok[-1]:
        return None
    bad = np.flatnonzero(~ok)
    return int(ks[bad[-1] + 1]) if bad.size else int(ks[0])


def breakpoint_dimension(dims, errors, threshold: float):
    """Seed 001 Fig. 5's breakpoint, read on a grid.

    Args:
        dims: the teacher dimensions d_T, strictly increasing.
        errors: one error per d_T (NaN counts as a failure).
        threshold: an error ≤ this is low.

    Returns:
        The largest d_T up to which every error is ≤ ``threshold``; None if the smallest d_T already fails.
    """
    dims, errors = _grid(dims, errors, "dims")
    ok = errors <= threshold
    bad = np.flatnonzero(~ok)
    if bad.size == 0:
        return int(dims[-1])
    return None if bad[0] == 0 else int(dims[bad[0] - 1])


def memory_teacher(key, d_T: int, radius: float = 0.9) -> gflow.LinearRNN:
    """A linear teacher with memory (seed 001 Figs. 2, 5; the paper does not say how its teachers were drawn, so
    this is ours): A = radius·Q, Q Haar-orthogonal, B, C ~ N(0, I), C rescaled so that Σ_j w_j² = 1 (summed to
    numerical convergence, 2000 lags).

    Args:
        key: a JAX key.
        d_T: the state dimension.
        radius: the modulus of every eigenvalue, in (0, 1).

    Returns:
        The teacher.
    """
    if not isinstance(d_T, (int, np.integer)) or d_T < 1:
        raise GflowInputError(f"`d_T` must be a positive integer, got {d_T!r}")
    if not 0 < radius < 1:
        raise GflowInputError(f"`radius` must lie in (0, 1) for a stable teacher, got {radius!r}")
    kq, kb, kc = jax.random.split(key, 3)
    g = np.asarray(jax.random.normal(kq, (d_T, d_T), dtype=jnp.float64))
    q, r = np.linalg.qr(g)
    q = q * np.sign(np.diag(r))[None, :]
    B = np.asarray(jax.random.normal(kb, (d_T,), dtype=jnp.float64))
    C = np.asarray(jax.random.normal(kc, (d_T,), dtype=jnp.float64))
    teacher = gflow.LinearRNN(radius * q, B, C)
    energy = float(np.sum(np.asarray(teacher.impulse_response(2000)) ** 2))
    return gflow.LinearRNN(radius * q, B, C / np.sqrt(energy))


def late_echo_teacher(teacher: gflow.LinearRNN, k: int, amplitude: float = 1.0) -> gflow.LinearRNN:
    """Seed 001 Figs. 1, 2's adversarial labels as one linear teacher: the labels of
    :class:`gflow.objectives.nonlinear_teachers.AdversarialLateLabels` (``late_response=(amplitude,)``), built as the
    block-diagonal sum of the teacher and a delay line of k + 1 steps.

    Args:
        teacher: a SISO linear teacher.
        k: the lag of the echo.
        amplitude: its size.

    Returns:
        The linear RNN whose impulse response is the teacher's plus ``amplitude`` at lag k.
    """
    if not isinstance(teacher, gflow.LinearRNN) or not teacher.siso:
        raise GflowInputError("`teacher` must be a SISO gflow.LinearRNN")
    if not isinstance(k, (int, np.integer)) or k < 1:
        raise GflowInputError(f"`k` must be a positive integer, got {k!r}")
    line = teachers.delay(k + 1)  # impulse response 1 at lag k
    A_t, A_l = np.asarray(teacher.transition()), np.asarray(line.transition())
    d_t = A_t.shape[0]
    A = np.zeros((d_t + k + 1, d_t + k + 1))
    A[:d_t, :d_t], A[d_t:, d_t:] = A_t, A_l
    B = np.concatenate([np.asarray(teacher.B), np.asarray(line.B)])
    C = np.concatenate([np.asarray(teacher.C), amplitude * np.asarray(line.C)])
    return gflow.LinearRNN(A, B, C)


def linf_errors(y_model, y_teacher, k: int, scale: float) -> dict:
    """Seed 000 Fig. 2's measure, "ℓ∞ of responses, averaged over random inputs".

    Args:
        y_model: the student's outputs (n, H).
        y_teacher: the teacher's outputs (n, H).
        k: the training length: the window is t < k, the tail k ≤ t < H.
        scale: the errors are divided by this.

    Returns:
        ``fit`` and ``tail``: the mean over sequences of max |error| on the window and on the tail; ``profile``:
        the mean |error| per step.
    """
    err = np.abs(np.asarray(y_model) - np.asarray(y_teacher))
    if err.ndim != 2 or not 1 <= k < err.shape[1]:
        raise GflowInputError(f"outputs must be (n, H) with 1 <= k < H, got {err.shape} and k = {k}")
    return {"fit": float(np.mean(err[:, :k].max(axis=1)) / scale),
            "tail": float(np.mean(err[:, k:].max(axis=1)) / scale),
            "profile": err.mean(axis=0)}


def relative_mse(y_model, y_teacher, k: int) -> dict:
    """Seed 001's measure, the relative MSE Σ_t E(ŷ_t − y_t)² / Σ_t E y_t² on a window.

    Args:
        y_model: the student's outputs (n, T).
        y_teacher: the teacher's outputs (n, T).
        k: the training length.

    Returns:
        ``fit`` (t ≤ k) and ``extrapolation`` (k < t ≤ T), with the per-step ``mse`` and teacher ``power``.
    """
    y_model, y_teacher = np.asarray(y_model), np.asarray(y_teacher)
    if y_model.shape != y_teacher.shape or y_model.ndim != 2 or not 1 <= k < y_model.shape[1]:
        raise GflowInputError(f"outputs must both be (n, T) with 1 <= k < T, got {y_model.shape}, "
                              f"{y_teacher.shape} and k = {k}")
    mse = np.mean((y_model - y_teacher) ** 2, axis=0)
    power = np.mean(y_teacher ** 2, axis=0)
    return {"fit": float(mse[:k].sum() / power[:k].sum()), "extrapolation": float(mse[k:].sum() / power[k:].sum()),
            "mse": mse, "power": power}


@eqx.filter_jit
def _apply(model, x):
    return jax.vmap(model)(x)


def outputs(model, x):
    """Outputs of ``model`` on the sequences ``x`` (n, T), compiled once per model structure.

    Args:
        model: a sequence model.
        x: input sequences (n, T).

    Returns:
        The outputs (n, T).
    """
    return np.asarray(_apply(model, jnp.asarray(x)))

def teacher_target(memory: int) -> np.ndarray:
    """The impulse response the GRU teacher is fitted to (ours; seed 000 App. C.2.3 says only "an arbitrarily chosen
    impulse response"): ``memory`` zeros, then the library's damped oscillation w_j = 0.9^j cos(0.3 j), j < 40. The
    teacher is revealed after ``memory`` steps, like seed 000's linear delay and random unbalanced teachers of state
    dimension d̂, revealed after d̂ steps (App. C.2.2).

    Args:
        memory: the number of leading zeros.

    Returns:
        The target response.
    """
    if not isinstance(memory, (int, np.integer)) or memory < 0:
        raise GflowInputError(f"`memory` must be a non-negative integer, got {memory!r}")
    return np.concatenate([np.zeros(memory), np.asarray(nt.damped_oscillation())])


def gru_teacher(seed: int, dim: int, memory: int):
    """The GRU teacher of seed 000 App. C.2.3 (hidden size d̂_g, init scale 1e-6, 1000 Adam steps at lr 1e-3) fitted
    to :func:`teacher_target` of ``memory``.

    Args:
        seed: the key of the teacher's initialization.
        dim: its hidden size d̂_g.
        memory: the delay of its fit target.

    Returns:
        (teacher, target, max |impulse response − target|).
    """
    target = teacher_target(memory)
    teacher = gflow.discrete.fit_gru_teacher(jax.random.key(seed), dim, target=target)
    fit = float(np.max(np.abs(np.asarray(teacher(gflow.objectives.impulse(len(target)))) - target)))
    return teacher, target, fit


def seed_critical_lengths(ks, tails, threshold: float):
    """The critical k_g of each seed.

    Args:
        ks: the training lengths, strictly increasing.
        tails: errors (len(ks), seeds).
        threshold: an error ≤ this extrapolates.

    Returns:
        :func:`critical_length` of each seed's column; max(ks) + 1 ("beyond the grid") where the largest k_g fails.
    """
    ks = np.asarray(ks)
    tails = np.asarray(tails, dtype=np.float64)
    if tails.ndim != 2 or tails.shape[0] != ks.size:
        raise GflowInputError(f"`tails` must be (len(ks), seeds), got {tails.shape} for {ks.size} lengths")
    beyond = int(ks.max()) + 1
    return np.array([beyond if (c := critical_length(ks, tails[:, s], threshold)) is None else c
                     for s in range(tails.shape[1])], dtype=np.float64)


def _floats(x):
    return np.asarray(x, dtype=np.float64)


def figure_a(a: dict, *, ks, seeds: int, horizon: int, memory: int, teacher_dim: int, pair, bars):
    """Seed 000 Fig. 2: (a) the extrapolation error against k_g (seeds, mean ± std, other teacher memories' means),
    (b) impulse responses of the teacher and of students, (c) the error per step.

    Args:
        a: the sweep of the deciding teacher memory: "runs" ((k, seed) → result), "mean", "std", "critical",
            "teacher_ir", "target" and "others" (memory → sweep).
        ks: the k_g grid.
        seeds: the seeds per k_g.
        horizon: the evaluation length H.
        memory: the deciding teacher memory.
        teacher_dim: the teacher's hidden size d̂_g.
        pair: the lengths of Fig. 2(b).
        bars: (extrapolates, fails, the paper's critical k_g).

    Returns:
        The matplotlib figure.
    """
    import matplotlib.pyplot as plt

    extrapolates, fails, paper_critical = bars
    H, ks_arr = horizon, np.array(ks)
    fig, (ax, ax_ir, ax_steps) = plt.subplots(1, 3, figsize=(17, 4.8))
    tails = np.array([[a["runs"][(k, s)]["tail"] for s in range(seeds)] for k in ks])
    for s in range(seeds):
        ax.semilogy(ks_arr, tails[:, s], ".", color="gray", alpha=0.6, label="single seeds" if s == 0 else None)
    ax.errorbar(ks_arr, a["mean"], yerr=a["std"], fmt="o-", color="C0", capsize=3,
                label=f"memory m = {memory}: mean ± std ({seeds} seeds)")
    for i, (m, w) in enumerate(sorted(a["others"].items())):
        ax.semilogy(ks_arr, w["mean"], "s--", color=f"C{i + 4}", ms=4, label=f"memory m = {m}: mean")
    ax.axhline(extrapolates, color="C2", ls=":", label=f"extrapolates ≤ {extrapolates:g}")
    ax.axhline(fails, color="C3", ls=":", label=f"fails ≥ {fails:g}")
    ax.axvline(paper_critical, color="k", ls="--", label=f"paper: critical ≈ {paper_critical}")
    if a["critical"] is not None:
        bound = "≤ " if a["critical"] == ks[0] else ""  # the smallest grid value already extrapolates
        ax.axvline(a["critical"], color="C1", ls="-", lw=2, alpha=0.6,
                   label=f"critical k_g of the mean (m = {memory}) {bound or '= '}{a['critical']}")
    ax.set(xlabel="training length k_g", ylabel="mean_x max_(k_g≤t<H) |y − y*| / mean_x max_t |y*|")
    ax.set_title(f"(a) extrapolation error vs k_g (teacher d̂_g = {teacher_dim}, H = {H})", fontsize=9)
    ax.legend(fontsize=7)
    t = np.arange(1, H + 1)
    ax_ir.plot(t, a["teacher_ir"], "k-", lw=2, label="teacher")
    ax_ir.plot(np.arange(1, len(a["target"]) + 1), a["target"], "k:", lw=1, label="teacher's fit target")
    for i, k in enumerate(sorted({ks[0], ks[-1], *pair})):  # the paper's Fig. 2(b): 30, 60
        ax_ir.plot(t, _floats(a["runs"][(k, 0)]["impulse_response"]), color=f"C{i + 1}", label=f"student k_g = {k}")
        ax_ir.axvline(k, color=f"C{i + 1}", ls=":", lw=1)
    ax_ir.set(xlabel="time step t (input: unit impulse at t = 1)", ylabel="output")
    ax_ir.set_title(f"(b) impulse responses (seed 0, teacher memory m = {memory})", fontsize=9)
    ax_ir.legend(fontsize=7)
    for k, c in zip(ks, plt.get_cmap("viridis")(np.arange(len(ks)) / max(1, len(ks) - 1))):
        ax_steps.semilogy(t, np.maximum(_floats(a["runs"][(k, 0)]["profile"]), 1e-12), color=c, lw=1,
                          label=f"k_g = {k}")
        ax_steps.axvline(k, color=c, ls=":", lw=0.8)
    ax_steps.set(xlabel="time step t", ylabel="mean_x |y_t − y*_t| (random N(0,1) inputs)",
                 title="(c) error per step, seed 0 (dotted: k_g)")
    ax_steps.legend(fontsize=7, ncol=2)
    return fig


def figures_b(rows: dict, fig5: dict, *, archs, variant, k: int, T: int, fig2_dT: int, dT, bar: float, width: int,
              radius: float, fig5_per_seed: dict | None = None):
    """Seed 001 Figs. 1, 2 (the relative MSE per step of every architecture, normal and adversarial training) and
    Fig. 5 (the extrapolation MSE against the teacher's memory d_T).

    Args:
        rows: (arch, teacher name, mode) → result ("mse", "power", "extrapolation").
        fig5: arch → the extrapolation MSE per d_T (the seed median, with ``fig5_per_seed``).
        archs: the architectures.
        variant: the name of the gradient-flow variant of the linear student, drawn dashed; None: not run.
        k: the training length.
        T: the test length.
        fig2_dT: Fig. 2's teacher memory.
        dT: Fig. 5's teacher memories.
        bar: the "low error" bar.
        width: the students' width.
        radius: the memory teachers' eigenvalue modulus.
        fig5_per_seed: arch → (seeds, d_T) errors, drawn thin beside ``fig5``; None: ``fig5`` is one seed's.

    Returns:
        (Figs. 1 and 2, Fig. 5) as matplotlib figures.
    """
    import matplotlib.pyplot as plt

    t = np.arange(1, T + 1)
    fig, axes = plt.subplots(2, len(archs), figsize=(5.4 * len(archs), 8), sharex=True, squeeze=False)
    for r, teacher_name in enumerate(("memoryless", f"dT{fig2_dT}")):
        for c, arch in enumerate(archs):
            ax = axes[r, c]
            curves = [(arch, "o-", "Adam: " if arch == "linear" else "")]
            if arch == "linear" and variant:
                curves.append((variant, "x--", "gradient-flow variant: "))
            for student, style, label in curves:
                for mode, color in (("normal", "C0"), ("adversarial", "C3")):
                    row = rows[(student, teacher_name, mode)]
                    rel = _floats(row["mse"]) / _floats(row["power"])
                    ax.semilogy(t, np.maximum(rel, 1e-16), style, ms=3, color=color,
                                alpha=1.0 if student in archs else 0.6,
                                label=f"{label}{mode}: extrapolation MSE {row['extrapolation']:.2g}")
            ax.axvline(k + 0.5, color="gray", ls="--", label=f"training length k = {k}")
            ax.axhline(bar, color="C2", ls=":", lw=1)
            what = "memoryless teacher (Fig. 1)" if r == 0 else f"teacher with memory d_T = {fig2_dT} (Fig. 2)"
            ax.set(ylabel="E(ŷ_t − y_t)² / E y_t²")
            ax.set_title(f"{arch}: {what}", fontsize=9)
            ax.legend(fontsize=7)
    for ax in axes[1]:
        ax.set_xlabel("time step t (test length T = 3k)")
    fig_5, ax = plt.subplots(figsize=(7, 4.8))
    n_seeds = None if fig5_per_seed is None else len(next(iter(fig5_per_seed.values())))
    for i, arch in enumerate(archs):
        for row in ([] if fig5_per_seed is None else fig5_per_seed[arch]):
            ax.semilogy(dT, np.maximum(row, 1e-16), "-", color=f"C{i}", lw=0.6, alpha=0.35)
        ax.semilogy(dT, np.maximum(fig5[arch], 1e-16), "o-", color=f"C{i}",
                    label=(f"{arch} (Adam)" if arch == "linear" else arch) + ("" if n_seeds is None else
                                                                             f": median of {n_seeds} seeds (thin: each)"))
    if variant:
        ax.semilogy(dT, np.maximum(fig5[variant], 1e-16), "x--", color=f"C{archs.index('linear')}",
                    alpha=0.6, label="linear, gradient flow (variant, not deciding)")
    ax.axvline(k / 2, color="gray", ls=":", label=f"k/2 = {k / 2:g} (2 d_T Markov parameters)")
    ax.axvline(k, color="gray", ls="--", label=f"k = {k}")
    ax.axhline(bar, color="C2", ls=":", lw=1, label=f"low ≤ {bar:g}")
    ax.set(xlabel="teacher state dimension d_T", ylabel=f"relative extrapolation MSE on k < t ≤ {T}")
    ax.set_title(f"seed 001 Fig. 5: width {width}, k = {k}, teachers with |eig| = {radius:g}, "
                 + ("one seed" if n_seeds is None else f"{n_seeds} seeds"), fontsize=9)
    ax.legend(fontsize=8)
    return fig, fig_5
