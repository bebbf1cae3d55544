"""Step-size control that keeps a gradient flow a gradient flow: descent-guaranteed, loss-resolving steps.

Along dθ/dt = −∇L(θ) the loss never rises (dL/dt = −‖∇L‖²), and the theorems gflow checks speak of L → 0. A
controller that measures the local error in θ alone cannot see either: L is quadratic in the residuals, so an
error that is small relative to θ can be huge relative to L once L is small, and a step that overshoots a stiff
direction can raise L while its θ-error estimate looks fine. :class:`DescentController` wraps any adaptive diffrax
controller (gflow's PIDController) and adds, for every attempted step θ_n → θ_{n+1} of any solver:

1. **Descent guard** (energy-diminishing integration of gradient systems; Hairer & Lubich, "Energy-diminishing
   integration of gradient systems", IMA J. Numer. Anal. 34 (2014) 452–461, who show that algebraically stable
   Runge–Kutta methods diminish the energy under a step-size restriction; gflow's linearly implicit methods have no
   such theorem, so the property is enforced instead of assumed): the step is accepted only if

       L(θ_{n+1}) ≤ L(θ_n) + δ,    δ = ε(θ_n) + ε(θ_{n+1}),

   where ε(θ) bounds the rounding error of evaluating L at θ (below). A step that raises L by more, or lands on a
   non-finite θ or L, is rejected as an infinite error (the step shrinks by ``factormin``) and counted
   (``stats["rejected_ascent"]``).
2. **Loss-resolving error control** (``resolve_loss=True``, the default for sums of squares L = ‖r‖²): the local
   error e of θ is also measured where the loss lives, in residual space, Je with J = ∂r/∂θ at θ_{n+1} (one
   forward-mode pass, which also yields r(θ_{n+1}) for the guard; gflow's own solvers pass J e with the J they hold
   instead, below):

       err_r = ‖J e‖ / (rtol_L · ‖r(θ_{n+1})‖ + ‖ρ‖),   err = max(err_θ, err_r),   rtol_L = rtol^LOSS_RTOL_POWER,

   err_θ being the wrapped controller's own (RMS of e / (atol + rtol·|θ|)). Since δL ≈ 2 rᵀ J e, err_r ≤ 1 bounds
   the step's relative error in L by about 2 rtol_L whatever the size of L, down to the rounding floor ρ of the
   residuals (below). The norm is taken over the whole residual vector, not componentwise: a single residual
   crossing zero must not force tiny steps, while L is resolved relative to itself. The floor is ρ, not the bare
   u·s: J e cannot be computed below the rounding of r (a W-method's stiff stages reproduce r to its rounding
   whatever h), and with u·s ROS34PW2 took 10⁶ steps at L ≈ 1e-30 on a one-residual problem.
   ``LOSS_RTOL_POWER`` = 1/2 is ours: L to rtol itself (power 1) took 6.1× the steps on R1 at rtol 1e-8 (30 757
   against 5 020) to resolve digits of L no study reads, while 1/2 (L to ~1e-4 relative per step at rtol 1e-8) took
   5 025. ``resolve_loss=False`` (``error_control="parameters"``) keeps the θ-only control of gflow ≤ 0.1.

**The guard fused into gflow's solvers.** Evaluated apart, the guard costs a pass through r and its forward-mode
tangent at every attempted θ_{n+1}. But gflow's own solvers (:class:`gflow.flow.GaussNewtonRosenbrock`,
:class:`gflow.flow.RodasGradientFlow`) evaluate the field at θ_{n+1} anyway, for the next step's first stage (FSAL),
and that pass computes r(θ_{n+1}) on its way (``jax.value_and_grad`` with r as auxiliary output:
:meth:`gflow.flow.GradientFlowTerm.residuals_and_vf`); and they hold J for their linear systems. With ``fuse_guard``
(:meth:`gflow.flow.GaussNewtonRosenbrock.with_fused_guard`, which gflow's solves set: ``FUSE_GUARD`` in their step
control) they return, in place of e alone, e with J e and r(θ_{n+1}) packed in one vector (:func:`pack_step_error`),
and the guard judges the step by those without evaluating anything: L(θ_{n+1}) = ‖r(θ_{n+1})‖² and ε(θ_{n+1}) as
above, bit for bit the same formulas. The one difference: the residual-space error is then measured with the J the
step holds, J(θ_n) (or J at its last refresh when the solver lags J), not J(θ_{n+1}); J e is an error-sized
quantity and J moves by O(h) across a step, so err_r changes by a relative O(h), well inside the factor the step
size controller works with (a W-method tolerates a lagged J in its stages for the same reason). The descent test
itself is unchanged: L(θ_{n+1}) is computed from the true r(θ_{n+1}). Measured: with the θ-only control the same
accepted and rejected steps, bit for bit; with the residual control the same step counts on R1 and R3, and at most
one step more or fewer where L sits at its rounding floor (L ≈ 1e-32). Stock diffrax solvers return e alone, and the
guard evaluates r(θ_{n+1}) itself, as before.

Where J e comes from: ROS34PW2 (:class:`gflow.flow.GaussNewtonRosenbrock` with its Woodbury solve) gets it without
touching J. Each stage solves (I + c JᵀJ) u = b as u = b − c Jᵀ z, z = (I + c JJᵀ)⁻¹ J b, and then J u = J b − c JJᵀ z
= z: the solve's own m-vector. The error e is a fixed combination of the stages, so J e is the same combination of
their z (m-vectors; exact in exact arithmetic, and with the J the step holds; after the projection of an
indefinite I + cG, :meth:`_WoodburySolve.build`, the identity fails and J is applied). The Rodas solvers and ROS34PW2
with conjugate gradients apply J to e (a J product). Measured on R3 (40 400 parameters, to t1 = 3, 1 416 steps, 200 saves; 5 alternating
rounds in one process on the 2-core CPU, an ad hoc script): the guard cost 1.21× the engine before it while its J e
was a forward-mode pass at θ_{n+1} (as expensive there as a gradient), 1.03× with the stages' images, and 1.02×
with the θ-only control (no J e at all). Hence ``FUSED_GUARD_MAX_PARAMETERS`` (ours) limits the fusion only where
J e costs a J product: fused, R1's step loop launched fewer kernels (478 against 533 apart, 444 before the guard)
and cost 1.05–1.08× the engine before against 1.25× apart, R2 (2 600 parameters) 1.09× against 1.53×; on R3 the
fused step with ``jac.mv`` was slower than apart in three runs of four (1.43× against 1.18×), for a reason not
found.

**Rounding bound ε(θ).** ρ_i = ``ROUNDING_DEPTH`` · u · s_i bounds |fl(r_i) − r_i|, u the unit roundoff, s_i the
magnitude of the numbers that cancel in r_i: |r_i| + 2|label_i| for a loss that declares its labels
(:meth:`gflow.objectives.AbstractSumOfSquares.residual_targets`; |prediction| ≤ |r| + |label|), else |r_i| + |r_i(θ0)|;
``ROUNDING_DEPTH`` = 64 is a generous constant for the few dozen sequential roundings of an impulse response or a
recurrent pass. Then fl(L) = Σ fl(r_i)² obeys |fl(L) − L| ≤ Σ_i (2|r_i| ρ_i + ρ_i²) + m·u·L (the squares and the
m-term sum) =: ε(θ). A loss whose value is not ‖r‖² adds ``ROUNDING_DEPTH`` · u · |L|; for a loss that is not a sum
of squares, ε = ``ROUNDING_DEPTH`` · u · |L|. :func:`loss_rounding` evaluates ε.

**Time resolution.** No floor on the step size is set in time units (a floor proportional to t1 hid saddle
escapes at t ~ 1e12). Every step is exactly t_{n+1} − t_n of two floats, so steps of a few ulps of t are still
consistent; but a rejected step must shrink, and once h is a few ulps of t, t + h rounds back to the same float and
cannot. The controller then ends the solve with ``RESULTS.dt_min_reached``, and :func:`gflow.solve_flow` continues
the (autonomous) flow from that state in a fresh local time τ = t − t_stop, where steps are again resolved to
ulp(τ) (a split time: the offset t_stop is kept separately).
"""

