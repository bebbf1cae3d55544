"""Refilling slots (``gflow.solve_flows(..., slots=S)``) against lock-step batches of the
same size and against one-by-one ``gflow.solve_flow``, on a sweep whose step counts differ more than 10×, warm, in
one process (``python bench/run.py --refill``).

The sweep: R1-size flows (balanced teacher d̂ = 5, symmetric balanced student d = 40, k padded to max(k), rtol 1e-8,
each flow its default atol) over the grid k × seed × init scale, the scale varying fastest (the order of
studies/init_scale.py's grid, so every lock-step chunk holds every scale), init scales 1e-1 … 1e-8 (one per decade),
each flow stopping at L ≤ ``stop_loss`` (1e-2; L0 ≈ 5.2): a "time to learn" sweep. A small start spends more steps
escaping the saddle at 0, so the step counts grow with log(1/scale).

Three ways, each warmed up (compiled) first by a call with t1 × 1e-13, compile times reported apart:

- lock-step: ``solve_flows`` on consecutive chunks of ``slots`` flows in grid order (today's path; each chunk runs
  until its slowest flow is done);
- refill: one ``solve_flows(..., slots=slots)`` over all flows (the engine loads them smallest start first,
  as ``gflow.flow.solve_flows`` documents, whatever order they are given in: the slow, small-init flows do not come
  last and run on while the other slots idle);
- one by one: ``solve_flow`` on the first ``n_single`` flows, extrapolated to all flows by their step counts (the
  steps of every flow are known from the batched runs; one flow's cost per step barely depends on the flow).
"""

from __future__ import annotations

import time
from types import SimpleNamespace

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import gflow
from gflow import initializers, PopulationLoss, teachers
from gflow.stacking import take

T1, RTOL, SAVES, STOP_LOSS = 1e7, 1e-8, 8, 1e-2
SCALES = tuple(10.0 ** -e for e in range(1, 9))  # 1e-1 … 1e-8
KS = (16, 24)


def sweep_grid(n_seeds: int, ks=KS, scales=SCALES) -> list[dict]:
    """The configurations of the sweep in grid order: k × seed × scale, the scale fastest."""
    return [{"k": k, "seed": s, "scale": float(c)} for k in ks for s in range(n_seeds) for c in scales]


def build(grid: list[dict]):
    """The stacked losses and models of ``grid``, built in one compiled call (k and the scale traced)."""
    ks = jnp.asarray([g["k"] for g in grid])
    keys = jax.vmap(jax.random.key)(jnp.asarray([100 + g["seed"] for g in grid]))
    return _build(ks, keys, jnp.asarray([g["scale"] for g in grid]), max(g["k"] for g in grid))


@eqx.filter_jit
def _build(ks, keys, scales, k_max: int):
    teacher = teachers.balanced(jax.random.key(0), 5)
    losses = eqx.filter_vmap(lambda k: PopulationLoss(teacher, k, k_max=k_max))(ks)
    models = eqx.filter_vmap(lambda key, s: initializers.balanced(key, 40, scale=s, structure="symmetric"))(keys, scales)
    return losses, models


def _options(t1=T1):
    return dict(rtol=RTOL, save_at=SAVES, stop_loss=STOP_LOSS, progress=False, t1=t1)


def _timed(f):
    start = time.perf_counter()
    out = f()
    return out, time.perf_counter() - start


def _final_loss(batch) -> np.ndarray:
    return batch.loss[np.arange(len(batch.steps)), batch.saved.sum(axis=1) - 1]


def _agreement(a, b) -> dict:
    """How far batch ``b`` is from batch ``a``, flow by flow: the largest relative difference of the final losses and
    of the final parameters (relative to each flow's max |θ|), and how many flows have bit-identical final
    parameters, final losses and step counts."""
    la, lb = _final_loss(a), _final_loss(b)
    pa, pb = a.final_params, b.final_params
    scale = np.max(np.abs(pa), axis=1)
    same = (np.all(pa == pb, axis=1) & (la == lb) & (a.steps == b.steps))
    return {"max_rel_diff_final_loss": float(np.max(np.abs(lb - la) / np.abs(la))),
            "max_rel_diff_final_params": float(np.max(np.max(np.abs(pb - pa), axis=1) / scale)),
            "same_steps": int(np.sum(a.steps == b.steps)), "bit_identical_rows": int(np.sum(same)), "rows": len(a.steps)}


