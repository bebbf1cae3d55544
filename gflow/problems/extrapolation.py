"""Seed 000's extrapolation problems (Cohen-Karlik et al., ICLR 2023, Sec. 5, App. B, C): its panels (teacher,
student, init scale, horizon), teachers and students by name, one sweep per panel, and the extrapolation error read
off each run where its training loss first reaches given levels. Shared by studies/extrapolation_phase.py and
studies/init_scale.py.

Error measure (ours; the paper leaves the window and the normalization open, seed 000 Sec. 5.1, App. C.3): the ℓ∞
tail error max_{k ≤ j < H} |h_j − w_j| of seed 000 Sec. 5.1 divided by the teacher's scale s = max_{j < H} |w_j|, so
that the numbers of different teachers compare. The all-zero solution's error on the same tail, max_{k ≤ j < H}
|w_j| / s, is the paper's "non-extrapolating" baseline (App. C.3).

Loss levels: each run is integrated once, to t1, saving the state at log-spaced times; the model "trained to loss
level ℓ" is the first saved state with L ≤ ℓ (what early stopping at ℓ returns, up to the saving grid), or the final
state where the flow never gets to ℓ (counted and reported).

Statistics over seeds: a prediction about seeds is decided on one value per seed (:func:`per_seed`: the seed's runs
reduced to one number, e.g. its median error over k < 2d̂) by a bootstrap interval. The balanced and random
teachers are redrawn with each seed, so every error is relative to that seed's own teacher scale before any
statistic is taken.

The transition at k = 2d̂ (Sec. 5.1, Fig. 1(a), App. C.3): :func:`transition_by_seed` decides per seed whether its
error-vs-k curve drops sharply at 2d̂ (its knee, :func:`knee`, located at 2d̂ and a fall of a decade standing out of
the curve's other steps), on the error itself or on App. C.3's ratio to the all-zero solution's error. The
below/above contrast (:func:`contrast_by_seed`) passes any curve that falls with k and is kept as a description.

Readings of App. C.2.1: the balanced teacher's eigenvalues "distribute uniformly between 0.6 and 1.05"; the paper
does not say whether as i.i.d. uniform draws or on an evenly spaced grid. A panel's ``placement`` ("random": i.i.d.
draws, the default; "grid": the evenly spaced grid 0.6, ..., 1.05) is passed to :func:`gflow.teachers.balanced`. A
run's identity is its panel's name (with k, seed, scale), so the two readings are two panels and never share a run.

Solver failures: the loss of a gradient flow never increases, and gflow's engine rejects every step that would raise
it. The check stays, as a check of the engine: where a saved loss exceeds twice the smallest loss saved before it
(plus a noise floor NOISE_FLOOR × L(0)), the integrator has left the flow; such a run is flagged and only its saved
states before that point are used (:func:`valid_length`).
"""

from __future__ import annotations

import os

import jax
import numpy as np

import gflow
from gflow import analysis as an, initializers, teachers

TEACHERS = ("balanced", "delay", "random_unbalanced")
STUDENTS = ("diagonal_balanced", "general")
DECADES = np.arange(0, 21)  # the record keeps the impulse response where L first reaches 10^-m, m = 0 .. 20
NOISE_FLOOR = 1e-14
RATIO_FLOOR = 1e-16  # a per-seed ratio divides by max(denominator, this): relative errors below it are rounding
PLACEMENTS = ("random", "grid")  # the two readings of App. C.2.1's "distribute uniformly": i.i.d. draws, a grid

# Seed 000's panels: each a sweep over the training length k and seeds, gradient flow on the population loss (eq. 3.4)
PANELS = {
    "fig1a": {"teacher": "balanced", "teacher_dim": 5, "student": "diagonal_balanced", "d": 40, "scale": 1e-3,
              "t1": 1e10, "t1_quick": 1e10, "ks_quick": [6, 10, 14, 20], "max_steps": 200_000,
              "rtol": 1e-9, "source": "Fig. 1(a), Sec. 5.1", "placement": "random", "reading": "iid"},
    "fig1b": {"teacher": "delay", "teacher_dim": 10, "student": "general", "d": 50, "scale": 0.05,
              "t1": 1e6, "t1_quick": 1e5, "ks_quick": [8, 18, 20, 24], "max_steps": 10_000,
              "rtol": 1e-8, "source": "Fig. 1(b), Sec. 5.2"},
    "fig3a": {"teacher": "balanced", "teacher_dim": 5, "student": "general", "d": 40, "scale": 1e-5,
              "t1": 1e10, "t1_quick": 1e10, "ks_quick": [6, 20], "max_steps": 200_000,
              "rtol": 1e-8, "source": "Fig. 3(a), App. B.1.1"},
    "fig3b": {"teacher": "random_unbalanced", "teacher_dim": 5, "student": "general", "d": 50, "scale": 0.01,
              "t1": 1e6, "t1_quick": 1e5, "ks_quick": [4, 12], "max_steps": 10_000,
              "rtol": 1e-8, "source": "Fig. 3(b), App. B.2"},
}
# fig1a with C.2.1 read as an evenly spaced grid of eigenvalues: same students, seeds and solver settings
PANELS = {"fig1a": PANELS["fig1a"], "fig1a_grid": {**PANELS["fig1a"], "placement": "grid", "reading": "grid"},
          **{n: p for n, p in PANELS.items() if n != "fig1a"}}
