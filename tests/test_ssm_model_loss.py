"""A linear RNN that trains a subset of (A, B, C) and the population loss with explicit per-lag weights (after
Slutzky et al., NeurIPS 2025: diagonal A trained, B = C = 1 fixed, one supervised lag per impulse sequence)."""

import equinox as eqx
import jax
import jax.flatten_util
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import gflow
from gflow import flatten
from gflow.models import Frozen

STRUCTURES = ("general", "symmetric", "diagonal")
SUBSETS = (("A",), ("B", "C"), ("A", "C"), ("A", "B", "C"), ("B",))


def _teacher(d=2):
    """Slutzky et al.'s teacher: A* = diag(1, 0), B* = C*ᵀ = (1, √(d − 1)); h*_0 = d, h*_j = 1."""
    b = np.array([1.0, np.sqrt(d - 1)])
    return gflow.LinearRNN(np.array([1.0, 0.0]), b, b, structure="diagonal")


def _random_model(rng, structure, trained, d=4, mimo=False):
    A = rng.normal(size=d) * 0.5 if structure == "diagonal" else rng.normal(size=(d, d)) * 0.3
    if structure == "symmetric":
        A = A + A.T
    B, C = (rng.normal(size=(d, 2)), rng.normal(size=(3, d))) if mimo else (rng.normal(size=d), rng.normal(size=d))
    return gflow.LinearRNN(A, B, C, structure=structure, trained=trained)


def _assert_close_in_norm(actual, desired, rtol=1e-12):
    """``actual`` equals ``desired`` to ``rtol`` relative to the norm of ``desired``: an entry far smaller than the
    largest is judged on the scale of the whole array (round-off is), not on its own size."""
    actual, desired = np.asarray(actual), np.asarray(desired)
    assert actual.shape == desired.shape, (actual.shape, desired.shape)
    error, scale = np.linalg.norm(actual - desired), np.linalg.norm(desired)
    assert error <= rtol * scale, f"relative error {error / scale:.3e} > {rtol:.0e} (norm {scale:.3e})"


def _autodiff_jacobian(loss, model):
    theta, static, unravel = flatten(model)
    return theta, unravel, jax.jacfwd(lambda th: loss.residuals(eqx.combine(unravel(th), static)))(theta)


@pytest.mark.parametrize("structure", STRUCTURES)
@pytest.mark.parametrize("trained", SUBSETS)
def test_closed_form_and_matrix_free_jacobians_match_autodiff(structure, trained):
    # a fixed seed per parametrization (hash() of a tuple of strings is salted per process)
    rng = np.random.default_rng(100 * STRUCTURES.index(structure) + SUBSETS.index(trained))
    d = 4
    teacher = gflow.LinearRNN(rng.normal(size=(d, d)) * 0.3, rng.normal(size=d), rng.normal(size=d))
    loss = gflow.PopulationLoss(teacher, 6, weighting=[0.0, 0.5, 0.0, 2.0, 0.0, 1.0])
    model = _random_model(rng, structure, trained, d)
    theta, unravel, J = _autodiff_jacobian(loss, model)
    assert theta.size == sum(np.size(getattr(model, name)) for name in trained)  # frozen layers are no coordinates
    rows = loss.residual_jacobian(model)
    leaves = jax.tree_util.tree_leaves(eqx.filter(rows, eqx.is_inexact_array))
    closed = jnp.concatenate([leaf.reshape(J.shape[0], -1) for leaf in leaves], axis=1)
    _assert_close_in_norm(closed, J)
    op = loss.residual_jacobian_operator(model)
    assert (op is None) == (structure == "diagonal")  # diagonal A: the O(k d) closed form instead
    if op is not None:
        b, z = rng.normal(size=theta.size), rng.normal(size=J.shape[0])
        _assert_close_in_norm(op.mv(unravel(jnp.asarray(b))), J @ b)
        rmv = jax.flatten_util.ravel_pytree(eqx.filter(op.rmv(jnp.asarray(z)), eqx.is_inexact_array))[0]
        _assert_close_in_norm(rmv, J.T @ z)
        _assert_close_in_norm(op.gram(), J @ J.T)


