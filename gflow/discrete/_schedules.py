"""Learning-rate schedules η_n for the discrete runners; time along a discrete run is t_n = Σ_{i<n} η_i.

A schedule is any function step → η (every optax schedule is one). gflow's own schedules are modules whose
numbers are arrays, so that runs at different step sizes share one compiled loop.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._checks import GflowInputError, positive_float


class ConstantSchedule(eqx.Module):
    """η_n = η: plain GD, the explicit Euler method for the gradient flow with t = η·n (seed 000 eq. 3.6)."""

    value: jax.Array

    def __call__(self, step):
        return self.value


class MultiStepSchedule(eqx.Module):
    """η_n = η_0 · γ^{#milestones ≤ n}: torch.optim.lr_scheduler.MultiStepLR stepped once per iteration.

    Seed 000 App. C.1 (Fig. 4) uses milestones [5000, 10000, 15000, 30000] and γ = 0.1 (its η_0 is not given).
    """

    initial: jax.Array
    milestones: jax.Array
    gamma: jax.Array

    def __call__(self, step):
        passed = jnp.sum(jnp.asarray(step) >= self.milestones).astype(self.initial.dtype)
        return self.initial * self.gamma**passed


def multistep_schedule(lr: float, milestones, gamma: float = 0.1) -> MultiStepSchedule:
    """η_0 = ``lr`` multiplied by ``gamma`` at each of the strictly increasing, positive integer ``milestones``.

    Args:
        lr: η_0.
        milestones: The steps at which η is multiplied by ``gamma``.
        gamma: The factor.

    Returns:
        The schedule, step → η.
    """
    lr, gamma = positive_float("lr", lr), positive_float("gamma", gamma)
    m = np.asarray(milestones)
    if m.size == 0:
        raise GflowInputError("`milestones` is empty: give at least one step at which η changes "
                              "(or pass a constant `lr` instead of a schedule)")
    if m.ndim != 1 or not np.issubdtype(m.dtype, np.integer) or np.any(m < 1) or np.any(np.diff(m) <= 0):
        raise GflowInputError(f"`milestones` must be strictly increasing positive integers, got {milestones!r}")
    return MultiStepSchedule(jnp.asarray(lr, dtype=jnp.float64), jnp.asarray(m, dtype=jnp.int64),
                             jnp.asarray(gamma, dtype=jnp.float64))


def as_schedule(lr, steps: int):
    """``lr`` as a schedule: a positive number → :class:`ConstantSchedule`; a callable is checked to give a
    positive finite η at the first and last step. Returns (schedule, JSON-able description)."""
    if isinstance(lr, (ConstantSchedule, MultiStepSchedule)) or callable(lr):
        schedule = lr
    elif np.ndim(lr) == 0 and not isinstance(lr, (bool, str)):
        schedule = ConstantSchedule(jnp.asarray(positive_float("lr", lr), dtype=jnp.float64))
    else:
        raise GflowInputError(f"`lr` must be a positive number or a schedule step → η (e.g. "
                              f"gflow.discrete.multistep_schedule or an optax schedule), got {type(lr).__name__}")
    for step in sorted({0, max(steps - 1, 0)}):
        try:
            value = float(schedule(jnp.asarray(step)))
        except Exception as e:  # a schedule that cannot be evaluated on a step index
            raise GflowInputError(f"the schedule `lr` could not be evaluated at step {step}: {e}") from None
        if not np.isfinite(value) or value <= 0:
            raise GflowInputError(f"the schedule `lr` must give a positive finite step size, got η = {value} "
                                  f"at step {step}")
    if isinstance(schedule, ConstantSchedule):
        description = {"lr": float(schedule.value), "schedule": "constant"}
    elif isinstance(schedule, MultiStepSchedule):
        description = {"lr": float(schedule.initial), "schedule": "multistep",
                       "milestones": np.asarray(schedule.milestones).tolist(), "gamma": float(schedule.gamma)}
    else:
        description = {"lr": float(schedule(jnp.asarray(0))), "schedule": getattr(schedule, "__name__", "callable")}
    return schedule, description