READINGS = {"iid": "C.2.1 read as i.i.d. draws", "grid": "C.2.1 read as an evenly spaced grid"}
READING_PANELS = {"iid": "fig1a", "grid": "fig1a_grid"}  # the panel of each reading (Fig. 5 reads its students)
SUPPORT_WEIGHT = 1e-3  # an atom of the learned measure is loaded if its weight exceeds this × the total weight;
SUPPORT_CLUSTER = 1e-3  # loaded atoms closer than this count as one (gflow.analysis.effective_support_size defaults)

# The transition at k = 2d̂ (:func:`knee`, :func:`transition_by_seed`), thresholds fixed before the confirmatory run
# (reasoning in transition_by_seed's docstring): seed 000 Sec. 5.1, Fig. 1(a), App. C.3.
KNEE_DROP = 10.0  # across its knee a seed's error falls by at least this factor between two consecutive k
KNEE_SHARPNESS = 6.0  # ... at a rate (decades per unit k) at least this × the median rate of its other steps
KNEE_TOLERANCE = 1  # the first k past the knee lies within 2d̂ + 1 ± this
KNEE_MAX_STEP = 2  # a knee located between two k farther apart than this is not resolved by the grid
ZERO_FACTOR = 10.0  # App. C.3: above 2d̂ the student's error is below the all-zero solution's by at least this factor
RESOLVED = 1e-6  # all-zero solution errors (relative to max|w|) below this are at the solver's resolution


def make_teacher(kind: str, dim: int, seed: int, placement: str = "random"):
    """A teacher of seed 000 App. C.2 by name.

    Args:
        kind: "balanced" (C.2.1, key = seed), "delay" (delay line, C.2.2) or "random_unbalanced" (C.2.2, key = seed).
        dim: the teacher's state dimension d̂.
        seed: the key of the random teachers.
        placement: the balanced teacher's eigenvalues, i.i.d. uniform ("random") or evenly spaced ("grid"): the
            paper's text allows both.

    Returns:
        The teacher (a :class:`gflow.LinearRNN`).
    """
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
    """The teacher of a panel for ``seed``.

    Args:
        p: the panel's settings (``teacher``, ``teacher_dim``, optional ``placement``).
        seed: the seed.

    Returns:
        :func:`make_teacher`'s teacher.
    """
    return make_teacher(p["teacher"], p["teacher_dim"], seed, p.get("placement", "random"))


def make_student(kind: str, d: int, scale: float, seed: int):
    """A student of seed 000 by name, key 1000 + seed (student and teacher draws are independent).

    Args:
        kind: "diagonal_balanced" (Sec. 5.1's diagonal student, balanced init B = Cᵀ) or "general" (a non-symmetric
            A with independent entries scale·N(0, 1), Sec. 5.2, App. B).
        d: the student's state dimension.
        scale: the init scale.
        seed: the seed.

    Returns:
        The student.
    """
    key = jax.random.key(1000 + seed)
    if kind == "diagonal_balanced":
        return initializers.balanced(key, d, scale=scale, structure="diagonal")
    if kind == "general":
        return initializers.gaussian(key, d, scale=scale)
    raise ValueError(f"unknown student {kind!r}; choose from {STUDENTS}")


def save_times(t1: float, n: int) -> np.ndarray:
    """The save times of a panel's flows.

    Args:
        t1: the last time.
        n: the number of times.

    Returns:
        t = 0 and n − 1 log-spaced times from 1e-2 to t1.
    """
    return np.concatenate([[0.0], np.geomspace(1e-2, t1, n - 1)])