from __future__ import annotations

from typing import Any, Callable

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optimistix as optx

_U = float(jnp.finfo(jnp.float64).eps) / 2  # unit roundoff of float64
_ULPS_OF_T = 64  # a step this many float64 spacings of t long or shorter is at the resolution of the time variable
ROUNDING_DEPTH = 64.0  # ρ = ROUNDING_DEPTH · u · s bounds the rounding of a residual (module docstring)
# the fused guard's reach where its J e costs a J product (the Rodas solvers; module docstring, "The guard fused into
# gflow's solvers"): measured ahead at 1 680 and 2 600 parameters, behind at 40 400
FUSED_GUARD_MAX_PARAMETERS = 10_000
LOSS_RTOL_POWER = 0.5  # the residual-space control resolves L to rtol ** LOSS_RTOL_POWER per step (module docstring)


class DescentController(diffrax.AbstractAdaptiveStepSizeController):
    """A diffrax controller with the descent guard.

    It wraps ``controller`` with the descent guard and, when ``resolve_loss``, the residual-space error control of
    the gradient flow ``term`` (module docstring); every step lands on each of ``step_ts`` it would cross, or with
    ``saves_per_step`` = k > 1 covers at most k of them (it lands on the k-th when it would cross it). Its state
    ends with the number of steps rejected for an ascent, read by :func:`rejected_ascent`. A step error longer than
    θ is a gflow solver's fused one (:func:`pack_step_error`: e, J e, r(θ_{n+1})), which the guard judges the step
    by instead of evaluating r at θ_{n+1} itself (module docstring, "The guard fused into gflow's solvers").

    Attributes:
        controller: The adaptive diffrax controller it wraps.
        term: The gradient flow's term.
        resolve_loss: Measure the local error in residual space too.
        theta_reference: The flow's θ0 when the solve continues it from a later state (None: the start).
        step_ts: The times every step lands on (or, with ``saves_per_step`` > 1, covers at most that many of).
        saves_per_step: How many of ``step_ts`` one step may cover (1: it lands on each).
    """

    controller: diffrax.AbstractAdaptiveStepSizeController
    term: Any  # gflow.flow.GradientFlowTerm (a sum of squares when resolve_loss)
    resolve_loss: bool = eqx.field(static=True)
    theta_reference: jax.Array | None = None  # where |r| sizes the default floor (the flow's θ0); None: the solve's y0
    step_ts: jax.Array | None = None  # times every step must land on (the save times): saved values are step ends
    saves_per_step: int = eqx.field(static=True, default=1)

    @property
    def rtol(self):
        return self.controller.rtol

    @property
    def atol(self):
        return self.controller.atol

    @property
    def norm(self) -> Callable:
        return self.controller.norm

    def wrap(self, direction):
        return eqx.tree_at(lambda c: c.controller, self, self.controller.wrap(direction))

    def _clip(self, t0, t1):
        """t1, or the first of ``step_ts`` after t0 if that comes sooner (a vectorized compare: no loop in the step);
        with ``saves_per_step`` = k > 1, the k-th of them after t0 (``step_ts`` sorted)."""
        if self.step_ts is None:
            return t1
        if self.saves_per_step == 1:
            return jnp.minimum(t1, jnp.min(jnp.where(self.step_ts > t0, self.step_ts, jnp.inf)))
        index = jnp.sum(self.step_ts <= t0) + (self.saves_per_step - 1)  # a compare, not a search loop in the step
        kth = jnp.where(index < self.step_ts.shape[0], self.step_ts[jnp.minimum(index, self.step_ts.shape[0] - 1)],
                        jnp.inf)
        return jnp.minimum(t1, kth)

    def init(self, terms, t0, t1, y0, dt0, args, func, error_order):
        t1, inner = self.controller.init(terms, t0, t1, y0, dt0, args, func, error_order)
        t1 = self._clip(t0, t1)
        reference = _reference(self.term, y0 if self.theta_reference is None else self.theta_reference)
        loss0, rounding0, _ = _loss_and_rounding(self.term, y0, reference)
        return t1, (inner, reference, loss0, rounding0, jnp.array(0))

    def adapt_step_size(self, t0, t1, y0, y1_candidate, args, y_error, error_order, controller_state):
        inner, reference, loss0, rounding0, ascents = controller_state
        fused = jnp.shape(y_error) != jnp.shape(y1_candidate)  # a gflow solver's error with the guard's evaluation
        if fused:
            y_error, jacobian_error, residuals1 = unpack_step_error(y_error, y1_candidate.size)
        finite_y = jnp.all(jnp.isfinite(y1_candidate)) & jnp.all(jnp.isfinite(y_error))
        y1 = jnp.where(finite_y, y1_candidate, y0)  # keep the loss evaluation finite; the step is rejected anyway
        error = jnp.where(finite_y, y_error, 0.0)
        loss_rtol = self.controller.rtol ** LOSS_RTOL_POWER
        if fused:
            loss1, rounding1, residual_error = _rounding_of_residuals(
                jnp.where(finite_y, residuals1, 0.0), reference,
                jnp.where(finite_y, jacobian_error, 0.0) if self.resolve_loss else None, loss_rtol)
        else:
            loss1, rounding1, residual_error = _loss_and_rounding(
                self.term, y1, reference, error if self.resolve_loss else None, loss_rtol)
        ascent = finite_y & (loss1 > loss0 + rounding0 + rounding1)
        bad = ~finite_y | ~jnp.isfinite(loss1) | ascent
        if residual_error is not None:
            theta_error = self._theta_error(y0, y1, error)
            stretch = jnp.where(theta_error > 0, residual_error / theta_error, 1.0)
            bad = bad | ~jnp.isfinite(stretch)  # a NaN or overflowing residual error: reject (never a NaN step size)
            error = error * jnp.where(jnp.isfinite(stretch), jnp.maximum(stretch, 1.0), 1.0)
        error = jnp.where(bad, jnp.inf, error)
        keep, next_t0, next_t1, made_jump, inner, result = self.controller.adapt_step_size(
            t0, t1, y0, y1, args, error, error_order, inner)
        keep = keep & ~bad
        next_t1 = self._clip(next_t0, next_t1)
        loss0 = jnp.where(keep, loss1, loss0)
        rounding0 = jnp.where(keep, rounding1, rounding0)
        ascents = ascents + jnp.where(ascent, 1, 0)
        # Time is a float64: a rejected step must shrink, but once h is a few ulps of t, t + h rounds back to the same
        # float (or to t) and the step cannot. Stop and say so; solve_flow continues from here in a fresh local time.
        # (Only at the resolution of t: a user's dtmin that stops the shrinking is not an underflow.)
        at_resolution = t1 - t0 <= _ULPS_OF_T * jnp.spacing(jnp.abs(t0))
        stuck = (t1 <= t0) | (~keep & at_resolution & (next_t1 - next_t0 >= t1 - t0)) | ~jnp.isfinite(next_t1)
        result = diffrax.RESULTS.where(stuck, diffrax.RESULTS.dt_min_reached, result)
        return keep, next_t0, next_t1, made_jump, (inner, reference, loss0, rounding0, ascents), result

    def _theta_error(self, y0, y1, error):
        """The wrapped controller's scaled θ-error, RMS of e / (atol + rtol · max(|θ_n|, |θ_{n+1}|))."""
        scale = self.controller.atol + self.controller.rtol * jnp.maximum(jnp.abs(y0), jnp.abs(y1))
        return self.controller.norm(error / scale)


