"""What the extrapolation studies share: teachers and students by name, one sweep per panel, and the extrapolation
error read off each run when its training loss first reaches given levels (seed 000 Sec. 5, App. B, C).

Error measure (ours; the paper leaves the window and the normalization open, spec 000 §2.4): the ℓ∞ tail error
max_{k ≤ j < H} |h_j − w_j| of seed 000 Sec. 5.1 divided by the teacher's scale s = max_{j < H} |w_j|, so that the
numbers of different teachers compare. The all-zero solution's error on the same tail, max_{k ≤ j < H} |w_j| / s,
is the paper's "non-extrapolating" baseline (App. C.3).

Loss levels: each run is integrated once, to t1, saving the state at log-spaced times; the model "trained to loss
level ℓ" is the first saved state with L ≤ ℓ (what early stopping at ℓ returns, up to the saving grid), or the final
state where the flow never gets to ℓ (counted and reported).

Statistics over seeds (issue 15): a prediction about seeds is decided on one value per seed (:func:`per_seed`: the
seed's runs reduced to one number, e.g. its median error over k < 2d̂) by a bootstrap interval (:func:`seed_check`,
gflow.study.over_seeds). The balanced and random teachers are redrawn with each seed, so every error is relative to
that seed's own teacher scale before any statistic is taken.

Readings of App. C.2.1 (issue 28): the balanced teacher's eigenvalues "distribute uniformly between 0.6 and 1.05";
the paper does not say whether as i.i.d. uniform draws or on an evenly spaced grid (spec 000 marks it unclear). A
panel's ``placement`` ("random": i.i.d. draws, the default; "grid": the evenly spaced grid 0.6, ..., 1.05) is passed
to gflow.teachers.balanced. A run's identity is its panel's name (with k, seed, scale), so the two readings are two
panels and never share a run; a panel without ``placement`` keeps its old run names.

Solver failures: the loss of a gradient flow never increases, and since issue 24 gflow's engine rejects every step
that would raise it. The check stays, as a check of the engine: where a saved loss exceeds twice the smallest loss
saved before it (plus a noise floor NOISE_FLOOR × L(0)), the integrator has left the flow; such a run is flagged
and only its saved states before that point are used.
"""

from __future__ import annotations

import os

import jax
import numpy as np

import gflow
from gflow import analysis as an, initializers, teachers
from gflow.plot import label_axes
from gflow.study import check, over_seeds

TEACHERS = ("balanced", "delay", "random_unbalanced")
STUDENTS = ("diagonal_balanced", "general")
DECADES = np.arange(0, 17)  # the record keeps the impulse response where L first reaches 10^-m, m = 0 .. 16
NOISE_FLOOR = 1e-14
RATIO_FLOOR = 1e-16  # a per-seed ratio divides by max(denominator, this): relative errors below it are rounding


PLACEMENTS = ("random", "grid")  # the two readings of App. C.2.1's "distribute uniformly": i.i.d. draws, a grid


def make_teacher(kind: str, dim: int, seed: int, placement: str = "random"):
    """seed 000 App. C.2: balanced (C.2.1, key = seed; eigenvalues i.i.d. uniform, ``placement="random"``, or
    evenly spaced, ``"grid"``: the paper's text allows both), delay line (C.2.2), random unbalanced (C.2.2, key =
    seed). ``placement`` concerns the balanced teacher only."""
    if placement not in PLACEMENTS:
        raise ValueError(f"unknown placement {placement!r}; choose from {PLACEMENTS}")
    if kind == "balanced":
        return teachers.balanced(jax.random.key(seed), dim, placement=placement)
    if kind == "delay":
        return teachers.delay(dim)
    if kind == "random_unbalanced":
        return teachers.random_unbalanced(jax.random.key(seed), dim)
    raise ValueError(f"unknown teacher {kind!r}; choose from {TEACHERS}")


def panel_teacher(p: dict, seed: int):
    """The teacher of a panel (settings dict: ``teacher``, ``teacher_dim``, optional ``placement``) for ``seed``."""
    return make_teacher(p["teacher"], p["teacher_dim"], seed, p.get("placement", "random"))


def make_student(kind: str, d: int, scale: float, seed: int):
    """Sec. 5.1's diagonal student with balanced init B = Cᵀ, or a general (non-symmetric) A with independent
    entries scale·N(0, 1) (Sec. 5.2, App. B). Key 1000 + seed, so student and teacher draws are independent."""
    key = jax.random.key(1000 + seed)
    if kind == "diagonal_balanced":
        return initializers.balanced(key, d, scale=scale, structure="diagonal")
    if kind == "general":
        return initializers.gaussian(key, d, scale=scale)
    raise ValueError(f"unknown student {kind!r}; choose from {STUDENTS}")


def save_times(t1: float, n: int) -> np.ndarray:
    """t = 0 and n − 1 log-spaced times from 1e-2 to t1."""
    return np.concatenate([[0.0], np.geomspace(1e-2, t1, n - 1)])


