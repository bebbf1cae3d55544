"""Lazy training with width: the tasks, models, trainings (:func:`train`, :func:`train_widths`) and measures of three
papers' settings, as studies/lazy_width.py trains them at every width, and its figure (:func:`figure`).

- "004": Allen-Zhu & Li (NeurIPS 2019), seed 004's ReLU Elman RNN, W, A ~ N(0, 2/m), B ~ N(0, 1/d_out), only W
  trained, outputs at steps j = 3 … L, labels of the token-sum concept class on normalized sequences;
- "002": Panigrahi & Goyal (NeurIPS 2021), seed 002 Def. 3.2's RNN with B ~ N(0, 2/d_out), W and A trained, output
  at the last step only, labels of the sequence concept class (Def. 3.3);
- "003": Cayci & Eryilmaz, seed 003's diagonal tanh RNN with output scale 1/√m and symmetric initialization
  (Definition 1), W_ii and U trained, every step supervised, labels of a transport-map teacher (eq. 8) on inputs
  uniform in the unit ball.
"""

from __future__ import annotations

import math
import time
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import gflow
from gflow import analysis as an
from gflow.objectives import nonlinear_teachers as nt

SETTINGS = ("004", "002", "003")


def time_scale(setting: str, m: int) -> float:
    """t per unit of rescaled time τ: 1/m in the standard parameterization of seeds 002/004 (the NTK is Θ(m); derived
    here from seed 002's step size η = Θ(1/(ερ²m))), 1 for seed 003, whose output 1/√m already has the NTK scaling.

    Args:
        setting: "004", "002" or "003".
        m: the width.

    Returns:
        The time scale.
    """
    return 1.0 if setting == "003" else 1.0 / m


class Task(NamedTuple):
    """One setting's task: the training sample Z (``inputs`` (N, L, d), ``labels`` (N, L)), its supervised
    ``steps``, and for 002/004 fresh sequences of the same teacher, labels scaled by the same factor: the
    Monte-Carlo estimate of the population E_D (004-P6, 002-P5)."""

    inputs: jax.Array
    labels: jax.Array
    steps: object
    test_inputs: jax.Array | None = None
    test_labels: jax.Array | None = None


def sample_inputs(setting: str, key, n: int, length: int, d: int, eps_x: float) -> jax.Array:
    """Input sequences of a setting.

    Args:
        setting: "004", "002" or "003".
        key: a JAX key.
        n: the number of sequences.
        length: their length L.
        d: the token dimension.
        eps_x: the token scale of the normalized sequences (002/004; seed 002 Def. 3.1).

    Returns:
        (n, L, d): normalized token sequences (002/004), uniform in the unit ball (003).
    """
    if setting == "003":
        return gflow.objectives.unit_ball_sequences(key, n, length, d)
    return gflow.objectives.normalized_token_sequences(key, n, length, d, eps_x=eps_x)


def make_task(setting: str, *, length: int, d: int, n: int, n_test: int, eps_x: float, alpha: float,
              label_rms: float, seed: int) -> Task:
    """The :class:`Task` of one setting.

    Args:
        setting: "004", "002" or "003".
        length: the sequence length L.
        d: the token dimension.
        n: the training sequences N.
        n_test: the fresh sequences estimating the population loss (002/004).
        eps_x: the token scale of the normalized sequences (002/004).
        alpha: |W_ii(0)| of seed 003's teacher.
        label_rms: the labels are scaled to this RMS on the supervised steps of the training sample.
        seed: the key of the teacher and the sample.

    Returns:
        The task.
    """
    k_teacher, k_x = jax.random.split(jax.random.key(seed))
    if setting == "003":
        teacher, steps = nt.transport_teacher(k_teacher, d, alpha=alpha), "all"
    else:
        make = nt.token_sum_teacher if setting == "004" else nt.sequence_concept_teacher
        teacher = make(k_teacher, length, d, eps_x=eps_x)
        steps = range(3, length + 1) if setting == "004" else "last"
    inputs = sample_inputs(setting, k_x, n, length, d, eps_x)
    labels = jax.vmap(teacher)(inputs)
    w = np.asarray(gflow.objectives.SampleLoss(inputs, labels, steps=steps).step_weights)
    factor = label_rms / float(jnp.sqrt(jnp.sum(w * labels**2) / (n * w.sum())))
    if setting == "003":  # no population check: seed 003 states none, and its Monte-Carlo teacher is costly
        return Task(inputs, labels * factor, steps)
    test = sample_inputs(setting, jax.random.fold_in(k_x, 1), n_test, length, d, eps_x)  # a key apart from Z's
    return Task(inputs, labels * factor, steps, test, jax.vmap(teacher)(test) * factor)


