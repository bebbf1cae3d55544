"""A teacher made by training: seed 000's GRU teacher, fitted by Adam to a chosen impulse response.

It lives with the runners because it runs one; the data layers (models, teachers, objectives) never do.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from .._checks import as_float_array, positive_float, positive_int
from ..models._gru import GRU, gru
from ..objectives._input_sequence import impulse
from ..objectives._sample_loss import SampleLoss
from ..objectives.nonlinear_teachers import damped_oscillation
from ._runners import run_adam


def fit_gru_teacher(key, d: int = 10, *, target=None, steps: int = 1000, lr: float = 1e-3, scale: float = 1e-6,
                    init: str = "torch") -> GRU:
    """Seed 000 App. C.2.3: a GRU of hidden size d̂_g = 10 initialized at scale 10⁻⁶ and trained
    for 1000 steps to mimic a chosen impulse response.

    Unstated in the paper, our defaults: the target ``target`` (w_0 … w_{n−1}) is :func:`damped_oscillation`;
    "mimic" means the GRU's response to the unit impulse (1, 0, …, 0) of length n matches w in mean square
    (every step supervised); the optimizer is Adam with lr 10⁻³ (the paper's optimizer elsewhere, App. C.1);
    ``init``/``scale`` as :func:`gflow.gru`.

    Args:
        key: A ``jax.random.key`` for the initialization.
        d: The hidden size d̂_g.
        target: The impulse response to mimic (default :func:`damped_oscillation`).
        steps: Adam's steps.
        lr: Adam's step size.
        scale: The initialization scale.
        init: The initialization scheme (as :func:`gflow.gru`).

    Returns:
        The trained GRU (its fit: ``SampleLoss`` on the impulse).
    """
    w = damped_oscillation() if target is None else as_float_array("target", target, ndim=1)
    fit = SampleLoss(impulse(len(w))[None], jnp.asarray(w)[None], steps="all")
    start = gru(key, d, init=init, scale=scale)
    steps = positive_int("steps", steps)
    return run_adam(fit, start, steps=steps, lr=positive_float("lr", lr), save_at=np.array([0, steps]),
                    progress=False).final