def make_build(panels: dict, k_max: int):
    """``build(panel, k, seed, scale)`` for :func:`gflow.run_sweep`: the population loss (eq. 3.4) of the panel's
    teacher on k lags and the panel's student.

    Args:
        panels: panel name → settings.
        k_max: the loss holds k_max lags, zero weight beyond k, so that build is traceable in k, seed and scale and a
            panel is built in one vmapped call.

    Returns:
        The build function.
    """

    def build(panel: str, k: int, seed: int, scale: float):
        p = panels[panel]
        teacher = panel_teacher(p, seed)
        return gflow.PopulationLoss(teacher, k, k_max=k_max), make_student(p["student"], p["d"], scale, seed)

    return build


def valid_length(loss) -> int:
    """The part of a run that behaves as a gradient flow.

    Args:
        loss: the saved losses.

    Returns:
        The number of leading saved points before the loss first exceeds twice its smallest earlier value (plus
        NOISE_FLOOR × L(0)) or stops being finite.
    """
    loss = np.asarray(loss, dtype=np.float64)
    earlier_min = np.minimum.accumulate(np.concatenate([[np.inf], np.where(np.isfinite(loss), loss, np.inf)[:-1]]))
    bad = ~np.isfinite(loss) | (loss > 2.0 * earlier_min + NOISE_FLOOR * abs(loss[0]))
    return int(np.argmax(bad)) if bad.any() else len(loss)


def make_record(panels: dict, horizon: int):
    """``record(traj, config)`` for :func:`gflow.run_sweep`: the tail error at every saved time, the number of valid
    saved points (:func:`valid_length`), the last valid impulse response and the impulse response where L first
    reaches each decade 10^-m within the valid part.

    Args:
        panels: panel name → settings.
        horizon: the evaluation horizon H.

    Returns:
        The record function.
    """

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
    """One panel's sweep over k × seeds × scales, resumed from what is on disk.

    Args:
        name: the panel's name (its runs' identity).
        panels: panel name → settings.
        ks: the training lengths k of the grid.
        seeds: the seeds of the grid.
        scales: the initialization scales of the grid.
        t1: the flows' horizon.
        out: the study's folder; the sweep lives in ``out/sweeps/<name><tag>`` (a sweep per panel, so that the
            default atol follows the panel's own init scale).
        n_save: saved times per run (:func:`save_times`).
        rtol: the solver's rtol.
        horizon: the evaluation horizon H.
        batch_size: flows per batched solve.
        max_steps: solver steps per flow.
        tag: a suffix of the sweep's folder.
        executor: where to run (None: in this process).
        slots: each batch runs through that many refilling slots (:func:`gflow.solve_flows`); None lock-step.

    Returns:
        The sweep's runs (:func:`gflow.run_sweep`).
    """
    grid = {"panel": [name], "k": list(ks), "seed": list(seeds), "scale": [float(s) for s in scales]}
    refill = {} if slots is None else {"slots": slots}  # (not given: the runs keep the names lock-step runs have)
    return gflow.run_sweep(grid, make_build(panels, max(ks)), os.path.join(out, "sweeps", name + tag), t1=t1,
                           record=make_record(panels, horizon), save_at=save_times(t1, n_save), rtol=rtol,
                           batch_size=batch_size, max_steps=max_steps, traced=["k", "seed", "scale"], executor=executor,
                           **refill)


def teacher_scale(teacher, horizon: int) -> float:
    """The teacher's scale, by which every error is divided.

    Args:
        teacher: a linear teacher.
        horizon: the evaluation horizon H.

    Returns:
        max_{j<H} |w_j|.
    """
    return float(np.max(np.abs(np.asarray(teacher.impulse_response(horizon)))))


def zero_baseline(teacher, k: int, horizon: int) -> float:
    """Seed 000 App. C.3's "non-extrapolating" baseline.

    Args:
        teacher: a linear teacher.
        k: the training length: the tail is [k, H).
        horizon: the evaluation horizon H.

    Returns:
        The all-zero solution's tail error, relative to the teacher's scale.
    """
    return float(an.zero_solution_error(teacher, k, horizon)) / teacher_scale(teacher, horizon)