def _reference(term, theta0):
    """What cancels in r besides r itself: 2|label| (|prediction| ≤ |r| + |label|) for a loss that declares its labels
    (``residual_targets``), else |r(θ0)|, the size of the residuals the flow started from."""
    if not term.is_sum_of_squares:
        return jnp.zeros(())
    targets = term.residual_targets()
    return jnp.abs(term.residuals(theta0)) if targets is None else 2.0 * jnp.abs(targets)


def _loss_and_rounding(term, y, reference, tangent=None, loss_rtol=None):
    """(L(y), ε(y), None), or with ``tangent`` (and ``loss_rtol``) the scaled residual-space error of J tangent in
    place of None (module docstring)."""
    if not term.is_sum_of_squares:
        value = term.loss_value(y)
        return value, ROUNDING_DEPTH * _U * jnp.abs(value), None
    if tangent is None:
        r, jt = term.residuals(y), None
    else:
        r, jt = jax.jvp(term.residuals, (y,), (tangent,))
    value, rounding, residual_error = _rounding_of_residuals(r, reference, jt, loss_rtol)
    if not term.loss_is_norm_of_residuals:  # a loss whose __call__ is not ‖r‖² (e.g. ‖r‖² − c)
        value = term.loss_value(y)
        rounding = rounding + ROUNDING_DEPTH * _U * jnp.abs(value)
    return value, rounding, residual_error


