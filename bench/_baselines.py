"""Baselines for bench/run.py, each stoppable at a wall-clock budget.

- scipy ``solve_ivp`` (LSODA, BDF) on the flat field f(θ) = −∇L(θ) with the JAX Hessian (negated) as Jacobian;
  the budget is enforced by raising from the callbacks.
- stock diffrax solvers through ``gflow.solve_flow``, wrapped in a subclass that asks the host clock every
  few steps and ends the solve (as "max_steps") once the budget is spent.
- GD (explicit Euler) at η = 1.9/λ_max, in jitted chunks.
"""

from __future__ import annotations

import time
from typing import Any

import diffrax
import jax
import jax.numpy as jnp
import numpy as np

import gflow
from gflow import flatten


def _now() -> float:
    return time.perf_counter()


def result_row(method: str, **kw) -> dict:
    row = {"method": method, "status": None, "t_reached": None, "wall_s": None, "compile_s": None,
           "steps": None, "gradient_evaluations": None, "linear_solves": None, "jacobians": None,
           "final_loss": None, "theta": None, "saved": None, "note": ""}
    row.update(kw)
    return row


# --------------------------------------------------------------------------------------------------
# Flat field, Hessian, λ_max
# --------------------------------------------------------------------------------------------------
class FlatField:
    """L(θ), −∇L(θ) and −∇²L(θ) on the flat parameter vector (jitted)."""

    def __init__(self, loss, model0):
        theta0, static, unravel = flatten(model0)
        self.theta0 = theta0
        term = gflow.flow.GradientFlowTerm(loss, static, unravel)
        self.loss_value = jax.jit(lambda y: term.loss_value(y))
        self.neg_grad = jax.jit(lambda y: -jax.grad(term.loss_value)(y))
        self._loss_fn = term.loss_value
        self._neg_hess = None

    @property
    def neg_hess(self):
        if self._neg_hess is None:
            self._neg_hess = jax.jit(lambda y: -jax.hessian(self._loss_fn)(y))
        return self._neg_hess

    def hvp(self, y, v):
        return jax.jvp(jax.grad(self._loss_fn), (y,), (v,))[1]

    def lambda_max(self, states, iters: int = 60, seed: int = 0) -> tuple[float, int]:
        """Largest Hessian eigenvalue over the given states, by power iteration with HVPs (shifted when
        the dominant eigenvalue is negative). Returns (λ_max, index of the state where it occurs)."""
        hvp = self.hvp

        def power(y, v0, shift):
            def body(_, v):
                w = hvp(y, v) + shift * v
                return w / (jnp.linalg.norm(w) + 1e-300)

            v = jax.lax.fori_loop(0, iters, body, v0)
            return jnp.vdot(v, hvp(y, v))  # Rayleigh quotient of H (v normalised)

        power_all = jax.jit(jax.vmap(power, in_axes=(0, None, 0)))
        states = jnp.asarray(states)
        v0 = jax.random.normal(jax.random.key(seed), states.shape[1:], dtype=states.dtype)
        v0 = v0 / jnp.linalg.norm(v0)
        mu = np.asarray(power_all(states, v0, jnp.zeros(states.shape[0])))
        # where the dominant eigenvalue is negative, iterate on H + |μ| I to find the largest positive one
        shift = np.where(mu < 0, -mu, 0.0)
        if np.any(shift > 0):
            mu2 = np.asarray(power_all(states, v0, jnp.asarray(shift)))
            mu = np.where(shift > 0, mu2, mu)
        i = int(np.argmax(mu))
        return float(mu[i]), i


# --------------------------------------------------------------------------------------------------
# scipy solve_ivp
# --------------------------------------------------------------------------------------------------
class _OutOfTime(Exception):
    pass


