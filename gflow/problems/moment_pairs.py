"""Seed 000's moment-matched teachers (Lemma A.1 / Cor. A.2): random students of three kinds on which the two
teachers' losses must agree, the loss identity itself, and the batched gradient flows from one balanced start that
studies/moment_pairs.py trains on the pair."""

from __future__ import annotations

import jax
import numpy as np

import gflow
from gflow import initializers

KINDS = ("balanced", "symmetric", "gaussian")


def random_students(key, n, d):
    """n students the loss identity must hold for, stacked by kind (balanced symmetric, unbalanced symmetric,
    general; n split as evenly as possible, at least one each), scales uniform in [0.1, 0.5]: {kind: batched
    LinearRNN}."""
    out = {}
    for i, kind in enumerate(KINDS):
        keys = jax.random.split(jax.random.fold_in(key, i), max(1, n // len(KINDS) + (i < n % len(KINDS))))
        scales = np.asarray(jax.random.uniform(jax.random.fold_in(key, 10 + i), (len(keys),), minval=0.1, maxval=0.5))
        models = [getattr(initializers, kind)(k, d, scale=float(s)) for k, s in zip(keys, scales)]
        out[kind] = jax.tree_util.tree_map(lambda *xs: jax.numpy.stack(xs), *models)
    return out


def pair_identity(pair, students, d_hat, weighting="uniform"):
    """max relative |L(T1) − L(T2)| over students for k ≤ 2d̂ − 1, and the minimum relative gap at k = 2d̂."""
    T1, T2 = pair

    @jax.jit
    def losses(batch):
        return [[jax.vmap(gflow.PopulationLoss(T, k, weighting))(batch) for T in (T1, T2)]
                for k in range(1, 2 * d_hat + 1)]

    worst, gap_next = 0.0, np.inf
    for batch in students.values():
        for k, (a, b) in enumerate(losses(batch), start=1):
            a, b = np.asarray(a), np.asarray(b)
            rel = np.abs(a - b) / np.maximum(np.maximum(np.abs(a), np.abs(b)), 1e-300)
            if k <= 2 * d_hat - 1:
                worst = max(worst, float(np.max(rel)))
            else:
                gap_next = min(gap_next, float(np.min(rel)))
    return worst, gap_next


def run_flows(jobs, args, rtol):
    """Gradient flows for [(teacher, k, weighting), ...] from one balanced start: one batched ``solve_flows`` call
    per weighting (the losses are padded to the largest k, so a single compiled solve serves each group)."""
    model0 = initializers.balanced(jax.random.key(args.seed), args.d, scale=args.eps)
    k_max = max(k for _, k, _ in jobs)
    trajs = [None] * len(jobs)
    for weighting in dict.fromkeys(w for _, _, w in jobs):
        index = [i for i, (_, _, w) in enumerate(jobs) if w == weighting]
        losses = [gflow.PopulationLoss(jobs[i][0], jobs[i][1], weighting).padded_to(k_max) for i in index]
        group = gflow.solve_flows(losses, [model0] * len(losses), args.t1, rtol=rtol, save_at=120,
                                  config={"study": "moment_pairs", "weighting": weighting})
        for i, traj in zip(index, group):
            if traj.status != "completed":
                raise RuntimeError(f"flow did not complete: {traj.status} ({traj.message})")
            trajs[i] = traj
    return trajs
