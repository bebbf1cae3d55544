"""A solve's results assembled: each flow's statistics (step counts, and the work its solver declares per step) and
configuration, and the plain data of a :class:`gflow.FlowBatch` built from the integrator's outputs."""

from __future__ import annotations

import numpy as np

from ..models._abstract_rnn import AbstractRNN
from ..objectives._abstract_objective import AbstractSumOfSquares
from ..results._flow_batch import FlowBatch
from ..run import on_host
from ..stacking import take
from ._gradient_flow_solver import evaluations_per_step, linear_solves_per_step
from ._options import FlowSetup
from ._problem import IntegratorOutput
from ._stopping import last_finite_rows, saved_rows, status_codes, status_message


def _hessian_products(accepted_count: int, steps: int, accepted: int) -> dict:
    """Stats of a solver that counts its Hessian-vector products over the accepted steps (the solver state of a
    rejected step is dropped): the count, and the total with rejected steps estimated at the accepted mean. Empty
    for other solvers (count −1)."""
    if accepted_count < 0:
        return {}
    total = round(accepted_count * steps / max(accepted, 1))
    return {"hessian_vector_products": total, "hessian_vector_products_accepted": accepted_count}


def flow_stats(solver, steps: int, accepted: int, rejected: int, ascents: int, restarts: int, products: int,
               wall: float) -> dict:
    """A flow's ``stats``: its step counts, and its gradient evaluations and linear solves as the solver declares
    them per step (:class:`AbstractGradientFlowSolver`'s ``evaluations_per_step``, ``linear_solves_per_step``; None
    where unknown)."""
    evals, solves = evaluations_per_step(solver), linear_solves_per_step(solver)
    products = _hessian_products(products, steps, accepted)
    return {
        "steps": steps, "accepted_steps": accepted, "rejected_steps": rejected, "rejected_ascent": ascents,
        "time_restarts": restarts,
        "gradient_evaluations": None if evals is None else int(evals * steps + 1),
        "linear_solves": None if solves is None else int(solves * steps) + products.get("hessian_vector_products", 0),
        **products,
        "wall_time_s": wall,
    }


def _loss_description(loss) -> dict:
    """convention, k and weighting of a sum-of-squares loss (AbstractSumOfSquares.description); unknown otherwise."""
    if isinstance(loss, AbstractSumOfSquares):
        return loss.description()
    return {"convention": "unknown", "k": None, "weighting": None}


def _model_description(model) -> dict:
    """structure and parameterization of a gflow RNN (AbstractRNN.description); None for other modules."""
    if isinstance(model, AbstractRNN):
        return model.description()
    return {"structure": None, "parameterization": None}


def flow_config(setup: FlowSetup, atol: float, loss, model, n_params: int, config: dict) -> dict:
    """A flow's ``config``: the solve's options, its atol, what its loss and model are, and the caller's
    ``config`` (which wins)."""
    out = {
        "t0": setup.t0, "t1": setup.t1, "rtol": setup.rtol, "atol": atol,
        "solver": setup.solver_name, "stop_loss": setup.stop_loss, "max_steps": setup.max_steps,
        "loss": type(loss).__name__, **_loss_description(loss), "model": type(model).__name__,
        **_model_description(model), "n_params": n_params,
    }
    if setup.controller is not None:  # the user's controller replaced rtol and atol
        out.update(rtol=None, atol=None, stepsize_controller=repr(setup.controller))
    out.update(config)
    return out


def build_flow_batch(setup: FlowSetup, losses, models0, theta0, diverge, atol, out: IntegratorOutput, wall, diagnostics,
                     config) -> FlowBatch:
    """A FlowBatch from the integrator's outputs (numpy arrays with a leading flow axis, ``time_restarts`` set):
    statuses, messages, statistics and configurations built here, so the batch holds plain data."""
    saved = saved_rows(out.ts)
    ts = np.where(saved, out.ts, np.nan)
    codes = status_codes(setup, out, diverge)
    counts = {name: np.asarray(x).astype(np.int64) for name, x in (
        ("steps", out.steps), ("accepted_steps", out.accepted), ("rejected_steps", out.rejected),
        ("rejected_ascent", out.rejected_ascent), ("time_restarts", out.time_restarts),
        ("hessian_vector_products", out.hessian_vector_products))}
    succeeded, atol, config = out.succeeded.astype(bool), np.asarray(atol, dtype=np.float64), dict(config or {})
    losses_host, models_host = on_host((losses, models0))
    n_params = int(out.ys.shape[2])
    messages, stats, configs = [], [], []
    for i in range(len(codes)):
        t_end = float(ts[i][saved[i]][-1])
        messages.append(status_message(setup, int(codes[i]), t_end, bool(succeeded[i])))
        stats.append(flow_stats(setup.solver, *(int(counts[k][i]) for k in (
            "steps", "accepted_steps", "rejected_steps", "rejected_ascent", "time_restarts",
            "hessian_vector_products")), wall))
        configs.append(flow_config(setup, float(atol[i]), take(losses_host, i), take(models_host, i), n_params,
                                   config))
    return FlowBatch(ts=ts, saved=saved, loss=out.losses, params=out.ys, diagnostics=diagnostics,
                     final_params=last_finite_rows(out.ys, saved, theta0), status_codes=codes, stats=counts,
                     wall_time_s=wall, config=config, _models0=models0, _messages=tuple(messages),
                     _stats=tuple(stats), _configs=tuple(configs))