def _concatenate(batches) -> SimpleNamespace:
    """The fields compared here of consecutive chunks, as one batch-like record."""
    return SimpleNamespace(loss=np.concatenate([b.loss for b in batches]), saved=np.concatenate([b.saved for b in batches]),
                           final_params=np.concatenate([b.final_params for b in batches]),
                           steps=np.concatenate([b.steps for b in batches]),
                           statuses=sum((b.statuses for b in batches), []))


def compare(n_seeds: int, slots: int, n_single: int, log, ks=KS, scales=SCALES) -> dict:
    """Lock-step chunks of ``slots`` flows, refill with ``slots`` slots and one by one on the sweep of ``n_seeds``
    seeds (len(ks) × n_seeds × len(scales) flows): walls, flows/s, ratios, step counts and agreement."""
    grid = sweep_grid(n_seeds, ks, scales)
    n = len(grid)
    (losses, models), build_s = _timed(lambda: jax.block_until_ready(build(grid)))
    chunks = [np.arange(i, min(i + slots, n)) for i in range(0, n, slots)]
    log(f"  {n} flows (k ∈ {list(ks)} × {n_seeds} seeds × scales {scales[0]:g} … {scales[-1]:g}), built in "
        f"{build_s:.2f} s; t1 {T1:g}, rtol {RTOL:g}, stop at L ≤ {STOP_LOSS:g}; lock-step in {len(chunks)} chunks of "
        f"{slots}, refill with {slots} slots, one by one on the first {n_single} flows")

    def lock_step(t1=T1):
        return [gflow.solve_flows(take(losses, c), take(models, c), **_options(t1)) for c in chunks]

    def refill(t1=T1):
        return gflow.solve_flows(losses, models, slots=slots, **_options(t1))

    def one_by_one(t1=T1):
        return [gflow.solve_flow(take(losses, i), take(models, i), **_options(t1)) for i in range(n_single)]

    compile_s = {}
    for name, way in (("lock_step", lambda: lock_step(T1 * 1e-13)[:1]), ("refill", lambda: refill(T1 * 1e-13)),
                      ("one_by_one", lambda: one_by_one(T1 * 1e-13)[:1])):
        compile_s[name] = _timed(way)[1]
    log("  first calls (compile, or load from the cache), t1 × 1e-13: " +
        ", ".join(f"{k} {v:.2f} s" for k, v in compile_s.items()))

    chunked, wall_lock = _timed(lock_step)
    locked = _concatenate(chunked)
    log(f"  lock-step: {wall_lock:.2f} s ({n / wall_lock:.3g} flows/s)")
    refilled, wall_refill = _timed(refill)
    log(f"  refill:    {wall_refill:.2f} s ({n / wall_refill:.3g} flows/s)")
    singles, wall_single = _timed(one_by_one)
    single_steps = np.array([t.stats["steps"] for t in singles])
    steps = locked.steps
    wall_single_all = wall_single * steps.sum() / single_steps.sum()
    log(f"  one by one: {wall_single:.2f} s for {n_single} flows ({int(single_steps.sum())} steps) → "
        f"{wall_single_all:.1f} s estimated for all {n} ({int(steps.sum())} steps)")

    lock_work = sum(len(c) * int(steps[c].max()) for c in chunks)  # flow-steps a lock-step chunk pays for
    statuses = {s: locked.statuses.count(s) for s in sorted(set(locked.statuses))}
    by_scale = {f"{c:g}": int(np.median(steps[[g["scale"] == c for g in grid]])) for c in scales}
    row = {"case": "heterogeneous sweep, refilling slots", "n_flows": n, "slots": slots, "chunks": len(chunks),
           "grid": "k × seed × scale (scale fastest)", "ks": list(ks), "seeds": n_seeds, "scales": list(scales),
           "t1": T1, "rtol": RTOL, "stop_loss": STOP_LOSS, "save_at": SAVES, "build_s": build_s,
           "first_call_s": compile_s, "statuses": statuses, "steps": steps.tolist(),
           "steps_min": int(steps.min()), "steps_median": float(np.median(steps)), "steps_max": int(steps.max()),
           "steps_span": float(steps.max() / steps.min()), "steps_median_by_scale": by_scale,
           "steps_sum": int(steps.sum()), "lock_step_flow_steps": lock_work,
           "ideal_ratio_lock_step_over_refill": lock_work / float(steps.sum()),
           "wall_lock_step_s": wall_lock, "wall_refill_s": wall_refill,
           "flows_per_s_lock_step": n / wall_lock, "flows_per_s_refill": n / wall_refill,
           "ratio_lock_step_over_refill": wall_lock / wall_refill,
           "one_by_one_flows": n_single, "wall_one_by_one_subset_s": wall_single,
           "one_by_one_subset_steps": int(single_steps.sum()),
           "wall_one_by_one_estimated_all_s": wall_single_all, "flows_per_s_one_by_one": n_single / wall_single,
           "ratio_one_by_one_over_refill": wall_single_all / wall_refill,
           "ratio_one_by_one_over_lock_step": wall_single_all / wall_lock,
           "ms_per_round_refill": 1e3 * wall_refill * slots / steps.sum(),
           "ms_per_lock_step": 1e3 * wall_lock / sum(int(steps[c].max()) for c in chunks),
           "refill_vs_lock_step": _agreement(locked, refilled),
           "one_by_one_vs_lock_step": _single_agreement(singles, locked),
           "one_by_one_vs_refill": _single_agreement(singles, refilled)}
    log(_report(row))
    return row