def test_mimo_diagonal_closed_form_matches_autodiff():
    rng = np.random.default_rng(5)
    teacher = gflow.LinearRNN(rng.normal(size=3) * 0.5, rng.normal(size=(3, 2)), rng.normal(size=(3, 3)),
                              structure="diagonal")
    loss = gflow.PopulationLoss(teacher, 5, weighting=[1.0, 0.0, 0.25, 0.0, 3.0])
    model = _random_model(rng, "diagonal", ("A", "C"), d=3, mimo=True)
    _, _, J = _autodiff_jacobian(loss, model)
    leaves = jax.tree_util.tree_leaves(eqx.filter(loss.residual_jacobian(model), eqx.is_inexact_array))
    closed = jnp.concatenate([leaf.reshape(J.shape[0], -1) for leaf in leaves], axis=1)
    _assert_close_in_norm(closed, J)


def test_frozen_layers_never_move_and_are_recorded():
    d = 10
    a0 = np.sort(0.3 * np.random.default_rng(0).uniform(size=d))
    model0 = gflow.LinearRNN(a0, Frozen(np.ones(d)), Frozen(np.ones(d)), structure="diagonal")
    assert model0.trained == ("A",)
    assert model0.description()["trained"] == ["A"]
    assert "trained" not in gflow.LinearRNN(a0, np.ones(d), np.ones(d), structure="diagonal").description()
    loss = gflow.PopulationLoss.at_lags(_teacher(d), {6: 1.0})
    traj = gflow.solve_flow(loss, model0, 1e3, rtol=1e-8, save_at=5, progress=False)
    _, B, C = traj.final.layers()
    assert np.array_equal(np.asarray(B), np.ones(d)) and np.array_equal(np.asarray(C), np.ones(d))
    assert not np.array_equal(np.asarray(traj.final.A), a0)  # A did move
    assert traj.loss[-1] < traj.loss[0]


def test_trained_keyword_and_frozen_arguments_agree():
    rng = np.random.default_rng(2)
    A, B, C = rng.normal(size=(3, 3)), rng.normal(size=3), rng.normal(size=3)
    by_keyword = gflow.LinearRNN(A, B, C, trained=("A",))
    by_argument = gflow.LinearRNN(A, Frozen(B), Frozen(C))
    assert by_keyword.trained == by_argument.trained == ("A",)
    assert all(np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(by_keyword.layers(), by_argument.layers()))
    x = rng.normal(size=7)
    np.testing.assert_array_equal(by_keyword(x), gflow.LinearRNN(A, B, C)(x))


def test_frozen_model_saves_and_loads_bit_for_bit(tmp_path):
    model = gflow.LinearRNN(np.array([0.3, -0.2]), Frozen(np.array([1.0, 2.0])), np.array([0.5, 0.1]),
                            structure="diagonal")
    gflow.results.save_model(model, str(tmp_path))
    loaded = gflow.results.load_model(str(tmp_path))
    assert loaded.trained == ("A", "C")
    for x, y in zip(model.layers(), loaded.layers()):
        assert np.array_equal(np.asarray(x), np.asarray(y))


def _impulse_sequences(L, special):
    """Slutzky et al.'s training set: the baseline sequence (impulse at the first step) and, with ``special``, the
    special one (impulse at step L − 2); only the last output is labelled."""
    x = np.zeros((2 if special else 1, L))
    x[0, 0] = 1.0
    if special:
        x[1, L - 2] = 1.0
    return x


