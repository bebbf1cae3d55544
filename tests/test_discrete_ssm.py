"""Slutzky et al.'s discrete training (NeurIPS 2025; github.com/YoniSlutzky98/imp-bias-ssm-poison, common/*.py): the
normalized step of their scheduler.py against a numpy loop of its formula, the projection onto diagonal A (their
Keras DiagonalConstraint), and
``stop_loss`` + ``continue_steps`` (stop N steps after the loss first falls to ε), one by one, batched and in sweeps;
bad input named."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gflow
from gflow import GflowInputError
from gflow.discrete import diagonal_projection, multistep_schedule

K = 6  # steps compared with the numpy loops
EVERY = np.arange(K + 1)
LAGS = {4: 0.5, 1: 0.5}  # their special-sequence design at L = 5: lags L − 1 and 1, a mean over two sequences
A0 = np.array([0.5, 0.45, 0.3, 0.1])
B0 = np.array([0.6, 0.5, 0.4, 0.3])
C0 = np.array([0.5, 0.4, 0.45, 0.2])
OFF = 0.05 * np.array([[0, 1, -2, 1], [2, 0, 1, -1], [-1, 1, 0, 2], [1, -2, 1, 0]], dtype=float)


@pytest.fixture(scope="module")
def loss():
    teacher = gflow.LinearRNN(jnp.ones((1, 1)), jnp.ones(1), jnp.ones(1))  # their d* = 1 teacher: h*_k = 1
    return gflow.PopulationLoss.at_lags(teacher, LAGS)


def general(A, trained=None):
    return gflow.LinearRNN(jnp.asarray(A), jnp.asarray(B0), jnp.asarray(C0), trained=trained)


@pytest.fixture(scope="module")
def dense_start():
    """A general A with non-zero off-diagonal entries (the projection has something to remove)."""
    return general(np.diag(A0) + OFF)


@pytest.fixture(scope="module")
def diagonal_start():
    return general(np.diag(A0))


def np_loss_and_grads(A, B, C):
    """L = Σ_j w_j (C A^j B − 1)² and its gradients (∇_A, ∇_B, ∇_C), by matrix powers."""
    powers = [np.linalg.matrix_power(A, j) for j in range(max(LAGS) + 1)]
    value, gA, gB, gC = 0.0, np.zeros_like(A), np.zeros_like(B), np.zeros_like(C)
    for j, w in LAGS.items():
        r = C @ powers[j] @ B - 1.0
        value += w * r * r
        gB += 2 * w * r * powers[j].T @ C
        gC += 2 * w * r * powers[j] @ B
        for a in range(j):
            gA += 2 * w * r * np.outer(powers[a].T @ C, powers[j - 1 - a] @ B)
    return value, gA, gB, gC


def np_normalized_loop(A, B, C, lrs, trained=("A", "B", "C"), average="layer_norms", project=False, beta=0.8,
                       c=1e-6):
    """Their AdaptiveLearningRateScheduler + Keras SGD (+ DiagonalConstraint), step by step: returns the states
    (A, B, C) after 0..K steps and the step sizes used."""
    states, steps = [(A.copy(), B.copy(), C.copy())], []
    gamma = 0.0
    for k, base in enumerate(lrs):
        _, gA, gB, gC = np_loss_and_grads(A, B, C)
        grads = {"A": gA, "B": gB, "C": gC}
        if average == "layer_norms":
            g = sum(np.linalg.norm(grads[n]) for n in trained)  # tf.norm: Frobenius, summed, not squared
        else:
            g = sum(np.sum(grads[n] ** 2) for n in trained)
        gamma = beta * gamma + (1 - beta) * g
        lr = base / ((gamma / (1 - beta ** (k + 1))) ** 0.5 + c)
        A = A - lr * gA if "A" in trained else A
        B = B - lr * gB if "B" in trained else B
        C = C - lr * gC if "C" in trained else C
        if project:
            A = np.diag(np.diag(A))
        states.append((A, B, C))
        steps.append(lr)
    return states, np.asarray(steps)


def assert_matches_loop(traj, states, step_sizes, rtol=1e-12):
    np.testing.assert_array_equal(traj.diagnostics["step"], EVERY)
    np.testing.assert_allclose(traj.diagnostics["step_size"][1:], step_sizes, rtol=rtol)
    assert np.isnan(traj.diagnostics["step_size"][0])
    np.testing.assert_allclose(traj.ts, np.concatenate([[0.0], np.cumsum(step_sizes)]), rtol=rtol)  # Σ steps taken
    for n, (A, B, C) in enumerate(states):
        model = gflow.unflatten(jnp.asarray(traj.params[n]), *gflow.flatten(traj.final)[1:])
        for got, want in zip(model.layers(), (A, B, C)):
            np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-15)


def test_the_loss_is_their_mean_over_sequences(loss, dense_start):
    """The numpy reference is the loss the runners train (Σ_j w_j r_j², no 1/2)."""
    value, *_ = np_loss_and_grads(np.diag(A0) + OFF, B0, C0)
    assert float(loss(dense_start)) == pytest.approx(value, rel=1e-13)


@pytest.mark.parametrize("average", ["layer_norms", "squared_norm"])
def test_normalized_step_is_their_scheduler(loss, dense_start, average):
    traj = gflow.discrete.run_normalized_gd(loss, dense_start, lr=0.05, steps=K, save_at=EVERY, average=average)
    states, step_sizes = np_normalized_loop(np.diag(A0) + OFF, B0, C0, [0.05] * K, average=average)
    assert_matches_loop(traj, states, step_sizes)
    _, gA, gB, gC = np_loss_and_grads(np.diag(A0) + OFF, B0, C0)
    g0 = sum(np.linalg.norm(g) for g in (gA, gB, gC)) if average == "layer_norms" else \
        sum(np.sum(g**2) for g in (gA, gB, gC))
    assert traj.diagnostics["step_size"][1] == pytest.approx(0.05 / (np.sqrt(g0) + 1e-6), rel=1e-13)  # γ̂_0 = g_0
    np.testing.assert_array_equal(traj.diagnostics["learning_rate"], 0.05)  # the base lr of the schedule
    assert traj.status == "completed" and traj.config["method"] == "normalized_gd"
    assert (traj.config["beta"], traj.config["soft_const"], traj.config["average"]) == (0.8, 1e-6, average)


def test_normalized_step_measures_only_trained_layers_and_follows_a_schedule(loss):
    """B frozen: g_k sums ‖∇_A L‖ + ‖∇_C L‖; a schedule's η_k and the bias correction share the step counter k."""
    model0 = general(np.diag(A0) + OFF, trained=("A", "C"))
    schedule = multistep_schedule(0.05, [2, 4], gamma=0.5)
    traj = gflow.discrete.run_normalized_gd(loss, model0, lr=schedule, steps=K, save_at=EVERY, beta=0.6,
                                            soft_const=1e-3)
    lrs = [0.05, 0.05, 0.025, 0.025, 0.0125, 0.0125]
    states, step_sizes = np_normalized_loop(np.diag(A0) + OFF, B0, C0, lrs, trained=("A", "C"), beta=0.6, c=1e-3)
    assert_matches_loop(traj, states, step_sizes)
    np.testing.assert_array_equal(traj.diagnostics["learning_rate"], lrs + [0.0125])  # η_n of the schedule at row n