def errors_at_levels(runs, panels: dict, levels, horizon: int) -> dict:
    """Relative tail errors where each run first reaches each loss level (final state if never); only the valid part
    of a run (:func:`valid_length`) is read.

    Args:
        runs: a panel's sweep runs.
        panels: panel name → settings.
        levels: the loss levels.
        horizon: the evaluation horizon H.

    Returns:
        Arrays indexed [level, run]: ``error``, ``loss`` (the loss of the state read), ``reached`` (bool); and per
        run ``k``, ``seed``, ``final_error``, ``final_loss`` (at the last valid point), ``zero`` (the zero-solution
        baseline), ``solver_failed`` (the loss rose: only the part before is used) and ``converged`` (status
        "completed", no failure).
    """
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
    """Statistics over seeds for each training length.

    Args:
        values: a row of per-run values.
        ks_of_runs: each run's k.
        ks: the k values wanted.

    Returns:
        (median, mean, std) over each k's finite values, NaN where it has none.
    """
    med, mean, std = [], [], []
    for k in ks:
        v = values[ks_of_runs == k]
        v = v[np.isfinite(v)]
        med.append(np.median(v) if v.size else np.nan)
        mean.append(np.mean(v) if v.size else np.nan)
        std.append(np.std(v) if v.size else np.nan)
    return np.array(med), np.array(mean), np.array(std)


def per_seed(values, seeds_of_runs, select=None, reduce=np.median) -> dict:
    """One value per seed.

    Args:
        values: a row of per-run values.
        seeds_of_runs: each run's seed.
        select: a mask of the runs to use (None: all).
        reduce: what reduces a seed's values.

    Returns:
        {seed: reduce(its finite values where ``select``)}; a seed with none is left out.
    """
    values = np.asarray(values, dtype=np.float64)
    seeds_of_runs = np.asarray(seeds_of_runs)
    mask = np.isfinite(values) & (np.ones(values.shape, bool) if select is None else np.asarray(select, bool))
    return {int(s): float(reduce(values[mask & (seeds_of_runs == s)]))
            for s in np.unique(seeds_of_runs) if np.any(mask & (seeds_of_runs == s))}


def ratio_by_seed(numerator: dict, denominator: dict, floor: float = RATIO_FLOOR) -> dict:
    """A ratio per seed.

    Args:
        numerator: {seed: value}.
        denominator: {seed: value}.
        floor: the smallest denominator (below it the error is rounding).

    Returns:
        {seed: numerator / max(denominator, floor)} over the seeds both have.
    """
    return {s: numerator[s] / max(denominator[s], floor) for s in numerator if s in denominator}


def contrast_by_seed(errors, ks_of_runs, seeds_of_runs, k_critical: int) -> tuple[dict, dict, dict]:
    """The contrast of seed 000 Fig. 1 per seed.

    Args:
        errors: a row of per-run errors.
        ks_of_runs: each run's k.
        seeds_of_runs: each run's seed.
        k_critical: k_c = 2d̂, left out.

    Returns:
        (median error over the seed's runs with k < k_c, the same over k > k_c, their ratio), each {seed: value}; a
        median above k_c below RATIO_FLOOR counts as RATIO_FLOOR.
    """
    ks_of_runs = np.asarray(ks_of_runs)
    below = per_seed(errors, seeds_of_runs, ks_of_runs < k_critical)
    above = per_seed(errors, seeds_of_runs, ks_of_runs > k_critical)
    return below, above, ratio_by_seed(below, above)


def knee(ks, errors, floor: float = RATIO_FLOOR) -> dict | None:
    """The knee of one seed's error-vs-k curve: its steepest fall of log10 error per unit k between consecutive k.

    The grid of k need not be even (the study's grid is finer around 2d̂), so the fall between consecutive k is
    divided by their distance; the knee's *sharpness* compares that rate with the curve's typical one, the median
    of |rate| over its other steps, so that a curve falling evenly (of any steepness) has sharpness ≈ 1.

    Args:
        ks: the training lengths of the seed's runs.
        errors: their errors (non-finite ones are left out; errors below ``floor`` count as ``floor``).
        floor: the smallest error read (below it is rounding).

    Returns:
        ``{"k_before", "k_after", "drop", "rate", "typical_rate", "sharpness", "points"}``: the k on either side of
        the steepest fall, the factor error(k_before) / error(k_after), the fall in decades per unit k, the median
        |rate| of the other steps, rate / typical rate (inf when the other steps are flat) and the number of points
        used; None with fewer than three finite points (a knee needs steps on either side to compare).
    """
    ks = np.asarray(ks, dtype=np.float64)
    errors = np.asarray(errors, dtype=np.float64)
    keep = np.isfinite(errors) & np.isfinite(ks)
    ks, errors = ks[keep], errors[keep]
    order = np.argsort(ks, kind="stable")
    ks, y = ks[order], np.log10(np.maximum(errors[order], floor))
    if ks.size < 3 or np.any(np.diff(ks) <= 0):
        return None
    fall = -np.diff(y)
    rate = fall / np.diff(ks)
    i = int(np.argmax(rate))
    typical = float(np.median(np.abs(np.delete(rate, i))))
    sharp = float(rate[i] / typical) if typical > 0 else (float("inf") if rate[i] > 0 else 0.0)
    return {"k_before": int(ks[i]), "k_after": int(ks[i + 1]), "drop": float(10.0 ** fall[i]),
            "rate": float(rate[i]), "typical_rate": typical, "sharpness": sharp, "points": int(ks.size)}


