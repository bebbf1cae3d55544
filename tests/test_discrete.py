"""Discrete runners: GD (constant η, schedules), SGD, Adam, projected GD; statuses, time axis, bad input."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import gflow
from conftest import REF_SAVES
from gflow import analysis as an, flatten, GflowInputError

ETA = 0.02
STEPS = 250  # t = 5
SHORT = np.arange(31)  # every step of a 30-step run: one more compiled row count besides REF_SAVES


def flat_loss(loss, model):
    """θ0 and the loss as a function of the flat θ."""
    theta, static, unravel = flatten(model)
    return theta, lambda th: loss(eqx.combine(unravel(th), static))


def flat_grad(loss, model):
    theta, f = flat_loss(loss, model)
    return theta, jax.jit(jax.grad(f))  # compiled once (an eager grad re-compiles the impulse response's scan)


@pytest.fixture(scope="module")
def gd_run(small_loss, general_start):
    return gflow.discrete.run_gd(small_loss, general_start, lr=ETA, steps=STEPS, save_at=REF_SAVES)


@pytest.fixture(scope="module")
def dataset(balanced_teacher):
    return gflow.objectives.EmpiricalLoss.from_teacher(jax.random.key(3), balanced_teacher, 60, 5)


def test_gd_reduces_the_loss_on_the_time_axis_t_equals_eta_n(gd_run, small_loss, general_start):
    traj = gd_run
    assert traj.status == "completed" and traj.message == ""
    steps = traj.diagnostics["step"]
    assert len(traj.ts) == REF_SAVES and steps[0] == 0 and steps[-1] == STEPS
    np.testing.assert_array_equal(traj.ts, ETA * steps.astype(float))  # t = η·n exactly
    np.testing.assert_array_equal(traj.diagnostics["learning_rate"], ETA)
    assert traj.loss[0] == pytest.approx(float(small_loss(general_start)), rel=1e-14)
    assert np.all(np.diff(traj.loss) < 0) and traj.loss[-1] < 1e-2 * traj.loss[0]
    assert traj.params.shape == (REF_SAVES, 24)
    np.testing.assert_array_equal(flatten(traj.final)[0], traj.params[-1])
    assert traj.stats["steps"] == traj.stats["gradient_evaluations"] == STEPS
    assert traj.stats["wall_time_s"] > 0
    assert traj.config["method"] == "gd" and traj.config["lr"] == ETA and traj.config["convention"] == "L"


@pytest.fixture(scope="module")
def constant_short(small_loss, general_start):
    return gflow.discrete.run_gd(small_loss, general_start, lr=ETA, steps=30, save_at=SHORT)


def test_gd_is_the_euler_method(small_loss, general_start, constant_short):
    """Three GD steps by hand: θ_{n+1} = θ_n − η ∇L(θ_n)."""
    theta, grad = flat_grad(small_loss, general_start)
    for _ in range(3):
        theta = theta - ETA * grad(theta)
    np.testing.assert_allclose(constant_short.params[3], theta, rtol=1e-14, atol=1e-16)


def test_gd_with_small_eta_tracks_the_flow_to_first_order(gd_run, small_loss, general_start):
    half = gflow.discrete.run_gd(small_loss, general_start, lr=ETA / 2, steps=2 * STEPS,
                        save_at=2 * gd_run.diagnostics["step"])
    np.testing.assert_array_equal(half.ts, gd_run.ts)
    flow = gflow.solve_flow(small_loss, general_start, float(gd_run.ts[-1]), save_at=gd_run.ts, rtol=1e-10)
    d_full = an.parameter_distance(gd_run, flow)
    d_half = an.parameter_distance(half, flow)
    assert np.max(d_full) < 0.05 * np.max(np.linalg.norm(flow.params, axis=1))
    assert np.max(d_full) / np.max(d_half) == pytest.approx(2.0, rel=0.05)


def test_multistep_schedule_changes_eta_at_the_milestones(small_loss, general_start, constant_short):
    schedule = gflow.discrete.multistep_schedule(ETA, [10, 20], gamma=0.5)
    traj = gflow.discrete.run_gd(small_loss, general_start, lr=schedule, steps=30, save_at=SHORT)
    lr = traj.diagnostics["learning_rate"]
    np.testing.assert_array_equal(lr[:10], ETA)
    np.testing.assert_array_equal(lr[10:20], ETA / 2)
    np.testing.assert_array_equal(lr[20:], ETA / 4)
    np.testing.assert_allclose(np.diff(traj.ts), lr[:-1], rtol=1e-14)  # t = Σ η_i
    assert traj.ts[-1] == pytest.approx(10 * ETA * (1 + 0.5 + 0.25), rel=1e-14)
    np.testing.assert_array_equal(traj.params[:11], constant_short.params[:11])  # the same before the milestone
    assert not np.allclose(traj.params[-1], constant_short.params[-1])
    assert traj.config["milestones"] == [10, 20] and traj.config["gamma"] == 0.5


def test_optax_schedules_are_accepted(small_loss, general_start):
    schedule = optax.exponential_decay(ETA, transition_steps=1, decay_rate=0.9)
    traj = gflow.discrete.run_gd(small_loss, general_start, lr=schedule, steps=30, save_at=SHORT)
    expected = ETA * 0.9 ** np.arange(31)
    np.testing.assert_allclose(traj.diagnostics["learning_rate"], expected, rtol=1e-12)
    np.testing.assert_allclose(traj.ts, np.concatenate([[0.0], np.cumsum(expected[:-1])]), rtol=1e-12)


def test_sgd_is_reproducible_from_its_key(dataset, general_start):
    kwargs = dict(batch_size=10, save_at=REF_SAVES)
    a = gflow.discrete.run_sgd(dataset, general_start, lr=ETA, steps=60, key=jax.random.key(5), **kwargs)
    b = gflow.discrete.run_sgd(dataset, general_start, lr=ETA, steps=60, key=jax.random.key(5), **kwargs)
    c = gflow.discrete.run_sgd(dataset, general_start, lr=ETA, steps=60, key=jax.random.key(6), **kwargs)
    np.testing.assert_array_equal(a.params, b.params)
    assert not np.allclose(a.params[-1], c.params[-1])
    assert a.status == "completed" and a.config["method"] == "sgd" and a.config["batch_size"] == 10
    assert a.stats["epochs"] == pytest.approx(10.0)
    assert a.loss[-1] < a.loss[0]  # the saved losses are the full dataset's


def test_sgd_with_the_whole_dataset_as_batch_is_gd_on_the_empirical_loss(dataset, general_start):
    sgd = gflow.discrete.run_sgd(dataset, general_start, lr=ETA, steps=30, batch_size=dataset.n, key=jax.random.key(0), save_at=SHORT)
    gd = gflow.discrete.run_gd(dataset, general_start, lr=ETA, steps=30, save_at=SHORT)
    np.testing.assert_allclose(sgd.params, gd.params, rtol=1e-12, atol=1e-14)  # only the summation order differs


def test_sgd_on_fresh_sequences_learns_the_population_loss(balanced_teacher, small_loss, general_start):
    stream = gflow.objectives.FreshGaussianSequences(balanced_teacher, 5)
    traj = gflow.discrete.run_sgd(stream, general_start, lr=ETA, steps=200, batch_size=10, key=jax.random.key(1), save_at=REF_SAVES)
    assert traj.status == "completed" and traj.config["loss"] == "FreshGaussianSequences"
    assert traj.loss[0] == pytest.approx(float(small_loss(general_start)), rel=1e-14)  # population loss logged
    assert traj.loss[-1] < 0.2 * traj.loss[0]


def test_adam_matches_a_hand_written_optax_loop(small_loss, general_start):
    theta, f = flat_loss(small_loss, general_start)
    opt = optax.adam(1e-3)

    @jax.jit
    def step(theta, state):
        with jax.numpy_dtype_promotion("standard"):  # optax's bias correction: float ** int32
            updates, state = opt.update(jax.grad(f)(theta), state, theta)
        return optax.apply_updates(theta, updates), state

    state = opt.init(theta)
    for _ in range(200):
        theta, state = step(theta, state)
    traj = gflow.discrete.run_adam(small_loss, general_start, steps=200, save_at=REF_SAVES)
    np.testing.assert_allclose(traj.params[-1], theta, rtol=1e-13, atol=1e-16)
    assert traj.ts[-1] == pytest.approx(200 * 1e-3)  # nominal time: step · lr
    assert traj.config["method"] == "adam" and traj.config["b2"] == 0.999 and traj.config["eps"] == 1e-8


def test_update_rule_is_init_plus_update(small_loss, general_start):
    theta, grad = flat_grad(small_loss, general_start)
    rule = gflow.discrete.gradient_descent(0.1)
    state = rule.init(theta)
    new, state, lr = rule.update(grad(theta), state, theta)
    np.testing.assert_allclose(new, theta - 0.1 * grad(theta), rtol=1e-15)
    assert float(lr) == 0.1 and int(state.count) == 1


def test_projected_gd_stays_in_its_box_and_balls(small_loss, general_start):
    """Seed 003 §3(b): per-neuron ℓ2 balls (here the rows A_i of the recurrent weights) and a per-entry box
    (here B) around the initialization."""
    model0 = general_start
    projection = gflow.discrete.compose_projections(gflow.discrete.ball_projection(model0, "A", 0.05, neuron_axis=0),
                                           gflow.discrete.box_projection(model0, "B", 0.1))
    free = gflow.discrete.run_gd(small_loss, model0, lr=ETA, steps=STEPS, save_at=REF_SAVES)
    proj = gflow.discrete.run_projected_gd(small_loss, model0, lr=ETA, steps=STEPS, projection=projection, save_at=REF_SAVES)
    assert proj.status == "completed" and proj.config["method"] == "projected_gd"

    def moves(traj):
        rows = [traj.model_at(i) for i in range(len(traj.ts))]
        ball = max(float(jnp.max(jnp.linalg.norm(m.A - model0.A, axis=1))) for m in rows)
        box = max(float(jnp.max(jnp.abs(m.B - model0.B))) for m in rows)
        return ball, box

    ball, box = moves(proj)
    assert ball <= 0.05 * (1 + 1e-14) and box <= 0.1 * (1 + 1e-14)
    assert ball == pytest.approx(0.05) and box == pytest.approx(0.1)  # the constraints were active
    free_ball, free_box = moves(free)
    assert free_ball > 0.1 and free_box > 0.2  # without them GD leaves the sets
    assert proj.loss[-1] > free.loss[-1]


def test_divergence_is_a_status_not_a_nan(small_loss, general_start):
    traj = gflow.discrete.run_gd(small_loss, general_start, lr=5.0, steps=100, save_at=REF_SAVES)
    assert traj.status == "diverged"
    assert "diverged at step" in traj.message and "diverge_factor" in traj.message
    assert np.all(np.isfinite(traj.params))
    assert len(traj.ts) == len(traj.loss) == len(traj.params) and traj.stats["steps"] < 100
    assert traj.ts[-1] == 5.0 * traj.stats["steps"]


def test_progress_lines(small_loss, general_start, capsys):
    gflow.discrete.run_gd(small_loss, general_start, lr=ETA, steps=100, save_at=REF_SAVES, progress=True)
    out = capsys.readouterr().out
    assert out.startswith("  [gd +") and "step 100 / 100 (100.0%)" in out.splitlines()[-1]
    gflow.discrete.run_gd(small_loss, general_start, lr=ETA, steps=100, save_at=REF_SAVES, progress=False)
    assert capsys.readouterr().out == ""


def test_a_discrete_run_saves_and_loads(gd_run, tmp_path):
    back = gflow.load_trajectory(gd_run.save(str(tmp_path / "gd")))
    np.testing.assert_array_equal(back.params, gd_run.params)
    np.testing.assert_array_equal(back.diagnostics["step"], gd_run.diagnostics["step"])
    assert back.config["method"] == "gd" and back.status == "completed"


def test_log_save_steps_are_distinct_and_span_the_run():
    s = gflow.discrete.log_save_steps(1000, 30)
    assert len(s) == 30 and s[0] == 0 and s[-1] == 1000 and np.all(np.diff(s) > 0)
    assert list(gflow.discrete.log_save_steps(5, 30)) == [0, 1, 2, 3, 4, 5]
    assert list(gflow.discrete.log_save_steps(1000, 2)) == [0, 1000]  # two points: the start and the end


# -------------------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("lr", [0.0, -0.1, np.nan, "fast", [0.1, 0.2]])
def test_bad_step_size(small_loss, general_start, lr):
    with pytest.raises(GflowInputError, match="`lr`"):
        gflow.discrete.run_gd(small_loss, general_start, lr=lr, steps=10)


def test_bad_input(small_loss, general_start, dataset, balanced_teacher):
    m0 = general_start
    with pytest.raises(GflowInputError, match="`steps`"):
        gflow.discrete.run_gd(small_loss, m0, lr=ETA, steps=0)
    with pytest.raises(GflowInputError, match="larger than the dataset"):
        gflow.discrete.run_sgd(dataset, m0, lr=ETA, steps=10, batch_size=61, key=jax.random.key(0))
    with pytest.raises(GflowInputError, match="`key`"):
        gflow.discrete.run_sgd(dataset, m0, lr=ETA, steps=10, batch_size=5, key=None)
    with pytest.raises(GflowInputError, match="`key`"):
        gflow.discrete.run_sgd(dataset, m0, lr=ETA, steps=10, batch_size=5, key=3)
    with pytest.raises(GflowInputError, match="minibatches"):
        gflow.discrete.run_sgd(small_loss, m0, lr=ETA, steps=10, batch_size=5, key=jax.random.key(0))
    with pytest.raises(GflowInputError, match="`batch_size`"):
        gflow.discrete.run_discrete(gflow.objectives.FreshGaussianSequences(balanced_teacher, 5), m0, rule=gflow.discrete.gradient_descent(ETA), steps=10)
    with pytest.raises(GflowInputError, match="`milestones` is empty"):
        gflow.discrete.multistep_schedule(ETA, [])
    with pytest.raises(GflowInputError, match="`milestones`"):
        gflow.discrete.multistep_schedule(ETA, [20, 10])
    with pytest.raises(GflowInputError, match="`gamma`"):
        gflow.discrete.multistep_schedule(ETA, [10], gamma=0.0)
    with pytest.raises(GflowInputError, match="positive finite step size"):
        gflow.discrete.run_gd(small_loss, m0, lr=lambda step: 0.0 * step, steps=10)
    with pytest.raises(GflowInputError, match="`save_at`"):
        gflow.discrete.run_gd(small_loss, m0, lr=ETA, steps=10, save_at=[0, 11])
    with pytest.raises(GflowInputError, match="`save_at`"):
        gflow.discrete.run_gd(small_loss, m0, lr=ETA, steps=10, save_at=[0.5, 1.0])
    with pytest.raises(GflowInputError, match="`b1`"):
        gflow.discrete.run_adam(small_loss, m0, steps=10, b1=1.0)
    with pytest.raises(GflowInputError, match="`rule`"):
        gflow.discrete.run_discrete(small_loss, m0, rule=optax.sgd(ETA), steps=10)
    with pytest.raises(GflowInputError, match="`model0`"):
        gflow.discrete.run_gd(small_loss, np.zeros(3), lr=ETA, steps=10)
    with pytest.raises(GflowInputError, match="`projection` is required"):
        gflow.discrete.run_projected_gd(small_loss, m0, lr=ETA, steps=10, projection=None)
    with pytest.raises(GflowInputError, match="`name`"):
        gflow.discrete.box_projection(m0, "W", 0.1)
    with pytest.raises(GflowInputError, match="`radius`"):
        gflow.discrete.ball_projection(m0, "B", -1.0)
    with pytest.raises(GflowInputError, match="`neuron_axis`"):
        gflow.discrete.ball_projection(m0, "B", 0.1, neuron_axis=2)
    with pytest.raises(GflowInputError, match="constrained once"):
        gflow.discrete.compose_projections(gflow.discrete.box_projection(m0, "B", 0.1), gflow.discrete.ball_projection(m0, "B", 0.1))