def make_model(setting: str, seed: int, m: int, d: int, alpha: float):
    """The setting's network at initialization, key 1000 + seed.

    Args:
        setting: "004", "002" or "003".
        seed: the seed.
        m: the width.
        d: the token dimension.
        alpha: |W_ii(0)| of seed 003's symmetric initialization.

    Returns:
        The model.
    """
    key = jax.random.key(1000 + seed)
    if setting == "004":
        return gflow.models.elman_allen_zhu_li(key, m, d)
    if setting == "002":
        return gflow.models.elman_panigrahi_goyal(key, m, d)
    return gflow.models.elman_cayci_eryilmaz(key, m, d, alpha=alpha)


def centered_loss(model0, inputs, labels, steps, centering: bool):
    """The sample loss of the centered predictor F(θ) − F(θ0) (labels y + F(θ0)(x)), which removes the initial
    output that the papers' small output factor λ exists to make negligible, or of F(θ) without centering.

    Args:
        model0: the network at initialization.
        inputs: the sample's input sequences.
        labels: their labels.
        steps: the supervised steps.
        centering: whether to center.

    Returns:
        The :class:`gflow.objectives.SampleLoss`.
    """
    shift = jax.vmap(model0)(inputs) if centering else 0.0
    return gflow.objectives.SampleLoss(inputs, labels + shift, steps=steps)


@eqx.filter_jit
def lazy_measures(model0, model, inputs, step_weights):
    """The lazy measures of ``model`` (``model0`` after training) on ``inputs``: movement (004-P1, 002-P3,
    003-P9), linearization error against the JVP at θ0 (seed 002's pseudo-network, seed 004 Lemma 6.1), ReLU flips
    (004-P3) and hidden-state drift (004-P2).

    Args:
        model0: the network at initialization.
        model: the trained network.
        inputs: (N, L, d).
        step_weights: (L,), > 0 at the supervised steps, over which the linearization error is averaged.

    Returns:
        name → 0-d array.
    """
    w = (step_weights > 0).astype(inputs.dtype)
    count = inputs.shape[0] * jnp.sum(w)
    lin = an.linearization_error(model0, model, inputs)
    moved = jax.vmap(model)(inputs) - jax.vmap(model0)(inputs)
    m = model.width
    out = {"movement": an.movement(model0, model), "relative_movement": an.relative_movement(model0, model),
           "neuron_movement": an.neuron_movement(model0, model),
           "linearization_error": jnp.sqrt(jnp.sum(w * lin**2) / count),
           "linearization_error_max": jnp.max(w * lin),
           "function_movement": jnp.sqrt(jnp.sum(w * moved**2) / count),
           "hidden_drift": jnp.mean(an.hidden_state_drift(model0, model, inputs)),
           "hidden_drift_relative": relative_hidden_drift(model0, model, inputs)}
    out["rescaled_movement"] = jnp.sqrt(m) * out["movement"]
    if model.activation == "relu":
        flips = an.activation_flips(model0, model, inputs)  # (N, L)
        out["flip_fraction"] = jnp.mean(flips)
        out["flip_fraction_max_step"] = jnp.max(jnp.mean(flips, axis=0))
    return out


def relative_hidden_drift(model0, model, inputs):
    """Forward stability (004-P2, "for all i ≤ L"): max_t mean_n ‖h_t(θ) − h_t(θ0)‖ / ‖h_t(θ0)‖; a zero hidden
    state at θ0 counts as no drift.

    Args:
        model0: the network at initialization.
        model: the trained network.
        inputs: (N, L, d).

    Returns:
        The drift, a 0-d array.
    """
    norm0 = jnp.linalg.norm(jax.vmap(model0.hidden_states)(inputs), axis=-1)  # (N, L)
    rel = an.hidden_state_drift(model0, model, inputs) / jnp.where(norm0 > 0, norm0, 1.0)
    return jnp.max(jnp.mean(jnp.where(norm0 > 0, rel, 0.0), axis=0))


