"""The progress meter of a flow, on a logarithmic time axis (a discrete run's progress lines:
:class:`gflow.run.StepProgress`), and the elapsed-time lines of ``progress="auto"`` (:func:`with_elapsed_lines`).

Gradient flows are integrated to t = 1e6 or 1e7 while most of the work happens early, so a linear percentage
(diffrax's TextProgressMeter) sits at 0 % for most of the run. :class:`LogTimeProgressMeter` prints t and log-time
progress instead. Under ``vmap`` (``solve_flows``) it reports the batch as a whole: how many flows are done and
where the *slowest* running flow is, since that one decides when the batch ends (counting the caller's flows only,
not the copies of flow 0 that pad a batch to its program's size)::

    [flows +12.0s] flows 7/12 done · slowest t=3.2e+04 (62.0 % of log-time), 4180 steps

How a finished flow is told apart inside the batched loop: a while loop under vmap keeps running its body for every
flow and discards the updates of the flows whose loop has ended, so a finished flow's step count stops growing
while the running flows' counts all equal the loop's iteration count (the batch maximum). The meter only adds
host prints; the solve's numbers are the same with or without it.
"""

from __future__ import annotations

import threading
import time

import diffrax
import equinox as eqx
import equinox.internal as eqxi
import jax
import jax.numpy as jnp
from jax.interpreters import batching, mlir

# --------------------------------------------------------------------------------------------------------------
# a sum over the vmapped axis (equinox has unvmap_max and unvmap_any, not a sum): the number of finished flows

_unvmap_sum_p = jax.extend.core.Primitive("gflow_unvmap_sum")


def _unvmap_sum(x) -> jax.Array:
    """As ``jnp.sum``, but also over the batch axes of ``vmap`` (the result is not batched)."""
    return _unvmap_sum_p.bind(x)


_unvmap_sum_p.def_impl(jnp.sum)
_unvmap_sum_p.def_abstract_eval(lambda x: jax.core.ShapedArray((), x.dtype))
batching.primitive_batchers[_unvmap_sum_p] = lambda args, dims: (_unvmap_sum(args[0]), None)
mlir.register_lowering(_unvmap_sum_p, mlir.lower_fun(jnp.sum, multiple_results=False))


# the position of each flow along the vmapped axis (0 outside vmap): a batch is padded to its program's size with
# copies of flow 0 at the end, and the meter counts only the caller's flows, those before ``flows``

_row_index_p = jax.extend.core.Primitive("gflow_row_index")


def _row_index(x) -> jax.Array:
    """0 outside vmap; under vmap, each row's index along the batch axis (``x`` must be batched there)."""
    return _row_index_p.bind(x)


def _row_index_impl(x):
    return jnp.zeros((), jnp.int32)


_row_index_p.def_impl(_row_index_impl)
_row_index_p.def_abstract_eval(lambda x: jax.core.ShapedArray((), jnp.int32))
batching.primitive_batchers[_row_index_p] = lambda args, dims: (
    jax.lax.iota(jnp.int32, args[0].shape[dims[0]]), 0)
mlir.register_lowering(_row_index_p, mlir.lower_fun(_row_index_impl, multiple_results=False))


def _counted(state, flows) -> jax.Array:
    """Whether this flow is one of the caller's (not a padding copy): its row is below ``flows`` (0: every row)."""
    batched = jnp.where(state.steps >= 0, state.t, state.t)  # the state's own batching (a constant is not batched)
    return (flows <= 0) | (_row_index(batched) < flows)


def _unvmap_min(x) -> jax.Array:
    return -eqxi.unvmap_max(-x)


# --------------------------------------------------------------------------------------------------------------


class _State(eqx.Module):
    t: jax.Array  # this flow's time after its last step
    steps: jax.Array  # this flow's loop iterations (accepted and rejected steps); frozen once it has finished
    reported: jax.Array  # (slowest log-time fraction, flows done) at the last report, the same for every flow


_host = {"started": time.perf_counter(), "printed": False, "last": -float("inf")}
FINISHED_EVERY_SECONDS = 1.0  # flows finishing in a burst: one line per second, not one per flow


def _start():
    _host.update(started=time.perf_counter(), printed=False, last=-float("inf"))


def _line(t, t1, frac, steps, done, total) -> str:
    if int(total) == 1:
        return (f"t = {float(t):.3e} / {float(t1):.3e}  (log-time {100 * float(frac):5.1f}%, {int(steps)} steps)")
    slowest = "all finished" if int(done) == int(total) else \
        f"slowest t={float(t):.1e} ({100 * float(frac):.1f} % of log-time)"
    return f"flows {int(done)}/{int(total)} done · {slowest}, {int(steps)} steps"


def _print(t, t1, frac, steps, done, total, advanced, quiet_seconds):
    now = time.perf_counter()
    elapsed = now - _host["started"]
    if elapsed >= float(quiet_seconds) and (bool(advanced) or now - _host["last"] >= FINISHED_EVERY_SECONDS):
        _host.update(printed=True, last=now)
        print(f"  [flow{'s' if int(total) > 1 else ''} +{elapsed:6.1f}s] {_line(t, t1, frac, steps, done, total)}",
              flush=True)