def _rounding_of_residuals(r, reference, jt=None, loss_rtol=None):
    """(‖r‖², ε, None) from the residuals r, or with ``jt`` = J e (and ``loss_rtol``) the scaled residual-space error
    in place of None (module docstring)."""
    scale = jnp.abs(r) + reference
    rho = ROUNDING_DEPTH * _U * scale
    value = jnp.sum(r * r)
    rounding = jnp.sum(2.0 * jnp.abs(r) * rho + rho * rho) + r.size * _U * value
    if jt is None:
        return value, rounding, None
    floor = loss_rtol * optx.rms_norm(r) + optx.rms_norm(rho)
    return value, rounding, optx.rms_norm(jt) / jnp.maximum(floor, jnp.finfo(floor.dtype).tiny)


def pack_step_error(error, jacobian_error, residuals1) -> jax.Array:
    """A step's error as a gflow solver returns it to :class:`DescentController`: the local error e of θ (n), then
    J e (m) and the residuals r(θ_{n+1}) (m) that the step computed anyway, in one flat vector (n + 2m), so that the
    guard need not evaluate r again at θ_{n+1}. One array, not a module: diffrax's loop (and gflow's refilling
    loop) map its NaNs to inf, and a NaN or inf in any part rejects the step.

    Args:
        error: e, the step's local error estimate of θ.
        jacobian_error: J e, J the residual Jacobian the step holds.
        residuals1: r at the step's end.

    Returns:
        The packed vector.
    """
    return jnp.concatenate([error, jacobian_error, residuals1])


