"""A progress meter for long flows, reporting on a logarithmic time axis.

Gradient flows are integrated to t = 1e6 or 1e7 while most of the work happens early, so a linear percentage
(diffrax's TextProgressMeter) sits at 0 % for most of the run. This prints t and log-time progress instead.
"""

from __future__ import annotations

import time

import diffrax
import equinox as eqx
import equinox.internal as eqxi
import jax
import jax.numpy as jnp


class _State(eqx.Module):
    last: jax.Array
    steps: jax.Array


_started = [time.perf_counter()]


def _start():
    _started[0] = time.perf_counter()


def _print(t, t1, frac, steps, quiet_seconds):
    elapsed = time.perf_counter() - _started[0]
    if elapsed >= float(quiet_seconds):
        print(f"  [flow +{elapsed:6.1f}s] t = {float(t):.3e} / {float(t1):.3e}"
              f"  (log-time {100 * float(frac):5.1f}%, {int(steps)} steps)", flush=True)


class LogTimeProgressMeter(diffrax.AbstractProgressMeter):
    """Prints a line whenever log(1 + t)/log(1 + t1) has grown by ``minimum_increase``, once the solve has
    run for ``quiet_seconds`` of wall time (so short solves stay silent)."""

    t0: jax.Array
    t1: jax.Array
    quiet_seconds: jax.Array = eqx.field(default_factory=lambda: jnp.array(0.0))
    minimum_increase: float = eqx.field(static=True, default=0.1)

    def init(self):
        jax.debug.callback(_start)
        return _State(last=jnp.array(0.0), steps=jnp.array(0))

    def step(self, state, progress):
        t = self.t0 + progress * (self.t1 - self.t0)
        frac = jnp.log1p(t - self.t0) / jnp.log1p(self.t1 - self.t0)
        steps = state.steps + 1
        pred = eqxi.unvmap_all(frac - state.last >= self.minimum_increase)

        def report(_):
            jax.debug.callback(_print, eqxi.unvmap_max(t), self.t1, eqxi.unvmap_max(frac), eqxi.unvmap_max(steps),
                               self.quiet_seconds)
            return frac

        last = jax.lax.cond(eqxi.nonbatchable(pred), report, lambda _: state.last, None)
        return _State(last=last, steps=steps)

    def close(self, state):
        pass


class StepProgress:
    """Progress lines for a discrete run (GD, SGD, Adam), printed from the host between compiled chunks of
    steps: nothing during the first ``quiet_seconds``, then at most one line every ``every_seconds``."""

    def __init__(self, label: str, total_steps: int, quiet_seconds: float, every_seconds: float = 2.0):
        self.label, self.total = label, total_steps
        self.quiet, self.every = quiet_seconds, every_seconds
        self.start = time.perf_counter()
        self.last = -float("inf")
        self.printed = False

    def update(self, step: int, t: float, final: bool = False) -> None:
        """Report ``step`` if due; ``final=True`` reports the end of a run that has reported before."""
        now = time.perf_counter()
        elapsed = now - self.start
        due = now - self.last >= self.every and elapsed >= self.quiet
        if (final and self.printed) or (due and not final):
            self.last, self.printed = now, True
            print(f"  [{self.label} +{elapsed:6.1f}s] step {step} / {self.total} ({100 * step / self.total:5.1f}%), "
                  f"t = {t:.4g}", flush=True)
