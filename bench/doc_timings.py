"""Measure every time the README and the docs quote, and record it in ``bench/results/doc_timings.json``.

The README and the pages under ``docs/`` quote how long a command or an example takes. Each such time is written from
this one record, and ``tests/test_doc_numbers.py`` fails on a quoted time that is not in it (at the rounding the page
uses) or that does not say whether it is *cold* or *warm*:

- **cold**: a fresh Python process with empty compilation caches (``GFLOW_CACHE_DIR`` a new, empty folder): what a
  user sees the first time after a clone;
- **warm**: the compiled programs are already there: here, a fresh Python process whose compilation caches an earlier
  run of the same command filled (what a user sees the second time); on the benchmark pages, a repeated call in the
  same process (``bench/run.py`` times those, compilation apart).

Every process is timed from spawn to exit. The examples are the code blocks of the pages themselves (found by a
line each contains), run as they stand; their printed output is recorded too, and the test compares the page's
output block with it. Measurements:

- ``balance_limit`` / ``balance_limit_quick``: ``python studies/balance_limit.py [--quick] --out <tmp> --record ''``,
  cold and warm (the full run is skipped with ``--skip-full``; a skipped entry keeps its recorded value);
- ``example``: the first example of the README (the same code as Getting started's first flow), cold and warm, the
  process and the ``wall=`` it prints;
- ``program_store``: the example warm with the stored traced programs on and off (``GFLOW_PROGRAM_CACHE=0``), the best
  of 3 each, and the difference: what the store saves a first call;
- ``concepts_nonlinear``, ``concepts_discrete``, ``concepts_batch``: the examples of Concepts that print a time;
- ``sweeps_discrete``: the discrete sweep of Sweeps and Dask (24 Adam runs), and the times it prints;
- ``gpu_check_smallest``: ``bench/gpu_check.py --size smallest`` (every part at its smallest size) on the CPU, cold;
- ``suite`` and ``suite_not_slow``: ``python -m pytest -q`` and ``python -m pytest -q -m "not slow"``; the suite
  takes about a quarter of an hour on two cores, so these are usually given on the command line
  (``--suite-seconds 878 --not-slow-seconds 240 --suite-how "2-core CPU, cold: ..."``) rather than run
  (``--run-suite``);
- ``digits``: the numbers Concepts prints from a solve, at the example's rtol and at rtol/100, and how many
  significant digits agree (the page prints that many).

Usage (from the repository root)::

    python bench/doc_timings.py                      # everything but the suite (~20 min on a quiet 2-core CPU)
    python bench/doc_timings.py --skip-full          # without the full balance_limit run
    python bench/doc_timings.py --only example concepts_batch
    python bench/doc_timings.py --only suite --suite-seconds 878 --not-slow-seconds 240 --suite-how "2-core CPU, cold: ..."
    python bench/doc_timings.py --show               # the record, rounded as the pages quote it
    python bench/doc_timings.py --only example --update-pages   # and rewrite the examples' outputs on the pages

Entries not measured in a call keep their recorded values; each entry carries its own date, commit and load average.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import math
import os
import platform
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_JSON = os.path.join(ROOT, "bench", "results", "doc_timings.json")

COLD = "cold: a fresh process, empty compilation caches (GFLOW_CACHE_DIR a new folder)"
WARM = "warm: a fresh process, compilation caches filled by an earlier run of the same command"

# (page, a line that only the wanted code block contains)
SNIPPETS = {
    "example": ("README.md", "traj = gflow.solve_flow(loss, model0, t1=20.0"),
    "concepts_nonlinear": ("docs/concepts.md", "elman_cayci_eryilmaz(jax.random.key(0), 64, 3"),
    "concepts_discrete": ("docs/concepts.md", "gd   = gflow.discrete.run_gd(loss, model0, lr=1e-3"),
    "concepts_batch": ("docs/concepts.md", "batch = gflow.discrete.run_gd_batch(loss, starts"),
    "sweeps_discrete": ("docs/sweeps.md", 'runs = gflow.run_sweep(grid, build, "out/adam", method="adam"'),
}
WALL_RE = re.compile(r"wall[= ](\d+(?:\.\d+)?)s")
# other times a run prints: a sweep's progress and summary lines ("elapsed 3s, ETA 3s", "computed in 5s")
TIME_RE = re.compile(r"(?:elapsed |ETA |computed in )(\d+(?:\.\d+)?)s\b")


def code_blocks(text: str, lang: str | None = None) -> list[tuple[str, str, int]]:
    """The fenced code blocks of a Markdown text.

    Args:
        text: the Markdown source.
        lang: only blocks of this info string (``"python"``, ``"text"``); None for every block.

    Returns:
        ``(info string, body, line number of the opening fence)`` for each block, in order.
    """
    blocks, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        m = re.match(r"^```(\S*)\s*$", lines[i])
        if m:
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            if lang is None or m.group(1) == lang:
                blocks.append((m.group(1), "\n".join(lines[i + 1:j]), i + 1))
            i = j + 1
        else:
            i += 1
    return blocks


def snippet(name: str) -> str:
    """The code of one documented example, read from its page.

    Args:
        name: a key of ``SNIPPETS``.

    Returns:
        The body of the one Python block of the page that contains the example's marker line.
    """
    page, marker = SNIPPETS[name]
    with open(os.path.join(ROOT, page), encoding="utf-8") as f:
        found = [body for _, body, _ in code_blocks(f.read(), "python") if marker in body]
    if len(found) != 1:
        raise SystemExit(f"doc_timings: {page} has {len(found)} Python blocks containing {marker!r}, expected 1")
    return found[0]


def git_commit() -> dict:
    def git(*args):
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    return {"commit": git("rev-parse", "HEAD"), "dirty": bool(git("status", "--porcelain", "--untracked-files=no"))}


def machine() -> str:
    return f"{os.cpu_count()}-core CPU ({platform.machine()}, {platform.system()})"


def timed(cmd: list[str], env: dict, cwd: str) -> tuple[float, str, str]:
    """Run a command from spawn to exit.

    Args:
        cmd: the argument list.
        env: the environment.
        cwd: the working folder.

    Returns:
        ``(seconds, stdout, stderr)``; a non-zero exit raises ``SystemExit`` with the command's stderr.
    """
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit(f"doc_timings: {' '.join(cmd)} exited {p.returncode}:\n{p.stderr[-4000:]}")
    return dt, p.stdout, p.stderr


def env_with(cache: str, **extra) -> dict:
    env = dict(os.environ, GFLOW_CACHE_DIR=cache, MPLBACKEND="Agg", PYTHONUNBUFFERED="1", **extra)
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    return env


def entry(seconds: float, how: str, command: str, **more) -> dict:
    return {"seconds": round(seconds, 3), "how": f"{machine()}, {how}", "command": command,
            "date": datetime.date.today().isoformat(), **git_commit(),
            "load_average_1min_at_start": round(os.getloadavg()[0], 2), **more}


def cold_and_warm(name: str, cmd: list[str], command: str, record: dict, **fields) -> None:
    """Time a command cold (fresh cache folder) and warm (the same folder again); store ``<name>_cold/_warm``."""
    with tempfile.TemporaryDirectory(prefix="gflow-doc-timings-") as tmp:
        cache, work = os.path.join(tmp, "cache"), os.path.join(tmp, "work")
        os.makedirs(work)
        for kind, how in (("cold", COLD), ("warm", WARM)):
            load = os.getloadavg()[0]
            dt, out, err = timed(cmd, env_with(cache), work)
            more = {"stdout": out}
            walls = [float(w) for w in WALL_RE.findall(out)]
            if walls:
                more["printed_walls_s"] = walls
            others = [float(w) for w in TIME_RE.findall(out)]
            if others:
                more["printed_times_s"] = others
            e = entry(dt, how, command, **more, **fields)
            e["load_average_1min_at_start"] = round(load, 2)
            record[f"{name}_{kind}"] = e
            print(f"{name}_{kind}: {dt:.2f} s" + (f" (printed walls {walls})" if walls else ""), flush=True)


def python_snippet(name: str, record: dict) -> None:
    code = snippet(name)
    page, _ = SNIPPETS[name]
    cold_and_warm(name, [sys.executable, "-c", code], f"python -c <the example of {page}>", record,
                  code_sha256=hashlib.sha256(code.encode()).hexdigest())


def program_store(record: dict, repeats: int = 3) -> None:
    """What the stored traced programs save the README's example: warm runs with ``GFLOW_PROGRAM_CACHE`` on and off.

    Both ways run once to fill their caches, then ``repeats`` times alternately; each keeps its smallest printed wall
    (the machine may be shared), and the saving is their difference.
    """
    cmd = [sys.executable, "-c", snippet("example")]
    with tempfile.TemporaryDirectory(prefix="gflow-doc-timings-") as tmp:
        cache = os.path.join(tmp, "cache")
        ways = {"on": {}, "off": {"GFLOW_PROGRAM_CACHE": "0"}}
        for switches in ways.values():
            timed(cmd, env_with(cache, **switches), tmp)
        best = {k: math.inf for k in ways}
        for _ in range(repeats):
            for k, switches in ways.items():
                _, out, _ = timed(cmd, env_with(cache, **switches), tmp)
                best[k] = min(best[k], float(WALL_RE.findall(out)[0]))
    saving = best["off"] - best["on"]
    record["example_program_store_saving"] = entry(
        saving, f"{WARM}: the example's printed wall with GFLOW_PROGRAM_CACHE=0 minus that with the program "
        f"store on, each the best of {repeats} (the tracing and lowering a stored program saves a first call)",
        "python -c <the example of README.md>, GFLOW_PROGRAM_CACHE=1 and 0", best_wall_store_on_s=best["on"],
        best_wall_store_off_s=best["off"], derived=True)
    print(f"example_program_store_saving: {saving:.2f} s (best walls: on {best['on']:.2f} s, off {best['off']:.2f} s)",
          flush=True)


def study(record: dict, quick: bool) -> None:
    name = "balance_limit_quick" if quick else "balance_limit"
    args = ["--quick"] if quick else []
    script = os.path.join(ROOT, "studies", "balance_limit.py")
    cold_and_warm(name, [sys.executable, script, *args, "--out", "out", "--record", ""],
                  f"python studies/balance_limit.py {' '.join(args + [''])}--out out/balance_limit --record ''",
                  record)
    for kind in ("cold", "warm"):
        record[f"{name}_{kind}"].pop("stdout", None)  # a study's log: long, and not quoted


def gpu_check_smallest(record: dict) -> None:
    """``bench/gpu_check.py --size smallest`` on this CPU, cold (its workers share one fresh cache of their own)."""
    with tempfile.TemporaryDirectory(prefix="gflow-doc-gpucheck-") as tmp:
        cmd = [sys.executable, os.path.join(ROOT, "bench", "gpu_check.py"), "--size", "smallest",
               "--json", os.path.join(tmp, "out.json")]
        load = os.getloadavg()[0]
        dt, _, _ = timed(cmd, env_with(os.path.join(tmp, "cache")), tmp)
    record["gpu_check_smallest_cold"] = entry(dt, COLD, "PYTHONPATH=. python3 bench/gpu_check.py --size smallest "
                                                        "--json out.json")
    record["gpu_check_smallest_cold"]["load_average_1min_at_start"] = round(load, 2)
    print(f"gpu_check_smallest_cold: {dt:.1f} s", flush=True)


def agreeing_digits(a: float, b: float) -> int:
    """How many leading significant digits two values share (0 to 17).

    Args:
        a: one value.
        b: the same quantity computed another way (e.g. at a 100× tighter rtol).

    Returns:
        The largest n such that both round to the same n significant digits.
    """
    n = 0
    for k in range(1, 18):
        if f"{a:.{k - 1}e}" == f"{b:.{k - 1}e}":
            n = k
        else:
            break
    return n


DIGITS_CODE = r"""
import functools, json, jax, gflow
from gflow import analysis, initializers, teachers
from gflow.objectives import nonlinear_teachers as nt