def unpack_step_error(packed, n: int):
    """(e, J e, r(θ_{n+1})) from :func:`pack_step_error`'s vector; ``n`` the length of θ."""
    m = (packed.shape[-1] - n) // 2
    return packed[..., :n], packed[..., n:n + m], packed[..., n + m:]


def saved_rises(term, ys, theta_reference, batch_size: int) -> jax.Array:
    """How many saved rows raise L beyond the rounding bound over the previous finite row (L_i > L_j + ε(θ_i) +
    ε(θ_j), j the last finite row before i): zero for a gradient flow. Saves taken from a step's dense output are
    checked with it after the solve (``FlowProblem.save_on_steps``).

    Args:
        term: The flow's term.
        ys: (S, n) the saved rows (non-finite rows past the end of a flow are skipped).
        theta_reference: The flow's θ0 (sizes the rounding bound of a loss without labels).
        batch_size: Rows evaluated at a time.

    Returns:
        The count (an integer array).
    """
    return saved_losses(term, ys, theta_reference, batch_size, check_descent=True)[1]


def saved_losses(term, ys, theta_reference, batch_size: int, check_descent: bool):
    """(L at every saved row, NaN where the row is not finite; with ``check_descent`` the count of
    :func:`saved_rises`, else 0), from one pass through the residuals of each row: the saved losses and the descent
    check of dense-output saves share it (on R2, 200 saves, evaluating them apart cost a sixth of the solve).

    Args:
        term: The flow's term.
        ys: (S, n) the saved rows.
        theta_reference: The flow's θ0 (sizes the rounding bound of a loss without labels).
        batch_size: Rows evaluated at a time.
        check_descent: Count the rises (dense-output saves) or not (saves on steps: step ends the guard accepted).

    Returns:
        (losses (S,), rises).
    """
    if not check_descent:
        losses = jax.lax.map(lambda y: jnp.where(jnp.all(jnp.isfinite(y)), term.loss_value(y), jnp.nan), ys,
                             batch_size=batch_size)
        return losses, jnp.array(0)
    reference = _reference(term, theta_reference)

    def one(y):
        finite_y = jnp.all(jnp.isfinite(y))
        value, rounding, _ = _loss_and_rounding(term, jnp.where(finite_y, y, 0.0), reference)
        return finite_y, value, rounding

    finite_y, values, rounding = jax.lax.map(one, ys, batch_size=batch_size)
    finite = finite_y & jnp.isfinite(values)
    index = jnp.arange(ys.shape[0])
    last = jax.lax.cummax(jnp.where(finite, index, -1))  # the last finite row at or before each row
    before = jnp.concatenate([jnp.array([-1]), last[:-1]])
    j = jnp.maximum(before, 0)
    rise = finite & (before >= 0) & (values > values[j] + rounding + rounding[j])
    return jnp.where(finite_y, values, jnp.nan), jnp.sum(rise)