@eqx.filter_jit
def init_output_max(model0, inputs, step_weights):
    """The output at initialization that seed 002's λ has to make negligible (002-P8).

    Args:
        model0: the network at initialization.
        inputs: (N, L, d).
        step_weights: (L,), > 0 at the supervised steps.

    Returns:
        max |F_j(x; θ0)| over the sequences and the supervised steps.
    """
    out = jnp.abs(jax.vmap(model0)(inputs))
    out = out.reshape(out.shape[:2] + (-1,))
    return jnp.max(jnp.where((step_weights > 0)[None, :, None], out, 0.0))


def lambda_ratio(output_max: float, length: int, m: int, n_out: int = 1) -> float:
    """λ max|F(θ0)| / (ε/(10L)) with the papers' λ = ε/(10Lρ), ρ = 100 L d_out ln m
    (:func:`gflow.models.theory_output_scale`); 002-P8 (λ F(θ0) negligible) and 004-P14 (λ‖F_j(W_0)‖ ≤ ε/(10L)) ask
    for at most 1.

    Args:
        output_max: :func:`init_output_max`.
        length: the sequence length L.
        m: the width.
        n_out: the output dimension d_out.

    Returns:
        The ratio (independent of ε: max|F(θ0)| / ρ).
    """
    return gflow.models.theory_output_scale(1.0, length, m, n_out) * output_max * 10.0 * length


def width_and_a(model0):
    """``model0`` with W and A trained (seed 002's choice) instead of W only (seed 004's): the comparison of
    004-P14. Same arrays, same λ.

    Args:
        model0: a seed-004 network.

    Returns:
        The network with W and A trained.
    """
    def u(x):
        return x.value if isinstance(x, gflow.models.Frozen) else x

    return gflow.models.ElmanRNN(u(model0.W), u(model0.A), u(model0.B), activation=model0.activation,
                                 output_scale=model0.output_scale.value, trained=("W", "A"))


@eqx.filter_jit
def loss_at(loss, model):
    """The objective of the trained predictor on a sample (E_Z Obj on the training sample, the estimate of E_D Obj
    on the fresh one; 004-P6), compiled.

    Args:
        loss: a sample loss.
        model: the network.

    Returns:
        ``loss(model)``.
    """
    return loss(model)


@eqx.filter_jit
def position_losses(loss, model):
    """The loss split by output position j (004-P12: one shared W learns every position).

    Args:
        loss: a :class:`gflow.objectives.SampleLoss`.
        model: the network.

    Returns:
        scale · (1/N) Σ_n ‖F_j(x⁽ⁿ⁾) − y⁽ⁿ⁾_j‖² at the supervised steps, in the order of ``loss.supervised``; they sum
        to ``loss(model)``.
    """
    err = jax.vmap(model)(loss.inputs) - loss.labels
    per_step = jnp.mean(jnp.sum(err.reshape(err.shape[:2] + (-1,)) ** 2, axis=-1), axis=0)
    return loss.scale * per_step[np.asarray(loss.supervised)]


@eqx.filter_jit
def hidden_norms(model0, inputs):
    """The hidden states' mean square norms at initialization (002-P9).

    Args:
        model0: the network at initialization.
        inputs: (N, L, d).

    Returns:
        E_n ‖h_l‖², l = 1 … L.
    """
    return jnp.mean(jnp.sum(jax.vmap(model0.hidden_states)(inputs) ** 2, axis=-1), axis=0)


def predicted_hidden_norms(length: int, eps_x: float) -> np.ndarray:
    """The He recursion E‖h_l‖² = ‖h_{l−1}‖² + ‖x_l‖² with ‖x_1‖ = ‖x_L‖ = 1, ‖x_l‖ = ε_x otherwise (002-P9).

    Args:
        length: the sequence length L.
        eps_x: the token scale.

    Returns:
        E‖h_l‖², l = 1 … L.
    """
    x2 = np.r_[1.0, np.full(length - 2, eps_x**2), 1.0]
    return np.cumsum(x2)


