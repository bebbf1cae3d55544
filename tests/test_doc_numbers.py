"""Every time the README and docs/*.md quote is a recorded measurement, at the rounding the page uses, said cold or warm.

A *time quote* is a number (or a range of two) followed by a time unit (µs, ms, s, min, h and their long forms), in
prose, tables and code blocks alike (``wall=9.26s`` counts). Each must

- match a recorded value at the page's rounding: a value of ``bench/results/doc_timings.json`` (written by
  ``bench/doc_timings.py``), or a number of a results file the quote's section names (``bench/results/*.json``,
  ``validation/results/<study>.json``, or ``studies/<study>.py`` standing for the latter), and
- stand in a sentence that says *cold* or *warm* (for a table or a code block: the block or its caption, the paragraph
  before it; for any time: also the first paragraph of its section, which may speak for the whole section), or
  "cache state not recorded" where the record does not say;

unless it is on the short allow-list below, each with its reason: times that are not measurements (a cap, a budget, a
timeout, a setting), estimates of runs not made, and values derived from recorded ones. Vague times ("a few
minutes", "under a minute") are refused: a page quotes the record instead. A record entry counts only on the pages
it lists (``pages``), so a page's time cannot match another page's measurement by chance.

The examples' printed output on the pages is the recorded run's (progress lines aside), and the floats Concepts prints
carry no more digits than agree between the example's rtol and rtol/100 (the record's ``digits``).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECORD = os.path.join(ROOT, "bench", "results", "doc_timings.json")
PAGES = ["README.md"] + sorted(os.path.join("docs", f) for f in os.listdir(os.path.join(ROOT, "docs"))
                               if f.endswith(".md"))

# Times that are not measurements: (page, a phrase of the line that holds the time, why)
ALLOWED = [
    ("docs/solvers.md", "capped at 30 s", "a cap: the --versus-cap option"),
    ("docs/solvers.md", "Caps: 30 s per baseline run", "a cap"),
    ("docs/solvers.md", "did not finish in 290 s", "a timeout the run was stopped at"),
    ("docs/solvers.md", "did not return within 280 s", "a timeout the run was stopped at"),
    ("docs/solvers.md", "did not fit their 35 s budgets", "a budget of the GPU check"),
    ("docs/solvers.md", "runs in ≤ 8 minutes on one GPU", "the GPU check's budget"),
    ("README.md", "a progress line once the run passes 5 s", "the progress meter's quiet period, a setting"),
    ("docs/getting-started.md", "a progress line once the run passes 5 s", "the progress meter's quiet period, a setting"),
    ("docs/solvers.md", "(3.4 µs against 3.6 µs", "derived from the rows above: wall × slots / flow-steps, and ms per "
                                                  "lock-step / 8 192 flows"),
    ("docs/concepts.md", "8 000 steps stay ≈ 10 h", "an estimate of a run not made: 270 students at the recorded "
                                                   "students_per_hour_at_8000_steps of cpu_2core_discrete_batch.json"),
    ("docs/studies.md", "part A at paper scale ≈ 14 h, not run", "an estimate of a run not made (VALIDATION.md derives "
                                                                 "it from a measured step)"),
]

UNIT = {"µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0, "sec": 1.0, "second": 1.0, "seconds": 1.0, "min": 60.0,
        "mins": 60.0, "minute": 60.0, "minutes": 60.0, "h": 3600.0, "hour": 3600.0, "hours": 3600.0}
NUM = r"\d{1,3}(?:[ \u202f\u2009]\d{3})+(?![\d.])|\d+(?:\.\d+)?"
QUOTE = re.compile(
    rf"(?<![\w.\-−^/])(?P<a>{NUM})(?:\s*[–-]\s*(?P<b>{NUM}))?\s?"
    r"(?P<unit>µs|us|ms|seconds|second|sec|minutes|minute|mins|min|hours|hour|h|s)(?![\w\u00b2\u00b9\u00b3])")
VAGUE = re.compile(r"\b(?:(?:a few|several|some) (?:seconds|minutes|hours)|(?:well )?(?:under|within) an? "
                   r"(?:second|minute|hour)\b)", re.I)
MARK = re.compile(r"\bcold\b|\bwarm\b|cache state not recorded", re.I)
FILE_REF = re.compile(r"((?:bench|validation)/results/[\w.\-]+\.json|(?<![/\w])(?:cpu|gpu)_[\w.\-]+\.json|"
                      r"studies/(\w+)\.py)")


def load_record() -> dict:
    with open(RECORD, encoding="utf-8") as f:
        return json.load(f)


def recorded_seconds(record: dict, page: str | None = None) -> list[float]:
    """Every time the record holds for a page, in seconds: each entry's own and the walls its run printed.

    Args:
        record: the timing record.
        page: only the entries quoted on this page (an entry's ``pages``; one without it counts for every page);
            None for all.

    Returns:
        The times, in seconds.
    """
    out = []
    for e in record["timings"].values():
        if page is not None and "pages" in e and page not in e["pages"]:
            continue
        out.append(float(e["seconds"]))
        out.extend(float(w) for w in e.get("printed_walls_s", []))
        out.extend(float(w) for w in e.get("printed_times_s", []))
    return out


def decimals(text: str) -> int:
    return len(text.split(".")[1]) if "." in text else 0


def to_float(text: str) -> float:
    return float(re.sub(r"[ \u202f\u2009]", "", text))


def rounds_to(value: float, quoted: str) -> bool:
    """Whether a value, written with the quoted number's decimals, is the quoted number."""
    q = to_float(quoted)
    return math.isfinite(value) and abs(round(value, decimals(quoted)) - q) < 1e-9 * max(1.0, abs(q))


def blocks(text: str) -> list[tuple[int, int, str]]:
    """The page as blocks: paragraphs, tables, lists and fenced code, each ``(first line, last line, kind)``."""
    lines, out, i = text.splitlines(), [], 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        if lines[i].startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            out.append((i, min(j, len(lines) - 1), "code"))
            i = j + 1
            continue
        j, kind = i, "table" if lines[i].lstrip().startswith("|") else "heading" if lines[i].startswith("#") else "text"
        if kind != "heading":
            while j + 1 < len(lines) and lines[j + 1].strip() and not lines[j + 1].startswith("```") \
                    and not lines[j + 1].startswith("#"):
                j += 1
        out.append((i, j, kind))
        i = j + 1
    return out


TIME_KEY = re.compile(r"(?:^|_)(?:s|ms|us|h|min|wall|walls|time|times|seconds|sec|elapsed|compile|cold|warm|cached|"
                      r"process|first|second|best|hours|minutes|latency)(?:_|$)|wall|time|second|per_", re.I)


def numbers_in(obj, key: str = "", timed: bool = False) -> list[float]:
    """The numbers of a JSON value that sit under a time-like key (``wall_s``, ``compile_cold_s``, ``ms_per_step``...).

    Args:
        obj: the JSON value.
        key: its key in the parent object.
        timed: whether a key above it was time-like (a list of walls, a dict of times).

    Returns:
        The numbers found.
    """
    timed = timed or bool(TIME_KEY.search(key))
    if isinstance(obj, bool):
        return []
    if isinstance(obj, (int, float)):
        return [float(obj)] if timed else []
    if isinstance(obj, dict):
        # a measurement record {"value": 29.9, "unit": "ms", ...} is timed by its unit
        here = timed or str(obj.get("unit", "")) in UNIT
        return [x for k, v in obj.items() for x in numbers_in(v, str(k), here)]
    if isinstance(obj, list):
        return [x for v in obj for x in numbers_in(v, key, timed)]
    return []


def file_numbers(section: str, root: str) -> list[float]:
    """The numbers of every results file a section names (a study script names its ``validation/results`` file)."""
    nums = []
    for m in FILE_REF.finditer(section):
        ref = m.group(1)
        if m.group(2):
            ref = f"validation/results/{m.group(2)}.json"
        elif "/" not in ref:
            ref = f"bench/results/{ref}"
        path = os.path.join(root, ref)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                nums.extend(numbers_in(json.load(f)))
    return nums


def time_quotes(text: str):
    """Every time quote of a page: ``(line number, line, quoted numbers, unit, column, the quote)``."""
    for n, line in enumerate(text.splitlines()):
        for m in QUOTE.finditer(line):
            yield n, line, [q for q in (m.group("a"), m.group("b")) if q], m.group("unit"), m.start(), m.group(0)


# a sentence ends at . ! ? or ; before a space and a capital, a backtick or a parenthesis (abbreviations such as
# "Prop. 9" or "et al. (" split too early, which only makes the check stricter)
SENTENCE_END = re.compile(r"[.!?](?=\s+[A-Z`(*])")


def sentence_at(paragraph: str, offset: int) -> str:
    """The sentence of a paragraph that holds the character at ``offset``."""
    starts = [0] + [m.end() for m in SENTENCE_END.finditer(paragraph)]
    begin = max(x for x in starts if x <= offset)
    ends = [m.end() for m in SENTENCE_END.finditer(paragraph) if m.end() > offset]
    return paragraph[begin:min(ends, default=len(paragraph))]


def problems(page: str, text: str, record: dict, root: str = ROOT, allowed=ALLOWED) -> list[str]:
    """What is wrong with the times a page quotes (an empty list when nothing is).

    Args:
        page: the page's path relative to the repository (``docs/solvers.md``), for the allow-list and messages.
        text: the page's Markdown.
        record: the timing record (``bench/results/doc_timings.json``).
        root: the repository root, for the results files a section names.
        allowed: the allow-list, ``(page, phrase, why)``.

    Returns:
        One line per problem: ``page:line: the quote: what is wrong``.
    """
    lines = text.splitlines()
    bl = blocks(text)
    heads = [i for i, _, k in bl if k == "heading"]
    rec = recorded_seconds(record, page)
    out = []
    for n, line in enumerate(lines):
        for m in VAGUE.finditer(line):
            out.append(f"{page}:{n + 1}: {m.group(0)!r}: a vague time; quote the record (bench/doc_timings.py)")
    for n, line, nums, unit, col, quote in time_quotes(text):
        if any(p == page and phrase in line for p, phrase, _ in allowed):
            continue
        k = max(idx for idx, (a, b, _) in enumerate(bl) if a <= n)
        a, b, kind = bl[k]
        context = "\n".join(lines[a:b + 1])
        if kind == "text":  # prose: the sentence that holds the time
            context = sentence_at(context, sum(len(x) + 1 for x in lines[a:n]) + col)
        if kind in ("code", "table") and k > 0:  # its caption: the block before
            pa, pb, _ = bl[k - 1]
            context = "\n".join(lines[pa:pb + 1]) + "\n" + context
        start = max([h for h in heads if h <= n], default=0)
        end = min([h for h in heads if h > n], default=len(lines))
        section = "\n".join(lines[start:end])
        intro = next(((a2, b2) for a2, b2, k2 in bl if start < a2 < end and k2 == "text"), None)
        if intro and start in heads:  # the section's first paragraph speaks for all of it
            context += "\n" + "\n".join(lines[intro[0]:intro[1] + 1])
        scale = UNIT[unit]
        candidates = [v / scale for v in rec]
        candidates += [x * f for x in file_numbers(section, root) for f in (1.0, 1e-3, 1e3, 1 / 60, 1 / 3600, 1e6)]
        missing = [q for q in nums if not any(rounds_to(v, q) for v in candidates)]
        if missing:
            out.append(f"{page}:{n + 1}: {quote!r}: {', '.join(missing)} {unit} is not a recorded value at this "
                       "rounding (bench/results/doc_timings.json, or a results file the section names)")
        if not MARK.search(context):
            out.append(f"{page}:{n + 1}: {quote!r}: neither its sentence (a table's or code block's caption) nor its "
                       "section's first paragraph says cold or warm")
    return out


def read(page: str) -> str:
    with open(os.path.join(ROOT, page), encoding="utf-8") as f:
        return f.read()


# ------------------------------------------------------------------------------------------------------------------
# the record
# ------------------------------------------------------------------------------------------------------------------
def test_record_entries_say_how_when_and_at_which_commit():
    record = load_record()
    assert record["timings"], "bench/results/doc_timings.json records no timing"
    for name, e in record["timings"].items():
        assert math.isfinite(e["seconds"]) and (e["seconds"] > 0 or e.get("derived")), name  # a difference may be ≤ 0
        assert MARK.search(e["how"]) and "CPU" in e["how"], (name, e["how"])
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", e["date"]), (name, e["date"])
        assert re.fullmatch(r"[0-9a-f]{40}", e["commit"]), (name, e["commit"])


# ------------------------------------------------------------------------------------------------------------------
# the pages
# ------------------------------------------------------------------------------------------------------------------
# docs/sweeps.md's times are being rewritten from the record by its own change; until then its failures are expected
PENDING = {}


@pytest.mark.parametrize("page", [pytest.param(p, marks=pytest.mark.xfail(reason=PENDING[p], strict=False))
                                  if p in PENDING else p for p in PAGES])
def test_every_time_a_page_quotes_is_recorded_and_says_cold_or_warm(page):
    found = problems(page, read(page), load_record())
    assert not found, "times the record does not hold:\n" + "\n".join(found)


def test_the_scan_finds_the_pages_time_quotes():
    """The scan is not vacuous: it sees the README's and Getting started's times, in prose and in printed output."""
    for page in ("README.md", "docs/getting-started.md", "docs/concepts.md", "docs/studies.md"):
        assert list(time_quotes(read(page))), page
    assert [q for *_, q in time_quotes("Trajectory(..., steps=4522, wall=9.26s)")] == ["9.26s"]
    assert [q for *_, q in time_quotes("about 1.5 min, then 16.5–19.6 s and 1 163 s; 5 steps, 2 seeds, h_j")] == \
        ["1.5 min", "16.5–19.6 s", "1 163 s"]


FAKE_PAGE, OTHER_PAGE = "made-up.md", "other.md"  # pages that do not exist, for the controls
FAKE_RECORD = {"timings": {"x_cold": {"seconds": 92.0, "how": "2-core CPU, cold", "printed_walls_s": [7.17]}}}


@pytest.mark.parametrize("text, ok", [
    ("It runs in about 1.5 min on a 2-core CPU, cold.", True),
    ("It prints wall=7.17s (2-core CPU, cold).", True),
    ("It runs in about 1.6 min on a 2-core CPU, cold.", False),        # not the recorded 92 s at this rounding
    ("It runs in about 1.5 min on a 2-core CPU.", False),              # neither cold nor warm
    ("It runs in about 1.5 min, cold. Then it prints wall=7.17s.", False),  # the second sentence says neither
    ("It runs in 9 s, warm.", False),                                  # not recorded
    ("It runs in 7 s, warm.", True),                                   # 7.17 s, to whole seconds
    ("It finishes in a few minutes.", False),                          # vague
    ("It finishes in under a minute, cold.", False),                   # vague
    ("Each run is capped at 30 s, cold.", False),                      # a cap, but not on this page's allow-list
])
def test_negative_control_an_unrecorded_or_unmarked_time_fails(text, ok):
    found = problems(FAKE_PAGE, text, FAKE_RECORD, allowed=[])
    assert (not found) == ok, found


def test_allow_list_lets_a_cap_through_and_nothing_else():
    allowed = [(FAKE_PAGE, "capped at 30 s", "a cap")]
    assert not problems(FAKE_PAGE, "Each run is capped at 30 s.", FAKE_RECORD, allowed=allowed)
    assert problems(FAKE_PAGE, "Each run is capped at 30 s and took 31 s.", FAKE_RECORD, allowed=[])
    for page, phrase, why in ALLOWED:  # every entry still matches a line of its page (no stale allowances)
        assert phrase in read(page), (page, phrase)
        assert why


def test_a_time_from_a_named_results_file_is_accepted_and_another_is_not(tmp_path):
    (tmp_path / "bench" / "results").mkdir(parents=True)
    (tmp_path / "bench" / "results" / "r.json").write_text(json.dumps({"wall_s": 3.14159, "steps": 12}))
    ref = "/".join(("bench", "results", "r.json"))  # a file of tmp_path, not of the repository
    page = f"### A bench (`{ref}`)\n\nWarm, one process: 3.14 s.\n"
    assert not problems(FAKE_PAGE, page, FAKE_RECORD, root=str(tmp_path), allowed=[])
    assert problems(FAKE_PAGE, page.replace("3.14 s", "3.15 s"), FAKE_RECORD, root=str(tmp_path), allowed=[])
    # a file named in another section does not count
    other = f"### A bench (`{ref}`)\n\nx\n\n### Another\n\nWarm: 3.14 s.\n"
    assert problems(FAKE_PAGE, other, FAKE_RECORD, root=str(tmp_path), allowed=[])


# ------------------------------------------------------------------------------------------------------------------
# printed output: the pages show what the recorded runs printed
# ------------------------------------------------------------------------------------------------------------------
def output_block_after(page: str, marker: str) -> str:
    """The first ``text`` block after the Python block of a page that contains ``marker``."""
    text = read(page)
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if marker in line)
    rest = "\n".join(lines[start:])
    m = re.search(r"^```text\n(.*?)^```", rest, re.S | re.M)
    assert m, (page, marker)
    return m.group(1).rstrip("\n")