def test_diagonal_projection_keeps_a_gd_step_on_the_diagonal(loss, dense_start):
    eta = 0.05
    traj = gflow.discrete.run_projected_gd(loss, dense_start, lr=eta, steps=K, save_at=EVERY,
                                           projection=diagonal_projection(dense_start))
    assert traj.config["method"] == "projected_gd" and traj.config["projection"] == "DiagonalProjection"
    _, static, unravel = gflow.flatten(dense_start)
    models = [gflow.unflatten(jnp.asarray(row), static, unravel) for row in traj.params]
    np.testing.assert_array_equal(models[0].layers()[0], np.diag(A0) + OFF)  # the start is not projected
    off = ~np.eye(4, dtype=bool)
    for before, after in zip(models[:-1], models[1:]):
        A, B, C = (np.asarray(x) for x in before.layers())
        _, gA, gB, gC = np_loss_and_grads(A, B, C)
        A1, B1, C1 = (np.asarray(x) for x in after.layers())
        assert np.all(A1[off] == 0.0)  # exactly
        np.testing.assert_allclose(np.diag(A1), np.diag(A - eta * gA), rtol=1e-12)
        np.testing.assert_allclose(B1, B - eta * gB, rtol=1e-12)
        np.testing.assert_allclose(C1, C - eta * gC, rtol=1e-12)
    assert np.any(np.diag(A0) + OFF != np.diag(np.diag(A0) + OFF))  # the first step had off-diagonals to remove


