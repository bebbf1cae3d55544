"""Autodiff gradients of PopulationLoss against the closed forms of seed 001 eqs. 5–7, 21–23.

With r_j = h_j − w_j (R_j for MIMO) and weights ω_j (1, or k − j for the accumulating loss, times 1/2 under
convention "half"):

    dL/dB = 2 Σ_j ω_j (A^j)ᵀ Cᵀ R_j
    dL/dC = 2 Σ_j ω_j R_j Bᵀ (A^j)ᵀ
    dL/dA = 2 Σ_{j≥1} ω_j Σ_{r<j} (A^r)ᵀ Cᵀ R_j Bᵀ (A^{j-1-r})ᵀ
"""

import equinox as eqx
import jax
import numpy as np
import pytest

import gflow
from gflow import flatten, initializers, teachers
from gflow.flow import GradientFlowTerm

RTOL = 1e-10


@eqx.filter_jit
def grad(loss, model):
    """∇L on the model's arrays (jit-compiled once per structure: much faster than op-by-op)."""
    return eqx.filter_grad(loss)(model)


def closed_form_gradients(A, B, C, target, weights):
    """Seed 001 eqs. 5–7 and 21–23: gradients for SISO (B: (d,), C: (d,)) or MIMO (B: (d, n), C: (m, d))."""
    A = np.asarray(A, dtype=np.float64)
    siso = np.ndim(B) == 1
    B = np.asarray(B, dtype=np.float64).reshape(A.shape[0], -1)
    C = np.asarray(C, dtype=np.float64).reshape(-1, A.shape[0])
    k = len(weights)
    P = [np.linalg.matrix_power(A, j) for j in range(k)]
    R = [weights[j] * (C @ P[j] @ B - np.asarray(target[j]).reshape(C.shape[0], B.shape[1])) for j in range(k)]
    gB = 2 * sum(P[j].T @ C.T @ R[j] for j in range(k))
    gC = 2 * sum(R[j] @ B.T @ P[j].T for j in range(k))
    gA = 2 * sum(P[r].T @ C.T @ R[j] @ B.T @ P[j - 1 - r].T for j in range(1, k) for r in range(j))
    if siso:
        gB, gC = gB.reshape(-1), gC.reshape(-1)
    return gA, gB, gC


def _weights(k, weighting, convention):
    w = np.ones(k) if weighting == "uniform" else (k - np.arange(k)).astype(np.float64)
    return w * (0.5 if convention == "half" else 1.0)


def _assert_close(actual, expected):
    actual, expected = np.asarray(actual), np.asarray(expected)
    scale = np.max(np.abs(expected))
    assert scale > 1e-3  # a meaningful, non-vanishing gradient
    np.testing.assert_allclose(actual, expected, rtol=0, atol=RTOL * scale)


@pytest.mark.parametrize("weighting,convention", [("uniform", "L"), ("accumulating", "L"), ("uniform", "half")])
def test_siso_general_A(balanced_teacher, weighting, convention):
    k = 6
    model = initializers.gaussian(jax.random.key(1), 4, scale=0.7)
    loss = gflow.PopulationLoss(balanced_teacher, k, weighting=weighting, convention=convention)
    g = grad(loss, model)
    gA, gB, gC = closed_form_gradients(model.A, model.B, model.C, balanced_teacher.impulse_response(k),
                                       _weights(k, weighting, convention))
    _assert_close(g.A, gA)
    _assert_close(g.B, gB)
    _assert_close(g.C, gC)


def test_siso_memoryless_teacher_with_jax_grad():
    """Seed 001 eqs. (5)–(7) with r_0 = CB − w*, r_j = C A^j B, differentiating with jax.grad directly."""
    k, w = 5, 1.3
    model = initializers.gaussian(jax.random.key(2), 3, scale=0.8)
    loss = gflow.PopulationLoss(teachers.memoryless(w), k)
    g = jax.jit(jax.grad(lambda A, B, C: loss(gflow.LinearRNN(A, B, C)), argnums=(0, 1, 2)))(model.A, model.B,
                                                                                            model.C)
    target = np.zeros(k)
    target[0] = w
    for actual, expected in zip(g, closed_form_gradients(model.A, model.B, model.C, target, np.ones(k))):
        _assert_close(actual, expected)


