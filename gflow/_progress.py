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
