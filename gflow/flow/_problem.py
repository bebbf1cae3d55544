"""A solve as the compiled integration sees it: :class:`FlowProblem`, what the flows of one solve share (solver,
controller, time grid, rtol, stopping rule), one argument in place of a dozen, for the lock-step, refilling and
restart paths alike; and :class:`IntegratorOutput`, what integrating a flow returns."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, NamedTuple

import equinox as eqx
import jax
import numpy as np

from ._options import FlowSetup

# A batch's steps cover at most this many save times each (FlowProblem.saves_per_step): the refilling loop writes
# that many rows per step (plus t0 and a step stretched to t1). R2 with 200 log-spaced saves (2-core CPU): 152 steps
# at 2, 118 at 4, 108 at 6, 103 at 8, 98 at 12, 94 (solve_flow's, no cap) from 32; 253 stepping onto each save time.
BATCH_SAVES_PER_STEP = 8


def f64(x) -> np.ndarray:
    """``x`` as a float64 array, traced by the compiled solve (a new value does not recompile). A numpy array: an
    eager JAX conversion costs tens of µs, and a solve makes a dozen."""
    return np.asarray(x, dtype=np.float64)


class FlowProblem(eqx.Module):
    """What every flow of one solve shares, as the compiled integration takes it (:func:`flow_problem`).

    The float64 arrays are traced (a new value reuses the compiled program); ``max_steps``, ``watch_loss`` and
    ``resolve_loss`` are static (part of the program); the solver and controller are modules whose arrays are traced.

    Attributes:
        solver: The diffrax solver.
        controller: The user's adaptive step-size controller, or None (a PIDController from rtol and a flow's atol).
        t0: The start time.
        t1: The end time.
        ts: The save times.
        rtol: The relative tolerance.
        stop_loss: The loss threshold of the stopping rule (−inf: none).
        max_steps: The most steps a flow takes.
        watch_loss: Whether the stopping rule evaluates L every step (a ``stop_loss`` was given).
        resolve_loss: Whether the local error is measured in residual space too (``error_control``).
        save_on_steps: Make every step land on each save time (saved values are step ends); False: values at save
            times inside a step come from the solver's dense output, and are checked after the solve.
        saves_per_step: With dense-output saves, the most save times one step may cover (0: any number): a batch's
            refilling loop writes a fixed number of rows per step (``BATCH_SAVES_PER_STEP``), and the lock-step
            batch takes the same steps so that the two agree to rounding.
    """

    solver: Any
    controller: Any
    t0: jax.Array
    t1: jax.Array
    ts: jax.Array
    rtol: jax.Array
    stop_loss: jax.Array
    max_steps: int = eqx.field(static=True)
    watch_loss: bool = eqx.field(static=True)
    resolve_loss: bool = eqx.field(static=True)
    save_on_steps: bool = eqx.field(static=True, default=False)
    saves_per_step: int = eqx.field(static=True, default=0)

    def times(self) -> tuple[jax.Array, ...]:
        """The traced scalars and grid every flow shares: (t0, t1, ts, rtol, stop_loss)."""
        return self.t0, self.t1, self.ts, self.rtol, self.stop_loss

    def with_times(self, times) -> "FlowProblem":
        """This problem with (t0, t1, ts, rtol, stop_loss) replaced by ``times``."""
        return eqx.tree_at(lambda p: p.times(), self, tuple(times))


def flow_problem(setup: FlowSetup, resolve_loss: bool) -> FlowProblem:
    """The problem of a checked solve.

    Args:
        setup: The solve's checked options.
        resolve_loss: Whether the local error is measured in residual space too.

    Returns:
        The :class:`FlowProblem`.
    """
    return FlowProblem(solver=setup.solver, controller=setup.controller, t0=f64(setup.t0), t1=f64(setup.t1),
                       ts=f64(setup.ts), rtol=f64(setup.rtol),
                       stop_loss=f64(-np.inf if setup.stop_loss is None else setup.stop_loss),
                       max_steps=setup.max_steps, watch_loss=setup.stop_loss is not None, resolve_loss=resolve_loss)


class IntegratorOutput(NamedTuple):
    """What the compiled solve returns for each flow (with a leading flow axis once batched).

    Attributes:
        ts: The saved times and the final time (inf past the end of a flow that stopped early).
        ys: The flat parameters there.
        losses: L there.
        hit_max_steps: The solver stopped at ``max_steps``.
        succeeded: The solver succeeded (or an event stopped it).
        steps: The steps taken.
        accepted: The accepted steps.
        rejected: The rejected steps.
        hessian_vector_products: The Hessian-vector products of a solver that counts them (−1 otherwise).
        underflow: The step size reached the resolution of t.
        rejected_ascent: The steps rejected for an ascent of the loss.
        saved_rises: The saved rows whose L rises beyond the rounding bound over the previous one
            (:func:`gflow.flow.saved_rises`), counted for dense-output saves only (0 with ``save_on_steps``); a
            solve whose dense-output saves rise is repeated with ``save_on_steps``.
        time_restarts: The continuations in a fresh local time (set after the solve, when the flows that
            underflowed have been continued).
    """

    ts: Any
    ys: Any
    losses: Any
    hit_max_steps: Any
    succeeded: Any
    steps: Any
    accepted: Any
    rejected: Any
    hessian_vector_products: Any
    underflow: Any
    rejected_ascent: Any
    saved_rises: Any
    time_restarts: Any = None

    def on_host(self, rows: int | None = None) -> "IntegratorOutput":
        """Every output as a writable numpy array.

        Args:
            rows: Keep the first ``rows`` flows (None: all).

        Returns:
            The outputs on the host.
        """
        return jax.tree_util.tree_map(lambda x: np.array(x if rows is None else np.asarray(x)[:rows]), self)


def with_saves_checked(solve: Callable[[FlowProblem], IntegratorOutput], problem: FlowProblem) -> IntegratorOutput:
    """``solve(problem)`` (one flow), repeated with ``save_on_steps`` when a saved value taken from a step's dense
    output raises L beyond the rounding bound (``saved_rises``): the saved rows are then accepted, descent-checked
    step ends. (A batch steps onto its save times from the start: :func:`gflow.solve_flows`.)

    A solver's dense output is a polynomial through the step's stages, accurate to the step's order, but not
    guaranteed to descend between two save times inside one step; stepping onto every save time is (each saved row
    is then a step the descent guard accepted), at the price of a step per save time: on R2, 253 steps against 94.

    Args:
        solve: Integrates the flows of a problem.
        problem: The problem.

    Returns:
        The outputs of the solve whose saves descend.
    """
    out = solve(problem)
    if problem.save_on_steps or not np.any(np.asarray(out.saved_rises) > 0):
        return out
    return solve(dataclasses.replace(problem, save_on_steps=True))


def with_batch_saves_checked(out: IntegratorOutput, solve_rows: Callable[[np.ndarray], IntegratorOutput]
                             ) -> IntegratorOutput:
    """A batch's outputs (on the host) with every flow whose dense-output saves rose (``saved_rises`` > 0) solved
    again with its steps landing on the save times: ``solve_rows(rows)`` returns the outputs of those flows solved
    so, in the program the batch ran (a flow's bits then depend on its own first solve, never on its neighbours).
    :func:`with_saves_checked` for a batch.

    Args:
        out: The batch's outputs, numpy arrays with a leading flow axis.
        solve_rows: Solves the flows ``rows`` with ``save_on_steps``.

    Returns:
        The outputs, those rows replaced.
    """
    rows = np.flatnonzero(np.asarray(out.saved_rises) > 0)
    if rows.size == 0:
        return out
    again = solve_rows(rows)
    fields = {}
    for name, value, new in zip(IntegratorOutput._fields, out, again):
        if value is None or new is None:
            fields[name] = value
            continue
        value = np.array(value)
        value[rows] = np.asarray(new)[:rows.size]
        fields[name] = value
    return IntegratorOutput(**fields)


# jax.export stores a program's output structure by name (gflow._compilation_cache.exported_call)
jax.export.register_namedtuple_serialization(IntegratorOutput, serialized_name="gflow.flow.IntegratorOutput")
