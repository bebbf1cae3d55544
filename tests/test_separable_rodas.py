"""Rodas5P with its stage systems solved exactly by block Woodbury (gflow.flow.SeparableRodas), for a loss whose
residual curvature is block-diagonal over units (a diagonal LinearRNN under PopulationLoss): order 5 with trained
B and C (3 × 3 blocks), and the order lost when the blocks are declared 1 × 1 (a negative control: the curvature
taken as diagonal where it is not); the same steps as the dense Rodas5P; the units a model declares; a clear error
on a loss without them; and what solver="auto" picks. ``python tests/test_separable_rodas.py`` prints the slopes."""

import sys

import diffrax
import jax
import numpy as np
import pytest

import gflow
from gflow import flatten, LinearRNN, PopulationLoss
from gflow.flow import GradientFlowTerm, SeparableRodas
from gflow.models import Frozen
from test_rosenbrock import _order

TEACHER = LinearRNN(np.array([0.8, -0.5]), np.array([1.0, 0.7]), np.array([0.9, -0.6]), structure="diagonal")
LOSS = PopulationLoss(TEACHER, 6)
STUDENT = LinearRNN(np.array([0.3, -0.2, 0.1]), np.array([0.5, 0.4, -0.3]), np.array([0.6, -0.2, 0.4]),
                    structure="diagonal")
T1 = 1.0
DTS = np.array([0.04, 0.02, 0.01, 0.005])  # measured slopes 5.34 (separable), 2.08 (diagonal declared)


class _DiagonalCurvatureLoss(PopulationLoss):
    """The population loss declaring every parameter its own unit: S taken as diagonal, which it is not when B and C
    are trained (a unit's a, B, C couple)."""

    def curvature_units(self, model):
        units = PopulationLoss.curvature_units(self, model)
        start = iter(np.cumsum([0] + [leaf.size for leaf in jax.tree_util.tree_leaves(units)]))
        return jax.tree_util.tree_map(lambda leaf: next(start) + np.arange(leaf.size, dtype=float).reshape(leaf.shape),
                                      units)


def _end_point_errors(loss):
    theta0, static, unravel = flatten(STUDENT)
    reference = gflow.solve_flow(LOSS, STUDENT, T1, rtol=1e-13, solver="rodas5p-dense", progress=False)
    exact = np.asarray(flatten(reference.final)[0])
    term = GradientFlowTerm(loss, static, unravel)
    errors = []
    for dt in DTS:
        sol = diffrax.diffeqsolve(term, SeparableRodas(), 0.0, T1, dt, theta0,
                                  stepsize_controller=diffrax.ConstantStepSize(), max_steps=10_000)
        errors.append(float(np.max(np.abs(np.asarray(sol.ys)[-1] - exact))))
    return errors


def _wrong_loss():
    return _DiagonalCurvatureLoss(TEACHER, 6)


@pytest.mark.slow
def test_order_five_with_trained_input_and_readout():
    errors = _end_point_errors(LOSS)
    assert abs(_order(errors, DTS) - 5) <= 0.5, errors


@pytest.mark.slow
def test_a_diagonal_curvature_declared_for_coupled_units_loses_the_order():
    """Negative control of the order check: the same solver told that S is diagonal is not of order 5."""
    errors = _end_point_errors(_wrong_loss())
    assert _order(errors, DTS) < 4.0, errors


def _final(traj):
    return np.asarray(flatten(traj.final)[0])


@pytest.mark.parametrize("shape", ["siso", "mimo"])
def test_the_same_steps_as_the_dense_rodas5p(shape):
    """The exact Rodas5P two ways (an n × n LU, a block Woodbury solve): the same adaptive steps, the same flow."""
    if shape == "siso":
        loss, student = LOSS, STUDENT
    else:
        rng = np.random.RandomState(3)
        teacher = LinearRNN(np.array([0.7, -0.4]), rng.randn(2, 2), rng.randn(3, 2), structure="diagonal")
        loss = PopulationLoss(teacher, 6)
        student = LinearRNN(0.3 * rng.randn(4), 0.3 * rng.randn(4, 2), 0.3 * rng.randn(3, 4), structure="diagonal")
    runs = {name: gflow.solve_flow(loss, student, 20.0, rtol=1e-8, solver=name, progress=False)
            for name in ("rodas5p-separable", "rodas5p-dense")}
    separable, dense = runs["rodas5p-separable"], runs["rodas5p-dense"]
    assert separable.status == dense.status == "completed"
    assert abs(separable.stats["steps"] - dense.stats["steps"]) <= 2, (separable.stats, dense.stats)
    a, b = _final(separable), _final(dense)
    assert np.max(np.abs(a - b)) <= 1e-9 * np.max(np.abs(b)), (a, b)