def knee_at(info: dict | None, k_critical: int) -> dict:
    """Whether a :func:`knee` is seed 000's transition at k = 2d̂: where it is, and how sharp.

    Args:
        info: a :func:`knee` (None: no knee).
        k_critical: 2d̂.

    Returns:
        ``{"located", "sharp", "transition"}``: the first k past the knee within 2d̂ + 1 ± KNEE_TOLERANCE and at
        most KNEE_MAX_STEP past the k before it; the fall at least KNEE_DROP and the sharpness at least
        KNEE_SHARPNESS; both.
    """
    if info is None:
        return {"located": False, "sharp": False, "transition": False}
    located = (abs(info["k_after"] - (k_critical + 1)) <= KNEE_TOLERANCE
               and info["k_after"] - info["k_before"] <= KNEE_MAX_STEP)
    sharp = info["drop"] >= KNEE_DROP and info["sharpness"] >= KNEE_SHARPNESS
    return {"located": bool(located), "sharp": bool(sharp), "transition": bool(located and sharp)}


def transition_by_seed(errors, ks_of_runs, seeds_of_runs, k_critical: int, zero=None,
                       resolved: float = RESOLVED) -> dict:
    """Seed 000's phase transition at k = 2d̂, decided per seed on its error-vs-k curve (Sec. 5.1: "when k > 2d̂
    extrapolation error is low, whereas when k falls below 2d̂ extrapolation error is high"; Fig. 1(a); App. C.3).

    A seed shows the transition when its curve's knee (:func:`knee`, the steepest fall of log error per unit k)

    - lies at 2d̂: the first k past the knee is within 2d̂ + 1 ± KNEE_TOLERANCE (= 1) and at most KNEE_MAX_STEP
      (= 2) past the k before it. 2d̂ + 1 is the first k Thm 5 covers (k > 2d̂), Cor. A.2 covers k ≤ 2d̂ − 1 and
      k = 2d̂ is covered by neither, so the knee's k_after = 2d̂ (low already at 2d̂) and 2d̂ + 2 (still high at
      2d̂ + 1, a finite-loss slack) are allowed, nothing farther: a teacher of another d̂' (knee at 2d̂' + 1, at
      least 2 away) or a knee at 2d̂ + 6 fails;
    - is a drop, not a trend: the error falls by at least KNEE_DROP (= 10, one decade) between two consecutive k,
      and at a rate (decades per unit k) at least KNEE_SHARPNESS (= 6) times the median |rate| of the curve's other
      steps. A curve falling evenly with k, however steeply, has sharpness ≈ 1 and fails, whatever its errors
      below and above 2d̂ (the below/above contrast of :func:`contrast_by_seed` passes it); the Fig. 1 caption's
      "gradual transition" (numerical errors at finite loss) fails too: under exact flow the paper expects it to
      sharpen. One decade is the least fall that reads as "high" → "low" on Fig. 1(a)'s log axis. The sharpness
      bar was set on synthetic curves before any run of this check, on the study's k grid (4, 6, 8, 9, 10, 11, 12,
      14, …, 30): an even fall of 0.05 to 1 decade per unit k with independent scatter of 0.3 (0.5) decades per
      point passes the whole per-seed criterion on at most ≈ 1 % (≈ 7 %) of draws, a 3-decade step at 2d̂ with
      the same scatter on ≈ 100 % (≈ 97 %); the unit spacing of the grid around 2d̂ alone puts the knee of about
      half of the even-fall draws at 2d̂, which is why location is never enough.

    With ``zero`` (App. C.3: "A model is considered non-extrapolating if the extrapolation error is worse than the
    extrapolation error of a trivial solution which has an impulse response of zeros") the curve is the C.3 ratio
    error / zero-solution error, read only on the k whose zero-solution error exceeds ``resolved`` (below it both
    errors sit at the solver's resolution): the teacher's own decay (a decade per unit k for App. C.2.2's random
    unbalanced teacher) drops out, the all-zero solution's curve is flat at 1, and the seed must in addition beat
    the zero solution by ZERO_FACTOR (= 10) above 2d̂: median ratio over its resolved k > 2d̂ ≤ 1 / ZERO_FACTOR.
    A seed whose read curve has no k below 2d̂ or none above it, or fewer than three k, cannot show a transition at
    2d̂ and is left out.

    Args:
        errors: a row of per-run errors (relative tail errors).
        ks_of_runs: each run's k.
        seeds_of_runs: each run's seed.
        k_critical: 2d̂.
        zero: each run's all-zero solution error (None: the error curve itself).
        resolved: with ``zero``, the least zero-solution error read.

    Returns:
        {seed: the :func:`knee` fields, the :func:`knee_at` fields, ``ks`` (the k read) and, with ``zero``,
        ``beats_zero`` and ``median_ratio_above``}; ``transition`` is the seed's outcome.
    """
    errors = np.asarray(errors, dtype=np.float64)
    ks_of_runs = np.asarray(ks_of_runs)
    seeds_of_runs = np.asarray(seeds_of_runs)
    use = np.isfinite(errors)
    if zero is not None:
        zero = np.asarray(zero, dtype=np.float64)
        use &= np.isfinite(zero) & (zero > resolved)
        errors = errors / np.where(use, zero, 1.0)
    out = {}
    for s in np.unique(seeds_of_runs):
        mine = use & (seeds_of_runs == s)
        ks = ks_of_runs[mine]
        if not (np.any(ks < k_critical) and np.any(ks > k_critical)):
            continue
        info = knee(ks, errors[mine])
        if info is None:
            continue
        entry = {**info, **knee_at(info, k_critical), "ks": sorted(int(k) for k in ks)}
        if zero is not None:
            above = float(np.median(errors[mine & (ks_of_runs > k_critical)]))
            entry.update(median_ratio_above=above, beats_zero=bool(above <= 1.0 / ZERO_FACTOR))
            entry["transition"] = entry["transition"] and entry["beats_zero"]
        out[int(s)] = entry
    return out