def test_projected_general_model_is_gd_on_the_diagonal_model(loss, diagonal_start):
    """From a diagonal start, GD + projection on a general A is GD on A's eigenvalues (structure="diagonal")."""
    projected = gflow.discrete.run_projected_gd(loss, diagonal_start, lr=0.05, steps=K, save_at=EVERY,
                                                projection=diagonal_projection(diagonal_start))
    diagonal = gflow.LinearRNN(jnp.asarray(A0), jnp.asarray(B0), jnp.asarray(C0), structure="diagonal")
    plain = gflow.discrete.run_gd(loss, diagonal, lr=0.05, steps=K, save_at=EVERY)
    a = np.asarray(projected.final.layers()[0])
    np.testing.assert_allclose(np.diag(a), plain.final.layers()[0], rtol=1e-12)
    np.testing.assert_allclose(projected.loss, plain.loss, rtol=1e-12)
    assert not np.allclose(np.diag(a), A0, rtol=1e-3)  # it moved


def test_normalized_step_with_projection_measures_the_full_gradient(loss, dense_start):
    """Their runs: the normalized step on the dense (d, d) gradient of A, then diag(diag_part(A))."""
    traj = gflow.discrete.run_normalized_gd(loss, dense_start, lr=0.05, steps=K, save_at=EVERY,
                                            projection=diagonal_projection(dense_start))
    states, step_sizes = np_normalized_loop(np.diag(A0) + OFF, B0, C0, [0.05] * K, project=True)
    assert_matches_loop(traj, states, step_sizes)
    assert traj.config["method"] == "projected_normalized_gd"


def test_diagonal_projection_composes_and_rejects_what_is_not_a_square_matrix(dense_start):
    both = gflow.discrete.compose_projections(diagonal_projection(dense_start),
                                              gflow.discrete.box_projection(dense_start, "B", 0.01))
    moved = gflow.LinearRNN(jnp.ones((4, 4)), jnp.asarray(B0) + 1.0, jnp.asarray(C0))
    A, B, _ = both(moved).layers()
    np.testing.assert_array_equal(A, np.eye(4))
    np.testing.assert_allclose(B, B0 + 0.01, rtol=1e-15)
    diagonal = gflow.LinearRNN(jnp.asarray(A0), jnp.asarray(B0), jnp.asarray(C0), structure="diagonal")
    with pytest.raises(GflowInputError, match="needs no projection"):
        diagonal_projection(diagonal)
    with pytest.raises(GflowInputError, match="square matrix"):
        diagonal_projection(dense_start, "B")
    with pytest.raises(GflowInputError, match="is frozen"):
        diagonal_projection(general(np.diag(A0), trained=("B", "C")))  # a Frozen A is not trained
    with pytest.raises(GflowInputError, match="once"):
        gflow.discrete.compose_projections(diagonal_projection(dense_start), diagonal_projection(dense_start))


# ---- stop_loss + continue_steps --------------------------------------------------------------------------------
EPS = 1e-5
STEPS = 150


def manual_stop(loss, model0, lr, eps, continue_steps, steps):
    """GD by hand with their callback: the loss after each update; (first step with L ≤ ε or None, steps taken,
    final θ)."""
    theta, static, unravel = gflow.flatten(model0)
    f = jax.jit(lambda th: loss(gflow.unflatten(th, static, unravel)))
    grad = jax.jit(jax.grad(f))
    reached, n = None, 0
    while n < steps and (reached is None or n < reached + continue_steps):
        theta = theta - lr * grad(theta)
        n += 1
        if reached is None and float(f(theta)) <= eps:
            reached = n
    return reached, n, np.asarray(theta)


@pytest.fixture(scope="module")
def manual(loss, diagonal_start):
    """The manual loops the runners must match: (lr, continue_steps) → (reached, taken, θ)."""
    return {(lr, N): manual_stop(loss, diagonal_start, lr, EPS, N, STEPS)
            for lr, N in [(0.05, 0), (0.05, 7), (0.02, 7), (0.001, 7), (0.05, 200)]}


