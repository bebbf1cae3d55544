"""Rodas5P with the exact Jacobian (Hessian-vector products, Gauss–Newton-preconditioned stage solves): order 5
on a curved least-squares flow (measured 5.07), its dense output between steps (5.13), and the order lost without
the Hessian correction (1.2 with the Gauss–Newton Jacobian alone). ``python tests/test_rodas.py`` prints the slopes."""

import os
import sys

import diffrax
import jax.numpy as jnp
import numpy as np
import pytest

import gflow
from gflow import flatten
from gflow.flow import GradientFlowTerm, RodasGradientFlow
from test_rosenbrock import _order, CurvedLeastSquares, Params

P0 = Params(jnp.array([0.4, 1.2]))
T1 = 1.0
DTS = np.array([0.1, 0.05, 0.025, 0.0125])


def _reference(ts):
    ref = gflow.solve_flow(CurvedLeastSquares(), P0, T1, rtol=1e-14, atol=1e-15, solver="dopri8", save_at=ts)
    keep = np.isin(np.asarray(ref.ts), ts)  # solve_flow also saves t1
    return np.asarray(ref.params)[keep]


def _fixed_steps(solver, dt, ts):
    theta0, static, unravel = flatten(P0)
    term = GradientFlowTerm(CurvedLeastSquares(), static, unravel)
    sol = diffrax.diffeqsolve(term, solver, 0.0, T1, dt, theta0, stepsize_controller=diffrax.ConstantStepSize(),
                              saveat=diffrax.SaveAt(ts=jnp.asarray(ts)), max_steps=100_000)
    return np.asarray(sol.ys)


def _end_point_errors(solver):
    """max |θ(T1) − exact| of fixed-step runs at each step size of DTS."""
    exact = _reference(np.array([T1]))[-1]
    return [np.max(np.abs(_fixed_steps(solver, dt, [T1])[-1] - exact)) for dt in DTS]


@pytest.mark.slow
def test_order_five_with_the_exact_jacobian():
    errors = _end_point_errors(RodasGradientFlow(linear_rtol=1e-14, jacobian_every=1))
    assert abs(_order(errors, DTS) - 5) <= 0.5, errors


@pytest.mark.slow
def test_dense_output_keeps_the_order():
    """Between steps: the order-4 interpolant's local error is O(h⁵), like the solution's global error, so the
    values at SaveAt times converge at order 5 (a cubic Hermite interpolant would give 4)."""
    ts = T1 * np.array([0.13, 0.37, 0.61, 0.89])  # inside steps for every dt above
    exact = _reference(ts)
    solver = RodasGradientFlow(linear_rtol=1e-14, jacobian_every=1)
    errors = [np.max(np.abs(_fixed_steps(solver, dt, ts) - exact)) for dt in DTS]
    assert abs(_order(errors, DTS) - 5) <= 0.5, errors


@pytest.mark.slow
def test_the_gauss_newton_jacobian_alone_loses_the_order():
    """Without the Hessian correction (no Richardson iteration) Rodas5P is not a W-method: its order drops."""
    errors = _end_point_errors(RodasGradientFlow(linear_max_iterations=0, jacobian_every=1))
    assert _order(errors, DTS) < 3.5, errors


@pytest.mark.slow
def test_the_rodas4_tableau_of_bench_rodas_choice_has_order_four():
    """bench/rodas_choice.py compares Rodas5P with Rodas4 in the same solver; its tableau (data there) must be right."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench"))
    from rodas_choice import RODAS4

    errors = _end_point_errors(RodasGradientFlow(rodas=RODAS4, linear_rtol=1e-14, jacobian_every=1))
    assert abs(_order(errors, DTS) - 4) <= 0.5, errors


def test_solve_flow_counts_its_work_and_agrees_with_ros34pw2():
    """Through solve_flow (adaptive): the final state agrees with ROS34PW2's at a tight rtol, and the stats count
    the Hessian-vector products (one preconditioned solve each, on top of 8 per step)."""
    rodas = gflow.solve_flow(CurvedLeastSquares(), P0, 5.0, rtol=1e-10, solver="rodas5p", progress=False)
    ros = gflow.solve_flow(CurvedLeastSquares(), P0, 5.0, rtol=1e-10, solver="rosenbrock", progress=False)
    a, b = np.asarray(flatten(rodas.final)[0]), np.asarray(flatten(ros.final)[0])
    assert np.max(np.abs(a - b)) <= 1e-7 * np.max(np.abs(b)), (a, b)
    st = rodas.stats
    assert st["hessian_vector_products"] > 0
    assert st["linear_solves"] == 8 * st["steps"] + st["hessian_vector_products"]
    assert st["steps"] < ros.stats["steps"]
    assert "hessian_vector_products" not in ros.stats


def test_auto_takes_rodas5p_only_at_tight_rtol():
    """solver="auto" above DENSE_MAX_PARAMETERS parameters: ROS34PW2 down to the measured crossover, Rodas5P below it
    (gflow.flow.AUTO_RODAS_MAX_RTOL)."""
    crossover = gflow.flow.AUTO_RODAS_MAX_RTOL
    wide = Params(jnp.linspace(0.2, 1.2, gflow.flow.DENSE_MAX_PARAMETERS + 1))
    loss = _Wide()
    loose = gflow.solve_flow(loss, wide, 1.0, rtol=crossover * 10, progress=False)
    tight = gflow.solve_flow(loss, wide, 1.0, rtol=crossover, progress=False)
    assert loose.config["solver"] == "rosenbrock" and tight.config["solver"] == "rodas5p"
    assert gflow.flow.default_solver() == "rosenbrock" and gflow.flow.default_solver(1e-12) == "rodas5p"


class _Wide(gflow.objectives.AbstractSumOfSquares):
    """CurvedLeastSquares' residuals on every neighbouring pair of a longer θ."""

    def residuals(self, p):
        x, y = p.theta[:-1], p.theta[1:]
        return jnp.concatenate([x * x - 1.0, x * y - 0.5, jnp.sin(y) - 0.2 * x])


if __name__ == "__main__":  # the measured slopes
    for name, solver in [("exact", RodasGradientFlow(linear_rtol=1e-14, jacobian_every=1)),
                         ("gauss-newton only", RodasGradientFlow(linear_max_iterations=0, jacobian_every=1))]:
        errors = _end_point_errors(solver)
        print(name, "order", _order(errors, DTS), errors)
    ts = T1 * np.array([0.13, 0.37, 0.61, 0.89])
    errors = [np.max(np.abs(_fixed_steps(RodasGradientFlow(linear_rtol=1e-14), dt, ts) - _reference(ts))) for dt in DTS]
    print("dense order", _order(errors, DTS), errors)