def _printed(record: dict, name: str) -> str:
    return _doc_timings().printed(record["timings"][name])


@pytest.mark.parametrize("page, marker, entry", [
    ("README.md", "traj = gflow.solve_flow(loss, model0, t1=20.0", "example_cold"),
    ("docs/getting-started.md", "traj = gflow.solve_flow(loss, model0, t1=20.0", "example_cold"),
    ("docs/concepts.md", "elman_cayci_eryilmaz(jax.random.key(0), 64, 3", "concepts_nonlinear_cold"),
    ("docs/concepts.md", "gd   = gflow.discrete.run_gd(loss, model0, lr=1e-3", "concepts_discrete_cold"),
    ("docs/concepts.md", "batch = gflow.discrete.run_gd_batch(loss, starts", "concepts_batch_cold"),
])
def test_printed_output_is_the_recorded_one(page, marker, entry):
    record = load_record()
    assert output_block_after(page, marker) == _printed(record, entry)


def test_update_pages_rewrites_an_output_block_and_its_warm_caption(tmp_path):
    dt = _doc_timings()
    record = load_record()
    for page in dt.UPDATED_PAGES:
        (tmp_path / page).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / page).write_text(read(page), encoding="utf-8")
    assert dt.update_pages(record, root=str(tmp_path)) == []  # the pages already show the record
    readme = tmp_path / "README.md"
    stale = read("README.md").replace(_printed(record, "example_cold"), "Trajectory(stale)").replace(
        "warm: wall=", "warm: wall=99.99s, wall=")
    readme.write_text(stale, encoding="utf-8")
    assert dt.update_pages(record, root=str(tmp_path)) == ["README.md"]
    assert readme.read_text(encoding="utf-8") == read("README.md")


