"""The matrix-free residual Jacobian (gflow.objectives.ImpulseResponseJacobian) against the materialized one
(jacrev)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gflow
from gflow import flatten, initializers, teachers
from gflow.flow import GradientFlowTerm
from gflow.objectives import DenseResidualJacobian, ImpulseResponseJacobian


def _term(loss, model):
    theta, static, unravel = flatten(model)
    return GradientFlowTerm(loss, static, unravel), theta


@pytest.mark.parametrize("structure", ["general", "symmetric"])
@pytest.mark.parametrize("weighting", ["uniform", "accumulating"])
def test_structured_operator_matches_jacrev(structure, weighting):
    teacher = teachers.balanced(jax.random.key(0), 3)
    loss = gflow.PopulationLoss(teacher, 7, weighting=weighting).padded_to(9)  # zero-weight lags too
    model = initializers.gaussian(jax.random.key(1), 6, scale=0.4, structure=structure)
    term, theta = _term(loss, model)
    op = term.residual_jacobian_operator(theta)
    assert isinstance(op.op, ImpulseResponseJacobian)
    J = np.asarray(jax.jacrev(term.residuals)(theta))
    b = jax.random.normal(jax.random.key(2), theta.shape)
    z = jax.random.normal(jax.random.key(3), (J.shape[0],))
    scale = np.max(np.abs(J))
    np.testing.assert_allclose(op.mv(b), J @ np.asarray(b), atol=1e-13 * scale * np.sqrt(theta.size))
    np.testing.assert_allclose(op.rmv(z), J.T @ np.asarray(z), atol=1e-13 * scale * J.shape[0])
    np.testing.assert_allclose(op.gram(), J @ J.T, atol=1e-13 * np.max(np.abs(J @ J.T)))


@pytest.mark.parametrize("kwargs", [dict(structure="diagonal"),
                                    dict(structure="symmetric", parameterization="triangular"),
                                    dict(n_in=2, n_out=2)])
@pytest.mark.slow
def test_other_models_fall_back_to_the_dense_matrix(kwargs):
    n_io = kwargs.get("n_in", 1)
    teacher = teachers.memoryless(jnp.eye(n_io)) if n_io > 1 else teachers.balanced(jax.random.key(0), 2)
    loss = gflow.PopulationLoss(teacher, 4)
    model = initializers.gaussian(jax.random.key(1), 3, scale=0.4, **kwargs)
    term, theta = _term(loss, model)
    op = term.residual_jacobian_operator(theta)
    assert isinstance(op, DenseResidualJacobian)
    np.testing.assert_allclose(op.matrix, jax.jacrev(term.residuals)(theta), atol=1e-13)


def test_flow_with_structured_and_dense_jacobians_agree(monkeypatch):
    """The solver gives the same flow through either operator (same W-matrix up to rounding)."""
    teacher = teachers.balanced(jax.random.key(0), 3)
    loss = gflow.PopulationLoss(teacher, 6)
    model = initializers.balanced(jax.random.key(1), 5, scale=0.1, structure="symmetric")
    fast = gflow.solve_flow(loss, model, 200.0, rtol=1e-9, save_at=5, progress=False)
    monkeypatch.setattr(gflow.PopulationLoss, "residual_jacobian_operator", lambda self, m: None)
    dense = gflow.solve_flow(loss, model, 200.0, rtol=1e-9, save_at=5, progress=False)
    assert fast.stats["steps"] == dense.stats["steps"]
    np.testing.assert_allclose(fast.params, dense.params, rtol=0, atol=1e-9)


def test_auto_linear_solver_avoids_materializing_large_jacobians():
    """"auto" keeps Woodbury for matrix-free J at any size, and switches to CG when J would be materialized
    with more than woodbury_max_entries entries."""
    from gflow.flow import GaussNewtonRosenbrock

    loss = gflow.PopulationLoss(teachers.balanced(jax.random.key(0), 3), 6)
    structured = _term(loss, initializers.gaussian(jax.random.key(1), 5, scale=0.1))
    dense = _term(loss, initializers.gaussian(jax.random.key(1), 5, scale=0.1, structure="diagonal"))
    small_cap = GaussNewtonRosenbrock(woodbury_max_entries=10)
    assert small_cap._uses_woodbury(*structured)
    assert not small_cap._uses_woodbury(*dense)
    assert GaussNewtonRosenbrock()._uses_woodbury(*dense)
    assert not GaussNewtonRosenbrock(linear_solver="cg")._uses_woodbury(*structured)