def scipy_baseline(field: FlatField, method: str, t1: float, rtol: float, atol: float, budget: float,
                   use_jac: bool = True, save_ts=None) -> dict:
    """``save_ts``: times (ending at t1) at which to keep the solution, for the trajectory error."""
    from scipy.integrate import solve_ivp

    name = f"scipy {method}" + (" +JAX Hessian" if use_jac else "")
    y0 = np.asarray(field.theta0, dtype=np.float64)
    # compile outside the timed region
    c0 = _now()
    np.asarray(field.neg_grad(jnp.asarray(y0)))
    if use_jac:
        np.asarray(field.neg_hess(jnp.asarray(y0)))
    compile_s = _now() - c0

    counts = {"nfev": 0, "njev": 0, "t": 0.0}
    deadline = [np.inf]

    def rhs(t, y):
        if _now() > deadline[0]:
            raise _OutOfTime
        counts["nfev"] += 1
        counts["t"] = max(counts["t"], float(t))
        return np.asarray(field.neg_grad(jnp.asarray(y)))

    def jac(t, y):
        if _now() > deadline[0]:
            raise _OutOfTime
        counts["njev"] += 1
        return np.asarray(field.neg_hess(jnp.asarray(y)))

    start = _now()
    deadline[0] = start + budget
    try:
        t_eval = np.asarray([t1] if save_ts is None else save_ts, dtype=np.float64)
        sol = solve_ivp(rhs, (0.0, t1), y0, method=method, rtol=rtol, atol=atol, t_eval=t_eval,
                        jac=jac if use_jac else None)
    except _OutOfTime:
        wall = _now() - start
        return result_row(name, status="timeout", t_reached=counts["t"], wall_s=wall, compile_s=compile_s,
                          gradient_evaluations=counts["nfev"], jacobians=counts["njev"],
                          note=f"did not finish in {budget:g} s (reached t≈{counts['t']:.3g})")
    wall = _now() - start
    ok = sol.status == 0 and sol.y.shape[1] == len(t_eval)
    theta = sol.y[:, -1] if ok else None
    return result_row(name, status="completed" if ok else "failed", t_reached=float(sol.t[-1]) if sol.t.size else
                      counts["t"], wall_s=wall, compile_s=compile_s, steps=None,
                      gradient_evaluations=int(sol.nfev), jacobians=int(sol.njev), linear_solves=None,
                      lu_decompositions=int(sol.nlu), theta=theta,
                      saved=(np.asarray(sol.t), sol.y.T) if ok and save_ts is not None else None,
                      final_loss=float(field.loss_value(jnp.asarray(theta))) if ok else None,
                      note="" if ok else f"solver failed: {sol.message}")


# --------------------------------------------------------------------------------------------------
# stock diffrax solvers through gflow.solve_flow, with a wall-clock stop
# --------------------------------------------------------------------------------------------------
class WallClock:
    """Host-side clock read from inside the solve (jax.pure_callback)."""

    def __init__(self):
        self.deadline = np.inf
        self.hit = False

    def __call__(self):
        if _now() > self.deadline:
            self.hit = True
            return np.bool_(True)
        return np.bool_(False)


def timed_solver(solver_cls, clock: WallClock, every: int, **kwargs):
    """An instance of a subclass of ``solver_cls`` that asks ``clock`` every ``every`` steps whether the
    budget is spent, and if so ends diffeqsolve (reported as max_steps_reached, which gflow turns into status
    "max_steps" with the time reached). Subclassing keeps every isinstance-based default of diffrax (e.g.
    the implicit solvers' root-finder tolerances taken from the step-size controller)."""

    class Timed(solver_cls):
        def init(self, terms, t0, t1, y0, args):
            return solver_cls.init(self, terms, t0, t1, y0, args), jnp.array(0, dtype=jnp.int32)

        def step(self, terms, t0, t1, y0, args, solver_state, made_jump):
            inner, n = solver_state
            y1, y_err, dense, inner, result = solver_cls.step(self, terms, t0, t1, y0, args, inner, made_jump)
            n = n + 1
            out_of_time = jax.lax.cond(
                n % every == 0,
                lambda: jax.pure_callback(clock, jax.ShapeDtypeStruct((), jnp.bool_)),
                lambda: jnp.array(False),
            )
            result = diffrax.RESULTS.where(out_of_time, diffrax.RESULTS.max_steps_reached, result)
            return y1, y_err, dense, (inner, n), result

    Timed.__name__ = Timed.__qualname__ = f"Timed{solver_cls.__name__}"
    return Timed(**kwargs)


_DIFFRAX = {"tsit5": (diffrax.Tsit5, 20, 6), "kvaerno5": (diffrax.Kvaerno5, 1, None)}