def test_frozen_layers_make_the_curvature_diagonal():
    """Slutzky et al.'s SSM (B = C = 1 frozen): one unit per eigenvalue; its flow agrees with the dense Rodas5P."""
    model = LinearRNN(np.array([0.02, 0.015, 0.01, 0.005]), Frozen(np.ones(4)), Frozen(np.ones(4)),
                      structure="diagonal")
    loss = PopulationLoss.at_lags(LinearRNN(np.array([1.0, 0.0]), np.array([1.0, np.sqrt(3)]),
                                            np.array([1.0, np.sqrt(3)]), structure="diagonal"), {6: 1.0})
    theta0, static, unravel = flatten(model)
    assert list(GradientFlowTerm(loss, static, unravel).curvature_units(theta0)) == [0, 1, 2, 3]
    runs = [gflow.solve_flow(loss, model, 1e8, rtol=1e-8, solver=name, progress=False)
            for name in ("rodas5p-separable", "rodas5p-dense")]
    a, b = (_final(run) for run in runs)
    assert np.max(np.abs(a - b)) <= 1e-9 * np.max(np.abs(b)), (a, b)


def test_the_units_a_model_declares():
    theta0, static, unravel = flatten(STUDENT)
    units = GradientFlowTerm(LOSS, static, unravel).curvature_units(theta0)
    assert list(units) == [0, 1, 2] * 3  # θ = (a, B, C): unit p is (a_p, B_p, C_p)
    mimo = LinearRNN(np.zeros(2), np.ones((2, 3)), np.ones((4, 2)), structure="diagonal")
    tree = mimo.output_units()
    assert tree.B.tolist() == [[0, 0, 0], [1, 1, 1]] and tree.C.tolist() == [[0, 1]] * 4
    slots, n_units, size = gflow.flow.unit_layout(np.array([1, 0, 1, 1, 0]))
    assert slots.tolist() == [0, 0, 1, 2, 1] and (n_units, size) == (2, 3)
    general = LinearRNN(np.zeros((2, 2)), np.ones(2), np.ones(2))
    assert general.output_units() is None and LOSS.curvature_units(general) is None


def test_a_loss_without_units_is_refused_by_name():
    general = LinearRNN(0.1 * np.eye(3), 0.5 * np.ones(3), 0.5 * np.ones(3))
    with pytest.raises(gflow.GflowInputError, match="block-diagonal"):
        gflow.solve_flow(PopulationLoss(TEACHER, 6), general, 1.0, solver="rodas5p-separable", progress=False)


@pytest.mark.slow
def test_a_batch_agrees_with_its_members():
    """Lock-step (vmapped) and refilling slots both run the solver per member."""
    students = [STUDENT, LinearRNN(np.array([-0.2, 0.4, 0.05]), np.array([0.2, -0.5, 0.3]), np.array([0.4, 0.1, -0.6]),
                                   structure="diagonal")]
    kw = dict(rtol=1e-9, solver="rodas5p-separable", progress=False)
    batches = [gflow.solve_flows([LOSS, LOSS], students, 5.0, **kw),
               gflow.solve_flows([LOSS, LOSS], students, 5.0, slots=1, **kw)]
    for i, student in enumerate(students):
        b = _final(gflow.solve_flow(LOSS, student, 5.0, **kw))
        for batch in batches:
            a = np.asarray(flatten(batch[i].final)[0])
            assert np.max(np.abs(a - b)) <= 1e-7 * np.max(np.abs(b)), (i, a, b)


def test_auto_takes_it_for_one_separable_flow_within_bounds_and_at_tight_rtol():
    low, high = gflow.flow.SEPARABLE_MIN_PARAMETERS, gflow.flow.SEPARABLE_MAX_PARAMETERS
    pick = gflow.flow.default_solver
    assert pick(1e-8, low, separable=True) == pick(1e-6, high, separable=True) == "rodas5p-separable"
    assert pick(1e-8, low - 1, separable=True) == pick(1e-13, low - 1, separable=True) == "rodas5p-dense"
    assert pick(1e-8, high + 1, separable=True) == "rosenbrock"
    assert pick(gflow.flow.AUTO_RODAS_MAX_RTOL, 10 * high, separable=True) == "rodas5p-separable"
    assert pick(1e-8, low) == "rodas5p-dense"  # a loss that declares nothing: unchanged
    wide = LinearRNN(np.linspace(-0.3, 0.3, low), 0.1 * np.ones(low), 0.1 * np.ones(low), structure="diagonal")
    assert gflow.solve_flow(LOSS, wide, 1.0, progress=False).config["solver"] == "rodas5p-separable"
    assert gflow.solve_flow(LOSS, STUDENT, 1.0, progress=False).config["solver"] == "rodas5p-dense"  # 9 parameters
    batch = gflow.solve_flows([LOSS, LOSS], [wide, wide], 1.0, progress=False)  # a batch keeps ROS34PW2
    assert batch[0].config["solver"] == "rosenbrock"


if __name__ == "__main__":
    for name, loss in (("separable", LOSS), ("diagonal declared", _wrong_loss())):
        errors = _end_point_errors(loss)
        print(name, errors, _order(errors, DTS), file=sys.stderr)