def test_recorded_examples_ran_the_code_the_pages_show():
    """An entry that records its code's SHA-256 was measured on the page's code as it stands (rerun after an edit)."""
    dt = _doc_timings()
    for name in dt.SNIPPETS:
        code = hashlib.sha256(dt.snippet(name).encode()).hexdigest()
        for kind in ("cold", "warm"):
            e = load_record()["timings"].get(f"{name}_{kind}", {})
            if "code_sha256" in e:
                assert e["code_sha256"] == code, f"{name}_{kind}: the page's code changed; rerun bench/doc_timings.py"


def test_concepts_prints_only_the_digits_that_agree_at_rtol_over_100():
    record = load_record()
    values = record["digits"]["values"]
    out = output_block_after("docs/concepts.md", "elman_cayci_eryilmaz(jax.random.key(0), 64, 3") + "\n" + \
        output_block_after("docs/concepts.md", "gd   = gflow.discrete.run_gd(loss, model0, lr=1e-3")
    for name, v in values.items():
        shown = [s for s in re.findall(r"(?<![\w.])\d+\.\d+(?:e[-+]\d+)?(?![\w.])", out)
                 if math.isclose(float(s), v["a"], rel_tol=1e-2)]
        assert shown, (name, v)
        for s in shown:
            significant = len(re.sub(r"e.*", "", s).replace(".", "").lstrip("0"))
            assert significant <= v["digits"], (name, s, v)


