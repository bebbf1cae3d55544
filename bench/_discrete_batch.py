"""Batched discrete runs (gflow.discrete.run_gd_batch, run_adam_batch) against one-by-one
runs, in one process (``python bench/run.py --discrete-batch``), warm wall time and steps/s of each way and their
ratio:

- 64 R1-size GD runs: R1's student (d = 40, symmetric, balanced init 1e-2; keys 100…163) on R1's loss, step sizes
  spread over [0.002, 0.008] (all stable: from η ≈ 0.011 GD diverges within 130 steps);
- 30 GRU students of width 100 trained by Adam on minibatches of 100 length-30 sequences (000-P15's students, k_g 30).
"""

from __future__ import annotations

import time

import jax
import numpy as np

import gflow
from gflow import initializers

SAVES = 20  # saved rows per run (log-spaced), the same for the warm-up and the timed runs


def _r1_gd_members(n: int):
    """``n`` R1-size starts and their step sizes; R1's loss (bench/_problems.py)."""
    import _problems as P

    loss = P.r1(True, None).loss
    starts = [initializers.balanced(jax.random.key(100 + i), 40, scale=1e-2, structure="symmetric") for i in range(n)]
    return loss, starts, np.linspace(0.002, 0.008, n)  # GD on R1 diverges above η ≈ 0.011 (its sharpness grows)


def _comparison(n: int, steps: int, batch, singles, wall_batched: float, wall_single: float) -> dict:
    """Walls, steps/s, the speed-up of the batch and the largest relative difference of the final losses."""
    final_single = np.array([t.loss[-1] for t in singles])
    final_batched = batch.loss[np.arange(n), batch.saved.sum(axis=1) - 1]
    total = int(np.sum(batch.steps))  # the steps taken (a diverged run stops early)
    assert total == sum(t.stats["steps"] for t in singles)
    return {"runs": n, "steps_taken": total, "steps": steps, "n_params": int(batch.params.shape[2]), "statuses": sorted(set(batch.statuses)),
            "wall_batched_s": wall_batched, "wall_one_by_one_s": wall_single,
            "steps_per_s_batched": total / wall_batched, "steps_per_s_one_by_one": total / wall_single,
            "speedup": wall_single / wall_batched,
            "max_rel_diff_final_loss": float(np.max(np.abs(final_batched - final_single) / np.abs(final_single)))}


def _report(label: str, row: dict) -> str:
    return (f"  {row['runs']} {label} × {row['steps']} steps: batched {row['wall_batched_s']:.2f} s "
            f"({row['steps_per_s_batched']:.3g} steps/s), one by one {row['wall_one_by_one_s']:.2f} s "
            f"({row['steps_per_s_one_by_one']:.3g} steps/s): speed-up of the batch {row['speedup']:.2f}×; final losses "
            f"agree to {row['max_rel_diff_final_loss']:.1e} (relative)")


def _timed(f):
    start = time.perf_counter()
    out = f()
    return out, time.perf_counter() - start


def _batched_and_one_by_one(run_batch, run_one, n: int, warm: int, steps: int, log, repeats: int = 1):
    """(batch, singles, wall of the batch, wall one by one), each way warmed up (compiled) by a ``warm``-step run, the
    best of ``repeats`` calls (the machine may be shared), the two ways alternating."""
    _, warm_batched = _timed(lambda: run_batch(warm))
    _, warm_single = _timed(lambda: run_one(0, warm))
    log(f"  warm-up ({warm} steps): batched {warm_batched:.2f} s, one run {warm_single:.2f} s")
    batch, wall_batched = _timed(lambda: run_batch(steps))
    singles, wall_single = _timed(lambda: [run_one(i, steps) for i in range(n)])
    for _ in range(repeats - 1):
        wall_batched = min(wall_batched, _timed(lambda: run_batch(steps))[1])
        wall_single = min(wall_single, _timed(lambda: [run_one(i, steps) for i in range(n)])[1])
    return batch, singles, wall_batched, wall_single, {"warmup_batched_s": warm_batched, "warmup_one_s": warm_single}


def r1_gd(n: int, steps: int, log) -> dict:
    """Wall time and steps/s of ``n`` GD runs of ``steps`` steps, batched (one program) and one by one (warm: each
    way compiled by a short run first), and the largest relative difference between the two ways' final losses."""
    loss, starts, lrs = _r1_gd_members(n)
    batch, singles, wall_b, wall_s, warm = _batched_and_one_by_one(
        lambda s: gflow.discrete.run_gd_batch(loss, starts, lr=lrs, steps=s, save_at=SAVES, progress=False),
        lambda i, s: gflow.discrete.run_gd(loss, starts[i], lr=float(lrs[i]), steps=s, save_at=SAVES, progress=False),
        n, min(steps, 50), steps, log, repeats=3)
    row = {"case": "R1-size GD", "timing": "best of 3 warm calls each way", "lr": [float(lrs[0]), float(lrs[-1])], **warm,
           **_comparison(n, steps, batch, singles, wall_b, wall_s)}
    log(_report("runs", row))
    return row


def _gru_students(n: int, width: int, k: int, n_train: int):
    """``n`` GRU students of ``width`` (seeds 0…n−1) and one training sample of ``n_train`` length-``k`` sequences
    labelled by a small GRU teacher (d̂_g = 10, torch init; the study fits its teacher, which does not change the
    cost of a student's step)."""
    teacher = gflow.models.gru(jax.random.key(0), 10)
    train = gflow.objectives.SampleLoss.from_teacher(jax.random.key(1), teacher, n_train, k)
    return train, [gflow.models.gru(jax.random.key(2000 + i), width) for i in range(n)]


def gru_adam(n: int, steps: int, log, width: int = 100, k: int = 30, batch: int = 100, n_train: int = 1000) -> dict:
    """Wall time and steps/s of ``n`` GRU students trained by Adam (lr 1e-3, minibatches of ``batch``, one key per
    student) on one shared sample, batched against one by one (both warmed up by a short run; θ saved at the start
    and the end only: the full loss on ``n_train`` sequences at a saved row costs ~0.1 s per student, which would be
    measured instead of the steps)."""
    train, students = _gru_students(n, width, k, n_train)
    keys = jax.random.split(jax.random.key(3000), n)
    options = dict(lr=1e-3, batch_size=batch, save_at=np.array([0]), progress=False)
    out, singles, wall_b, wall_s, warm = _batched_and_one_by_one(
        lambda s: gflow.discrete.run_adam_batch(train, students, steps=s, key=keys, **options),
        lambda i, s: gflow.discrete.run_adam(train, students[i], steps=s, key=keys[i], **options),
        n, min(steps, 30), steps, log)
    row = {"case": "GRU students, Adam", "timing": "one warm call each way", "width": width, "k_g": k, "batch": batch, "n_train": n_train, **warm,
           **_comparison(n, steps, out, singles, wall_b, wall_s)}
    for way in ("batched", "one_by_one"):  # 000-P15's students are 8 000 steps long
        row[f"students_per_hour_at_8000_steps_{way}"] = 3600 * row[f"steps_per_s_{way}"] / 8000
    log(_report("students", row))
    return row