def support_by_seed(runs, table, kc, level, measure=None, reduce=np.max) -> dict:
    """Seed 000 Lemma 7's support of the final students, per seed.

    Args:
        runs: a panel's sweep runs.
        table: their :func:`errors_at_levels`.
        kc: only runs with k > kc count.
        level: only runs whose final loss is ≤ ``level`` count (Lemma 7 is about the final state of loss ≤ level).
        measure: a function of the final student (default: :func:`gflow.analysis.effective_support_size` at
            SUPPORT_WEIGHT, SUPPORT_CLUSTER).
        reduce: what reduces a seed's values (default the largest).

    Returns:
        {seed: value}.
    """
    def support_size(model):
        return an.effective_support_size(model, weight_threshold=SUPPORT_WEIGHT, cluster_tol=SUPPORT_CLUSTER)
    measure = measure or support_size
    values = np.full(len(runs), np.nan)
    for r, run in enumerate(runs):
        if run.config["k"] > kc and run.loss[-1] <= level:
            values[r] = measure(run.final)
    return per_seed(values, table["seed"], reduce=reduce)


def mass_outside_top_atoms(model, d_hat: int) -> float:
    """The spectral weight Σ|g_i| of ``model`` (:func:`gflow.analysis.spectral_measure`) outside its ``d_hat``
    heaviest atoms, atoms within SUPPORT_CLUSTER merged (single linkage, :func:`gflow.analysis.clustered_atoms`),
    over the total: 0 for a measure of ≤ d̂ atoms (seed 000 Thm 5, Lemma 7).

    Args:
        model: a SISO student with symmetric A.
        d_hat: the number of atoms kept.

    Returns:
        The fraction (nan for a zero measure).
    """
    atoms, weights = (np.asarray(x) for x in an.spectral_measure(model))
    mass = np.sort(an.clustered_atoms(atoms, np.abs(weights), SUPPORT_CLUSTER).weights)[::-1]
    total = float(np.sum(mass))
    return float(np.sum(mass[d_hat:]) / total) if total > 0 else float("nan")


class ResponseView:
    """An impulse response held as data (what the analysis functions need of a model).

    Args:
        ir: the response h_0, h_1, ….
    """

    def __init__(self, ir):
        self.ir = np.asarray(ir)

    def impulse_response(self, n):
        return self.ir[:n]