def medians(rows_by_width, key):
    """Median over seeds of a measure at every width.

    Args:
        rows_by_width: {m: one row per seed}.
        key: the measure.

    Returns:
        (widths, medians) as arrays, widths ascending.
    """
    widths = sorted(rows_by_width)
    return np.asarray(widths, dtype=float), np.asarray([np.median([r[key] for r in rows_by_width[m]])
                                                        for m in widths])


def fit_exponent(widths, values):
    """The power law values ≈ c m^p, least squares in log-log (:func:`gflow.analysis.fit_power_law_with_prefactor`)
    over the positive values.

    Args:
        widths: the widths m.
        values: one value per width.

    Returns:
        (p, c); (nan, nan) when fewer than two values are positive (e.g. no ReLU flipped at all).
    """
    widths, values = np.asarray(widths, float), np.asarray(values, float)
    if np.sum((values > 0) & np.isfinite(values)) < 2:
        return float("nan"), float("nan")
    return an.fit_power_law_with_prefactor(widths, values)


def per_seed_exponents(rows_by_width, key):
    """The exponent of a measure in m, fitted separately for every seed (:func:`fit_exponent`).

    Args:
        rows_by_width: {m: one row per seed}.
        key: the measure.

    Returns:
        One exponent per seed (seed s at all widths).
    """
    widths = sorted(rows_by_width)
    seeds = min(len(rows_by_width[m]) for m in widths)
    return np.asarray([fit_exponent(widths, [rows_by_width[m][s][key] for m in widths])[0] for s in range(seeds)])



def study_task(setting: str, args) -> Task:
    """The setting's task (:func:`make_task`) at the study's options.

    Args:
        setting: "004", "002" or "003".
        args: the study's options (``length``, ``d``, ``n``, ``n_test``, ``eps_x``, ``alpha``, ``label_rms``,
            ``task_seed``).

    Returns:
        The :class:`Task`.
    """
    return make_task(setting, length=args.length, d=args.d, n=args.n, n_test=args.n_test, eps_x=args.eps_x,
                     alpha=args.alpha, label_rms=args.label_rms, seed=args.task_seed)


def train(setting, seed, m, args, task, eta_bar, both_layers=False, population=True):
    """Full-batch gradient descent (explicit Euler for the gradient flow) for rescaled time τ = ``args.tau`` at step
    η = η̄·:func:`time_scale`, and the lazy-training measures of its end point against its start: movement,
    linearization error, ReLU flips, hidden-state drift (seed 004 Lemmas 6.1, 7.1, App. F; seed 002 Thm 3.1; seed
    003 Theorem 2, Prop. 4), the training loss per position, the population loss, and at initialization the output
    max against ρ (002-P8, 004-P14), the hidden norms and ‖W‖₂ (002-P9).

    Args:
        setting: "004", "002" or "003".
        seed: the initialization's seed.
        m: the width.
        args: the study's options (``tau``, ``centering``, ``label_rms``, ``length``, ``d``, ``alpha``).
        task: the setting's :class:`Task`.
        eta_bar: the rescaled step η̄.
        both_layers: train W and A of a seed-004 model (004-P14).
        population: estimate E_D Obj on the task's fresh sequences (002/004; off for the runs no population check
            uses: at m = 4096 it costs about a fifth of a run).

    Returns:
        (row of measures, seconds).
    """
    inputs = task.inputs
    model0 = make_model(setting, seed, m, args.d, args.alpha)
    if both_layers:
        model0 = width_and_a(model0)
    loss = centered_loss(model0, inputs, task.labels, task.steps, args.centering)
    n_steps = int(math.ceil(args.tau / eta_bar - 1e-9))
    lr = eta_bar * time_scale(setting, m)
    started = time.perf_counter()
    traj = gflow.discrete.run_gd(loss, model0, lr=lr, steps=n_steps, save_at=np.array([0, n_steps]), progress=False,
                        config={"study": "lazy_width", "setting": setting, "width": m, "seed": seed})
    if traj.status != "completed":
        raise RuntimeError(f"GD for setting {setting}, m = {m}, seed {seed} did not complete: {traj.message}")
    row = {k: float(v) for k, v in lazy_measures(model0, traj.final, inputs, loss.step_weights).items()}
    row.update(loss_initial=float(traj.loss[0]), loss_final=float(traj.loss[-1]),
               loss_ratio=float(traj.loss[-1] / traj.loss[0]), steps=n_steps, lr=lr, t=lr * n_steps,
               label_energy=float(jnp.sum(loss.step_weights)) * args.label_rms**2,  # the zero predictor's E_Z Obj
               positions=[t + 1 for t in loss.supervised],
               position_loss_initial=np.asarray(position_losses(loss, model0)).tolist(),
               position_loss_final=np.asarray(position_losses(loss, traj.final)).tolist())
    if population and task.test_inputs is not None:  # 004-P6, 002-P5: E_D Obj − E_Z Obj
        test = centered_loss(model0, task.test_inputs, task.test_labels, task.steps, args.centering)
        row["loss_population"] = float(loss_at(test, traj.final))
        row["generalization_gap"] = row["loss_population"] - row["loss_final"]
    if setting != "003":
        row["init_output_max"] = float(init_output_max(model0, inputs, loss.step_weights))
        row["lambda_ratio"] = lambda_ratio(row["init_output_max"], args.length, m, model0.n_out)
        row["hidden_norms_init"] = np.asarray(hidden_norms(model0, inputs)).tolist()
        if m <= 1024:  # a dense SVD above that costs more than the training
            row["spectral_norm_W0"] = float(np.linalg.norm(np.asarray(model0.W), 2))
    return row, time.perf_counter() - started


