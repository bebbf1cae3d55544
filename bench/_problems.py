"""The reference problems R1–R4 of docs/design.md ("Reference problems"), built through gflow's public API only."""

from __future__ import annotations

import dataclasses
from typing import Any

import equinox as eqx
import jax
import numpy as np

import gflow
from gflow import flatten, initializers, PopulationLoss, teachers


@dataclasses.dataclass
class Problem:
    name: str
    description: str
    loss: Any
    model0: Any
    t1: float
    rtol: float
    ref_rtol: float
    atol_factor: float  # atol = atol_factor × rtol for every method of this problem (and the reference)
    notes: list = dataclasses.field(default_factory=list)
    dense_note: str | None = None  # why the dense-Jacobian baselines are skipped even when n² would fit

    @property
    def theta0(self):
        return flatten(self.model0)[0]

    @property
    def n_params(self) -> int:
        return int(np.size(self.theta0))

    @property
    def atol(self) -> float:
        return self.atol_factor * self.rtol

    @property
    def ref_atol(self) -> float:
        return self.atol_factor * self.ref_rtol


def atol_factor_for(model0) -> float:
    """min(1, RMS θ0): gflow's own default atol/rtol ratio, fixed once per problem and used by every method."""
    theta = np.asarray(flatten(model0)[0])
    return float(min(1.0, np.sqrt(np.mean(theta ** 2))))


def r1(quick: bool, ref_rtol: float | None) -> Problem:
    teacher = teachers.balanced(jax.random.key(0), 5)
    loss = PopulationLoss(teacher, 20)
    model0 = initializers.balanced(jax.random.key(1), 40, scale=1e-2, structure="symmetric")
    notes = []
    rr = ref_rtol if ref_rtol is not None else (1e-10 if quick else 1e-12)
    if rr != 1e-12:
        notes.append(f"reference at rtol {rr:g} instead of 1e-12")
    return Problem("R1", "balanced teacher d̂=5, symmetric balanced student d=40, k=20, init 1e-2, t1=1e7",
                   loss, model0, 1e7, 1e-8, rr, atol_factor_for(model0), notes)


def r2(quick: bool, ref_rtol: float | None, scale: float = 1e-3) -> Problem:
    d = 20 if quick else 50
    teacher = teachers.delay(10)
    loss = PopulationLoss(teacher, 24)
    model0 = initializers.gaussian(jax.random.key(2), d, scale=scale)
    notes = []
    if quick:
        notes.append("quick: student d=20 instead of 50")
    rr = ref_rtol if ref_rtol is not None else (1e-10 if quick else 1e-12)
    if rr != 1e-12:
        notes.append(f"reference at rtol {rr:g} instead of 1e-12")
    if scale != 1e-3:
        notes.append(f"init scale {scale:g} instead of 1e-3 (--r2-scale)")
    return Problem("R2", f"general A, delay teacher d̂=10, student d={d}, k=24, gaussian init {scale:g}, t1=1e6",
                   loss, model0, 1e6, 1e-8, rr, atol_factor_for(model0), notes)


def r3(quick: bool, ref_rtol: float | None) -> Problem:
    teacher = teachers.balanced(jax.random.key(0), 5)
    loss = PopulationLoss(teacher, 20)
    model0 = initializers.gaussian(jax.random.key(3), 200, scale=1e-3)
    t1 = 1e4 if quick else 1e6
    notes = []
    if quick:
        notes.append("quick: t1=1e4 instead of 1e6")
    # Steps grow ~2× per decade of rtol (order-3 method), so a 1e-12 reference costs ~15× the rtol-1e-8 run
    # (tens of minutes at ~20 ms per step for 40k parameters); 1e-9 keeps the full run within ~40 min.
    rr = ref_rtol if ref_rtol is not None else 1e-9
    if rr != 1e-12:
        notes.append(f"reference at rtol {rr:g} instead of 1e-12 (a 1e-12 reference costs ~15× the rtol-1e-8 "
                     f"run; pass --ref-rtol to change); errors below are then dominated by, not exact for, the "
                     f"rtol-1e-8 run")
    return Problem("R3", f"general A, d=200, balanced teacher d̂=5, k=20, gaussian init 1e-3, t1={t1:g}",
                   loss, model0, t1, 1e-8, rr, atol_factor_for(model0), notes)