def read_model(run, level) -> ResponseView:
    """The student's impulse response at the first saved point with L ≤ level, or the final one if the flow never
    got there.

    Args:
        run: a sweep run of :func:`run_panel`.
        level: a power of ten.

    Returns:
        The response as a :class:`ResponseView`.
    """
    decade = -int(np.round(np.log10(level)))
    ir = run.record["ir_decades"][decade] if decade < len(run.record["ir_decades"]) else run.record["ir_final"]
    return ResponseView(ir if np.all(np.isfinite(ir)) else run.record["ir_final"])


def students(runs, p: dict, ks, horizon: int, level: float) -> list[dict]:
    """The students of a panel trained with k in ``ks``, read at ``level``.

    Args:
        runs: the panel's sweep runs.
        p: the panel's settings.
        ks: the training lengths wanted.
        horizon: the evaluation horizon H.
        level: the loss level read (:func:`read_model`).

    Returns:
        One dict per student: k, seed, the seed's teacher and scale max_{j<H}|w_j|, the response ("model"), and its
        window and tail errors relative to that scale.
    """
    out = []
    for r in runs:
        k = int(r.config["k"])
        if k not in ks:
            continue
        teacher = panel_teacher(p, r.config["seed"])
        s = teacher_scale(teacher, horizon)
        w = np.asarray(teacher.impulse_response(horizon))
        m = read_model(r, level)
        out.append({"k": k, "seed": int(r.config["seed"]), "teacher": teacher, "scale": s, "model": m,
                    "window": float(np.max(np.abs(m.ir[:k] - w[:k]))) / s,
                    "tail": float(np.max(np.abs(m.ir[k:] - w[k:]))) / s})
    return out


def plot_error_curves(ax, ks, curves, zero, k_critical: int, title: str):
    """Seed 000 Fig. 1's picture: the median relative tail error against k, shaded mean ± std over seeds, with the
    all-zero solution's error and k = 2d̂.

    Args:
        ax: a matplotlib axes.
        ks: the k values.
        curves: (label, errors per run, k per run, reached per run) per curve.
        zero: (k per run, the all-zero solution's error per run).
        k_critical: 2d̂.
        title: the panel's title.

    Returns:
        None: it draws on ``ax``.
    """
    import matplotlib.pyplot as plt

    colors = plt.cm.viridis(np.linspace(0.0, 0.85, len(curves)))
    ks = np.asarray(ks)
    floor = 1e-16
    for color, (label, errors, k_of_runs, reached) in zip(colors, curves):
        med, mean, std = by_k(errors, k_of_runs, ks)
        frac = float(np.mean(reached)) if np.size(reached) else 1.0
        ax.semilogy(ks, med, "o-", ms=3, color=color,
                    label=label + (f" ({100 * frac:.0f}% reached)" if frac < 1 else ""))
        floor = max(floor, np.nanmin(med[med > 0]) / 10 if np.any(med > 0) else floor)
        ax.fill_between(ks, np.maximum(mean - std, floor), mean + std, color=color, alpha=0.12)
    zero_med, _, _ = by_k(zero[1], zero[0], ks)
    ax.semilogy(ks, zero_med, "k--", lw=1, label="all-zero solution")
    ax.axvline(k_critical, color="gray", lw=0.8, ls=":", label="k = 2d̂")
    ax.set(xlabel="training length k", ylabel="tail error / max |w_j|")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)


