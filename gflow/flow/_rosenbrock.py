"""A linearly implicit (Rosenbrock-W) solver for gradient flows of sums of squares.

For L(θ) = ‖r(θ)‖² the Jacobian of the flow f = −∇L is −2(JᵀJ + Σ_j r_j ∇²r_j), J = ∂r/∂θ (m × n). Its stiff
part −2JᵀJ has rank ≤ m (the number of residuals: k for a SISO linear RNN), so each stage's linear system

    (I + 2hγ JᵀJ) u = rhs

is solved exactly through an m × m Cholesky factorization (Woodbury identity), or matrix-free by conjugate
gradients with Jacobian-vector products when m is large. A dense n × n Jacobian is never formed.

Dropping Σ r_j ∇²r_j makes the Jacobian approximate, so the method must keep its order with any Jacobian:
a W-method. We use ROS34PW2 (Rang & Angermann, BIT 45 (2005) 761–787): 4 stages, order 3 as a W-method,
embedded order 2 for error control, L-stable, stiffly accurate. Stages are written in the transformed
variables of Hairer & Wanner (Solving ODEs II, §IV.7, eq. 7.25) so no Jacobian product is needed per stage.
The last stage's derivative is reused as the next step's first (FSAL). Dense output (values at save times inside a
step) is the method's own continuous extension of order 3 from the stages (:class:`StageInterpolation`), not the
cubic Hermite interpolant, whose end slopes h·f overshoot by a factor ~hλ in stiff directions.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import diffrax
import equinox as eqx
import equinox.internal as eqxi
import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import lineax as lx
import numpy as np
from diffrax._term import AdjointTerm, WrapTerm  # diffeqsolve's term wrappers (not exported)

from .._checks import GflowInputError, one_of
from ..objectives._residual_jacobian import DenseResidualJacobian
from ._descent import FUSED_GUARD_MAX_PARAMETERS, pack_step_error
from ._gradient_flow_solver import AbstractGradientFlowSolver
from ._term import AbstractSumOfSquaresTerm


@dataclasses.dataclass(frozen=True)
class RosenbrockTableau:
    """A Rosenbrock(-W) method in the classical form (Hairer & Wanner IV.7.4):

    (I − hγJ) k_i = h f(y + Σ_j α_ij k_j) + hJ Σ_j γ_ij k_j,   y₁ = y + Σ b_i k_i,  ŷ₁ = y + Σ b̂_i k_i.

    Numbers as data (tuples, so the tableau is hashable and static under jit).
    """

    gamma: float
    alpha: tuple  # strictly lower-triangular α_ij
    gammas: tuple  # strictly lower-triangular γ_ij
    b: tuple
    b_hat: tuple
    order: int
    name: str
    dense: tuple | None = None  # (s, p) dense output: y(θ) = y + Σ_i (Σ_q dense_iq θ^(q+1)) k_i; None: linear

    def dense_weights(self) -> np.ndarray | None:
        """The dense output in the transformed variables: y(θ) = y + Σ_q θ^(q+1) Σ_j W_qj u_j, W (p, s) =
        denseᵀ Γ⁻¹ (k = Γ⁻¹u); without dense coefficients, the line from y to y₁ (W = b Γ⁻¹, one row)."""
        Gamma = np.asarray(self.gammas) + self.gamma * np.eye(len(self.b))
        dense = np.asarray(self.b)[:, None] if self.dense is None else np.asarray(self.dense)
        return dense.T @ np.linalg.inv(Gamma)

    def transformed(self):
        """(a, c, m, m̂) of the transformed form: u = Γk, Γ = γI + (γ_ij)."""
        b, b_hat = np.asarray(self.b), np.asarray(self.b_hat)
        Gamma = np.asarray(self.gammas) + self.gamma * np.eye(len(b))
        Ginv = np.linalg.inv(Gamma)
        a = np.asarray(self.alpha) @ Ginv
        c = np.diag(1.0 / np.diag(Gamma)) - Ginv
        return a, c, b @ Ginv, b_hat @ Ginv


ROS34PW2 = RosenbrockTableau(
    gamma=4.3586652150845900e-01,
    alpha=((0.0, 0.0, 0.0, 0.0),
           (8.7173304301691801e-01, 0.0, 0.0, 0.0),
           (8.4457060015369423e-01, -1.1299064236484185e-01, 0.0, 0.0),
           (0.0, 0.0, 1.0, 0.0)),
    gammas=((0.0, 0.0, 0.0, 0.0),
            (-8.7173304301691801e-01, 0.0, 0.0, 0.0),
            (-9.0338057013044082e-01, 5.4180672388095326e-02, 0.0, 0.0),
            (2.4212380706095346e-01, -1.2232505839045147e+00, 5.4526025533510214e-01, 0.0)),
    b=(2.4212380706095346e-01, -1.2232505839045147e+00, 1.5452602553351020e+00, 4.3586652150845900e-01),
    b_hat=(3.7810903145819369e-01, -9.6042292212423178e-02, 0.5, 2.1793326075422950e-01),
    order=3,
    name="ROS34PW2",
    # Its continuous extension of order 3, from the stages (PETSc's TSROSWRA34PW2 ``binterpt``; rows sum to b)
    dense=((1.0564298455794094, -1.3864882699759573, 0.5721822314575016),
           (2.296429974281067, -8.262611700275677, 4.742931142090097),
           (-1.307599564525376, 7.250979895056055, -4.398120075195578),
           (-1.045260255335102, 2.398120075195581, -0.9169932983520199)),
)


def _flow_term(terms) -> AbstractSumOfSquaresTerm:
    """The gradient-flow term of a sum of squares, inside diffrax's wrappers (diffeqsolve wraps terms for the
    direction of integration, and the adjoint for backpropagation; each wrapper holds its term in ``.term``)."""
    while isinstance(terms, (WrapTerm, AdjointTerm)):
        terms = terms.term
    if not isinstance(terms, AbstractSumOfSquaresTerm):
        raise TypeError(
            "GaussNewtonRosenbrock needs the gradient-flow term of a sum of squares L = ‖r‖² with its residuals r "
            "(gflow.flow.GradientFlowTerm, as built by gflow.solve_flow, or any gflow.flow.AbstractSumOfSquaresTerm). "
            "For a general ODE use a stock diffrax solver such as diffrax.Kvaerno5."
        )
    return terms


class _WoodburySolve(eqx.Module):
    """x = (I + c JᵀJ)⁻¹ b = b − c Jᵀ (I_m + c JJᵀ)⁻¹ J b, with an m × m Cholesky factor; J is an operator
    with ``mv`` and ``rmv`` (:class:`gflow.objectives.DenseResidualJacobian`,
    :class:`gflow.objectives.ImpulseResponseJacobian`), structured or a dense matrix."""

    jac: eqx.Module
    chol: jax.Array
    c: jax.Array
    projected: jax.Array | bool = False  # I + cG was replaced by its positive semidefinite projection (build)

    @classmethod
    def build(cls, jac, gram, c):
        """Factor I + c JJᵀ. A Gram matrix whose entries span many decades (a start with L ~ 1e40: the FFT Gram's
        rounding, relative to its largest entry, swamps the small ones) can come out indefinite, and then so can
        I + cG: it is replaced by its projection on the positive semidefinite cone (eigenvalues clipped at 0), a
        different W-matrix, which a W-method tolerates (the descent guard and the error control judge the step).
        Under ``vmap`` the branch is taken for every member of the batch when any member needs it (an eigh per step
        then; the projection leaves a positive definite I + cG unchanged up to rounding)."""
        eye = jnp.eye(gram.shape[0], dtype=gram.dtype)
        chol = jnp.linalg.cholesky(eye + c * gram)
        failed = eqxi.nonbatchable(eqxi.unvmap_any(~jnp.all(jnp.isfinite(chol))))
        chol = jax.lax.cond(failed, lambda: jnp.linalg.cholesky(eye + c * _positive_part(gram)), lambda: chol)
        return cls(jac, chol, c, failed)

    def __call__(self, b):
        return self.solve_with_image(b)[0]

    def solve_with_image(self, b):
        """(x, J x): J x comes free, since J x = J b − c JJᵀ z = z for z = (I + c JJᵀ)⁻¹ J b (not after the
        projection in :meth:`build`: there use ``jac.mv``)."""
        z = jsl.cho_solve((self.chol, True), self.jac.mv(b))
        return b - self.c * self.jac.rmv(z), z


def _positive_part(gram):
    """The nearest positive semidefinite matrix to the symmetric part of ``gram`` (eigenvalues clipped at 0)."""
    values, vectors = jnp.linalg.eigh(0.5 * (gram + gram.T))
    return (vectors * jnp.maximum(values, 0.0)) @ vectors.T


def _conjugate_gradient_solve(residuals, y, c, rtol: float, max_steps: int):
    """(b ↦ (I + c JᵀJ)⁻¹ b by conjugate gradients, v ↦ J v); J is linearized once at y and applied through JVPs
    and their transposes only, never materialized."""
    _, jvp = jax.linearize(residuals, y)
    vjp = jax.linear_transpose(jvp, y)
    op = lx.FunctionLinearOperator(lambda v: v + c * vjp(jvp(v))[0], jax.ShapeDtypeStruct(y.shape, y.dtype),
                                   tags=lx.positive_semidefinite_tag)
    cg = lx.CG(rtol=rtol, atol=rtol * 1e-3, max_steps=max_steps)
    return (lambda b: lx.linear_solve(op, b, cg, throw=False).value), jvp


class StageInterpolation(diffrax.AbstractLocalInterpolation):
    """A Rosenbrock step's continuous extension from its stages (transformed variables u_j):

        y(s) = y0 + Σ_q s^(q+1) Σ_j W_qj u_j,   s = (t − t0)/h,

    W from :meth:`RosenbrockTableau.dense_weights`; s = 0 and s = 1 return y0 and y1 bit for bit. Unlike the
    cubic Hermite interpolant, whose slope h f0 grows with hλ in a stiff direction, it is a fixed combination of the
    stages, so its value in a very stiff direction stays within a small multiple of the step's error there
    (ROS34PW2 as hλ → −∞: never beyond the deviation at the step's start, past zero by at most 0.72 of it, against
    an error estimate of 0.48 of it); the descent of the saved values is checked after the solve."""

    t0: jax.Array
    t1: jax.Array
    y0: jax.Array
    y1: jax.Array
    q: jax.Array  # (p, n): Σ_j W_qj u_j

    def evaluate(self, t0, t1=None, left: bool = True):
        if t1 is not None:
            return self.evaluate(t1, left=left) - self.evaluate(t0, left=left)
        s = (t0 - self.t0) / (self.t1 - self.t0)
        poly = self.q[-1]
        for row in range(self.q.shape[0] - 2, -1, -1):
            poly = self.q[row] + s * poly
        inside = self.y0 + s * poly
        return jnp.where(s >= 1, self.y1, jnp.where(s <= 0, self.y0, inside))


class GaussNewtonRosenbrock(AbstractGradientFlowSolver):
    """ROS34PW2 Rosenbrock-W method with the Gauss–Newton Jacobian −2JᵀJ of L = ‖r‖² (see module docstring).

    Per step: 4 gradient evaluations (one reused from the previous step) and 4 linear solves. Under ``vmap`` the
    Jacobian is refreshed for every member when any member needs it.

    Attributes:
        linear_solver: ``"woodbury"`` (materializes the m × n residual Jacobian, solves an m × m system), ``"cg"``
            (matrix-free), or ``"auto"``: Woodbury when m ≤ ``woodbury_max_residuals`` and J is either matrix-free
            (``residual_jacobian_operator``) or has at most ``woodbury_max_entries`` entries (m × n; default 2²⁷,
            1 GiB in float64), conjugate gradients otherwise (large nonlinear models on many samples).
        woodbury_max_residuals: The most residuals m of a Woodbury solve under ``"auto"``.
        woodbury_max_entries: The most entries of a materialized J under ``"auto"``.
        cg_rtol: The conjugate gradients' relative tolerance.
        cg_max_steps: The conjugate gradients' most iterations.
        jacobian_every: The residual Jacobian J (Woodbury only; matrix-free when the loss provides
            ``residual_jacobian_operator``, else materialized in closed form or by reverse passes) is recomputed
            every this many steps and reused in between; a W-method keeps its order with a lagged Jacobian.
            ``"auto"``: every step when J is matrix-free (on R1 lagging cost more in rejected steps than it saved),
            every 4 steps when a materialized J has more than ``lag_min_entries`` entries (where building J and its
            Gram matrix costs more than the step's gradients; an m = 64 analog of R5 took 171 steps lagged, 172 not).
        lag_min_entries: 2²² by default (above).
        tableau: The method's coefficients (:data:`ROS34PW2`).
        fuse_guard: Return, with the local error e, what the descent guard judges the step by
            (:class:`gflow.flow.DescentController`, which unpacks it): the residuals r(y1) from the same forward pass
            as the FSAL gradient f(y1), and J e with the residual Jacobian J the step holds, at y0 (or at the
            last refresh when J is lagged; the conjugate gradients' linearization at y0), in place of J(y1) e. The
            guard then re-evaluates nothing at y1. False (default): e alone, for any step-size controller; gflow's
            solves set it (:meth:`with_fused_guard`).
    """

    linear_solver: str = eqx.field(static=True, default="auto")
    woodbury_max_residuals: int = eqx.field(static=True, default=4096)
    woodbury_max_entries: int = eqx.field(static=True, default=2**27)
    cg_rtol: float = eqx.field(static=True, default=1e-12)
    cg_max_steps: int = eqx.field(static=True, default=500)
    jacobian_every: int | str = eqx.field(static=True, default="auto")
    lag_min_entries: int = eqx.field(static=True, default=2**22)
    tableau: RosenbrockTableau = eqx.field(static=True, default=ROS34PW2)
    fuse_guard: bool = eqx.field(static=True, default=False)

    term_structure: ClassVar = diffrax.AbstractTerm
    interpolation_cls: ClassVar = StageInterpolation

    # AbstractGradientFlowSolver: new gradient evaluations and linear solves per attempted step.
    evaluations_per_step: ClassVar[int] = 4
    linear_solves_per_step: ClassVar[int] = 4

    def __check_init__(self):
        one_of("linear_solver", self.linear_solver, ("auto", "woodbury", "cg"))
        if self.jacobian_every != "auto" and not (isinstance(self.jacobian_every, int) and self.jacobian_every >= 1):
            raise GflowInputError(f"`jacobian_every` must be 'auto' or an integer >= 1, got {self.jacobian_every!r}")

    def order(self, terms):
        return self.tableau.order

    def error_order(self, terms):
        return self.tableau.order

    @staticmethod
    def _matrix_free(flow, y0) -> bool:
        return not isinstance(jax.eval_shape(flow.residual_jacobian_operator, y0), DenseResidualJacobian)

    def _uses_woodbury(self, flow, y0) -> bool:
        if self.linear_solver != "auto":
            return self.linear_solver == "woodbury"
        m = jax.eval_shape(flow.residuals, y0).shape[0]
        if m > self.woodbury_max_residuals:
            return False
        return self._matrix_free(flow, y0) or m * y0.size <= self.woodbury_max_entries

    def _refresh_every(self, flow, y0) -> int:
        if self.jacobian_every != "auto":
            return self.jacobian_every
        if self._matrix_free(flow, y0):
            return 1
        m = jax.eval_shape(flow.residuals, y0).shape[0]
        return 4 if m * y0.size > self.lag_min_entries else 1

    @staticmethod
    def _jacobian(flow, y):
        """The residual Jacobian as an operator (matrix-free when the loss has a structured form, else
        materialized: closed form or autodiff) and its Gram matrix J Jᵀ."""
        jac = flow.residual_jacobian_operator(y)
        return jac, jac.gram()

    def init(self, terms, t0, t1, y0, args):
        flow = _flow_term(terms)
        f0 = terms.vf(t0, y0, args)
        if not self._uses_woodbury(flow, y0):
            return f0, None, None, jnp.array(0)
        jac, gram = self._jacobian(flow, y0)
        return f0, jac, gram, jnp.array(0)

    def step(self, terms, t0, t1, y0, args, solver_state, made_jump):
        flow = _flow_term(terms)
        f_prev, jac, gram, age = solver_state
        # Unbatched predicate: under vmap a batched cond would become a select and cost a gradient every step.
        jumped = eqxi.nonbatchable(eqxi.unvmap_any(made_jump))
        f0 = jax.lax.cond(jumped, lambda: terms.vf(t0, y0, args), lambda: f_prev)
        h = t1 - t0
        gamma = self.tableau.gamma
        a, cmat, m_sol, m_err = self.tableau.transformed()
        if self._uses_woodbury(flow, y0):
            refresh = eqxi.nonbatchable(eqxi.unvmap_any(age >= self._refresh_every(flow, y0))) | jumped
            jac, gram = jax.lax.cond(refresh, lambda: self._jacobian(flow, y0), lambda: (jac, gram))
            age = jnp.where(refresh, 1, age + 1)
            woodbury = _WoodburySolve.build(jac, gram, 2.0 * h * gamma)
            images = []  # J u_i of each stage, the Woodbury solve's by-product

            def solve(rhs):
                u, image = woodbury.solve_with_image(rhs)
                images.append(image)
                return u

            def jacobian_error(error):  # J e as the same combination of the stages' images: no J product
                combined = sum((m_sol[i] - m_err[i]) * z for i, z in enumerate(images))
                return jax.lax.cond(woodbury.projected, lambda: jac.mv(error), lambda: combined)

            free_jacobian_error = True
        else:
            solve, jacobian_error = _conjugate_gradient_solve(flow.residuals, y0, 2.0 * h * gamma, self.cg_rtol,
                                                              self.cg_max_steps)
            free_jacobian_error = False

        stages = []
        for i in range(len(m_sol)):
            if i == 0:
                fi = f0
            else:
                yi = y0 + sum(a[i, j] * stages[j] for j in range(i) if a[i, j] != 0.0)
                fi = terms.vf(t0 + float(a[i].sum()) * h, yi, args)
            rhs = h * gamma * fi
            coupling = [cmat[i, j] * stages[j] for j in range(i) if cmat[i, j] != 0.0]
            if coupling:
                rhs = rhs + gamma * sum(coupling)
            stages.append(solve(rhs))

        y1 = y0 + sum(m_sol[i] * u for i, u in enumerate(stages))
        y_error = sum((m_sol[i] - m_err[i]) * u for i, u in enumerate(stages))
        f1, y_error = self._end_of_step(flow, terms, t1, y1, args, y_error, jacobian_error, free_jacobian_error)
        weights = self.tableau.dense_weights()
        q = jnp.stack([sum(float(w[j]) * u for j, u in enumerate(stages) if w[j] != 0.0) for w in weights])
        return y1, y_error, dict(y0=y0, y1=y1, q=q), (f1, jac, gram, age), diffrax.RESULTS.successful

    def with_fused_guard(self) -> "GaussNewtonRosenbrock":
        """This solver with ``fuse_guard`` set (what gflow's solves run: their controller is the descent guard)."""
        return self if self.fuse_guard else dataclasses.replace(self, fuse_guard=True)

    def _end_of_step(self, flow, terms, t1, y1, args, y_error, jacobian_mv, free_jacobian_error=False):
        """(f(y1), the step's error): the error e alone, or where the guard is fused in (``fuse_guard`` and a term
        whose field and residuals come from one pass), e packed with J e and r(y1) (:func:`pack_step_error`), r(y1)
        from the pass that computes f(y1) and J e from the J the step holds (``jacobian_mv``). Where J e costs a J
        product, fused only up to ``FUSED_GUARD_MAX_PARAMETERS`` parameters (:class:`gflow.flow.DescentController`'s
        module, "The guard fused into gflow's solvers"); ``free_jacobian_error``: J e comes from the stages'
        Woodbury images (ROS34PW2), fused at every size."""
        if not (self.fuse_guard and flow.fuses_guard and (free_jacobian_error or y1.size <= FUSED_GUARD_MAX_PARAMETERS)):
            return terms.vf(t1, y1, args), y_error
        residuals1, f1 = flow.residuals_and_vf(y1)
        return f1, pack_step_error(y_error, jacobian_mv(y_error), residuals1)

    def func(self, terms, t0, y0, args):
        return terms.vf(t0, y0, args)
