"""What the descent guard and the loss-resolving error control cost, and what they buy, in one process.

- **cost**: on each problem at its rtol, gflow's engine as it was before the descent guard (rebuilt here from the same pieces:
  ``diffrax.diffeqsolve`` with gflow's term and solver, a PIDController with dtmin 1e-14·max(1, t1), saves
  interpolated between steps, ROS34PW2's by the cubic Hermite interpolant it had then) against today's ``solve_flow`` with ``error_control="parameters"`` (guard and steps
  onto the save times, θ-only control) and with the default ``"loss"`` (guard + residual-space control); warm wall
  time, best of two, and steps.
- **resolution**: the relative error of L(t) against an rtol-1e-13 reference (Rodas5P, default control) where the
  reference first falls below 1e-8, 1e-12, 1e-16, 1e-20, at rtol 1e-8, with each control.
- **price** (``--guard-price``): the guard's price in wall time, measured so that a loaded or noisy CPU does not
  decide it: the engine before the guard and today's ``solve_flow`` (default control) alternate, round after round,
  and the claim is the median over rounds of each round's ratio; beside it, the kernels per step of the two compiled
  programs (the engine before, and ``solve_flows``' lock-step program for the one flow), counted from their HLO
  (bench/_kernels.py): a count that no load moves.
- **time to resolve**: on the fig3a flow, the loosest rtol of 1e-6 … 1e-12 at which each control's L is within
  1 % of the reference at every saved time where the reference lies in [1e-14, 1e-12], and that run's wall time.
"""

from __future__ import annotations

import dataclasses
import time

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import gflow
from gflow import flatten
from gflow.flow import AbstractGradientFlowSolver, GradientFlowTerm

LEVELS = (1e-8, 1e-12, 1e-16, 1e-20)
CONTROLS = ("before the descent guard", "parameters", "loss")
RESOLVE_LEVEL, RESOLVE_TOLERANCE = 1e-14, 0.01
RESOLVE_RTOLS = (1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12)


class EndpointHermiteInterpolation(diffrax.AbstractLocalInterpolation):
    """The dense output of gflow's ROS34PW2 before the descent guard: the cubic Hermite interpolant of the step's
    ends and scaled slopes k = h·f (its end slope grows with hλ in a stiff direction)."""

    t0: jax.Array
    t1: jax.Array
    y0: jax.Array
    y1: jax.Array
    k0: jax.Array
    k1: jax.Array

    def evaluate(self, t0, t1=None, left: bool = True):
        if t1 is not None:
            return self.evaluate(t1, left=left) - self.evaluate(t0, left=left)
        s = (t0 - self.t0) / (self.t1 - self.t0)
        delta = self.y1 - self.y0
        bubble = (1 - s) * (self.k0 - delta) + s * (delta - self.k1)
        return (1 - s) * self.y0 + s * self.y1 + s * (1 - s) * bubble


class HermiteRosenbrock(gflow.flow.GaussNewtonRosenbrock):
    """ROS34PW2 with the Hermite dense output it had before the descent guard."""

    interpolation_cls = EndpointHermiteInterpolation

    def step(self, terms, t0, t1, y0, args, solver_state, made_jump):
        y1, error, _, state, result = super().step(terms, t0, t1, y0, args, solver_state, made_jump)
        f0 = jax.lax.cond(made_jump, lambda: terms.vf(t0, y0, args), lambda: solver_state[0])
        h = t1 - t0
        return y1, error, dict(y0=y0, y1=y1, k0=h * f0, k1=h * state[0]), state, result


def as_before(solver):
    """``solver`` with the dense output of the engine before the descent guard (ROS34PW2: Hermite)."""
    if type(solver) is gflow.flow.GaussNewtonRosenbrock:
        return HermiteRosenbrock(**{f.name: getattr(solver, f.name) for f in dataclasses.fields(solver)})
    return solver


