"""Malformed arguments raise gflow.GflowInputError (a ValueError) whose message names the argument."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gflow
from gflow import analysis as an, GflowInputError, initializers, teachers


def raises_naming(name):
    """pytest.raises for GflowInputError whose message contains the argument name in backticks."""
    return pytest.raises(GflowInputError, match=f"`{name}`")


def test_error_is_a_value_error():
    assert issubclass(GflowInputError, ValueError)
    with pytest.raises(ValueError):
        gflow.LinearRNN(np.eye(3), np.ones(4), np.ones(4))


@pytest.fixture(scope="module")
def model():
    return initializers.gaussian(jax.random.key(0), 3, scale=0.5)


# ------------------------------------------------------------------------------------------- LinearRNN


@pytest.mark.parametrize("A,B,C,name", [
    (np.eye(3), np.ones(4), np.ones(4), "A"),  # A does not match d
    (np.ones((4, 3)), np.ones(4), np.ones(4), "A"),  # non-square A
    (np.eye(4), np.ones((4, 1, 1)), np.ones(4), "B"),  # B of rank 3
    (np.eye(4), np.ones(4), np.ones(3), "C"),  # SISO C does not match d
    (np.eye(4), np.ones((4, 2)), np.ones((3, 5)), "C"),  # MIMO C does not match d
    (np.eye(4), np.ones((4, 2)), np.ones(4), "C"),  # MIMO B with a SISO C
])
def test_linear_rnn_shapes(A, B, C, name):
    with raises_naming(name):
        gflow.LinearRNN(A, B, C)


def test_linear_rnn_structure_specific_shapes():
    with raises_naming("A"):
        gflow.LinearRNN(np.eye(3), np.ones(3), np.ones(3), structure="diagonal")
    with raises_naming("A"):
        gflow.LinearRNN(np.ones(3), np.ones(3), np.ones(3), structure="symmetric")


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("name", ["A", "B", "C"])
def test_linear_rnn_non_finite(bad, name):
    arrays = {"A": np.eye(3), "B": np.ones(3), "C": np.ones(3)}
    arrays[name] = arrays[name].copy()
    arrays[name].flat[1] = bad
    with raises_naming(name):
        gflow.LinearRNN(**arrays)


def test_unknown_structure_and_parameterization():
    with raises_naming("structure"):
        gflow.LinearRNN(np.eye(3), np.ones(3), np.ones(3), structure="banded")
    with raises_naming("parameterization"):
        gflow.LinearRNN(np.eye(3), np.ones(3), np.ones(3), structure="symmetric", parameterization="full")
    with raises_naming("parameterization"):
        gflow.LinearRNN(np.eye(3), np.ones(3), np.ones(3), parameterization="triangular")
    with raises_naming("structure"):
        initializers.gaussian(jax.random.key(0), 3, scale=0.1, structure="Symmetric")


def test_non_symmetric_A_with_symmetric_structure():
    A = np.eye(3)
    A[0, 1] = 0.5
    with raises_naming("A"):
        gflow.LinearRNN(A, np.ones(3), np.ones(3), structure="symmetric")
    with raises_naming("A"):
        gflow.LinearRNN(A, np.ones(3), np.ones(3), structure="symmetric", parameterization="triangular")


def test_bad_impulse_response_length_and_input_sequence(model):
    with raises_naming("n"):
        model.impulse_response(0)
    with raises_naming("x"):
        model(jnp.ones((5, 2)))  # SISO model, MIMO-shaped input
    mimo = initializers.gaussian(jax.random.key(0), 3, scale=0.5, n_in=2, n_out=2)
    with raises_naming("x"):
        mimo(jnp.ones((5, 3)))


# ------------------------------------------------------------------------------------------- PopulationLoss


@pytest.mark.parametrize("k", [0, -3, 2.5, True])
def test_bad_k(balanced_teacher, k):
    with raises_naming("k"):
        gflow.PopulationLoss(balanced_teacher, k)


def test_bad_weighting_convention_teacher(balanced_teacher):
    with raises_naming("weighting"):
        gflow.PopulationLoss(balanced_teacher, 5, weighting="geometric")
    with raises_naming("convention"):
        gflow.PopulationLoss(balanced_teacher, 5, convention="L/2")
    with raises_naming("teacher"):
        gflow.PopulationLoss(object(), 5)


def test_model_teacher_output_shape_mismatch(model):
    mimo_teacher = teachers.memoryless(np.ones((2, 2)))
    with pytest.raises(GflowInputError, match="(?s)model.*teacher"):
        gflow.PopulationLoss(mimo_teacher, 4)(model)
    siso_loss = gflow.PopulationLoss(teachers.memoryless(1.0), 4)
    mimo = initializers.gaussian(jax.random.key(0), 3, scale=0.5, n_in=2, n_out=2)
    with pytest.raises(GflowInputError, match="(?s)model.*teacher"):
        siso_loss(mimo)
    wrong_channels = initializers.gaussian(jax.random.key(0), 3, scale=0.5, n_in=2, n_out=3)
    with pytest.raises(GflowInputError, match="(?s)model.*teacher"):
        gflow.PopulationLoss(mimo_teacher, 4)(wrong_channels)
    with pytest.raises(GflowInputError, match="(?s)model.*teacher"):
        gflow.solve_flow(gflow.PopulationLoss(mimo_teacher, 4), model, 1.0)


# ------------------------------------------------------------------------------------------- solve_flow


@pytest.mark.parametrize("kwargs,name", [
    ({"rtol": 0.0}, "rtol"), ({"rtol": -1e-8}, "rtol"), ({"rtol": np.nan}, "rtol"),
    ({"atol": 0.0}, "atol"), ({"atol": -1.0}, "atol"),
    ({"t1": 0.0}, "t1"), ({"t1": -1.0}, "t1"), ({"t1": np.inf}, "t1"),
    ({"t1": 1.0, "t0": 2.0}, "t1"), ({"t1": 1.0, "t0": 1.0}, "t0"),
    ({"solver": "euler-maruyama"}, "solver"), ({"solver": 3}, "solver"),
    ({"stop_loss": -1.0}, "stop_loss"), ({"diverge_factor": 0.0}, "diverge_factor"),
    ({"max_steps": 0}, "max_steps"), ({"max_steps": 10.5}, "max_steps"),
    ({"save_at": 1}, "save_at"), ({"save_at": np.array([0.5, 0.1])}, "save_at"),
    ({"save_at": np.array([0.0, 2.0])}, "save_at"), ({"save_at": np.array([])}, "save_at"),
    ({"save_at": np.array([0.0, np.nan])}, "save_at"),
    ({"diagnostics": {"x": 3}}, "x"), ({"diagnostics": "balance_ratio"}, "diagnostics"),
])
def test_solve_flow_arguments(small_loss, model, kwargs, name):
    kwargs = dict(kwargs)
    t1 = kwargs.pop("t1", 1.0)
    with pytest.raises(GflowInputError, match=f"`?{name}`?"):
        gflow.solve_flow(small_loss, model, t1, **kwargs)


def test_solve_flow_bad_loss_and_model(small_loss, model):
    with raises_naming("loss"):
        gflow.solve_flow("not a loss", model, 1.0)
    with raises_naming("model0"):
        gflow.solve_flow(small_loss, {"A": model.A}, 1.0)
    nan_model = eqx.tree_at(lambda m: m.B, model, model.B.at[0].set(jnp.nan))  # bypasses __init__'s check
    with raises_naming("model0"):
        gflow.solve_flow(small_loss, nan_model, 1.0)


def _broken_diagnostic(m):
    return float(m.A[0, 0])  # a host conversion: fails once traced, as every diagnostic is


@pytest.mark.parametrize("batched", [False, True])
def test_a_broken_diagnostic_fails_before_the_solve(small_loss, model, capfd, batched):
    """The diagnostic is traced on the start: the integration never starts (its progress meter prints nothing), and
    the message names the diagnostic and quotes its own error."""
    run = (lambda **kw: gflow.solve_flows([small_loss] * 2, [model] * 2, 1.0, progress=True, **kw)) if batched else \
        (lambda **kw: gflow.solve_flow(small_loss, model, 1.0, progress=True, **kw))
    with pytest.raises(GflowInputError, match=r"(?s)diagnostic 'rho'.*ConcretizationTypeError.*float"):
        run(diagnostics={"ok": an.balance_ratio, "rho": _broken_diagnostic})
    with pytest.raises(GflowInputError, match=r"diagnostic '<lambda>'.*AttributeError.*'nope'"):
        run(diagnostics=[lambda m: m.nope])
    printed = capfd.readouterr()
    assert "[flow" not in printed.out + printed.err
    run(diagnostics={"ok": an.balance_ratio})  # control: working diagnostics reach the solve, whose meter prints
    printed = capfd.readouterr()
    assert "[flow" in printed.out + printed.err


# ------------------------------------------------------------------------------------------- other modules


def test_initializer_arguments():
    key = jax.random.key(0)
    with raises_naming("scale"):
        initializers.gaussian(key, 3, scale=0.0)
    with raises_naming("scale"):
        initializers.balanced(key, 3, scale=-1.0)
    with raises_naming("d"):
        initializers.gaussian(key, 0, scale=0.1)
    with raises_naming("convention"):
        initializers.gaussian(key, 3, scale=0.1, convention="xavier")
    with raises_naming("n_in"):
        initializers.gaussian(key, 3, scale=0.1, n_in=0, n_out=2)


def test_teacher_arguments():
    with raises_naming("d"):
        teachers.delay(0)
    with raises_naming("d"):
        teachers.balanced(jax.random.key(0), 0)
    with raises_naming("eigenvalue_range"):
        teachers.balanced(jax.random.key(0), 3, eigenvalue_range=(1.0, 0.5))
    with raises_naming("placement"):
        teachers.balanced(jax.random.key(0), 3, placement="log")
    with raises_naming("w"):
        teachers.memoryless(np.ones(3))  # neither a scalar nor a matrix
    with raises_naming("w"):
        teachers.memoryless(np.nan)
    with raises_naming("model"):
        teachers.from_model(42)


def test_analysis_arguments(model, balanced_teacher):
    with raises_naming("q"):
        an.loss_at_length(model, balanced_teacher, 0)
    with raises_naming("horizon"):
        an.tail_error(model, balanced_teacher, 10, horizon=10)
    with raises_naming("eps"):
        an.balancing_time(0.0, 1.0)
    with raises_naming("w0"):
        an.balancing_time(1e-3, -1.0)
    with raises_naming("convention"):
        an.balancing_time(1e-3, 1.0, "L/2")
    with raises_naming("norm"):
        an.early_phase_rate("growth", 1.0)
    with pytest.raises(GflowInputError, match="B"):
        an.balance_ratio(initializers.gaussian(jax.random.key(0), 3, scale=0.5, n_in=2, n_out=3))
    with pytest.raises(GflowInputError):
        an.fit_exponential_rate([0.0, 1.0], [1.0, -1.0])
    with pytest.raises(GflowInputError):
        an.fit_power_law([1.0], [1.0])


def test_first_markov_parameter_needs_a_siso_teacher():
    with raises_naming("teacher"):
        teachers.first_markov_parameter(teachers.memoryless(np.ones((2, 2))))


# ------------------------------------------------------------------------------------------- PRNG keys

KEY_TAKERS = {
    "initializers.gaussian": lambda key: initializers.gaussian(key, 3, scale=0.1),
    "initializers.balanced": lambda key: initializers.balanced(key, 3, scale=0.1),
    "initializers.symmetric": lambda key: initializers.symmetric(key, 3, scale=0.1),
    "initializers.residual": lambda key: initializers.residual(key, 3, scale=0.1),
    "initializers.xavier": lambda key: initializers.xavier(key, 3),
    "models.gru": lambda key: gflow.models.gru(key, 3),
    "models.lstm": lambda key: gflow.models.lstm(key, 3),
    "models.elman_allen_zhu_li": lambda key: gflow.models.elman_allen_zhu_li(key, 4),
    "models.elman_cayci_eryilmaz": lambda key: gflow.models.elman_cayci_eryilmaz(key, 4, alpha=0.5),
    "teachers.balanced": lambda key: teachers.balanced(key, 3),
    "teachers.random_unbalanced": lambda key: teachers.random_unbalanced(key, 3),
    "teachers.vandermonde_student": lambda key: teachers.vandermonde_student(teachers.delay(2), 2, 3, key=key),
    "token_sum_teacher": lambda key: gflow.objectives.nonlinear_teachers.token_sum_teacher(key, 3, 4, eps_x=0.1),
    "transport_teacher": lambda key: gflow.objectives.nonlinear_teachers.transport_teacher(
        key, alpha=0.5, n_samples=8),
    "gaussian_sequences": lambda key: gflow.objectives.gaussian_sequences(key, 2, 3),
    "unit_ball_sequences": lambda key: gflow.objectives.unit_ball_sequences(key, 2, 3),
    "normalized_token_sequences": lambda key: gflow.objectives.normalized_token_sequences(key, 2, 4, 4, eps_x=0.1),
}


@pytest.mark.parametrize("name", list(KEY_TAKERS))
def test_an_int_seed_instead_of_a_key_is_named(name):
    with pytest.raises(GflowInputError, match=r"`key` must be a JAX PRNG key, e\.g\. jax\.random\.key\(0\); got int 0 "
                                              r"\(did you swap the arguments"):
        KEY_TAKERS[name](0)


@pytest.mark.parametrize("name", list(KEY_TAKERS))
def test_typed_and_legacy_keys_are_both_accepted(name):
    """A typed key and a legacy uint32 key holding the same bits draw the same arrays."""
    typed = jax.tree_util.tree_leaves(eqx.filter(KEY_TAKERS[name](jax.random.key(0)), eqx.is_array))
    legacy = jax.tree_util.tree_leaves(eqx.filter(KEY_TAKERS[name](jax.random.PRNGKey(0)), eqx.is_array))
    assert typed and len(typed) == len(legacy)
    for a, b in zip(typed, legacy):
        assert a.shape == b.shape and np.all(np.isfinite(a))
        np.testing.assert_array_equal(a, b)


def test_swapped_key_and_size_are_named():
    with pytest.raises(GflowInputError, match=r"`key` must be a JAX PRNG key.*got int 3 \(did you swap"):
        initializers.gaussian(3, jax.random.key(0), scale=0.1)
    with pytest.raises(GflowInputError, match=r"`key` must be a JAX PRNG key.*got an array of shape \(3,\)"):
        teachers.balanced(np.ones(3), 3)
    with pytest.raises(GflowInputError, match=r"`d` must be an integer, got a JAX PRNG key \(did you swap"):
        teachers.delay(jax.random.key(0))


def test_keys_under_vmap_pass_the_check():
    keys = jax.random.split(jax.random.key(0), 3)
    stacked = eqx.filter_vmap(lambda k: initializers.gaussian(k, 2, scale=0.1))(keys)
    assert stacked.A.shape == (3, 2, 2)


def test_the_empirical_losses_check_their_sampling_key():
    loss = gflow.objectives.EmpiricalLoss.from_teacher(jax.random.key(0), teachers.delay(2), 4, 3)
    with pytest.raises(GflowInputError, match="`key` must be a JAX PRNG key"):
        loss.minibatch_init(7, 2)
    with pytest.raises(GflowInputError, match="`key` must be a JAX PRNG key"):
        gflow.objectives.EmpiricalLoss.from_teacher(0, teachers.delay(2), 4, 3)
    with pytest.raises(GflowInputError, match="`key` must be a JAX PRNG key"):
        gflow.objectives.SampleLoss.from_teacher(0, teachers.delay(2), 4, 3)


def test_linear_rnn_refuses_a_key_or_text_by_name():
    """LinearRNN takes arrays: a PRNG key (an initializer's arguments) or a string is named, not a JAX TypeError."""
    with pytest.raises(GflowInputError, match="`A` is a JAX PRNG key.*gflow.initializers"):
        gflow.LinearRNN(jax.random.key(0), 3, 3)
    with raises_naming("B"):
        gflow.LinearRNN(np.eye(3), "ones", np.ones(3))