@pytest.mark.parametrize("special", [False, True])
def test_lag_weights_equal_the_sample_loss_on_impulse_sequences(special):
    d, L = 10, 7
    teacher = _teacher(d)
    loss = gflow.PopulationLoss.at_lags(teacher, {L - 1: 0.5, 1: 0.5} if special else {L - 1: 1.0})
    x = _impulse_sequences(L, special)
    labels = jax.vmap(teacher)(jnp.asarray(x))
    sample = gflow.objectives.SampleLoss(x, labels, steps="last")
    rng = np.random.default_rng(3)
    for _ in range(3):
        model = gflow.LinearRNN(rng.uniform(-0.9, 0.9, size=d), Frozen(np.ones(d)), Frozen(np.ones(d)),
                                structure="diagonal")
        np.testing.assert_allclose(loss(model), sample(model), rtol=1e-13)
        g1, g2 = (eqx.filter_grad(f)(model).A for f in (loss, sample))
        _assert_close_in_norm(g1, g2)


def test_custom_weights_batch_under_vmap():
    """Two designs (baseline, baseline + special) in one batched solve: per-member weights."""
    d, L = 6, 5
    teacher = _teacher(d)
    losses = [gflow.PopulationLoss.at_lags(teacher, {L - 1: 1.0}),
              gflow.PopulationLoss.at_lags(teacher, {L - 1: 0.5, 1: 0.5})]
    a0 = np.sort(0.5 * np.random.default_rng(4).uniform(size=d))
    models = [gflow.LinearRNN(a0, Frozen(np.ones(d)), Frozen(np.ones(d)), structure="diagonal")] * 2
    batch = gflow.solve_flows(losses, models, 50.0, rtol=1e-9, save_at=4, progress=False)
    for loss, model, traj in zip(losses, models, batch):
        alone = gflow.solve_flow(loss, model, 50.0, rtol=1e-9, save_at=4, progress=False)
        np.testing.assert_allclose(np.asarray(traj.final.A), np.asarray(alone.final.A), rtol=1e-9, atol=1e-12)
    assert not np.allclose(np.asarray(batch[0].final.A), np.asarray(batch[1].final.A))
    traced = eqx.filter_vmap(lambda w: gflow.PopulationLoss(teacher, L, weighting=w))(
        jnp.stack([losses[0].weights, losses[1].weights]))
    np.testing.assert_array_equal(traced.weights[1], losses[1].weights)


def test_baseline_flow_agrees_with_scipy():
    """Slutzky et al.'s d = 10, L = 7 baseline flow (their A0 recipe, larger sd_A so that the escape comes early)
    against scipy's Radau with the exact Jacobian at rtol 1e-12, restarted at every save time."""
    d, L = 10, 7
    a0 = np.flip(np.sort(0.05 * np.random.RandomState(242).rand(d)))
    a0[1] = a0[0] - 1.5e-8
    loss = gflow.PopulationLoss.at_lags(_teacher(d), {L - 1: 1.0})
    model0 = gflow.LinearRNN(a0, Frozen(np.ones(d)), Frozen(np.ones(d)), structure="diagonal")
    ts = np.concatenate([[0.0], np.geomspace(10.0, 1e7, 25)])
    traj = gflow.solve_flow(loss, model0, ts[-1], rtol=1e-10, save_at=ts, progress=False)
    lag = L - 1

    def field(t, a):
        return -2.0 * (np.sum(a ** lag) - 1.0) * lag * a ** (lag - 1)

    def jac(t, a):
        r, g = np.sum(a ** lag) - 1.0, lag * a ** (lag - 1)
        return -2.0 * (np.outer(g, g) + np.diag(r * lag * (lag - 1) * a ** (lag - 2)))

    ref, a = [a0], a0
    for t0, t1 in zip(ts[:-1], ts[1:]):
        a = solve_ivp(field, (t0, t1), a, method="Radau", jac=jac, rtol=1e-12, atol=1e-16).y[:, -1]
        ref.append(a)
    ref = np.array(ref)
    ours = np.array([np.asarray(traj.model_at(i).A) for i in range(len(ts))])
    assert (np.sum(ref[-1] ** lag) - 1.0) ** 2 < 1e-12  # the escape happened inside the window: h_6 is fitted
    np.testing.assert_allclose(ours, ref, rtol=1e-6, atol=1e-9 * np.max(np.abs(ref)))