def make_build(panels: dict, k_max: int):
    """build(panel, k, seed, scale) for gflow.run_sweep; ``panels`` maps a name to its settings dict. Traceable in
    k, seed and scale (the loss holds k_max lags, zero weight beyond k), so a panel is built in one vmapped call."""

    def build(panel: str, k: int, seed: int, scale: float):
        p = panels[panel]
        teacher = panel_teacher(p, seed)
        return gflow.PopulationLoss(teacher, k, k_max=k_max), make_student(p["student"], p["d"], scale, seed)

    return build


def valid_length(loss) -> int:
    """The number of leading saved points before the loss first exceeds twice its smallest earlier value (plus
    NOISE_FLOOR × L(0)) or stops being finite: the part of a run that behaves as a gradient flow."""
    loss = np.asarray(loss, dtype=np.float64)
    earlier_min = np.minimum.accumulate(np.concatenate([[np.inf], np.where(np.isfinite(loss), loss, np.inf)[:-1]]))
    bad = ~np.isfinite(loss) | (loss > 2.0 * earlier_min + NOISE_FLOOR * abs(loss[0]))
    return int(np.argmax(bad)) if bad.any() else len(loss)


def make_record(panels: dict, horizon: int):
    """record(traj, config) for gflow.run_sweep: the tail error at every saved time, the number of valid saved
    points (:func:`valid_length`), the last valid impulse response and the impulse response where L first reaches
    each decade 10^-m within the valid part."""

    def record(traj, config):
        teacher = panel_teacher(panels[config["panel"]], config["seed"])
        w = np.asarray(teacher.impulse_response(horizon))
        h = an.impulse_responses_along(traj, horizon)
        n_valid = max(valid_length(traj.loss), 1)
        idx = an.first_below(traj.loss[:n_valid], 10.0 ** -DECADES)
        return {"tail_error": an.tail_errors(h, w, config["k"]), "ir_final": h[n_valid - 1], "n_valid": n_valid,
                "ir_decades": np.where(idx[:, None] >= 0, h[np.maximum(idx, 0)], np.nan), "decade_index": idx}

    return record


def run_panel(name: str, panels: dict, ks, seeds, scales, t1: float, *, out: str, n_save: int, rtol: float,
              horizon: int, batch_size: int, max_steps: int, tag: str = "", executor=None, slots=None) -> list:
    """One panel's sweep over k × seeds × scales in ``out/sweeps/<name><tag>`` (a sweep per panel, so that the
    default atol follows the panel's own init scale), on ``executor`` (None: in this process); resumes from what
    is on disk. ``slots``: each batch runs through that many refilling slots (gflow.solve_flows), None lock-step."""
    grid = {"panel": [name], "k": list(ks), "seed": list(seeds), "scale": [float(s) for s in scales]}
    refill = {} if slots is None else {"slots": slots}  # (not given: the runs keep the names lock-step runs have)
    return gflow.run_sweep(grid, make_build(panels, max(ks)), os.path.join(out, "sweeps", name + tag), t1=t1,
                           record=make_record(panels, horizon), save_at=save_times(t1, n_save), rtol=rtol,
                           batch_size=batch_size, max_steps=max_steps, traced=["k", "seed", "scale"], executor=executor,
                           **refill)


def teacher_scale(teacher, horizon: int) -> float:
    return float(np.max(np.abs(np.asarray(teacher.impulse_response(horizon)))))


def zero_baseline(teacher, k: int, horizon: int) -> float:
    """The all-zero solution's tail error, relative to the teacher's scale."""
    return float(an.zero_solution_error(teacher, k, horizon)) / teacher_scale(teacher, horizon)


def errors_at_levels(runs, panels: dict, levels, horizon: int) -> dict:
    """Relative tail errors where each run first reaches each loss level (final state if never).

    Only the valid part of a run (:func:`valid_length`) is read. Returns arrays indexed [level, run]: ``error``,
    ``loss`` (the loss of the state read), ``reached`` (bool), and per run ``k``, ``seed``, ``final_error``,
    ``final_loss`` (at the last valid point), ``zero`` (the zero-solution baseline), ``solver_failed`` (the loss
    rose: only the part before is used) and ``converged`` (status "completed", no failure)."""
    levels = np.asarray(levels, dtype=np.float64)
    n_runs = len(runs)
    out = {name: np.full((len(levels), n_runs), np.nan) for name in ("error", "loss")}
    out["reached"] = np.zeros((len(levels), n_runs), dtype=bool)
    for name in ("k", "seed", "final_error", "final_loss", "zero"):
        out[name] = np.full(n_runs, np.nan)
    out["solver_failed"] = np.zeros(n_runs, dtype=bool)
    out["converged"] = np.zeros(n_runs, dtype=bool)
    for r, run in enumerate(runs):
        teacher = panel_teacher(panels[run.config["panel"]], run.config["seed"])
        s = teacher_scale(teacher, horizon)
        n = int(run.record["n_valid"])
        err, loss = run.record["tail_error"][:n] / s, run.loss[:n]
        out["solver_failed"][r] = n < len(run.loss)
        out["converged"][r] = run.status == "completed" and not out["solver_failed"][r]
        idx = an.first_below(loss, levels)
        out["reached"][:, r] = idx >= 0
        idx = np.where(idx >= 0, idx, len(loss) - 1)
        out["error"][:, r], out["loss"][:, r] = err[idx], loss[idx]
        out["k"][r], out["seed"][r] = run.config["k"], run.config["seed"]
        out["final_error"][r], out["final_loss"][r] = err[-1], loss[-1]
        out["zero"][r] = zero_baseline(teacher, run.config["k"], horizon)
    return out