def train_widths(setting, args, task, started):
    """Every width and seed of one setting trained (:func:`train` at η̄ = ``args.eta``), a progress line per width.

    Args:
        setting: "004", "002" or "003".
        args: the study's options (``widths``, ``seeds``, ``eta`` and those of :func:`train`).
        task: the setting's :class:`Task`.
        started: the study's start (``time.time()``), for the progress lines.

    Returns:
        {m: [one row per seed]}.
    """
    rows = {}
    for m in args.widths:
        rows[m], seconds = [], 0.0
        for seed in range(args.seeds):
            row, dt = train(setting, seed, m, args, task, args.eta)
            rows[m].append(row)
            seconds += dt
        med = {k: np.median([r[k] for r in rows[m]]) for k in ("rescaled_movement", "neuron_movement",
                                                               "linearization_error", "loss_ratio")}
        flips, gap = (np.median([r.get(k, np.nan) for r in rows[m]]) for k in ("flip_fraction",
                                                                                "generalization_gap"))
        print(f"  [{setting}] m = {m:5d}: √m‖Δθ‖ {med['rescaled_movement']:.3g}, √m max‖ΔΘ_i‖ "
              f"{med['neuron_movement']:.3g}, |F − F^Lin| {med['linearization_error']:.3g}, flips {flips:.3g}, "
              f"loss ratio {med['loss_ratio']:.3g}, gap {gap:.3g} ({seconds:.1f} s, total "
              f"{time.time() - started:.0f} s)", flush=True)
    return rows


PANELS = (("rescaled_movement", "movement"), ("linearization_error", "linearization error"),
          ("flip_fraction", "flip fraction"), ("hidden_drift_relative", "relative hidden-state drift"),
          ("relative_movement", "relative movement ‖θ − θ0‖_F / ‖θ0‖_F"),
          ("loss_ratio", "final / initial training loss"))


COLORS = {"004": "C0", "002": "C1", "003": "C2"}


def _gap_panel(ax, all_rows):
    """004-P6 / 002-P5: the generalization gap E_D Obj − E_Z Obj over the label energy against m."""
    for setting, rows in all_rows.items():
        if "generalization_gap" not in rows[min(rows)][0]:
            continue
        for m, rs in rows.items():
            ax.plot([m] * len(rs), [r["generalization_gap"] / r["label_energy"] for r in rs], ".",
                    color=COLORS[setting], alpha=0.35, ms=5)
        ms = sorted(rows)
        ax.plot(ms, [np.median([r["generalization_gap"] / r["label_energy"] for r in rows[m]]) for m in ms], "o-",
                color=COLORS[setting], label=f"{setting}: median")
    ax.set_xscale("log", base=2)
    ax.set(xlabel="width m")
    ax.set_title("generalization gap (E_D Obj − E_Z Obj) / E_Z Σ y² (004-P6, 002-P5)", fontsize=9)
    ax.legend(fontsize=7)