@pytest.mark.parametrize("weighting, message", [
    ([1.0, -1.0, 0.0], "nonnegative"), ([0.0, 0.0, 0.0], "not all zero"), ([1.0, 2.0], "has 2 entries"),
    ([[1.0, 2.0, 3.0]], "must be a vector"), ("triangular", "must be one of"), ([1.0, np.nan, 0.0], "finite"),
])
def test_bad_lag_weights_are_refused(weighting, message):
    with pytest.raises(gflow.GflowInputError, match=message):
        gflow.PopulationLoss(_teacher(), 3, weighting=weighting)


@pytest.mark.parametrize("lags, message", [({}, "non-empty"), ({-1: 1.0}, "integers >= 0"), ({1.5: 1.0}, "integers")])
def test_bad_at_lags_are_refused(lags, message):
    with pytest.raises(gflow.GflowInputError, match=message):
        gflow.PopulationLoss.at_lags(_teacher(), lags)


def test_bad_trained_is_refused():
    A, b = np.eye(2), np.ones(2)
    with pytest.raises(gflow.GflowInputError, match="distinct layers"):
        gflow.LinearRNN(A, b, b, trained=("W",))
    with pytest.raises(gflow.GflowInputError, match="passed as Frozen"):
        gflow.LinearRNN(A, Frozen(b), b, trained=("A", "B"))


def test_description_records_the_lag_weights():
    loss = gflow.PopulationLoss.at_lags(_teacher(), {6: 0.5, 1: 0.5}, convention="half")
    desc = loss.description()
    assert desc["weighting"] == "custom" and desc["k"] == 7
    assert desc["lag_weights"] == [0.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.5]
    np.testing.assert_array_equal(loss.weights, 0.5 * np.asarray(desc["lag_weights"]))
    assert loss.padded_to(9).training_length == 7


def test_weights_cover_k_max_lags_and_a_zero_member_has_length_0():
    teacher = _teacher()
    padded = gflow.PopulationLoss(teacher, 3, weighting=[1.0, 0.0, 2.0, 0.0, 0.0], k_max=5)
    assert padded.training_length == 3 and padded.n_lags == 5
    with pytest.raises(gflow.GflowInputError, match="holds 5 lags"):
        gflow.PopulationLoss(teacher, 3, weighting=[1.0, 0.0, 2.0], k_max=5)
    traced = eqx.filter_vmap(lambda s: gflow.PopulationLoss(teacher, 3, weighting=s * jnp.ones(3)))(jnp.array([1.0, 0.0]))
    assert jax.tree_util.tree_map(lambda x: x, traced).weights.shape == (2, 3)
    zero = gflow.PopulationLoss(teacher, 3, weighting=[1.0, 1.0, 1.0])
    object.__setattr__(zero, "weights", jnp.zeros(3))
    assert zero.training_length == 0


def test_conserved_quantities_refuse_frozen_layers():
    """Q needs A, B, C trained and ‖B‖² − ‖C‖² needs B and C: with a layer frozen their drift is not solver error."""
    rng = np.random.default_rng(6)
    A, B, C = rng.normal(size=(3, 3)), rng.normal(size=3), rng.normal(size=3)
    with pytest.raises(gflow.GflowInputError, match="freezes C"):
        gflow.analysis.balance_matrix(gflow.LinearRNN(A, B, C, trained=("A", "B")))
    with pytest.raises(gflow.GflowInputError, match="freezes B"):
        gflow.analysis.norm_difference(gflow.LinearRNN(A, B, C, trained=("A", "C")))
    assert np.isfinite(float(gflow.analysis.norm_difference(gflow.LinearRNN(A, B, C, trained=("B", "C")))))