model0 = gflow.models.elman_cayci_eryilmaz(jax.random.key(0), 64, 3, alpha=0.5)
teacher = nt.transport_teacher(jax.random.key(1), 3, alpha=0.5)
loss = gflow.objectives.SampleLoss.from_teacher(jax.random.key(2), teacher, 256, 10,
                                                sampler=functools.partial(gflow.objectives.unit_ball_sequences, d=3))
out = {}
for rtol in (1e-8, 1e-10):
    traj = gflow.solve_flow(loss, model0, 100.0, solver="rosenbrock-cg", rtol=rtol, progress=False)
    out[f"neuron_movement@{rtol:g}"] = float(analysis.neuron_movement(model0, traj.final))
    out[f"linearization_error@{rtol:g}"] = float(analysis.linearization_error(model0, traj.final, loss.inputs).max())
lin = gflow.PopulationLoss(teachers.balanced(jax.random.key(0), 5), k=20)
m0 = initializers.gaussian(jax.random.key(1), 25, scale=1e-3)
out["sharpness@lanczos"] = float(analysis.sharpness(lin, m0))
import jax.numpy as jnp
theta, static, unravel = gflow.flatten(m0)
hess = jax.hessian(lambda th: lin(gflow.unflatten(th, static, unravel)))(theta)
out["sharpness@dense"] = float(jnp.linalg.eigvalsh(hess).max())
print(json.dumps(out))
"""


def digits(record: dict) -> None:
    """The floats Concepts prints, at rtol 1e-8 and 1e-10 (sharpness: Lanczos against a dense eigensolver)."""
    with tempfile.TemporaryDirectory(prefix="gflow-doc-digits-") as tmp:
        _, out, _ = timed([sys.executable, "-c", DIGITS_CODE], env_with(os.path.join(tmp, "cache")), tmp)
    vals = json.loads(out.strip().splitlines()[-1])
    pairs = {"neuron_movement": ("neuron_movement@1e-08", "neuron_movement@1e-10"),
             "linearization_error": ("linearization_error@1e-08", "linearization_error@1e-10"),
             "sharpness": ("sharpness@lanczos", "sharpness@dense")}
    record["digits"] = {
        "how": "the value of the example (rtol 1e-8) and at rtol/100 (sharpness: Lanczos against the dense Hessian's "
               "largest eigenvalue); 'digits' = the leading significant digits both share",
        "date": datetime.date.today().isoformat(), **git_commit(),
        "values": {k: {"a": vals[a], "b": vals[b], "digits": agreeing_digits(vals[a], vals[b])}
                   for k, (a, b) in pairs.items()},
    }
    print("digits:", json.dumps(record["digits"]["values"]), flush=True)


def suite(record: dict, args) -> None:
    for name, marker, given in (("suite", None, args.suite_seconds), ("suite_not_slow", "not slow",
                                                                       args.not_slow_seconds)):
        command = "python -m pytest -q" + (f' -m "{marker}"' if marker else "")
        if given is not None:
            record[name] = entry(given, "", command, given=True)
            record[name]["how"] = args.suite_how  # measured elsewhere: the given words, not this machine's
            if args.suite_commit:
                record[name].update(commit=args.suite_commit, dirty=None)
            record[name].pop("load_average_1min_at_start")
        elif args.run_suite:
            load = os.getloadavg()[0]
            cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"] + (["-m", marker] if marker else [])
            t0 = time.perf_counter()
            subprocess.run(cmd, cwd=ROOT, env=dict(os.environ, MPLBACKEND="Agg"))
            dt = time.perf_counter() - t0
            record[name] = entry(dt, "the suite as it runs (the compilation cache as the machine has it)", command)
            record[name]["load_average_1min_at_start"] = round(load, 2)
        else:
            continue
        print(f"{name}: {record[name]['seconds']:.0f} s", flush=True)


def rounded(seconds: float) -> str:
    """A time as the pages write it: minutes with one decimal from 90 s, whole seconds from 10 s, else 2 digits.

    Args:
        seconds: the recorded value.

    Returns:
        E.g. ``"1.5 min"``, ``"31 s"``, ``"7.2 s"``, ``"0.43 s"``.
    """
    if seconds >= 90:
        return f"{seconds / 60:.1f} min"
    if seconds >= 10:
        return f"{seconds:.0f} s"
    if seconds >= 1:
        return f"{seconds:.1f} s"
    return f"{seconds:.2f} s"


PROGRESS_LINE = re.compile(r"^\s*\[[^\]\n]*\+\s*[\d.]+s\] .*\n?", re.M)  # "  [flow +   5.0s] ...", "  [adam ×12 + 5.3s] ..."
# the pages whose output blocks and warm captions --update-pages rewrites from the record
UPDATED_PAGES = ("README.md", "docs/getting-started.md", "docs/concepts.md")


def printed(entry_: dict) -> str:
    """What a recorded run printed, less the progress meter's lines (their number and times vary with the load).

    Args:
        entry_: a record entry with ``stdout``.

    Returns:
        The output as a page shows it, without the trailing newline.
    """
    return PROGRESS_LINE.sub("", entry_["stdout"]).rstrip("\n")


def update_pages(record: dict, root: str = ROOT) -> list[str]:
    """Rewrite each example's output block, and the warm walls of its caption, from the record.

    The output block is the first ``text`` block after the example's Python block; the caption (the text between the
    two) names the warm run's walls as ``warm: wall=1.84s[, wall=...]``. Only ``UPDATED_PAGES`` are touched; times
    quoted in prose are left to the editor (``tests/test_doc_numbers.py`` names each one that no longer matches).

    Args:
        record: the whole record (``timings`` inside).
        root: the folder the pages' paths are relative to (the repository).

    Returns:
        The pages changed.
    """
    timings, changed = record.get("timings", {}), []
    for page in UPDATED_PAGES:
        path = os.path.join(root, page)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        new = text
        for name, (_, marker) in SNIPPETS.items():
            cold, warm = timings.get(f"{name}_cold"), timings.get(f"{name}_warm")
            if cold is None or page not in cold.get("pages", []) or marker not in new:
                continue
            i = new.index(marker)
            block = re.compile(r"^```text\n(.*?)^```", re.S | re.M).search(new, i)
            if block is None:
                continue
            caption = new[i:block.start(1)]
            if warm and warm.get("printed_walls_s"):
                walls = ", ".join(f"wall={w:.2f}s" for w in warm["printed_walls_s"])
                caption = re.sub(r"warm: wall=\d+(?:\.\d+)?s(?:, wall=\d+(?:\.\d+)?s)*", f"warm: {walls}", caption)
            new = new[:i] + caption + printed(cold) + "\n" + new[block.end(1):]
        if new != text:
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
            changed.append(page)
    return changed


def show(record: dict) -> None:
    """Print each entry as the pages would quote it (to update them after a new measurement)."""
    for name, e in sorted(record.get("timings", {}).items()):
        walls = ", ".join(f"wall={w:.2f}s" for w in e.get("printed_walls_s", []))
        print(f"{name:<40} {rounded(e['seconds']):>10}  {walls:<40} {e['date']} {e['commit'][:10]}  "
              f"load {e.get('load_average_1min_at_start', '?')}  on {', '.join(e.get('pages', []))}")
    for name, v in record.get("digits", {}).get("values", {}).items():
        print(f"{name:<40} {v['a']:.{max(v['digits'], 1)}g} ({v['digits']} digits agree: {v['a']!r} / {v['b']!r})")


ABOUT = ("The times the README and docs/*.md quote for commands and examples, measured by bench/doc_timings.py (the "
         "benchmark's and the studies' own times are in bench/results/ and validation/results/); "
         "tests/test_doc_numbers.py checks the pages against these files. " + COLD + "; " + WARM + ".")


# the pages that quote each measurement (the test matches a page's times against these entries only)
QUOTED_ON = {
    "example": ["README.md", "docs/getting-started.md"],
    "concepts_": ["docs/concepts.md"],
    "balance_limit": ["README.md", "docs/getting-started.md", "docs/studies.md", "docs/design.md"],
    "suite": ["README.md", "docs/getting-started.md"],
    "gpu_check": ["docs/solvers.md"],
    "sweeps_": ["docs/sweeps.md"],
}


def quoted_on(name: str) -> list[str]:
    """The pages that quote the record's entry ``name`` (by the longest prefix of ``QUOTED_ON`` it starts with)."""
    keys = [k for k in QUOTED_ON if name.startswith(k)]
    return QUOTED_ON[max(keys, key=len)] if keys else []