def test_mimo_general_A():
    k = 5
    teacher = initializers.gaussian(jax.random.key(3), 3, scale=0.6, n_in=2, n_out=3)
    model = initializers.gaussian(jax.random.key(4), 4, scale=0.6, n_in=2, n_out=3)
    loss = gflow.PopulationLoss(teacher, k)
    g = grad(loss, model)
    gA, gB, gC = closed_form_gradients(model.A, model.B, model.C, teacher.impulse_response(k), np.ones(k))
    assert g.B.shape == (4, 2) and g.C.shape == (3, 4)
    _assert_close(g.A, gA)
    _assert_close(g.B, gB)
    _assert_close(g.C, gC)


def test_mimo_memoryless_teacher():
    """Seed 001 eqs. (21)–(23) with R_0 = CB − W*."""
    k = 4
    W = np.array([[0.9, -0.4], [0.2, 0.7]])
    model = initializers.gaussian(jax.random.key(5), 3, scale=0.7, n_in=2, n_out=2)
    loss = gflow.PopulationLoss(teachers.memoryless(W), k)
    g = grad(loss, model)
    target = np.zeros((k, 2, 2))
    target[0] = W
    for actual, expected in zip((g.A, g.B, g.C), closed_form_gradients(model.A, model.B, model.C, target,
                                                                      np.ones(k))):
        _assert_close(actual, expected)


# ----------------------------------------------------------------------------------------------------------
# parameterizations of A: the gradient on the stored parameters (seed 000 eq. 3.1 and Lemma E.3; the symmetric class
# of seed 001 §6)


def _full_space_gradient(model, teacher, k):
    return closed_form_gradients(model.transition(), model.B, model.C, teacher.impulse_response(k), np.ones(k))


def test_restricted_symmetric_gradient_is_projected(balanced_teacher):
    """A stored as a matrix, model uses sym(A): the gradient is (G + Gᵀ)/2."""
    k = 5
    model = initializers.symmetric(jax.random.key(6), 4, scale=0.7)
    g = grad(gflow.PopulationLoss(balanced_teacher, k), model)
    G, gB, gC = _full_space_gradient(model, balanced_teacher, k)
    assert np.max(np.abs(G - G.T)) > 1e-3  # the unconstrained gradient is not symmetric here
    _assert_close(g.A, 0.5 * (G + G.T))
    _assert_close(g.B, gB)
    _assert_close(g.C, gC)


def test_triangular_symmetric_gradient(balanced_teacher):
    """Upper-triangular entries: off-diagonal entries get G_pq + G_qp, diagonal entries G_pp."""
    k = 5
    model = initializers.symmetric(jax.random.key(6), 4, scale=0.7, parameterization="triangular")
    g = grad(gflow.PopulationLoss(balanced_teacher, k), model)
    G, _, _ = _full_space_gradient(model, balanced_teacher, k)
    rows, cols = np.triu_indices(4)
    expected = np.where(rows == cols, G[rows, cols], G[rows, cols] + G[cols, rows])
    _assert_close(g.A, expected)


def test_diagonal_gradient(balanced_teacher):
    """A = diag(a): dL/da_i = G_ii (derived here: the diagonal student of seed 000 §5.1)."""
    k = 6
    model = initializers.gaussian(jax.random.key(7), 4, scale=0.7, structure="diagonal")
    g = grad(gflow.PopulationLoss(balanced_teacher, k), model)
    G, gB, gC = _full_space_gradient(model, balanced_teacher, k)
    _assert_close(g.A, np.diag(G))
    _assert_close(g.B, gB)
    _assert_close(g.C, gC)


def test_gradient_flow_term_vector_field_is_minus_gradient(balanced_teacher):
    k = 5
    model = initializers.gaussian(jax.random.key(8), 3, scale=0.7)
    loss = gflow.PopulationLoss(balanced_teacher, k)
    theta, static, unravel = flatten(model)
    term = GradientFlowTerm(loss, static, unravel)
    np.testing.assert_allclose(np.asarray(term.residual_jacobian(theta)),
                               np.asarray(jax.jacrev(term.residuals)(theta)), atol=1e-13)
    vf = unravel(term.vf(0.0, theta, None))
    gA, gB, gC = _full_space_gradient(model, balanced_teacher, k)
    _assert_close(-np.asarray(vf.A), gA)
    _assert_close(-np.asarray(vf.B), gB)
    _assert_close(-np.asarray(vf.C), gC)
    np.testing.assert_allclose(float(term.loss_value(theta)), float(loss(model)), rtol=1e-15)
    np.testing.assert_allclose(np.sum(np.asarray(term.residuals(theta)) ** 2), float(loss(model)), rtol=1e-13)
