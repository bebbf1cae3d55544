"""Kernels in a compiled batched solve, counted from its optimized HLO (readable on a CPU too).

Each fusion, custom call (cuBLAS/cuSOLVER/LAPACK, host callbacks) and unfused dot is one kernel launch per
execution on an accelerator; a ``while`` is a loop whose every iteration reads its predicate on the host; a
``conditional`` reads its predicate too. Counts are static (a loop body counts once) and cover the whole
program, whose outer while loop is the integrator's step loop; ``in_step_loop`` counts the instructions inside
that loop's body and the computations it calls.
"""

from __future__ import annotations

import re
from collections import Counter

import jax

import gflow

_INSTRUCTION = re.compile(r"^\s*(?:ROOT\s+)?%?[\w.\-]+\s*=\s*.*?\s(fusion|custom-call|while|conditional|dot|"
                          r"convolution|all-reduce|copy|transpose|sort|scatter|gather)\(")
_COMPUTATION = re.compile(r"^(?:ENTRY\s+)?%?([\w.\-]+)\s.*\{\s*$")
_CALLS = re.compile(r"(?:calls|body|condition|to_apply|branch_computations|true_computation|false_computation)"
                    r"=\{?([%\w.\-, ]+)\}?")


def _computations(text: str) -> dict[str, list[str]]:
    comps, name = {}, None
    for line in text.splitlines():
        m = _COMPUTATION.match(line)
        if m and not line.startswith(" "):
            name = m.group(1)
            comps[name] = []
        elif name is not None:
            comps[name].append(line)
    return comps


def _count(lines) -> Counter:
    counts = Counter()
    for line in lines:
        m = _INSTRUCTION.match(line)
        if not m:
            continue
        op = m.group(1)
        if op == "custom-call":
            target = re.search(r'custom_call_target="([^"]+)"', line)
            op = f"custom-call:{target.group(1) if target else '?'}"
        counts[op] += 1
    return counts


def _summary(c: Counter) -> dict:
    custom = {k.split(":", 1)[1]: v for k, v in c.items() if k.startswith("custom-call:")}
    kernels = c["fusion"] + sum(custom.values()) + sum(c[op] for op in _OTHER_KERNELS)
    return {"kernels": kernels, "fusions": c["fusion"], "custom_calls": custom, "unfused_dots": c["dot"],
            "while_loops": c["while"], "conditionals": c["conditional"],
            "host_callbacks": sum(v for k, v in custom.items() if "callback" in k.lower())}


_OTHER_KERNELS = ("dot", "convolution", "copy", "transpose", "sort", "scatter", "gather")


def hlo_counts(text: str) -> dict:
    """Counts of kernel-launching instructions in optimized HLO text (fused computations excluded):

    - ``program``: static, every instruction once;
    - ``step``: the integrator's step loop (the outermost while loop with the most work): its body and what it
      calls, with inner loops of a known trip count multiplied out, i.e. the launches of one lock-step."""
    comps = _computations(text)
    unfused = {n: ls for n, ls in comps.items() if "fused" not in n and "fusion" not in n}

    def dynamic(name, stack=()) -> Counter:
        if name not in unfused or name in stack:
            return Counter()
        out = _count(unfused[name])
        for line in unfused[name]:
            trips = re.search(r'known_trip_count":\{"n":"(\d+)"', line)
            for group in _CALLS.findall(line):
                for callee in (x.strip().lstrip("%") for x in group.split(",")):
                    inner = dynamic(callee, stack + (name,))
                    out += Counter({k: v * (int(trips.group(1)) if trips else 1) for k, v in inner.items()})
        return out

    total = Counter()
    for ls in unfused.values():
        total += _count(ls)
    bodies = [m.group(1) for ls in unfused.values() for line in ls if " while(" in line
              for m in [re.search(r"body=%?([\w.\-]+)", line)] if m and "known_trip_count" not in line]
    step = max((dynamic(b) for b in bodies), key=lambda c: sum(c.values()), default=Counter())
    return {"program": _summary(total), "step": _summary(step)}


def batched_solve_counts(losses, models0, t1, *, rtol, atol=None, save_at=8, solver="auto") -> dict:
    """:func:`hlo_counts` of the program :func:`gflow.solve_flows` compiles for this batch (no progress meter)."""
    lowered = gflow.flow.lower_flows(losses, models0, t1, rtol=rtol, atol=atol, save_at=save_at, solver=solver)
    size = gflow.stacking.bucket_size(gflow.stacking.batch_length(losses) if gflow.stacking.is_stacked(losses) else len(losses))
    return hlo_counts(lowered.compile().as_text()) | {"batch": size, "backend": jax.default_backend()}
