"""A fifth-order Rosenbrock method for gradient flows of sums of squares: Rodas5P with the exact Jacobian.

ROS34PW2 (:class:`GaussNewtonRosenbrock`) is a W-method: it keeps its order 3 with the Gauss–Newton Jacobian −2JᵀJ,
which drops Σ r_j ∇²r_j. A classical Rosenbrock method of higher order needs the exact Jacobian of the flow,
−∇²L, in its linear systems

    (I + hγ ∇²L) k_i = hγ f(y + Σ_j a_ij k_j) + γ Σ_j c_ij k_j        (Hairer & Wanner, Solving ODEs II, IV.7.25)

We never form ∇²L: its products are Hessian-vector products (forward over reverse, the linearization of ∇L at y
taken once per step, about two gradients each), and each system is solved by preconditioned Richardson iteration

    k ← k + P⁻¹ (rhs − (I + hγ∇²L) k),    P = I + 2hγ JᵀJ (the Gauss–Newton part, the Woodbury solve of
                                                        GaussNewtonRosenbrock)

which converges as fast as ‖2hγ P⁻¹ S‖, S = Σ r_j ∇²r_j, is small: near a zero-loss solution S → 0 and one or two
iterations suffice; the iteration stops when the correction is below ``linear_rtol`` times the state (RMS),
for every member of a batch.

Tableau: Rodas5P (G. Steinebach, "Construction of Rosenbrock–Wanner method Rodas5P and numerical benchmarks within
the Julia Differential Equations package", BIT Numer. Math. 63, 27 (2023)), 8 stages, order 5, embedded order 4
(the error is the last stage), stiffly accurate, L-stable, with a dense output of order 4 (three interpolation rows).
Coefficients as data below, in the transformed form (A, C, γ, c) of OrdinaryDiffEq.jl's ``RODAS5P*`` constants.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import diffrax
import equinox as eqx
import equinox.internal as eqxi
import jax
import jax.numpy as jnp
import numpy as np

from .._checks import GflowInputError
from ._rosenbrock import _flow_term, _WoodburySolve, GaussNewtonRosenbrock


@dataclasses.dataclass(frozen=True)
class RodasTableau:
    """A Rosenbrock method in the transformed form (stages k_i, as in OrdinaryDiffEq.jl's Rodas tableaus):
    stage i evaluates f at y + Σ_j A_ij k_j and solves (I − hγJ) k_i = hγ f_i + γ Σ_j C_ij k_j;
    y₁ = y + Σ b_i k_i, error estimate Σ b̃_i k_i; dense output y(θ) = (1 − θ) y + θ (y₁ + (1 − θ)(d₁ + θ (d₂ +
    θ d₃))) with d_r = Σ_i H_ri k_i."""

    gamma: float
    A: tuple
    C: tuple
    c: tuple
    b: tuple
    b_tilde: tuple
    H: tuple
    order: int
    embedded_order: int
    name: str


_A6 = (-7.502846399306121, 2.561846144803919, -11.627539656261098, -0.18268767659942256, 0.030198172008377946)
RODAS5P = RodasTableau(
    gamma=0.21193756319429014,
    A=((0, 0, 0, 0, 0, 0, 0, 0),
       (3.0, 0, 0, 0, 0, 0, 0, 0),
       (2.849394379747939, 0.45842242204463923, 0, 0, 0, 0, 0, 0),
       (-6.954028509809101, 2.489845061869568, -10.358996098473584, 0, 0, 0, 0, 0),
       (2.8029986275628964, 0.5072464736228206, -0.3988312541770524, -0.04721187230404641, 0, 0, 0, 0),
       _A6 + (0, 0, 0),
       _A6 + (1, 0, 0),
       _A6 + (1, 1, 0)),
    C=((0, 0, 0, 0, 0, 0, 0, 0),
       (-14.155112264123755, 0, 0, 0, 0, 0, 0, 0),
       (-17.97296035885952, -2.859693295451294, 0, 0, 0, 0, 0, 0),
       (147.12150275711716, -1.41221402718213, 71.68940251302358, 0, 0, 0, 0, 0),
       (165.43517024871676, -0.4592823456491126, 42.90938336958603, -5.961986721573306, 0, 0, 0, 0),
       (24.854864614690072, -3.0009227002832186, 47.4931110020768, 5.5814197821558125, -0.6610691825249471, 0, 0, 0),
       (30.91273214028599, -3.1208243349937974, 77.79954646070892, 34.28646028294783, -19.097331116725623,
        -28.087943162872662, 0, 0),
       (37.80277123390563, -3.2571969029072276, 112.26918849496327, 66.9347231244047, -40.06618937091002,
        -54.66780262877968, -9.48861652309627, 0)),
    c=(0, 0.6358126895828704, 0.4095798393397535, 0.9769306725060716, 0.4288403609558664, 1, 1, 1),
    b=_A6 + (1, 1, 1),
    b_tilde=(0, 0, 0, 0, 0, 0, 0, 1),
    H=((25.948786856663858, -2.5579724845846235, 10.433815404888879, -2.3679251022685204, 0.524948541321073,
        1.1241088310450404, 0.4272876194431874, -0.17202221070155493),
       (-9.91568850695171, -0.9689944594115154, 3.0438037242978453, -24.495224566215796, 20.176138334709044,
        15.98066361424651, -6.789040303419874, -6.710236069923372),
       (11.419903575922262, 2.8879645146136994, 72.92137995996029, 80.12511834622643, -52.072871366152654,
        -59.78993625266729, -0.15582684282751913, 4.883087185713722)),
    order=5,
    embedded_order=4,
    name="Rodas5P",
)


def rodas_stages(tab: RodasTableau, y0, f0, t0, h, field, solve) -> list:
    """The stages k_1 … k_s of one step of the Rodas method ``tab`` (transformed form, :class:`RodasTableau`): stage i
    evaluates ``field(t, y)`` at y0 + Σ_j A_ij k_j (reusing the previous stage's value where the tableau repeats it)
    and returns ``solve(rhs)``, rhs = hγ f_i + γ Σ_j C_ij k_j, the solve of (I − hγJ) k_i = rhs.

    Args:
        tab: The method.
        y0: The step's start.
        f0: The field there (FSAL).
        t0: The step's start time.
        h: The step size.
        field: (t, y) ↦ f(t, y).
        solve: rhs ↦ (I − hγJ)⁻¹ rhs, as the solver has it.

    Returns:
        The stages.
    """
    A, C, c = np.asarray(tab.A), np.asarray(tab.C), np.asarray(tab.c)
    gamma = tab.gamma
    stages, fi = [], f0
    for i in range(len(tab.b)):
        if i > 0:
            same = c[i] == c[i - 1] and np.array_equal(A[i, :i - 1], A[i - 1, :i - 1]) and A[i, i - 1] == 0
            if not same:
                yi = y0 + sum(A[i, j] * stages[j] for j in range(i) if A[i, j] != 0.0)
                fi = field(t0 + float(c[i]) * h, yi)
        rhs = h * gamma * fi
        coupling = [C[i, j] * stages[j] for j in range(i) if C[i, j] != 0.0]
        if coupling:
            rhs = rhs + gamma * sum(coupling)
        stages.append(solve(rhs))
    return stages


def rodas_combination(tab: RodasTableau, y0, stages) -> tuple:
    """(y₁, error estimate, dense-output coefficients d (3, n)) of a Rodas step from its ``stages``."""
    y1 = y0 + sum(float(bi) * k for bi, k in zip(tab.b, stages) if bi != 0)
    y_error = sum(float(e) * k for e, k in zip(tab.b_tilde, stages) if e != 0)
    d = jnp.stack([sum(float(hr[i]) * stages[i] for i in range(len(stages))) for hr in tab.H])
    return y1, y_error, d


class RodasInterpolation(diffrax.AbstractLocalInterpolation):
    """The dense output of a Rodas method: y(θ) = (1 − θ) y₀ + θ (y₁ + (1 − θ)(d₁ + θ (d₂ + θ d₃)))."""

    t0: jax.Array
    t1: jax.Array
    y0: jax.Array
    y1: jax.Array
    d: jax.Array  # (3, n)

    def evaluate(self, t0, t1=None, left: bool = True):
        if t1 is not None:
            return self.evaluate(t1, left=left) - self.evaluate(t0, left=left)
        theta = (t0 - self.t0) / (self.t1 - self.t0)
        poly = self.d[0] + theta * (self.d[1] + theta * self.d[2])
        return (1 - theta) * self.y0 + theta * (self.y1 + (1 - theta) * poly)


class RodasGradientFlow(GaussNewtonRosenbrock):
    """Rodas5P for a gradient flow of L = ‖r‖², with the exact Jacobian (module docstring).

    Per step: 9 gradient evaluations (7 stages, the end point for the next step's first stage (FSAL), and the
    linearization of ∇L), 8 preconditioned solves plus one per Richardson iteration, and a Hessian-vector product
    per iteration; :meth:`hessian_vector_products` counts them over the accepted steps. The other attributes are
    :class:`GaussNewtonRosenbrock`'s; the Woodbury preconditioner's Jacobian follows ``jacobian_every`` as there (a
    lagged preconditioner costs iterations, never accuracy); the Hessian products are always at the step's y.

    Attributes:
        linear_rtol: A stage's Richardson iteration stops when its correction (RMS) is below this times
            max(RMS y, RMS k): relative to the state, as the step's error is (the last stages are error-sized, so a
            criterion relative to the stage itself would solve them to far below the tolerance); None (default):
            ``LINEAR_RTOL_PER_RTOL`` × the solve's rtol (traced: :meth:`for_rtol`, so a new rtol does not compile
            a new program).
        linear_max_iterations: Caps the iteration (a step whose iteration did not converge gets an infinite error
            estimate, so the controller shrinks h).
        rodas: The method's coefficients (:data:`RODAS5P`).
    """

    linear_rtol: float | jax.Array | None = None
    linear_max_iterations: int = eqx.field(static=True, default=30)
    rodas: RodasTableau = eqx.field(static=True, default=RODAS5P)

    LINEAR_RTOL_PER_RTOL: ClassVar[float] = 0.1
    interpolation_cls: ClassVar = RodasInterpolation
    evaluations_per_step: ClassVar[int] = 9
    linear_solves_per_step: ClassVar[int] = 8
    counts_hessian_vector_products: ClassVar[bool] = True

    def __check_init__(self):
        if self.linear_solver == "cg":
            raise GflowInputError("RodasGradientFlow preconditions with the Woodbury solve: linear_solver='cg' is not "
                                  "supported (use GaussNewtonRosenbrock)")

    def order(self, terms):
        return self.rodas.order

    def error_order(self, terms):
        return self.rodas.embedded_order

    def init(self, terms, t0, t1, y0, args):
        flow = _flow_term(terms)
        f0 = terms.vf(t0, y0, args)
        jac, gram = self._jacobian(flow, y0)
        return f0, jac, gram, jnp.array(0), jnp.array(0)

    def for_rtol(self, rtol):
        """This solver with ``linear_rtol`` = ``LINEAR_RTOL_PER_RTOL`` × rtol unless it was given."""
        if self.linear_rtol is not None:
            return self
        return eqx.tree_at(lambda s: s.linear_rtol, self, self.LINEAR_RTOL_PER_RTOL * rtol, is_leaf=lambda x: x is None)

    @staticmethod
    def hessian_vector_products(solver_state):
        """Hessian-vector products (= Richardson iterations) over the accepted steps, from a final solver state."""
        return solver_state[-1]

    def step(self, terms, t0, t1, y0, args, solver_state, made_jump):
        flow = _flow_term(terms)
        f_prev, jac, gram, age, products = solver_state
        jumped = eqxi.nonbatchable(eqxi.unvmap_any(made_jump))
        f0 = jax.lax.cond(jumped, lambda: terms.vf(t0, y0, args), lambda: f_prev)
        h = t1 - t0
        tab = self.rodas
        gamma = tab.gamma
        refresh = eqxi.nonbatchable(eqxi.unvmap_any(age >= self._refresh_every(flow, y0))) | jumped
        jac, gram = jax.lax.cond(refresh, lambda: self._jacobian(flow, y0), lambda: (jac, gram))
        age = jnp.where(refresh, 1, age + 1)
        precondition = _WoodburySolve.build(jac, gram, 2.0 * h * gamma)
        _, hvp = jax.linearize(lambda y: -terms.vf(t0, y, args), y0)  # ∇L linearized at y0: v ↦ ∇²L v
        linear_rtol = 1e-10 if self.linear_rtol is None else self.linear_rtol  # None: used outside solve_flow
        y_size = jnp.sqrt(jnp.mean(y0 ** 2))

        def solve(rhs):
            def residual(k):
                return rhs - (k + h * gamma * hvp(k))

            def cond(carry):
                _, i, converged = carry
                return (i < self.linear_max_iterations) & ~eqxi.unvmap_all(converged)

            def body(carry):
                k, i, _ = carry
                dk = precondition(residual(k))
                size = jnp.maximum(y_size, jnp.sqrt(jnp.mean(k ** 2))) + jnp.finfo(k.dtype).tiny
                return k + dk, i + 1, jnp.sqrt(jnp.mean(dk ** 2)) <= linear_rtol * size

            k0 = precondition(rhs)
            k, iterations, converged = eqxi.while_loop(cond, body, (k0, jnp.array(0), jnp.array(False)),
                                                       max_steps=self.linear_max_iterations, kind="lax")
            return k, converged, iterations

        solves = []  # (converged, iterations) of each stage's solve

        def solve_stage(rhs):
            k, ok, iterations = solve(rhs)
            solves.append((ok, iterations))
            return k

        stages = rodas_stages(tab, y0, f0, t0, h, lambda t, y: terms.vf(t, y, args), solve_stage)
        products = products + sum(iterations for _, iterations in solves)
        y1, y_error, d = rodas_combination(tab, y0, stages)
        y_error = jnp.where(jnp.all(jnp.stack([ok for ok, _ in solves])), y_error, jnp.inf)
        f1, y_error = self._end_of_step(flow, terms, t1, y1, args, y_error, jac.mv)
        dense_info = dict(y0=y0, y1=y1, d=d)
        return y1, y_error, dense_info, (f1, jac, gram, age, products), diffrax.RESULTS.successful