@eqx.filter_jit
def _engine_before(loss, model0, solver, t1, ts, rtol, atol, max_steps):
    """The integration of gflow before the descent guard: θ-only PID control, a step floor 1e-14·max(1, t1), values at
    the save times interpolated inside steps."""
    theta0, static, unravel = flatten(model0)
    term = GradientFlowTerm(loss, static, unravel)
    if isinstance(solver, AbstractGradientFlowSolver):
        solver = solver.for_rtol(rtol)
    sol = diffrax.diffeqsolve(
        term, solver, 0.0, t1, None, theta0,
        stepsize_controller=diffrax.PIDController(rtol=rtol, atol=atol, dtmin=1e-14 * jnp.maximum(1.0, t1)),
        saveat=diffrax.SaveAt(ts=ts), max_steps=max_steps, throw=False, adjoint=diffrax.ForwardMode())
    losses = jax.lax.map(term.loss_value, sol.ys)
    return losses, sol.ys, sol.stats["num_steps"]


def _run(control, loss, model0, t1, ts, rtol, atol, solver):
    """(saved losses, steps, wall time, saved rises beyond δ) of one run under ``control``."""
    start = time.perf_counter()
    if control.startswith("before"):  # "before the descent guard" (an older name of it, too)
        name = gflow.flow.default_solver(rtol) if solver == "auto" else solver
        solver_obj = as_before(gflow.flow.SOLVER_REGISTRY[name]())
        losses, params, steps = jax.block_until_ready(
            _engine_before(loss, model0, solver_obj, jnp.float64(t1), jnp.asarray(ts), jnp.float64(rtol),
                           jnp.float64(atol), 1_000_000))
        losses, params, steps = np.asarray(losses), np.asarray(params), int(steps)
    else:
        traj = gflow.solve_flow(loss, model0, t1, rtol=rtol, atol=atol, solver=solver, save_at=ts, progress=False,
                                error_control=control)
        losses, params, steps = _on_grid(traj, ts), traj.params, traj.stats["steps"]
    wall = time.perf_counter() - start
    return losses, steps, wall, rises_beyond_rounding(loss, model0, traj_losses(losses), params)


def traj_losses(losses):
    return np.asarray(losses)[np.isfinite(losses)]


def rises_beyond_rounding(loss, model0, losses, params) -> int:
    """Saved L_{i+1} > L_i + ε(θ_i) + ε(θ_{i+1}) (gflow.flow.loss_rounding_along): a gradient flow has none."""
    params = np.asarray(params)[: len(losses)]
    eps = gflow.flow.loss_rounding_along(loss, model0, params)
    return int(np.sum(np.diff(losses) > eps[:-1] + eps[1:]))


def _on_grid(traj, ts):
    """A trajectory's saved losses on the grid ``ts`` (NaN where it did not get)."""
    out = np.full(len(ts), np.nan)
    idx = np.searchsorted(ts, traj.ts)
    ok = (idx < len(ts)) & (ts[np.minimum(idx, len(ts) - 1)] == traj.ts)
    out[idx[ok]] = traj.loss[ok]
    return out


def _warm(control, *args):
    """Compile, then the best of two warm runs."""
    _run(control, *args)
    runs = [_run(control, *args) for _ in range(2)]
    return min(runs, key=lambda r: r[2])


def cost(problem, solver: str, log) -> dict:
    """Warm wall time and steps of each control on ``problem`` at its rtol."""
    ts = gflow.flow.log_save_times(0.0, problem.t1, 200)
    rows = {}
    for control in CONTROLS:
        losses, steps, wall, up = _warm(control, problem.loss, problem.model0, problem.t1, ts, problem.rtol,
                                        problem.atol, solver)
        rows[control] = {"wall_s": wall, "steps": steps, "rises_beyond_rounding": up, "final_loss": float(losses[-1])}
        log(f"    {problem.name} {control:16s} {steps:7d} steps {wall:8.3f} s  saved-L rises beyond δ {up}"
            f"  final L {losses[-1]:.3g}")
    for label, slots in BATCH_PATHS:
        if slots is not None and problem.n_params > REFILL_MAX_PARAMETERS:
            continue
        losses, steps, wall, up = _warm_batch(slots, problem.loss, problem.model0, problem.t1, ts, problem.rtol,
                                              problem.atol, solver)
        rows[label] = {"wall_s": wall, "steps": steps, "rises_beyond_rounding": up, "final_loss": float(losses[-1])}
        log(f"    {problem.name} {label:16s} {steps:7d} steps {wall:8.3f} s  saved-L rises beyond δ {up}"
            f"  final L {losses[-1]:.3g}")
    base = rows["before the descent guard"]["wall_s"]
    return {"problem": problem.name, "description": problem.description, "rtol": problem.rtol, "solver": solver,
            "rows": rows, "slowdown": {c: rows[c]["wall_s"] / base for c in CONTROLS[1:]},
            "steps_over_before": {c: rows[c]["steps"] / rows["before the descent guard"]["steps"] for c in rows}}