def by_k(values, ks_of_runs, ks):
    """(median, mean, std) over seeds for each k, for a row of per-run values."""
    med, mean, std = [], [], []
    for k in ks:
        v = values[ks_of_runs == k]
        v = v[np.isfinite(v)]
        med.append(np.median(v) if v.size else np.nan)
        mean.append(np.mean(v) if v.size else np.nan)
        std.append(np.std(v) if v.size else np.nan)
    return np.array(med), np.array(mean), np.array(std)


def per_seed(values, seeds_of_runs, select=None, reduce=np.median) -> dict:
    """{seed: reduce(its finite values where ``select``)} for a row of per-run values; a seed with none is left out."""
    values = np.asarray(values, dtype=np.float64)
    seeds_of_runs = np.asarray(seeds_of_runs)
    mask = np.isfinite(values) & (np.ones(values.shape, bool) if select is None else np.asarray(select, bool))
    return {int(s): float(reduce(values[mask & (seeds_of_runs == s)]))
            for s in np.unique(seeds_of_runs) if np.any(mask & (seeds_of_runs == s))}


def ratio_by_seed(numerator: dict, denominator: dict, floor: float = RATIO_FLOOR) -> dict:
    """{seed: numerator / max(denominator, floor)} over the seeds both have."""
    return {s: numerator[s] / max(denominator[s], floor) for s in numerator if s in denominator}


def contrast_by_seed(errors, ks_of_runs, seeds_of_runs, k_critical: int) -> tuple[dict, dict, dict]:
    """Per seed: (median error over its runs with k < k_c, the same over k > k_c, their ratio); k = k_c is left
    out, a median above k_c below RATIO_FLOOR counts as RATIO_FLOOR."""
    ks_of_runs = np.asarray(ks_of_runs)
    below = per_seed(errors, seeds_of_runs, ks_of_runs < k_critical)
    above = per_seed(errors, seeds_of_runs, ks_of_runs > k_critical)
    return below, above, ratio_by_seed(below, above)


def seed_check(claim: str, source: str, by_seed: dict, threshold, direction: str, **extra) -> dict:
    """gflow.study.over_seeds on one value per seed ({seed: value}; non-finite values are dropped and counted).
    With no value left the check is "inconclusive" (n = 0)."""
    seeds = [s for s, v in by_seed.items() if np.isfinite(v)]
    values = [by_seed[s] for s in seeds]
    extra = {**extra, "seeds": seeds, "seeds_dropped": len(by_seed) - len(seeds)}
    if values:
        return over_seeds(claim, source, values, threshold, direction, **extra)
    kind = extra.pop("kind", "prediction")
    entry = check(claim, source, float("nan"), threshold, False, kind=kind, **extra)
    entry.update(status="inconclusive", n=0, direction=direction, seeds_needed=None)
    return entry


def plot_error_curves(ax, ks, curves, zero, k_critical: int, title: str):
    """Median relative tail error against k, one curve per (label, errors per run, k per run, reached per run),
    shaded mean ± std over seeds, with the all-zero solution's error (``zero`` per run) and k = 2d̂."""
    import matplotlib.pyplot as plt

    colors = plt.cm.viridis(np.linspace(0.0, 0.85, len(curves)))
    ks = np.asarray(ks)
    floor = 1e-16
    for color, (label, errors, k_of_runs, reached) in zip(colors, curves):
        med, mean, std = by_k(errors, k_of_runs, ks)
        frac = float(np.mean(reached)) if np.size(reached) else 1.0
        ax.semilogy(ks, med, "o-", ms=3, color=color, label=label + (f" ({100 * frac:.0f}% reached)" if frac < 1 else ""))
        floor = max(floor, np.nanmin(med[med > 0]) / 10 if np.any(med > 0) else floor)
        ax.fill_between(ks, np.maximum(mean - std, floor), mean + std, color=color, alpha=0.12)
    zero_med, _, _ = by_k(zero[1], zero[0], ks)
    ax.semilogy(ks, zero_med, "k--", lw=1, label="all-zero solution")
    ax.axvline(k_critical, color="gray", lw=0.8, ls=":", label="k = 2d̂")
    label_axes(ax, xlabel="training length k", ylabel="tail error / max |w_j|", title=title, title_size=9, legend=7)