MEASUREMENTS = ("balance_limit", "balance_limit_quick", "example", "program_store", "concepts_nonlinear", "concepts_discrete",
                "concepts_batch", "sweeps_discrete", "gpu_check_smallest", "digits", "suite")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", default=DEFAULT_JSON, help="the record to update (default %(default)s)")
    p.add_argument("--only", nargs="+", choices=MEASUREMENTS, help="measure only these")
    p.add_argument("--skip-full", action="store_true", help="skip the full balance_limit run (keep its record)")
    p.add_argument("--suite-seconds", type=float, help="the full suite's wall time, measured elsewhere")
    p.add_argument("--not-slow-seconds", type=float, help='the -m "not slow" subset\'s wall time, measured elsewhere')
    p.add_argument("--suite-how", help='how the given suite times were measured, e.g. "2-core CPU, warm: ..."')
    p.add_argument("--suite-commit", help="the full commit the given suite times were measured at (default: HEAD)")
    p.add_argument("--run-suite", action="store_true", help="run the suite and the not-slow subset here (~15 min)")
    p.add_argument("--show", action="store_true", help="only print the record as the pages quote it")
    p.add_argument("--update-pages", action="store_true",
                   help=f"after measuring, rewrite the examples' output blocks and warm captions in {', '.join(UPDATED_PAGES)}")
    args = p.parse_args(argv)
    for v in (args.suite_seconds, args.not_slow_seconds):
        if v is not None and not (math.isfinite(v) and v > 0):
            p.error(f"a suite time must be a positive number of seconds, got {v}")
    if args.suite_commit and not re.fullmatch(r"[0-9a-f]{40}", args.suite_commit):
        p.error(f"--suite-commit must be a full 40-digit commit hash, got {args.suite_commit!r}")
    given = args.suite_seconds is not None or args.not_slow_seconds is not None
    if given and not (args.suite_how and re.search(r"\b(cold|warm)\b", args.suite_how) and "CPU" in args.suite_how):
        p.error(f"a given suite time needs --suite-how naming the machine's CPU and cold or warm, got {args.suite_how!r}")

    record = {}
    if os.path.exists(args.json):
        with open(args.json, encoding="utf-8") as f:
            record = json.load(f)
    timings = record.setdefault("timings", {})
    if args.show:
        show(record)
        if args.update_pages:
            print(f"doc_timings: updated {', '.join(update_pages(record)) or 'no page'}")
        return 0
    record["about"] = ABOUT
    wanted = set(args.only or MEASUREMENTS)
    if args.skip_full:
        wanted.discard("balance_limit")

    def save():
        for name, e in timings.items():
            e["pages"] = quoted_on(name)
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(record, f, indent=1, ensure_ascii=False, sort_keys=True)
            f.write("\n")

    steps = [
        ("example", lambda: python_snippet("example", timings)),
        ("program_store", lambda: program_store(timings)),
        ("concepts_batch", lambda: python_snippet("concepts_batch", timings)),
        ("concepts_discrete", lambda: python_snippet("concepts_discrete", timings)),
        ("concepts_nonlinear", lambda: python_snippet("concepts_nonlinear", timings)),
        ("sweeps_discrete", lambda: python_snippet("sweeps_discrete", timings)),
        ("balance_limit_quick", lambda: study(timings, quick=True)),
        ("balance_limit", lambda: study(timings, quick=False)),
        ("gpu_check_smallest", lambda: gpu_check_smallest(timings)),
        ("digits", lambda: digits(record)),
        ("suite", lambda: suite(timings, args)),
    ]
    for name, run in steps:
        if name in wanted:
            run()
            save()  # after every measurement: an interrupted call keeps what it measured
    save()
    show(record)
    print(f"doc_timings: wrote {os.path.relpath(args.json, ROOT)}")
    if args.update_pages:
        print(f"doc_timings: updated {', '.join(update_pages(record)) or 'no page'}; times in prose: see --show and "
              "python -m pytest tests/test_doc_numbers.py")
    return 0


if __name__ == "__main__":
    sys.exit(main())