def test_a_section_intro_that_says_warm_marks_the_section():
    page = "### A bench\n\nAll times warm.\n\n| x | 3.14 s |\n|---|---|\n"
    rec = {"timings": {"x": {"seconds": 3.14159, "how": "2-core CPU, warm"}}}
    assert not problems(FAKE_PAGE, page, rec, allowed=[])
    assert problems(FAKE_PAGE, page.replace("All times warm.", "All times."), rec, allowed=[])


def test_record_entries_count_only_on_the_pages_that_quote_them():
    rec = {"timings": {"x_cold": {"seconds": 92.0, "how": "2-core CPU, cold", "pages": ["README.md"]}}}
    text = "It runs in about 1.5 min on a 2-core CPU, cold."
    assert not problems("README.md", text, rec, allowed=[])
    assert problems(OTHER_PAGE, text, rec, allowed=[])


def _doc_timings():
    import importlib.util
    spec = importlib.util.spec_from_file_location("doc_timings", os.path.join(ROOT, "bench", "doc_timings.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_measurement_script_finds_every_example_it_times():
    dt = _doc_timings()
    for name in dt.SNIPPETS:
        assert "print(" in dt.snippet(name), name
    assert dt.agreeing_digits(2.407009614285589, 2.407009613) == 9
    assert dt.agreeing_digits(1.0, 2.0) == 0
    assert dt.rounded(92.0) == "1.5 min" and dt.rounded(31.2) == "31 s" and dt.rounded(0.434) == "0.43 s"
    assert dt.quoted_on("concepts_batch_warm") == ["docs/concepts.md"]