def figures(panels: dict, runs_of: dict, tables: dict, ks_of: dict, *, seeds: int, horizon: int, levels,
            first_seed: int = 0) -> dict:
    """Seed 000's figures from a study's panels: one per panel, the two readings of C.2.1 side by side (fig1a.png:
    one column per reading; likewise fig1a_d<d>.png, fig1a_sizes.png and fig5.png, Figs. 1(a), 5); fig1b.png,
    fig3a.png, fig3b.png (Figs. 1(b), 3) and fig6.png (Fig. 6).

    Args:
        panels: panel name → settings.
        runs_of: panel name → its sweep runs.
        tables: panel name → its :func:`errors_at_levels`.
        ks_of: panel name → its k values.
        seeds: the seeds per k (for the titles).
        horizon: the evaluation horizon H.
        levels: the loss levels read, falling.
        first_seed: the seed whose teacher and students Fig. 5 shows (the first of the run's block).

    Returns:
        file name → matplotlib figure.
    """
    out = {}
    seeds_h = f"{seeds} seed(s); H = {horizon}"
    groups = {}  # the file of a panel: fig1a_grid and fig1a_grid_d<d> share fig1a's and fig1a_d<d>'s
    for name in tables:
        groups.setdefault(name.replace("_grid", ""), []).append(name)
    for file, names in groups.items():
        columns = []
        for name in names:
            p, table = panels[name], tables[name]
            curves = [(f"L ≤ {level:.0e}", table["error"][i], table["k"], table["reached"][i])
                      for i, level in enumerate(levels)]
            reading = f"\n{READINGS[p['reading']]}" if p.get("reading") else ""
            columns.append((ks_of[name], curves, table, 2 * p["teacher_dim"],
                            f"seed 000 {p['source']}{reading}\n{p['teacher']} teacher d̂={p['teacher_dim']}, "
                            f"{p['student']} student d={p['d']}, init {p['scale']:g}\n(gradient flow on the "
                            f"population loss; {seeds_h})"))
        out[f"{file}.png"] = _error_figure(columns)
    columns = []
    for reading, base in READING_PANELS.items():
        sizes = [n for n in tables if n == base or panels[n].get("size_of") == base]
        if len(sizes) > 1:  # Sec. 5.1: d = 100, 200 "qualitatively identical" to d = 40
            curves = [(f"d = {panels[n]['d']}", tables[n]["error"][-1], tables[n]["k"], tables[n]["reached"][-1])
                      for n in sizes]
            columns.append((sorted(set().union(*(ks_of[n] for n in sizes))), curves, tables[base],
                            10, f"seed 000 Fig. 1(a) at several student sizes, read at L ≤ {levels[-1]:g}\n"
                                f"{READINGS[reading]} ({seeds_h})"))
    if columns:
        out["fig1a_sizes.png"] = _error_figure(columns)
    fig5 = [(f"{READINGS[reading]}", panels[panel], runs_of[panel]) for reading, panel in READING_PANELS.items()
            if panel in runs_of]
    if fig5:
        out["fig5.png"] = _response_figure("fig5", fig5, (10, 20), horizon, levels[-1], first_seed)
    if "fig1b" in runs_of:
        out["fig6.png"] = _response_figure("fig6", [("", panels["fig1b"], runs_of["fig1b"])], (8, 18, 20), horizon,
                                           levels[-1])
    return out


def _error_figure(columns):
    """Error against k, one column per (ks, curves, table (for the zero baseline), 2d̂, title)."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(columns), figsize=(6.5 * len(columns), 4.8), squeeze=False, sharey=True)
    for ax, (ks, curves, zero_table, k_critical, title) in zip(axes[0], columns):
        plot_error_curves(ax, ks, curves, (zero_table["k"], zero_table["zero"]), k_critical, title)
    return fig


def _response_figure(fig_name, columns, ks, horizon, level, first_seed=0):
    """Figs. 5 and 6: the students' impulse responses read at ``level`` against the teacher's, one column per
    (reading, panel settings, runs). Fig. 5: the teacher changes with the seed, so ``first_seed`` only; Fig. 6: the
    average over seeds (thin: each; the delay teacher is the same for every seed)."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(columns), figsize=(7 * len(columns), 4.8), squeeze=False)
    for ax, (reading, p, runs) in zip(axes[0], columns):
        w = np.asarray(panel_teacher(p, first_seed).impulse_response(horizon))
        j = np.arange(horizon)
        ax.plot(j, w, "k-", lw=2.5, alpha=0.5,
                label="teacher" + (f" (seed {first_seed})" if fig_name == "fig5" else ""))
        for c, k in zip(plt.cm.tab10.colors, ks):
            irs = np.array([read_model(r, level).ir for r in runs
                            if r.config["k"] == k and (fig_name == "fig6" or r.config["seed"] == first_seed)])
            if not len(irs):
                continue
            for ir in irs if len(irs) > 1 else []:
                ax.plot(j, ir, color=c, lw=0.6, alpha=0.5)
            ax.plot(j, irs.mean(axis=0), color=c, lw=1.4,
                    label=f"student k = {k}" + (f" (mean of {len(irs)} seeds)" if len(irs) > 1 else ""))
            ax.axvline(k, color=c, lw=0.8, ls=":")
        lim = 1.5 * np.max(np.abs(w))
        ax.set(xlabel="j", ylabel="impulse response h_j", ylim=(-lim, lim))
        title = (f"seed 000 {'Fig. 5' if fig_name == 'fig5' else 'Fig. 6'} (App. B.3): {p['teacher']} teacher "
                 f"d̂={p['teacher_dim']}, students d={p['d']} at L ≤ {level:g}")
        ax.set_title(title + (f"\n{reading}" if reading else ""), fontsize=9)
        ax.legend(fontsize=8)
    return fig