def _print_end(t1, steps, total):
    """The closing line of a batch whose progress was shown (short solves stay silent)."""
    if _host["printed"] and int(total) > 1:
        elapsed = time.perf_counter() - _host["started"]
        print(f"  [flows +{elapsed:6.1f}s] {_line(t1, t1, 1.0, steps, total, total)}", flush=True)


class LogTimeProgressMeter(diffrax.AbstractProgressMeter):
    """Prints a line whenever log(1 + t)/log(1 + t1) of the slowest running flow has grown by ``minimum_increase``
    (or, in a batch, when more flows have finished, at most once a second), once the solve has run for ``quiet_seconds`` of wall
    time (so short solves stay silent). A batch ends with a line once all its flows are done.

    Attributes:
        t0: The start time.
        t1: The end time.
        quiet_seconds: Wall time before the first line.
        minimum_increase: The growth of the slowest flow's log-time fraction that prints a line.
        flows: The caller's flows, the first rows of a batch padded to its program's size (copies of flow 0 fill
            the rest, and are neither counted nor followed); 0: every row.
    """

    t0: jax.Array
    t1: jax.Array
    quiet_seconds: jax.Array = eqx.field(default_factory=lambda: jnp.array(0.0))
    minimum_increase: float = eqx.field(static=True, default=0.1)
    flows: jax.Array = eqx.field(default_factory=lambda: jnp.array(0))  # the caller's flows (0: every row)

    def init(self):
        jax.debug.callback(_start)
        return _State(t=self.t0, steps=jnp.array(0), reported=jnp.zeros(2))

    def _fraction(self, t):
        return jnp.log1p(t - self.t0) / jnp.log1p(self.t1 - self.t0)

    def step(self, state, progress):
        iteration = eqxi.unvmap_max(state.steps)  # the running flows' count; a finished flow's is smaller
        running = state.steps == iteration
        counted = _counted(state, self.flows)
        done, total = _unvmap_sum(jnp.where(counted & ~running, 1.0, 0.0)), _unvmap_sum(jnp.where(counted, 1.0, 0.0))
        slowest_t = _unvmap_min(jnp.where(running & counted, state.t, jnp.inf))
        slowest = jnp.where(jnp.isfinite(slowest_t), self._fraction(slowest_t), 1.0)
        last_frac, last_done = eqxi.unvmap_max(state.reported[0]), eqxi.unvmap_max(state.reported[1])
        advanced = slowest - last_frac >= self.minimum_increase
        due = advanced | (done > last_done)

        def report(_):
            jax.debug.callback(_print, slowest_t, self.t1, slowest, iteration, done, total, advanced,
                               self.quiet_seconds)
            return jnp.stack([slowest, done])

        reported = jax.lax.cond(due, report, lambda _: jnp.stack([last_frac, last_done]), None)
        t = self.t0 + progress * (self.t1 - self.t0)
        return _State(t=t, steps=state.steps + 1, reported=reported)

    def close(self, state):
        total = _unvmap_sum(jnp.where(_counted(state, self.flows), 1.0, 0.0))
        jax.debug.callback(_print_end, self.t1, eqxi.unvmap_max(state.steps), total)


ELAPSED_EVERY_SECONDS = 10.0  # progress="auto": a line this often once the quiet period has passed


def with_elapsed_lines(compute, quiet_seconds: float, label: str):
    """``compute()``, run on a worker thread while this one prints the wall time elapsed, once ``quiet_seconds``
    have passed and then every ``ELAPSED_EVERY_SECONDS`` (short solves stay silent).

    This is ``progress="auto"``: a program with the log-time meter calls back into Python at every step, and JAX's
    persistent compilation cache refuses programs with host callbacks, so every fresh process would compile the
    solve anew (11–16 s for the README's flow on a 2-core CPU). Without the meter the default solve is compiled once
    per machine; ``progress=True`` still shows t and log-time. Ctrl-C stops the wait; the compiled call itself runs
    to its end in the background (XLA cannot be interrupted), and its result is dropped.

    Args:
        compute: The solve, including waiting for its result (``jax.block_until_ready``).
        quiet_seconds: Wall time before the first line.
        label: What the lines name.

    Returns:
        What ``compute()`` returns (its exception is raised here).
    """
    result: dict = {}

    def work():
        try:
            result["value"] = compute()
        except BaseException as error:  # noqa: BLE001  (handed to the waiting thread, which raises it)
            result["error"] = error

    start = time.perf_counter()
    worker = threading.Thread(target=work, name="gflow-solve", daemon=True)
    worker.start()
    worker.join(timeout=quiet_seconds)
    while worker.is_alive():
        print(f"  [{label} +{time.perf_counter() - start:6.1f}s] running (compiling or integrating; progress=True "
              "prints t and log-time)", flush=True)
        worker.join(timeout=ELAPSED_EVERY_SECONDS)
    if "error" in result:
        raise result["error"]
    return result["value"]