def r5(quick: bool, ref_rtol: float | None) -> Problem:
    """Elman RNN (seed 002's initialization, tanh, W and A trained, readout 1/√m) on 1024 fixed Gaussian sequences
    of length 20, last step supervised, labelled by a width-16 Elman teacher: 65 792 parameters, a
    Gauss–Newton spectrum from ≈ 0.1 to ≈ 1e3 (stiffness ratio ≈ 1e4 at the start)."""
    import math

    m, n, length = (64, 256, 20) if quick else (256, 1024, 20)
    teacher = gflow.models.elman_panigrahi_goyal(jax.random.key(10), 16, activation="tanh", output_scale=0.25)
    loss = gflow.objectives.SampleLoss.from_teacher(jax.random.key(11), teacher, n, length, steps="last")
    model0 = gflow.models.elman_panigrahi_goyal(jax.random.key(12), m, activation="tanh", output_scale=1.0 / math.sqrt(m))
    notes = ["J (1024 × 65 792) is built one sequence at a time (SampleLoss.residual_jacobian); the default solver "
             "refreshes it every 4 steps (jacobian_every='auto': a materialized J above 2²² entries), because its "
             "Gram matrix costs ~3× the step's 4 gradients"]
    if quick:
        notes.append("quick: m=64, 256 sequences instead of m=256, 1024")
    rr = ref_rtol if ref_rtol is not None else (1e-7 if quick else 1e-8)
    notes.append(f"reference at rtol {rr:g} (problem rtol 1e-6)")
    return Problem("R5", f"Elman RNN m={m} (tanh), {n} sample sequences, T={length}, last step supervised, t1=100",
                   loss, model0, 100.0, 1e-6, rr, atol_factor_for(model0), notes,
                   dense_note="skipped: the JAX Hessian of the sample loss (jacfwd of the gradient through 20 "
                              "recurrent steps × all sequences) needs ~77 GB of intermediates already at the quick "
                              "size (m=64)")


def stacked_flows(n_flows: int, k_values, seed0: int = 100):
    """n_flows problems of R1's size differing in student seed and k (cycling through k_values, padded to
    max(k_values)), built the batched way: one compiled call makes the stacked losses (a traced training length)
    and the stacked models (``eqx.filter_vmap`` over the keys)."""
    import jax.numpy as jnp

    ks = np.asarray([k_values[i % len(k_values)] for i in range(n_flows)])
    keys = jax.vmap(lambda i: jax.random.key(i))(jnp.arange(seed0, seed0 + n_flows))
    losses, models = _build_stacked(keys, jnp.asarray(ks), max(k_values))
    return losses, models, ks.tolist()


@eqx.filter_jit
def _build_stacked(keys, ks, k_max: int):
    teacher = teachers.balanced(jax.random.key(0), 5)
    losses = eqx.filter_vmap(lambda k: PopulationLoss(teacher, k, k_max=k_max))(ks)
    models = eqx.filter_vmap(lambda key: initializers.balanced(key, 40, scale=1e-2, structure="symmetric"))(keys)
    return losses, models


def response(model, n: int = 100):
    """The observable whose error the benchmark reports: h_0 .. h_{n−1} of a linear RNN; for a nonlinear model
    (R5) its last-step outputs on 64 held-out Gaussian sequences of length 20 (an impulse response over 100
    recurrent steps would amplify parameter errors far outside the training distribution)."""
    if hasattr(model, "impulse_response"):
        return model.impulse_response(n)
    probe = gflow.objectives.gaussian_sequences(jax.random.key(99), 64, 20)
    return jax.vmap(model)(probe)[:, -1]


def impulse(model, n: int = 100) -> np.ndarray:
    return np.asarray(response(model, n))


def rebuild(model0, theta):
    import jax.numpy as jnp

    _, static, unravel = flatten(model0)
    return eqx.combine(unravel(jnp.asarray(theta)), static)


__all__ = ["Problem", "r1", "r2", "r3", "r5", "stacked_flows", "response", "impulse", "rebuild", "gflow"]