def _position_panel(ax, all_rows, position_bar):
    """004-P12: final/initial training loss at every output position j, largest width, per seed."""
    if "004" not in all_rows:
        ax.set_visible(False)
        return
    rows = all_rows["004"]
    m = max(rows)
    for r in rows[m]:
        ax.plot(r["positions"], np.asarray(r["position_loss_final"]) / np.asarray(r["position_loss_initial"]), ".-",
                color=COLORS["004"], alpha=0.5)
    ax.axhline(position_bar, ls=":", color="gray", label=f"004-P12 bar {position_bar:g}")
    ax.set(yscale="log", xticks=rows[m][0]["positions"], xlabel="output position j")
    ax.set_title(f"004, m = {m}: final / initial training loss per position (P12), one line per seed", fontsize=9)
    ax.legend(fontsize=7)


def figure(all_rows: dict, results: dict, widths, position_bar: float):
    """The lazy measures against the width m (points: seeds, circles: medians, lines: the fitted power laws and the
    papers' rates), the generalization gap (004-P6, 002-P5) and the per-position losses (004-P12).

    Args:
        all_rows: setting → {m: one row of measures per seed}.
        results: setting → its results, with ``fits`` (name → exponent, prefactor, widths, medians).
        widths: the widths m.
        position_bar: 004-P12's bar on the per-position loss ratio.

    Returns:
        The matplotlib figure.
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 4, figsize=(4 * 6, 2 * 4.75))
    ws = np.asarray(widths, float)
    for ax, (key, title) in zip(axes[:, :3].flat, PANELS):
        for setting, rows in all_rows.items():
            fits = results[setting]["fits"]
            keys = [key]
            if key == "rescaled_movement":
                keys = ["neuron_movement"] if setting == "003" else ["rescaled_movement", "neuron_movement"]
            for k in keys:
                if k not in fits:
                    continue
                f = fits[k]
                style = "--" if (k == "neuron_movement" and setting != "003") else "-"
                for m, rs in rows.items():
                    ax.plot([m] * len(rs), [r[k] for r in rs], ".", color=COLORS[setting], alpha=0.35, ms=5)
                name = {"rescaled_movement": "√m‖θ−θ0‖_F", "neuron_movement": "√m max_i‖ΔΘ_i‖"}.get(k, setting)
                label = f"{setting}: {name}, slope {f['exponent']:+.2f}" if key == "rescaled_movement" else \
                    f"{setting}: slope {f['exponent']:+.2f}"
                ax.plot(f["widths"], f["medians"], "o", color=COLORS[setting], ms=6)
                ax.plot(ws, f["prefactor"] * ws ** f["exponent"], style, color=COLORS[setting], lw=1.2, label=label)
        refs = {"linearization_error": [("004", -1 / 6, "004 P5 bound m^(−1/6), anchored at 004"),
                                        ("003", -0.5, "003 P5 bound m^(−1/2), anchored at 003")],
                "flip_fraction": [("004", -1 / 3, "004 P3 bound m^(−1/3), anchored at 004")],
                "hidden_drift_relative": [("004", -0.5, "004 P2 rate m^(−1/2), anchored at 004")]}.get(key, [])
        for (setting, rate, text), ls in zip(refs, (":", "-.")):
            if setting in results and key in results[setting]["fits"]:
                f = results[setting]["fits"][key]
                ax.plot(ws, f["medians"][0] * (ws / f["widths"][0]) ** rate, ls, color="gray", lw=1.2, label=text)
        ax.set_xscale("log", base=2)
        ax.set(yscale="log", xlabel="width m", ylabel=title, title=title)
        ax.legend(fontsize=7)
    _gap_panel(axes[0, 3], all_rows)
    _position_panel(axes[1, 3], all_rows, position_bar)
    axes[0, 0].set_title("movement (004/002: √m‖θ−θ0‖_F, 003: √m max_i‖ΔΘ_i‖; dashed: per-neuron for 004/002)",
                         fontsize=9)
    return fig