def test_stop_loss_stops_continue_steps_after_the_loss_first_reaches_eps(loss, diagonal_start, manual):
    reached, taken, theta = manual[(0.05, 7)]
    assert 10 < reached < STEPS - 20  # ε is crossed mid-run
    traj = gflow.discrete.run_gd(loss, diagonal_start, lr=0.05, steps=STEPS, stop_loss=EPS, continue_steps=7)
    assert traj.status == "stopped_at_loss" and taken == reached + 7
    assert traj.stats["steps"] == taken and traj.stats["stop_loss_step"] == reached
    assert f"first at step {reached}" in traj.message
    assert traj.diagnostics["step"][-1] == taken and traj.diagnostics["step"][0] == 0  # the final state is saved
    assert np.all(np.diff(traj.diagnostics["step"]) > 0)
    np.testing.assert_allclose(traj.params[-1], theta, rtol=1e-13, atol=1e-16)
    np.testing.assert_array_equal(traj.ts, 0.05 * traj.diagnostics["step"])
    assert traj.loss[-1] <= EPS and (traj.config["stop_loss"], traj.config["continue_steps"]) == (EPS, 7)

    at_once = gflow.discrete.run_gd(loss, diagonal_start, lr=0.05, steps=STEPS, stop_loss=EPS)  # N = 0
    assert at_once.stats["steps"] == manual[(0.05, 0)][1] == reached
    assert at_once.status == "stopped_at_loss" and at_once.config["continue_steps"] == 0


def test_saved_steps_end_at_the_stop_and_steps_caps_the_run(loss, diagonal_start, manual):
    reached, taken, _ = manual[(0.05, 7)]
    save = np.arange(0, STEPS + 1, 10)
    traj = gflow.discrete.run_gd(loss, diagonal_start, lr=0.05, steps=STEPS, stop_loss=EPS, continue_steps=7,
                                 save_at=save)
    np.testing.assert_array_equal(traj.diagnostics["step"], np.append(save[save < taken], taken))
    capped = gflow.discrete.run_gd(loss, diagonal_start, lr=0.05, steps=STEPS, stop_loss=EPS, continue_steps=200,
                                   save_at=save)  # ε reached, but `steps` ends the run before 200 more
    assert manual[(0.05, 200)][1] == STEPS
    assert capped.status == "completed" and capped.stats["steps"] == STEPS
    assert capped.stats["stop_loss_step"] == reached and capped.diagnostics["step"][-1] == STEPS


def test_batch_members_stop_on_their_own(loss, diagonal_start, manual):
    lrs = [0.05, 0.02, 0.001]
    batch = gflow.discrete.run_gd_batch(loss, [diagonal_start] * 3, lr=np.asarray(lrs), steps=STEPS, stop_loss=EPS,
                                        continue_steps=7)
    expected = [manual[(lr, 7)] for lr in lrs]
    assert expected[0][0] < expected[1][0] and expected[2][0] is None  # one early, one late, one never
    assert batch.statuses == ["stopped_at_loss", "stopped_at_loss", "completed"]
    for traj, (reached, taken, theta) in zip(batch, expected):
        assert traj.stats["steps"] == taken and traj.stats["stop_loss_step"] == reached
        assert traj.diagnostics["step"][-1] == taken
        np.testing.assert_allclose(traj.params[-1], theta, rtol=1e-12, atol=1e-16)
    assert batch[2].stats["steps"] == STEPS
    single = gflow.discrete.run_gd(loss, diagonal_start, lr=0.02, steps=STEPS, stop_loss=EPS, continue_steps=7)
    np.testing.assert_array_equal(batch[1].diagnostics["step"], single.diagnostics["step"])
    np.testing.assert_allclose(batch[1].params, single.params, rtol=1e-12, atol=1e-16)
    assert batch[1].stats["stop_loss_step"] == single.stats["stop_loss_step"] and batch[1].message == single.message


