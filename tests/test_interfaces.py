"""The declared interfaces: every model is an AbstractRNN, every loss an AbstractSumOfSquares, a user's
own sum of squares gets the stiff solver through the interface alone, and solve_flow takes diffrax's own objects."""

from __future__ import annotations

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gflow
from gflow import GflowInputError, initializers, teachers
from gflow.models import AbstractRNN
from gflow.objectives import AbstractSumOfSquares

key = jax.random.key

MODELS = {
    "linear SISO": (lambda: initializers.gaussian(key(0), 5, scale=0.3), (5, 1, 1, True, True)),
    "linear MIMO": (lambda: initializers.gaussian(key(1), 4, scale=0.3, n_in=2, n_out=3), (4, 2, 3, False, False)),
    "elman": (lambda: gflow.models.elman_panigrahi_goyal(key(2), 6, 3), (6, 3, 1, False, True)),
    "elman scalar": (lambda: gflow.models.elman_cayci_eryilmaz(key(3), 6, alpha=0.5), (6, 1, 1, True, True)),
    "gru": (lambda: gflow.models.gru(key(4), 3, n_out=2), (3, 1, 2, True, False)),
    "lstm": (lambda: gflow.models.lstm(key(5), 4, n_in=2), (4, 2, 1, False, True)),
}


@pytest.mark.parametrize("name", list(MODELS))
def test_every_model_is_an_rnn_with_one_set_of_names(name):
    build, (hidden, n_in, n_out, scalar_in, scalar_out) = MODELS[name]
    model = build()
    assert isinstance(model, AbstractRNN)
    assert (model.hidden_size, model.n_in, model.n_out) == (hidden, n_in, n_out)
    assert (model.scalar_input, model.scalar_output) == (scalar_in, scalar_out)
    x = jnp.ones((7,) if scalar_in else (7, n_in))
    y = model(x)
    assert y.shape == ((7,) if scalar_out else (7, n_out))


def test_the_interface_cannot_be_instantiated_half_done():
    class NoForward(AbstractRNN):
        @property
        def hidden_size(self):
            return 1

    with pytest.raises(TypeError):
        NoForward()


LOSSES = {
    "population": lambda m: gflow.PopulationLoss(teachers.balanced(key(6), 2), 5, convention="half"),
    "empirical": lambda m: gflow.objectives.EmpiricalLoss.from_teacher(key(7), teachers.balanced(key(6), 2), 8, 5),
    "sample": lambda m: gflow.objectives.SampleLoss.from_teacher(key(8), m, 6, 4),
}


@pytest.mark.parametrize("name", list(LOSSES))
def test_every_loss_is_a_sum_of_squares(name):
    model = initializers.gaussian(key(9), 3, scale=0.3)
    loss = LOSSES[name](gflow.models.gru(key(10), 2) if name == "sample" else model)
    if name == "sample":
        model = gflow.models.gru(key(11), 2)
    assert isinstance(loss, AbstractSumOfSquares)
    r = loss.residuals(model)
    assert r.ndim == 1 and float(loss(model)) == pytest.approx(float(jnp.sum(r * r)), rel=1e-15)
    assert loss.description()["convention"] in ("L", "half")


class Params(eqx.Module):
    theta: jax.Array


class MyLeastSquares(AbstractSumOfSquares):
    """A user's own loss: only `residuals` (curved, so the Gauss–Newton matrix is only an approximation)."""

    def residuals(self, p):
        x, y = p.theta
        return jnp.stack([x * x - 1.0, x * y - 0.5, jnp.sin(y) - 0.2 * x])


@pytest.mark.slow
def test_a_user_sum_of_squares_gets_the_stiff_solver():
    p0 = Params(jnp.array([0.3, -0.2]))
    fast = gflow.solve_flow(MyLeastSquares(), p0, 20.0, rtol=1e-10, save_at=5, progress=False)
    stock = gflow.solve_flow(MyLeastSquares(), p0, 20.0, rtol=1e-10, save_at=5, solver="kvaerno5", progress=False)
    assert fast.config["solver"] == "rodas5p-dense" and fast.status == stock.status == "completed"  # 2 parameters
    assert fast.stats["linear_solves"] > 0
    np.testing.assert_allclose(fast.params, stock.params, rtol=1e-7, atol=1e-9)


def test_a_loss_that_is_not_a_sum_of_squares_needs_a_stock_solver():
    def quartic(p):
        return jnp.sum(p.theta ** 4)

    p0 = Params(jnp.array([0.3, -0.2]))
    with pytest.raises(GflowInputError, match="AbstractSumOfSquares"):
        gflow.solve_flow(quartic, p0, 1.0, solver="rosenbrock", progress=False)
    wide = Params(jnp.linspace(-0.3, 0.3, gflow.flow.DENSE_MAX_PARAMETERS + 1))
    with pytest.raises(GflowInputError, match="rodas5p-dense"):  # "auto" above the dense size: the Gauss–Newton solver
        gflow.solve_flow(quartic, wide, 1.0, progress=False)
    traj = gflow.solve_flow(quartic, p0, 1.0, solver="tsit5", save_at=3, progress=False)
    assert traj.status == "completed" and traj.config["convention"] == "unknown"
    # at this size "auto" is the dense Rodas5P, which needs only the loss
    dense = gflow.solve_flow(quartic, p0, 1.0, save_at=3, progress=False)
    assert dense.config["solver"] == "rodas5p-dense"
    np.testing.assert_allclose(dense.params, traj.params, rtol=1e-6)


@pytest.fixture(scope="module")
def problem():
    loss = gflow.PopulationLoss(teachers.balanced(key(12), 2), 4)
    return loss, initializers.gaussian(key(13), 3, scale=0.3)


@pytest.mark.slow
def test_a_diffrax_controller_equal_to_the_shortcut_gives_the_same_bits(problem):
    loss, model0 = problem
    short = gflow.solve_flow(loss, model0, 10.0, rtol=1e-7, atol=1e-9, save_at=6, progress=False)
    pid = diffrax.PIDController(rtol=1e-7, atol=1e-9)  # gflow's shortcut: no step floor
    given = gflow.solve_flow(loss, model0, 10.0, stepsize_controller=pid, save_at=6, progress=False)
    np.testing.assert_array_equal(given.params, short.params)
    assert given.config["stepsize_controller"].startswith("PIDController") and given.config["atol"] is None
    with pytest.raises(GflowInputError, match="not both"):
        gflow.solve_flow(loss, model0, 10.0, rtol=1e-7, stepsize_controller=pid)
    with pytest.raises(GflowInputError, match="step-size controller"):
        gflow.solve_flow(loss, model0, 10.0, stepsize_controller="pid")


@pytest.mark.slow
def test_a_diffrax_saveat_gives_the_same_times(problem):
    loss, model0 = problem
    ts = np.array([0.0, 0.5, 2.0, 10.0])
    a = gflow.solve_flow(loss, model0, 10.0, save_at=ts, progress=False)
    b = gflow.solve_flow(loss, model0, 10.0, save_at=diffrax.SaveAt(ts=ts), progress=False)
    c = gflow.solve_flow(loss, model0, 10.0, save_at=diffrax.SaveAt(t0=True, ts=ts[1:]), progress=False)
    np.testing.assert_array_equal(a.ts, b.ts)
    np.testing.assert_array_equal(a.params, b.params)
    np.testing.assert_array_equal(a.params, c.params)
    with pytest.raises(GflowInputError, match="only give times"):
        gflow.solve_flow(loss, model0, 10.0, save_at=diffrax.SaveAt(dense=True))