def _single_agreement(singles, batch) -> dict:
    """Final losses and parameters of one-by-one runs against the first rows of a batch."""
    m = len(singles)
    la, lb = _final_loss(batch)[:m], np.array([t.loss[-1] for t in singles])
    pa = batch.final_params[:m]
    pb = np.stack([np.asarray(gflow.flatten(t.final)[0]) for t in singles])
    same = np.all(pa == pb, axis=1) & (la == lb) & (batch.steps[:m] == np.array([t.stats["steps"] for t in singles]))
    return {"max_rel_diff_final_loss": float(np.max(np.abs(lb - la) / np.abs(la))),
            "max_rel_diff_final_params": float(np.max(np.max(np.abs(pb - pa), axis=1) / np.max(np.abs(pa), axis=1))),
            "bit_identical_rows": int(np.sum(same)), "rows": m}


def _report(r: dict) -> str:
    a, s = r["refill_vs_lock_step"], r["one_by_one_vs_lock_step"]
    return "\n".join([
        f"  steps per flow: min {r['steps_min']}, median {r['steps_median']:.0f}, max {r['steps_max']} (span "
        f"{r['steps_span']:.1f}×); median by scale {r['steps_median_by_scale']}; statuses {r['statuses']}",
        f"  lock-step chunks pay for {r['lock_step_flow_steps']} flow-steps, the flows take {r['steps_sum']}: "
        f"ideal lock-step / refill {r['ideal_ratio_lock_step_over_refill']:.2f}×",
        f"  wall: lock-step {r['wall_lock_step_s']:.1f} s ({r['flows_per_s_lock_step']:.3g} flows/s), refill "
        f"{r['wall_refill_s']:.1f} s ({r['flows_per_s_refill']:.3g} flows/s), one by one "
        f"{r['wall_one_by_one_estimated_all_s']:.1f} s (estimated from {r['one_by_one_flows']} flows, "
        f"{r['flows_per_s_one_by_one']:.3g} flows/s on them)",
        f"  lock-step / refill = {r['ratio_lock_step_over_refill']:.2f}× (target ≥ 2× at {r['slots']}); "
        f"one by one / refill = {r['ratio_one_by_one_over_refill']:.2f}×; one by one / lock-step = "
        f"{r['ratio_one_by_one_over_lock_step']:.2f}×",
        f"  a lock-step of {r['slots']} flows {r['ms_per_lock_step']:.2f} ms; a round of the {r['slots']} slots (wall × "
        f"slots / Σ steps) {r['ms_per_round_refill']:.2f} ms",
        f"  refill vs lock-step: final loss max rel diff {a['max_rel_diff_final_loss']:.1e}, final θ "
        f"{a['max_rel_diff_final_params']:.1e}, same step counts {a['same_steps']}/{a['rows']}, bit-identical rows "
        f"{a['bit_identical_rows']}/{a['rows']}",
        f"  one by one vs lock-step ({s['rows']} flows): final loss {s['max_rel_diff_final_loss']:.1e}, final θ "
        f"{s['max_rel_diff_final_params']:.1e}, bit-identical {s['bit_identical_rows']}/{s['rows']}"])
