"""Rodas5P with the dense exact Jacobian (gflow.flow.DenseRodas), the default for flows of at most
gflow.flow.DENSE_MAX_PARAMETERS parameters: order 5 (and order lost with a wrong Jacobian: a negative control for the
order check), agreement with the matrix-free Rodas5P, the work it declares, a loss that is not a sum of squares, and
what solver="auto" picks by size and rtol."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gflow
from gflow import flatten
from gflow.flow import DenseRodas, GradientFlowTerm
from test_rodas import _end_point_errors, DTS, P0
from test_rosenbrock import _order, CurvedLeastSquares


class _HalvedJacobian(DenseRodas):
    """DenseRodas with half the flow's Jacobian in its linear systems: a plausible bug (a factor 2 lost between L
    and ½L) that a Rosenbrock method without the W-property cannot absorb."""

    @staticmethod
    def flow_jacobian(terms, t0, y0, args):
        return 0.5 * DenseRodas.flow_jacobian(terms, t0, y0, args)


@pytest.mark.slow
def test_order_five():
    errors = _end_point_errors(DenseRodas())
    assert abs(_order(errors, DTS) - 5) <= 0.5, errors


@pytest.mark.slow
def test_a_wrong_jacobian_loses_the_order():
    """Negative control of the order check: the same tableau with half the Jacobian is not of order 5."""
    errors = _end_point_errors(_HalvedJacobian())
    assert _order(errors, DTS) < 4.0, errors


def test_solve_flow_agrees_with_the_matrix_free_rodas5p_and_counts_its_work():
    dense = gflow.solve_flow(CurvedLeastSquares(), P0, 5.0, rtol=1e-10, solver="rodas5p-dense", progress=False)
    free = gflow.solve_flow(CurvedLeastSquares(), P0, 5.0, rtol=1e-10, solver="rodas5p", progress=False)
    a, b = np.asarray(flatten(dense.final)[0]), np.asarray(flatten(free.final)[0])
    assert np.max(np.abs(a - b)) <= 1e-8 * np.max(np.abs(b)), (a, b)
    st = dense.stats
    assert st["linear_solves"] == 8 * st["steps"] and st["gradient_evaluations"] == 8 * st["steps"] + 1
    assert "hessian_vector_products" not in st


class _Quartic(eqx.Module):
    """L(θ) = Σ θ⁴/4 + Σ θ²/2: not a sum of squares (no residuals), exact flow known per coordinate."""

    def __call__(self, p):
        return jnp.sum(p.theta ** 4) / 4 + jnp.sum(p.theta ** 2) / 2


def test_a_loss_without_residuals():
    """The dense solver needs only the loss: dθ/dt = −θ³ − θ has θ(t)² = θ0² e^{−2t} / (1 + θ0² (1 − e^{−2t}))."""
    t1 = 2.0
    traj = gflow.solve_flow(_Quartic(), P0, t1, rtol=1e-10, solver="rodas5p-dense", progress=False)
    theta0 = np.asarray(P0.theta)
    decay = np.exp(-2 * t1)
    exact = np.sign(theta0) * np.sqrt(theta0 ** 2 * decay / (1 + theta0 ** 2 * (1 - decay)))
    assert traj.status == "completed"
    assert np.max(np.abs(np.asarray(flatten(traj.final)[0]) - exact)) <= 1e-8
    with pytest.raises(gflow.GflowInputError, match="sum-of-squares"):
        gflow.solve_flow(_Quartic(), P0, t1, solver="rosenbrock", progress=False)


def test_auto_picks_by_size_then_rtol():
    """solver="auto": the dense Rodas5P up to DENSE_MAX_PARAMETERS parameters at any rtol; above, ROS34PW2 down to
    AUTO_RODAS_MAX_RTOL and the matrix-free Rodas5P below."""
    small = gflow.solve_flow(CurvedLeastSquares(), P0, 1.0, progress=False)
    assert small.config["solver"] == "rodas5p-dense"
    n = gflow.flow.DENSE_MAX_PARAMETERS
    assert gflow.flow.default_solver(1e-8, n) == "rodas5p-dense" == gflow.flow.default_solver(1e-13, n)
    assert gflow.flow.default_solver(1e-8, n + 1) == "rosenbrock"
    assert gflow.flow.default_solver(gflow.flow.AUTO_RODAS_MAX_RTOL, n + 1) == "rodas5p"


def test_fixed_steps_match_the_reference_tableau_solve():
    """One step by hand (numpy: the Jacobian by finite differences, the stages of the transformed form) equals the
    solver's step to rounding: the tableau is wired as Hairer & Wanner IV.7.25 writes it."""
    theta0, static, unravel = flatten(P0)
    term = GradientFlowTerm(CurvedLeastSquares(), static, unravel)
    h = 0.05
    y1 = np.asarray(DenseRodas().step(term, 0.0, h, theta0, None, term.vf(0.0, theta0, None), False)[0])
    f = jax.jit(lambda y: term.vf(0.0, y, None))
    y0 = np.asarray(theta0)
    jac = np.asarray(jax.jacfwd(f)(theta0))
    tab = gflow.flow.RODAS5P
    A, C = np.asarray(tab.A, dtype=float), np.asarray(tab.C, dtype=float)
    M = np.eye(y0.size) - h * tab.gamma * jac
    ks = []
    for i in range(len(tab.b)):
        yi = y0 + sum(A[i, j] * ks[j] for j in range(i))
        rhs = h * tab.gamma * np.asarray(f(jnp.asarray(yi))) + tab.gamma * sum(C[i, j] * ks[j] for j in range(i))
        ks.append(np.linalg.solve(M, rhs))
    by_hand = y0 + sum(b * k for b, k in zip(tab.b, ks))
    assert np.max(np.abs(y1 - by_hand)) <= 1e-13, (y1, by_hand)