def rejected_ascent(controller_state) -> jax.Array:
    """Steps rejected for a rise of the loss, from the final state of a :class:`DescentController`."""
    return controller_state[-1]


def loss_rounding(loss, model, model0=None) -> float:
    """ε(θ) at ``model``: the bound on the rounding error of evaluating ``loss`` there that the descent guard uses
    (module docstring; the guard lets L rise by ε(θ_n) + ε(θ_{n+1}) at most). ``model0``: the flow's start, which
    sizes the bound of a sum of squares that does not declare its labels (default: ``model``).

    Args:
        loss: The loss.
        model: Where to evaluate the bound.
        model0: The flow's start.

    Returns:
        ε(θ).
    """
    from ..models._flatten import flatten

    return float(loss_rounding_along(loss, model if model0 is None else model0, flatten(model)[0][None])[0])


def loss_rounding_along(loss, model0, params) -> np.ndarray:
    """ε(θ) (:func:`loss_rounding`) at every row of ``params`` (S, n), flat parameter vectors of ``model0``'s
    structure (a trajectory's ``params``), in one compiled call.

    Args:
        loss: The loss.
        model0: The flow's start (the structure of ``params``).
        params: (S, n) flat parameter vectors.

    Returns:
        (S,) ε(θ) at each row.
    """
    return np.asarray(_rounding_rows(loss, model0, jnp.asarray(params)))


@eqx.filter_jit
def _rounding_rows(loss, model0, params):
    from ..models._flatten import flatten
    from ._term import GradientFlowTerm

    theta0, static, unravel = flatten(model0)
    term = GradientFlowTerm(loss, static, unravel)
    reference = _reference(term, theta0)
    return jax.vmap(lambda y: _loss_and_rounding(term, y, reference)[1])(params)
