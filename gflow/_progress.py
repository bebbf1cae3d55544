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


def _print(t, t1, frac, steps):
    print(f"  [flow {time.strftime('%H:%M:%S')}] t = {float(t):.3e} / {float(t1):.3e}"
          f"  (log-time {100 * float(frac):5.1f}%, {int(steps)} steps)", flush=True)


class LogTimeProgressMeter(diffrax.AbstractProgressMeter):
    """Prints a line whenever log(1 + t)/log(1 + t1) has grown by ``minimum_increase``."""

    t0: jax.Array
    t1: jax.Array
    minimum_increase: float = 0.1

    def init(self):
        return _State(last=jnp.array(0.0), steps=jnp.array(0))

    def step(self, state, progress):
        t = self.t0 + progress * (self.t1 - self.t0)
        frac = jnp.log1p(t - self.t0) / jnp.log1p(self.t1 - self.t0)
        steps = state.steps + 1
        pred = eqxi.unvmap_all(frac - state.last >= self.minimum_increase)

        def report(_):
            jax.debug.callback(_print, eqxi.unvmap_max(t), self.t1, eqxi.unvmap_max(frac), eqxi.unvmap_max(steps))
            return frac

        last = jax.lax.cond(eqxi.nonbatchable(pred), report, lambda _: state.last, None)
        return _State(last=last, steps=steps)

    def close(self, state):
        pass
