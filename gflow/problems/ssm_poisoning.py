"""Slutzky et al.'s clean-label poisoning of a diagonal SSM (NeurIPS 2025, §4.2, Tables 1 and 3): the teacher, the
two training designs, their initialization A0 and the student, as the authors' gradient-flow notebook sets them up
(standalone_ssm_theory_poison_experiments.ipynb of github.com/YoniSlutzky98/imp-bias-ssm-poison).

A diagonal SSM (A = diag(a) trained, B = C = 1 fixed; d = 10 at length L = 7, d = 20 at L = 9) learns the impulse
response of the teacher A* = diag(1, 0), B* = C*ᵀ = (1, √(d − 1)) (h*_0 = d, h*_j = 1 for j ≥ 1). The "baseline"
sequence (impulse at the first step) supervises lag L − 1; the "special" one (impulse at step L − 2) adds lag 1.
Used by studies/ssm_poisoning.py, bench/gpu_check.py and the engine's tests.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

import gflow
from gflow import analysis as an
from gflow.models import Frozen

HORIZON = 20  # lags h_0 … h_19 of the extrapolation error (their ext_end = 20)
TOP = 7  # top |a_i| they plot
DESIGNS = ("baseline", "special")


class Setting(NamedTuple):
    """One sequence length's setup, as their notebook has it.

    Attributes:
        d: the student's state dimension.
        sd: the scale sd_A of the uniform draws of A0.
        diff: the gap between the top two entries of A0.
        first_seed: our first seed (ours run first_seed, first_seed + 1, …).
        t1: design → their training horizon.
        their_seeds: the seeds of their printed numbers.
        their_error: design → their printed extrapolation errors, in ``their_seeds``' order.
        their_grid: design → the number of points of their odeint output grid linspace(0, t1, n).
    """

    d: int
    sd: float
    diff: float
    first_seed: int
    t1: dict
    their_seeds: tuple
    their_error: dict
    their_grid: dict


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


def teacher_of(d: int) -> gflow.LinearRNN:
    """Slutzky et al. §4.2's teacher: A* = diag(1, 0), B* = C*ᵀ = (1, √(d − 1)), so h*_0 = d and h*_j = 1 (j ≥ 1).

    Args:
        d: the student's state dimension.

    Returns:
        The diagonal teacher.
    """
    b = np.array([1.0, np.sqrt(d - 1.0)])
    return gflow.LinearRNN(np.array([1.0, 0.0]), b, b, structure="diagonal")


def loss_of(L: int, design: str, teacher) -> gflow.PopulationLoss:
    """The training loss of a design (Slutzky et al. §4.2): the mean over the training sequences of the squared
    error, no ½: (h_{L−1} − 1)² ("baseline") or ½(h_{L−1} − 1)² + ½(h_1 − 1)² ("special": baseline + special).

    Args:
        L: the sequence length.
        design: "baseline" or "special".
        teacher: :func:`teacher_of`'s teacher.

    Returns:
        The loss, :meth:`gflow.PopulationLoss.at_lags`.
    """
    return gflow.PopulationLoss.at_lags(teacher, {L - 1: 1.0} if design == "baseline" else {L - 1: 0.5, 1: 0.5})


def initial_a(setting: Setting, seed: int) -> np.ndarray:
    """Their A0: the d draws sd_A·U[0, 1) of ``numpy.random.RandomState(seed).rand`` sorted descending, then
    A0[1] = A0[0] − diff (the top two entries a hair apart). numpy's legacy generator, not ``jax.random.key``: that
    is how their draws are reproduced exactly.

    Args:
        setting: the length's :class:`Setting`.
        seed: the numpy seed.

    Returns:
        The diagonal of A0, shape (d,).
    """
    a = np.flip(np.sort(setting.sd * np.random.RandomState(seed).rand(setting.d)))
    a[1] = a[0] - setting.diff
    return a


def student(a0: np.ndarray) -> gflow.LinearRNN:
    """The diagonal SSM student: A = diag(a0) trained, B = C = 1 fixed.

    Args:
        a0: the diagonal of A0.

    Returns:
        The student.
    """
    d = a0.size
    return gflow.LinearRNN(a0, Frozen(np.ones(d)), Frozen(np.ones(d)), structure="diagonal")


def save_times(t1: float, per_decade: int) -> np.ndarray:
    """t = 0, then ``per_decade`` log-spaced times per decade from t = 1 to ``t1``.

    Args:
        t1: the last time.
        per_decade: saved times per decade.

    Returns:
        The save times.
    """
    decades = int(np.ceil(np.log10(t1)))
    return np.concatenate([[0.0], np.geomspace(1.0, t1, decades * per_decade + 1)])


def diagnostics_for(loss, teacher) -> dict:
    """What a flow records along the way: the extrapolation error max_{j<20} |h_j − h*_j| / max|h*| (their measure),
    the effective rank of A, its top |a_i| and the lag-1 gradient coefficient γ^(0).

    Args:
        loss: the design's loss.
        teacher: the teacher.

    Returns:
        name → function of the model, for :func:`gflow.solve_flows`'s ``diagnostics``.
    """
    return {"extrapolation_error": lambda m: an.relative_extrapolation_error(m, teacher, HORIZON),
            "effective_rank": an.effective_rank,
            "top_abs_a": lambda m: an.top_eigenvalue_magnitudes(m, TOP),
            "gamma0": lambda m: an.lag_gradient_coefficients(loss, m)[0]}


def escape_time(traj, design: str) -> float:
    """The escape of lag L − 1: the first time L ≤ w_{L−1}/2, half the loss its term alone carries on the plateau
    (w_{L−1} = 1 baseline, ½ with the special sequence, whose lag-1 term is fitted at t ≈ 1).

    Args:
        traj: the flow's trajectory.
        design: "baseline" or "special".

    Returns:
        :func:`gflow.analysis.escape_time`; nan if never.
    """
    weight = 1.0 if design == "baseline" else 0.5
    return float(an.escape_time(traj.ts, traj.loss, reference=weight))


def blow_up_estimate(a0: np.ndarray, L: int) -> float:
    """The top entry's blow-up time under da/dt = 2(L−1)a^(L−2) (residual −1), derived here: t* =
    a0^−(L−3)/(2(L−1)(L−3)).

    Args:
        a0: the diagonal of A0.
        L: the sequence length.

    Returns:
        t*.
    """
    return float(np.max(a0) ** -(L - 3) / (2 * (L - 1) * (L - 3)))


def referee(L: int, design: str, setting: Setting, rtol: float | None) -> np.ndarray:
    """Their integrator on their seeds: scipy odeint (LSODA) on their output grid linspace(0, t1, n) (LSODA's steps
    depend on it), on the O(d) right-hand side of their flow (their notebook's, without its d × d matrices).

    Args:
        L: the sequence length.
        design: "baseline" or "special".
        setting: the length's :class:`Setting`.
        rtol: None for odeint's default (theirs), else rtol = atol/sd_A.

    Returns:
        The extrapolation error at t1 of each of ``setting.their_seeds``.
    """
    from scipy.integrate import odeint

    lags = [(L - 1, 1.0)] if design == "baseline" else [(L - 1, 0.5), (1, 0.5)]

    def field(a, t):
        out = np.zeros_like(a)
        for lag, w in lags:
            out -= 2.0 * w * (np.sum(a ** lag) - 1.0) * lag * a ** (lag - 1)
        return out

    kw = {} if rtol is None else {"rtol": rtol, "atol": rtol * setting.sd, "mxstep": 10**7}
    h_star = np.r_[setting.d, np.ones(HORIZON - 1)]
    out = []
    for seed in setting.their_seeds:
        grid = np.linspace(0.0, setting.t1[design], setting.their_grid[design])
        a = odeint(field, initial_a(setting, seed), grid, **kw)[-1]
        h = np.array([np.sum(a ** j) for j in range(HORIZON)])
        out.append(np.max(np.abs(h - h_star)) / setting.d)
    return np.asarray(out)


def max_error_beyond_lag_0(model) -> float:
    """max_{1 ≤ j < 20} |h_j − 1|: the error on the lags the student does not match by construction (h_0 = d always),
    not divided by max|h*| = d (their relative error is this divided by d).

    Args:
        model: a student.

    Returns:
        The error.
    """
    return float(np.max(np.abs(np.asarray(model.impulse_response(HORIZON))[1:] - 1.0)))


def at_end(batch, name: str = "extrapolation_error") -> np.ndarray:
    """A diagnostic of every flow of a batch at the last time it reached.

    Args:
        batch: a :class:`gflow.FlowBatch`.
        name: the diagnostic (:func:`diagnostics_for`), or ``"loss"``.

    Returns:
        One value per flow.
    """
    return np.array([(batch[i].loss if name == "loss" else batch[i].diagnostics[name])[-1] for i in range(len(batch))])


def figure(runs: dict, bar: float):
    """Per length, the loss, the extrapolation error and the effective rank of A over time for both designs, and the
    final errors beside their printed numbers (Tables 1 and 3).

    Args:
        runs: L → {"seeds": [...], design: the :class:`gflow.FlowBatch` of its flows, …}.
        bar: the baseline's extrapolation bar, drawn dashed.

    Returns:
        The matplotlib figure.
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(runs), 4, figsize=(4 * 4.6, len(runs) * 3.6), squeeze=False)
    colors = {"baseline": "C0", "special": "C3"}
    labels = {"baseline": "baseline only", "special": "baseline + special"}
    for row, (L, r) in zip(axes, runs.items()):
        setting = SETTINGS[L]
        for design in DESIGNS:
            b = r[design]
            for i in range(len(r["seeds"])):
                ts = b.ts[i, 1:]
                kw = {"color": colors[design], "lw": 0.8, "alpha": 0.6, "label": labels[design] if i == 0 else None}
                row[0].loglog(ts, np.maximum(b.loss[i, 1:], 1e-33), **kw)
                row[1].loglog(ts, np.asarray(b.diagnostics["extrapolation_error"])[i, 1:], **kw)
                row[2].semilogx(ts, np.asarray(b.diagnostics["effective_rank"])[i, 1:], **kw)
            errors = at_end(b)
            x = DESIGNS.index(design)
            row[3].scatter(np.full(errors.size, x) + np.linspace(-0.15, 0.15, errors.size), errors, s=14,
                           color=colors[design], label=f"gflow, {len(errors)} seeds" if x == 0 else None)
            row[3].scatter([x + 0.3] * 4, setting.their_error[design], marker="x", color="k",
                           label="their printed numbers (4 seeds)" if x == 0 else None)
        where = f"L = {L}, d = {setting.d}"
        row[0].set(xlabel="t", ylabel="training loss", title=f"{where}: loss")
        row[0].legend(fontsize=8)
        row[1].set(xlabel="t", ylabel="max_j<20 |h_j − h*_j| / max|h*|", title=f"{where}: extrapolation error")
        row[2].set(xlabel="t", ylabel="effective rank of A", title=f"{where}: effective rank")
        row[3].set_yscale("log")
        row[3].set_xticks([0, 1], [labels[d] for d in DESIGNS])
        row[3].axhline(bar, color="gray", lw=0.6, ls="--")
        row[3].set(ylabel="extrapolation error at t1", title=f"{where}: Table {1 if L == 7 else 3}'s numbers")
        row[3].legend(fontsize=7)
    return fig