def guard_price(problem, rounds: int, log) -> dict:
    """The default ``solve_flow`` against the engine before the guard on ``problem``: interleaved warm calls, the
    median of the per-round ratios, and kernels per step of both programs (module docstring, "price")."""
    import _kernels as K

    ts = gflow.flow.log_save_times(0.0, problem.t1, 200)
    args = (problem.loss, problem.model0, problem.t1, ts, problem.rtol, problem.atol, "auto")
    walls = {"before the descent guard": [], "loss": []}
    steps = {}
    for r in range(rounds + 1):  # round 0 compiles
        for control in walls:
            _, n, wall, _ = _run(control, *args)
            steps[control] = n
            if r:
                walls[control].append(wall)
    ratios = [a / b for a, b in zip(walls["loss"], walls["before the descent guard"])]
    name = gflow.flow.default_solver(problem.rtol)
    before = _engine_before.lower(problem.loss, problem.model0, as_before(gflow.flow.SOLVER_REGISTRY[name]()),
                                  jnp.float64(problem.t1), jnp.asarray(ts), jnp.float64(problem.rtol),
                                  jnp.float64(problem.atol), 1_000_000).compile()
    now = gflow.flow.lower_flows([problem.loss], [problem.model0], problem.t1, rtol=problem.rtol, atol=problem.atol,
                                 save_at=ts).compile()
    kernels = {"before the descent guard": K.hlo_counts(_hlo_text(before))["step"]["kernels"],
               "loss": K.hlo_counts(_hlo_text(now))["step"]["kernels"]}
    out = {"problem": problem.name, "description": problem.description, "n_params": problem.n_params,
           "rtol": problem.rtol, "rounds": rounds, "steps": steps, "walls_s": walls, "ratios": ratios,
           "median_ratio": float(np.median(ratios)), "kernels_per_step": kernels,
           "kernel_ratio": kernels["loss"] / kernels["before the descent guard"]}
    log(f"    {problem.name} (n = {problem.n_params}): steps {steps['before the descent guard']} before, "
        f"{steps['loss']} now; wall ratio now / before, median of {rounds} interleaved rounds "
        f"{out['median_ratio']:.3f} (rounds: {', '.join(f'{x:.2f}' for x in ratios)}); kernels per step "
        f"{kernels['before the descent guard']} before, {kernels['loss']} now ({out['kernel_ratio']:.3f}×)")
    return out


def _hlo_text(compiled) -> str:
    """The optimized HLO of a compiled program (``jax.stages.Compiled``, or equinox's wrapper of one)."""
    inner = getattr(compiled, "compiled", compiled)
    return inner.as_text()


# a batch of this one flow through solve_flows (default error control): its steps with the batch's dense-output saves
# (a step covering at most gflow.flow.BATCH_SAVES_PER_STEP save times), lock-step and through a refilling slot
BATCH_PATHS = (("batch lock-step", None), ("batch refilling", 1))
REFILL_MAX_PARAMETERS = 10_000  # the refilling path only where its compile is short (R1, R2)


def _warm_batch(slots, loss, model0, t1, ts, rtol, atol, solver):
    """(saved losses, steps, wall, saved rises beyond δ) of ``solve_flows([loss], [model0])``: compile, then the best of
    two warm runs."""
    def once():
        start = time.perf_counter()
        batch = gflow.solve_flows([loss], [model0], t1, rtol=rtol, atol=atol, solver=solver, save_at=ts,
                                  progress=False, slots=slots)
        wall = time.perf_counter() - start
        traj = batch[0]
        losses = _on_grid(traj, ts)
        return losses, int(traj.stats["steps"]), wall, rises_beyond_rounding(loss, model0, traj_losses(losses),
                                                                             traj.params)

    once()
    return min((once() for _ in range(2)), key=lambda r: r[2])