def test_normalized_projected_batch_with_stop_equals_one_by_one(loss, dense_start):
    lrs = np.array([0.02, 0.002])
    kwargs = dict(steps=120, stop_loss=1e-4, continue_steps=5, save_at=np.arange(0, 121, 12))
    batch = gflow.discrete.run_normalized_gd_batch(loss, [dense_start] * 2, lr=lrs,
                                                   projection=[diagonal_projection(dense_start)] * 2, **kwargs)
    singles = [gflow.discrete.run_normalized_gd(loss, dense_start, lr=float(lr),
                                                projection=diagonal_projection(dense_start), **kwargs) for lr in lrs]
    assert [t.status for t in singles] == batch.statuses == ["stopped_at_loss", "completed"]
    for row, one in zip(batch, singles):
        np.testing.assert_array_equal(row.diagnostics["step"], one.diagnostics["step"])
        np.testing.assert_allclose(row.ts, one.ts, rtol=1e-12)
        np.testing.assert_allclose(row.diagnostics["step_size"], one.diagnostics["step_size"], rtol=1e-12)
        np.testing.assert_allclose(row.params, one.params, rtol=1e-12, atol=1e-16)
        assert row.stats["stop_loss_step"] == one.stats["stop_loss_step"] and row.config == one.config


def test_sweep_runs_normalized_gd_with_projection_and_stop(loss, dense_start, tmp_path):
    def build(seed):
        return loss, general(np.diag(A0) + (1 + seed) * OFF)

    options = dict(steps=120, stop_loss=1e-4, continue_steps=5, save_at=np.arange(0, 121, 12), beta=0.8)
    runs = gflow.run_sweep({"seed": [0, 1], "lr": [0.02]}, build, str(tmp_path), method="normalized_gd",
                           projection=lambda m, c: diagonal_projection(m), progress=False, **options)
    for run in runs:
        _, model0 = build(run.config["seed"])
        one = gflow.discrete.run_normalized_gd(loss, model0, lr=0.02, projection=diagonal_projection(model0),
                                               **options)
        assert run.status == one.status == "stopped_at_loss"
        np.testing.assert_allclose(run.ts, one.ts, rtol=1e-12)
        np.testing.assert_allclose(run.arrays["final_params"], gflow.flatten(one.final)[0], rtol=1e-12, atol=1e-16)


@pytest.mark.parametrize("kwargs, match", [
    (dict(continue_steps=5), "give `stop_loss` too"),
    (dict(continue_steps=0), "give `stop_loss` too"),
    (dict(stop_loss=1e-3, continue_steps=-1), "continue_steps"),
    (dict(stop_loss=1e-3, continue_steps=2.5), "continue_steps"),
    (dict(stop_loss=0.0), "stop_loss"),
    (dict(stop_loss=-1e-3), "stop_loss"),
    (dict(stop_loss=float("nan")), "stop_loss"),
    (dict(stop_loss="small"), "stop_loss"),
])
def test_bad_stopping_input_is_named(loss, diagonal_start, kwargs, match):
    with pytest.raises(GflowInputError, match=match):
        gflow.discrete.run_gd(loss, diagonal_start, lr=0.05, steps=10, **kwargs)
    with pytest.raises(GflowInputError, match=match):
        gflow.discrete.run_gd_batch(loss, [diagonal_start] * 2, lr=0.05, steps=10, **kwargs)


@pytest.mark.parametrize("kwargs, match", [
    (dict(beta=1.0), "beta"), (dict(beta=-0.1), "beta"), (dict(beta="x"), "beta"),
    (dict(soft_const=0.0), "soft_const"), (dict(average="rms"), "average"), (dict(lr=-1.0), "lr"),
])
def test_bad_normalized_step_input_is_named(loss, diagonal_start, kwargs, match):
    kwargs = {"lr": 0.05, **kwargs}
    with pytest.raises(GflowInputError, match=match):
        gflow.discrete.run_normalized_gd(loss, diagonal_start, steps=10, **kwargs)
    with pytest.raises(GflowInputError, match=match):
        gflow.discrete.run_normalized_gd_batch(loss, [diagonal_start] * 2, steps=10, **kwargs)


def test_sweep_names_the_normalized_steps_options(loss, diagonal_start, tmp_path):
    with pytest.raises(GflowInputError, match="unknown option"):
        gflow.run_sweep({"seed": [0]}, lambda seed: (loss, diagonal_start), str(tmp_path), method="normalized_gd",
                        lr=0.05, steps=10, b1=0.9)
    with pytest.raises(GflowInputError, match="needs"):
        gflow.run_sweep({"seed": [0]}, lambda seed: (loss, diagonal_start), str(tmp_path), method="normalized_gd",
                        steps=10)
