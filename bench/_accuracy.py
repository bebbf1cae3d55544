"""Accuracy of a benchmark run against a reference trajectory: relative errors of the final parameters, of the
observable h (impulse response h_0..h_99, or R5's outputs on held-out sequences) and of h over the saved times."""

from __future__ import annotations

import jax
import numpy as np

import _problems as P
from gflow import flatten

N_IMPULSE = 100


def rel_err(a, ref):
    a, ref = np.asarray(a, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    scale = np.max(np.abs(ref))
    return float(np.max(np.abs(a - ref)) / (scale if scale > 0 else 1.0))


def impulses(model0, states) -> np.ndarray:
    """h_0..h_{N_IMPULSE-1} at every row of ``states`` (flat parameter vectors)."""
    f = jax.jit(jax.vmap(lambda th: P.response(P.rebuild(model0, th), N_IMPULSE)))
    return np.asarray(f(np.asarray(states)))


class Reference:
    def __init__(self, model0, traj):
        self.model0 = model0
        self.theta = np.asarray(flatten(traj.final)[0])
        self.h = P.impulse(traj.final, N_IMPULSE)
        self.ts = np.asarray(traj.ts)
        self.h_traj = impulses(model0, traj.params)


def add_accuracy(row, ref: Reference):
    """θ and h_0..h_99 errors at t1, and the h error over the 200 saved times (relative to max |h_ref| over
    all saved times and lags) where the method saved at the reference's times."""
    theta = row.pop("theta", None)
    saved = row.pop("saved", None)
    row["theta_rel_err"] = row["h_rel_err"] = row["h_traj_rel_err"] = None
    if theta is None:
        return row
    theta = np.asarray(theta)
    if not np.all(np.isfinite(theta)):
        return row
    row["theta_rel_err"] = rel_err(theta, ref.theta)
    row["h_rel_err"] = rel_err(P.impulse(P.rebuild(ref.model0, theta), N_IMPULSE), ref.h)
    if saved is not None:
        ts, states = saved
        if len(ts) == len(ref.ts) and np.allclose(ts, ref.ts, rtol=1e-12, atol=0) and np.all(np.isfinite(states)):
            row["h_traj_rel_err"] = rel_err(impulses(ref.model0, states), ref.h_traj)
    return row
