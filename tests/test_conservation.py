"""Invariants of the gradient flow (seed 000 Lemma 6 / E.5; derived here: Q and the diagonal model's b_i² − c_i²): balancedness, Q, ‖B‖² − ‖C‖².

Every flow here uses the small problem of conftest.py with the shared number of save times.
"""

import jax
import numpy as np
import pytest

import gflow
from conftest import REF_SAVES, REF_T1
from gflow import analysis as an, initializers


@pytest.mark.slow
@pytest.mark.parametrize("structure", ["symmetric", "diagonal"])
def test_balanced_start_stays_balanced(small_loss, structure):
    """Seed 000 Lemma 6 / E.5 and seed 001 Thm 6.1 part 1: B = Cᵀ is invariant when A is symmetric."""
    model0 = initializers.balanced(jax.random.key(3), 4, scale=0.3, structure=structure)
    assert float(an.balance_ratio(model0)) == 0.0
    traj = gflow.solve_flow(small_loss, model0, REF_T1, save_at=REF_SAVES,
                            diagnostics={"rho_bal": an.balance_ratio, "W": an.balance_norm})
    assert traj.status == "completed"
    assert traj.loss[-1] < 1e-2 * traj.loss[0]  # the model moved far from its start
    assert traj.diagnostics["W"][-1] > 2 * traj.diagnostics["W"][0]
    assert np.max(traj.diagnostics["rho_bal"]) <= 1e-10
    np.testing.assert_allclose(np.asarray(traj.final.B), np.asarray(traj.final.C), rtol=0,
                               atol=1e-10 * float(np.max(np.abs(traj.final.B))))


@pytest.mark.slow
def test_mimo_balanced_start_stays_balanced():
    """Seed 001 App. C: with n = m, a symmetric teacher (W_j = W_jᵀ) and B = Cᵀ, A = Aᵀ, B = Cᵀ persists."""
    A_t = initializers.balanced(jax.random.key(4), 3, scale=0.4, n=2)  # symmetric A, B = Cᵀ: W_j symmetric
    teacher = gflow.LinearRNN(A_t.transition(), A_t.B, A_t.C)
    W = np.asarray(teacher.impulse_response(5))
    np.testing.assert_allclose(W, np.swapaxes(W, 1, 2), atol=1e-15)
    loss = gflow.PopulationLoss(teacher, 5)
    model0 = initializers.balanced(jax.random.key(5), 4, scale=0.3, n=2)
    traj = gflow.solve_flow(loss, model0, REF_T1, save_at=REF_SAVES, diagnostics={"rho_bal": an.balance_ratio},
                            solver="tsit5")
    assert traj.status == "completed"
    assert traj.loss[-1] < 0.1 * traj.loss[0]
    assert np.max(traj.diagnostics["rho_bal"]) <= 1e-10


@pytest.fixture(scope="module")
def q_drifts(small_loss, general_start):
    """Relative drift of Q along the same general-A flow at rtol and rtol/100."""
    out = {}
    for rtol in (1e-6, 1e-8):
        traj = gflow.solve_flow(small_loss, general_start, REF_T1, rtol=rtol, save_at=REF_SAVES,
                                diagnostics={"Q": an.balance_matrix, "scale": an.balance_matrix_scale,
                                             "nd": an.norm_difference})
        assert traj.status == "completed"
        out[rtol] = traj
    return out


@pytest.mark.slow
def test_q_is_conserved_to_tolerance(q_drifts):
    for rtol, traj in q_drifts.items():
        drift = an.relative_drift(traj.diagnostics["Q"], traj.diagnostics["scale"])
        assert drift <= 10 * rtol, (rtol, drift)
        # Q itself is far from zero, and the parameters move by O(1): the check is not vacuous
        assert np.linalg.norm(traj.diagnostics["Q"][0]) > 1e-2
        assert np.linalg.norm(traj.params[-1] - traj.params[0]) > 0.5


def test_q_drift_shrinks_with_the_tolerance(q_drifts):
    loose = an.relative_drift(q_drifts[1e-6].diagnostics["Q"], q_drifts[1e-6].diagnostics["scale"])
    tight = an.relative_drift(q_drifts[1e-8].diagnostics["Q"], q_drifts[1e-8].diagnostics["scale"])
    assert tight < 0.1 * loose, (loose, tight)


def test_norm_difference_is_conserved(q_drifts):
    traj = q_drifts[1e-8]
    nd = traj.diagnostics["nd"]
    np.testing.assert_allclose(nd, np.trace(traj.diagnostics["Q"], axis1=1, axis2=2), rtol=1e-12, atol=1e-14)
    assert an.drift(nd) <= 10 * 1e-8 * float(np.max(traj.diagnostics["scale"]))


def test_diagonal_model_conserves_each_b_squared_minus_c_squared(small_loss):
    """Derived here (seed 001 derives no conservation law): in the diagonal model every b_i² − c_i² is conserved (an unbalanced start)."""
    model0 = initializers.gaussian(jax.random.key(6), 4, scale=0.3, structure="diagonal")
    traj = gflow.solve_flow(small_loss, model0, REF_T1, rtol=1e-8, save_at=REF_SAVES,
                            diagnostics={"bc": lambda m: m.B**2 - m.C**2, "B": lambda m: m.B})
    assert traj.status == "completed"
    bc = traj.diagnostics["bc"]
    assert np.max(np.abs(bc - bc[0])) <= 1e-7 * np.max(np.abs(traj.diagnostics["B"])) ** 2
    assert np.max(np.abs(traj.diagnostics["B"][-1] - traj.diagnostics["B"][0])) > 0.1  # B moved


def test_restricted_symmetric_flow_equals_general_flow_on_the_manifold(small_loss):
    """The "restricted" field (G + Gᵀ)/2 from a balanced start is what GD/GF on (A, B, C) does (docs/design.md, "Numbers that must be right")."""
    sym = initializers.balanced(jax.random.key(7), 4, scale=0.3)
    gen = gflow.LinearRNN(sym.transition(), sym.B, sym.C)
    ts = np.linspace(0.0, REF_T1, REF_SAVES)
    a = gflow.solve_flow(small_loss, sym, REF_T1, rtol=1e-10, save_at=ts)
    b = gflow.solve_flow(small_loss, gen, REF_T1, rtol=1e-10, save_at=ts)
    moved = np.max(np.abs(a.params[-1] - a.params[0]))
    assert moved > 0.1
    np.testing.assert_allclose(a.params, b.params, rtol=0, atol=1e-7 * moved)
    Aa = np.asarray(b.final.A)
    np.testing.assert_allclose(Aa, Aa.T, atol=1e-7 * moved)  # the general flow stayed symmetric