def diffrax_baseline(name: str, loss, model0, t1: float, rtol: float, atol: float, budget: float,
                     max_steps: int = 1_000_000, save_at=200) -> dict:
    cls, every, evals_per_step = _DIFFRAX[name]
    clock = WallClock()
    solver = timed_solver(cls, clock, every)
    label = f"diffrax {cls.__name__}"
    # compile (t1 is traced, so a tiny t1 compiles the same program and takes few steps)
    c0 = _now()
    clock.deadline = _now() + max(budget, 60.0)
    gflow.solve_flow(loss, model0, t1 * 1e-13, rtol=rtol, atol=atol, solver=solver, save_at=save_at,
                            max_steps=max_steps, progress=False)
    compile_s = _now() - c0
    if clock.hit:
        return result_row(label, status="timeout", compile_s=compile_s,
                          note=f"compile + warm-up call did not finish in {max(budget, 60.0):g} s")
    clock.hit = False
    start = _now()
    clock.deadline = start + budget
    traj = gflow.solve_flow(loss, model0, t1, rtol=rtol, atol=atol, solver=solver, save_at=save_at,
                            max_steps=max_steps, progress=False)
    wall = _now() - start
    steps = int(traj.stats["steps"])
    evals = None if evals_per_step is None else evals_per_step * steps + 1
    t_reached = float(traj.ts[-1])
    theta = np.asarray(flatten(traj.final)[0])
    common = dict(wall_s=wall, compile_s=compile_s, steps=steps, gradient_evaluations=evals,
                  final_loss=float(traj.loss[-1]), t_reached=t_reached)
    extra = "; dense n×n Jacobian + LU per step (diffrax default root finder)" if name == "kvaerno5" else ""
    if clock.hit:
        return result_row(label, status="timeout", **common,
                          note=f"did not finish in {budget:g} s (reached t={t_reached:.3g}, {steps} steps){extra}")
    status = traj.status
    note = (traj.message + extra) if status != "completed" else extra.lstrip("; ")
    saved = (np.asarray(traj.ts), np.asarray(traj.params)) if status == "completed" else None
    return result_row(label, status=status, theta=theta if status == "completed" else None, note=note, saved=saved,
                      **common)


# --------------------------------------------------------------------------------------------------
# GD (explicit Euler) at the largest stable step
# --------------------------------------------------------------------------------------------------
def gd_baseline(field: FlatField, t1: float, eta: float, budget: float, chunk_seconds: float = 0.5) -> dict:
    neg_grad_fn = lambda y: -jax.grad(field._loss_fn)(y)  # noqa: E731

    @jax.jit
    def run(theta, n, eta):
        return jax.lax.fori_loop(0, n, lambda _, y: y + eta * neg_grad_fn(y), theta)

    theta = jnp.asarray(field.theta0)
    c0 = _now()
    run(theta, 2, eta).block_until_ready()
    compile_s = _now() - c0
    # per-step cost → chunk size
    s0 = _now()
    run(theta, 200, eta).block_until_ready()
    per_step = (_now() - s0) / 200
    chunk = int(max(100, min(5_000_000, chunk_seconds / max(per_step, 1e-9))))

    n_total = int(np.floor(t1 / eta))
    done = 0
    start = _now()
    deadline = start + budget
    timed_out = False
    while done < n_total:
        if _now() > deadline:
            timed_out = True
            break
        n = min(chunk, n_total - done)
        theta = run(theta, n, eta).block_until_ready()
        done += n
        if not bool(jnp.all(jnp.isfinite(theta))):
            wall = _now() - start
            return result_row("GD (Euler)", status="diverged", wall_s=wall, compile_s=compile_s, steps=done,
                              gradient_evaluations=done, t_reached=done * eta,
                              note=f"η={eta:.3g}: non-finite parameters by t={done * eta:.3g}")
    if not timed_out:
        rest = t1 - done * eta
        if rest > 0:
            theta = run(theta, 1, rest).block_until_ready()
            done += 1
    wall = _now() - start
    t_reached = t1 if not timed_out else done * eta
    loss = float(field.loss_value(theta))
    if timed_out:
        return result_row("GD (Euler)", status="timeout", wall_s=wall, compile_s=compile_s, steps=done,
                          gradient_evaluations=done, t_reached=t_reached, final_loss=loss,
                          note=f"η={eta:.3g}: did not finish in {budget:g} s (reached t={t_reached:.3g}, "
                               f"{done} of {n_total} steps; ≈{n_total * per_step:.3g} s for all)")
    return result_row("GD (Euler)", status="completed", wall_s=wall, compile_s=compile_s, steps=done,
                      gradient_evaluations=done, t_reached=t_reached, final_loss=loss,
                      theta=np.asarray(theta), note=f"η={eta:.3g}")


__all__ = ["FlatField", "scipy_baseline", "diffrax_baseline", "gd_baseline", "result_row", "WallClock",
           "timed_solver", "Any"]
