"""How far a discrete run (GD, SGD, Adam) is from the gradient flow started at the same point.

GD with step η is the explicit Euler method for dθ/dt = −∇L (seed 000 eq. 3.6, seed 001 eqs. 8–10), so at a fixed time t
its distance to the flow is O(η) (first order: halving η about halves it). Conserved quantities of the flow drift
under GD: Q = AAᵀ − AᵀA + BBᵀ − CᵀC changes by exactly η²(G_A G_Aᵀ − G_AᵀG_A + G_B G_Bᵀ − G_CᵀG_C) per step
(the first-order terms cancel as they do for the flow), so its drift after t/η steps is ≈ η ∫_0^t (…) ds: linear
in η, and linear in t while the gradients stay about constant (derived here from seed 000 Lemma E.6).

The functions compare saved rows at matched times: integrate the flow with ``save_at=discrete.ts`` (the flow's
solver then lands on those times exactly; interpolating a coarsely saved flow would add an error of its own).
"""

from __future__ import annotations

import equinox as eqx
import numpy as np

from .._checks import GflowInputError, positive_int
from .along import along
from .conserved import balance_matrix, balance_matrix_scale, drift_series
from .fits import fit_power_law


class _ImpulseResponse(eqx.Module):
    """model → h_0 .. h_{n−1}; a module (equal for equal n), so that ``along`` reuses its compiled map."""

    n: int = eqx.field(static=True)

    def __call__(self, model):
        return model.impulse_response(self.n)


def _matched(discrete, flow, rtol: float = 1e-9):
    td, tf = np.asarray(discrete.ts), np.asarray(flow.ts)
    if td.shape != tf.shape or not np.allclose(td, tf, rtol=rtol, atol=rtol * max(1.0, float(np.max(np.abs(tf))))):
        raise GflowInputError(f"the two trajectories are not saved at the same times ({len(td)} and {len(tf)} "
                              f"points): solve the flow with save_at=discrete.ts")
    if discrete.params.shape != flow.params.shape:
        raise GflowInputError(f"the parameter rows differ in shape: {discrete.params.shape} and {flow.params.shape}")


def parameter_distance(discrete, flow, *, relative: bool = False) -> np.ndarray:
    """‖θ_discrete(t) − θ_flow(t)‖₂ at every matched time; ``relative`` divides by max_t ‖θ_flow(t)‖₂.

    Args:
        discrete: A discrete run's :class:`~gflow.results.Trajectory` (GD, SGD, Adam).
        flow: The gradient flow's Trajectory from the same start, saved at the discrete run's times.
        relative: Divide by the flow's largest parameter norm.

    Returns:
        One distance per matched time.
    """
    _matched(discrete, flow)
    d = np.linalg.norm(discrete.params - flow.params, axis=1)
    return d / np.max(np.linalg.norm(flow.params, axis=1)) if relative else d


def impulse_response_distance(discrete, flow, n: int) -> np.ndarray:
    """max_{j<n} |h_j(discrete) − h_j(flow)| (the ℓ∞ distance of the impulse responses) at every matched time.

    Args:
        discrete: A discrete run's :class:`~gflow.results.Trajectory` (GD, SGD, Adam).
        flow: The gradient flow's Trajectory from the same start, saved at the discrete run's times.
        n: The number of lags compared.

    Returns:
        One distance per matched time.
    """
    _matched(discrete, flow)
    n = positive_int("n", n)
    hd = along(discrete, _ImpulseResponse(n))
    hf = along(flow, _ImpulseResponse(n))
    return np.max(np.abs(hd - hf).reshape(len(hd), -1), axis=1)


def loss_gap(discrete, flow) -> np.ndarray:
    """|L(θ_discrete(t)) − L(θ_flow(t))| at every matched time.

    Args:
        discrete: A discrete run's :class:`~gflow.results.Trajectory` (GD, SGD, Adam).
        flow: The gradient flow's Trajectory from the same start, saved at the discrete run's times.

    Returns:
        One gap per matched time.
    """
    _matched(discrete, flow)
    return np.abs(np.asarray(discrete.loss) - np.asarray(flow.loss))


def distance_to_flow(discrete, flow, *, n: int | None = None) -> dict[str, np.ndarray]:
    """All three measures at once: ``"parameters"`` (relative, see :func:`parameter_distance`),
    ``"impulse_response"`` (over the first ``n`` lags, default the training length in ``flow.config["k"]``) and
    ``"loss"``.

    Args:
        discrete: A discrete run's :class:`~gflow.results.Trajectory` (GD, SGD, Adam).
        flow: The gradient flow's Trajectory from the same start, saved at the discrete run's times.
        n: The number of lags compared (default: the flow's training length).

    Returns:
        ``{"parameters", "impulse_response", "loss"}``, each one value per matched time.
    """
    n = n if n is not None else flow.config.get("k")
    if n is None:
        raise GflowInputError("give `n`, the number of impulse-response lags to compare")
    return {"parameters": parameter_distance(discrete, flow, relative=True),
            "impulse_response": impulse_response_distance(discrete, flow, int(n)),
            "loss": loss_gap(discrete, flow)}


def step_size_scaling(etas, values) -> dict:
    """How a distance scales with the step size: the fitted exponent p in value ∝ η^p and the ratios
    value(η)/value(η/2) of neighbouring step sizes (both ≈ 1 and 2 for a first-order method).

    Args:
        etas: The step sizes (any order; sorted here).
        values: The distance measured at each.

    Returns:
        ``{"exponent": p, "ratios": [...], "ratio_etas": [...]}``: the ratios of neighbouring values and of their
        step sizes, in increasing η.
    """
    etas, values = np.asarray(etas, dtype=np.float64), np.asarray(values, dtype=np.float64)
    if etas.shape != values.shape or etas.ndim != 1:
        raise GflowInputError(f"`etas` and `values` must be 1-D of equal length, got {etas.shape} and {values.shape}")
    order = np.argsort(etas)
    e, v = etas[order], values[order]
    return {"exponent": fit_power_law(e, v), "ratios": (v[1:] / v[:-1]).tolist(),
            "ratio_etas": (e[1:] / e[:-1]).tolist()}


def balance_matrix_drift(traj, *, relative: bool = True) -> np.ndarray:
    """‖Q(t) − Q(0)‖_F at every saved time (``relative``: divided by the largest ‖AAᵀ‖ + ‖AᵀA‖ + ‖BBᵀ‖ + ‖CᵀC‖
    along the run), Q = AAᵀ − AᵀA + BBᵀ − CᵀC, conserved by the flow.

    Args:
        traj: A :class:`~gflow.results.Trajectory` of linear RNNs.
        relative: Divide by the largest scale along the run.

    Returns:
        One drift per saved time.

    See also: [`balance_matrix`][gflow.analysis.balance_matrix], [`relative_drift`][gflow.analysis.relative_drift].
    """
    d = drift_series(along(traj, balance_matrix))
    return d / np.max(along(traj, balance_matrix_scale)) if relative else d