def flagged_rises(losses, noise_floor: float = 1e-14) -> int:
    """Saved losses above twice the smallest earlier one plus ``noise_floor`` × L(0): the studies' "left the flow" flag
    (:func:`gflow.problems.extrapolation.valid_length`)."""
    losses = np.asarray(losses)
    earlier = np.minimum.accumulate(np.concatenate([[np.inf], losses[:-1]]))
    return int(np.sum(losses > 2.0 * earlier + noise_floor * abs(losses[0])))


def _errors_at_levels(losses, reference, levels=LEVELS) -> dict:
    out = {}
    for level in levels:
        idx = np.flatnonzero(reference <= level)
        out[f"{level:g}"] = None if idx.size == 0 else float(abs(losses[idx[0]] - reference[idx[0]]) / reference[idx[0]])
    return out


def _within(losses, reference, low=RESOLVE_LEVEL, high=RESOLVE_LEVEL * 100, tol=RESOLVE_TOLERANCE) -> bool:
    band = (reference >= low) & (reference <= high)
    return bool(band.any() and np.all(np.abs(losses[band] - reference[band]) <= tol * reference[band]))


def resolution(name, loss, model0, t1, solver, log, n_save=400, rtol=1e-8, time_to_resolve=False) -> dict:
    """The relative error of L at ``LEVELS`` for each control at ``rtol``, against an rtol-1e-13 Rodas5P reference;
    with ``time_to_resolve``, the loosest rtol at which each control resolves L ∈ [1e-14, 1e-12] to 1 %."""
    ts = gflow.flow.log_save_times(0.0, t1, n_save)
    theta0 = np.asarray(flatten(model0)[0])
    atol_factor = float(min(1.0, np.sqrt(np.mean(theta0 ** 2))))
    start = time.perf_counter()
    reference, _, _, up = _run("loss", loss, model0, t1, ts, 1e-13, atol_factor * 1e-13, "rodas5p")
    log(f"    {name}: reference (Rodas5P, rtol 1e-13) in {time.perf_counter() - start:.1f} s, smallest L "
        f"{np.nanmin(reference):.3g}, saved-L rises beyond δ {up}")
    out = {"problem": name, "solver": solver, "rtol": rtol, "reference_min_loss": float(np.nanmin(reference)),
           "errors": {}, "rises_beyond_rounding": {}, "flagged_rises": {}}
    for control in CONTROLS:
        losses, _, _, up = _warm(control, loss, model0, t1, ts, rtol, atol_factor * rtol, solver)
        out["errors"][control] = _errors_at_levels(losses, reference)
        flagged = flagged_rises(losses)
        out["rises_beyond_rounding"][control], out["flagged_rises"][control] = up, flagged
        log(f"    {name} {control:16s} rtol {rtol:g}: |ΔL|/L at L = "
            + ", ".join(f"{k}: {_e(v)}" for k, v in out["errors"][control].items())
            + f"; saved-L rises beyond δ {up}, flagged as 'left the flow' {flagged}")
    if time_to_resolve:
        out["time_to_resolve"] = {}
        for control in CONTROLS:
            found = None
            for r in RESOLVE_RTOLS:
                losses, steps, wall, _ = _run(control, loss, model0, t1, ts, r, atol_factor * r, solver)  # compiled
                if _within(losses, reference):
                    found = {"rtol": r, "wall_s": wall, "steps": steps}
                    break
            out["time_to_resolve"][control] = found
            log(f"    {name} {control:16s} resolves L in [1e-14, 1e-12] to 1 %: "
                + ("never down to rtol 1e-12" if found is None else
                   f"at rtol {found['rtol']:g}, {found['wall_s']:.2f} s, {found['steps']} steps"))
    return out


def fig3a_problem(k: int = 6, seed: int = 0):
    """Seed 000 Fig. 3(a)'s flow as extrapolation_phase runs it: balanced teacher d̂ = 5 (key seed), general student
    d = 40 with entries 1e-5·N(0, 1) (key 1000 + seed), training length k; t1 = 1e10. Default k = 6: this flow
    reaches L ≈ 1e-32 by t ≈ 1e8 (k = 20 stays above 7.6e-13 up to t1, so no level below 1e-12 could be read)."""
    teacher = gflow.teachers.balanced(jax.random.key(seed), 5)
    model0 = gflow.initializers.gaussian(jax.random.key(1000 + seed), 40, scale=1e-5)
    return gflow.PopulationLoss(teacher, k), model0, 1e10


def _e(v):
    return "n/a" if v is None else f"{v:.1e}"
