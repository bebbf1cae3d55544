"""The small, committed result file of a full study run: ``validation/results/<study>.json``, or
``validation/results/<study>.<block>.json`` for a run on another seed block than the exploratory one.

It holds the configuration, the provenance, the code hash of the study, the wall time, the seed block and every
check (value, interval, threshold, kind, status) — no trajectories. ``studies/validation.py`` builds VALIDATION.md
from these files only, and marks a result *stale* when :func:`study_code_hash` of today's code differs from the
recorded one.

Seed blocks. A study whose checks were written after it had been run declares a fresh *confirmatory* block of seeds
(the registry's ``confirmatory_seeds``) and takes ``--seeds-block``; its configuration then records the block as
``seeds_block``. A run on the exploratory block (or of a study without blocks) records ``<study>.json``; a run on any
other block records ``<study>.<block>.json`` beside it (e.g. ``balance_limit.confirmatory.json``), so that a
confirmatory run never overwrites the exploratory record it is shown beside (:func:`record_name`).

Parts. A study too long for one sitting runs in parts, each a full run of some of its panels whose configuration
names the part as ``record_part``; each part records ``<study>.part-<part>.json`` (``<study>.<block>.part-<part>.json``
on another block), so that the parts, run on different days, stand side by side and none overwrites another.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import sys
import time

from ..results import write_json_atomic
from ..results._provenance import PACKAGE_DIR

EXPLORATORY_BLOCK = "exploratory"
"""The seed block a study was first run on; its record is ``<study>.json``."""


PART_PREFIX = "part-"
"""What precedes a part's name in its record's file name."""


def _file_name_piece(what: str, value) -> str:
    if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z0-9_-]+", value):
        raise ValueError(f"{what} must be a name of letters, digits, '_' and '-', got {value!r}")
    return value


def record_block(config: dict) -> str | None:
    """The seed block a run's record belongs to.

    Args:
        config: the run's configuration (its ``seeds_block``, where the study has seed blocks).

    Returns:
        ``config["seeds_block"]`` when it names a block other than :data:`EXPLORATORY_BLOCK`; None otherwise (the
        exploratory block, or a study without blocks).

    Raises:
        ValueError: for a block name that cannot be part of a file name (letters, digits, ``_`` and ``-`` only).
    """
    block = (config or {}).get("seeds_block")
    if block is None or block == EXPLORATORY_BLOCK:
        return None
    if isinstance(block, str) and block.startswith(PART_PREFIX):
        raise ValueError(f"seeds_block must not start with {PART_PREFIX!r} (a part's record), got {block!r}")
    return _file_name_piece("seeds_block", block)


def record_part(config: dict) -> str | None:
    """The part of a study a run's record holds.

    Args:
        config: the run's configuration (its ``record_part``, where the study runs in parts).

    Returns:
        ``config["record_part"]``, or None for a run of the whole study.

    Raises:
        ValueError: for a part name that cannot be part of a file name (letters, digits, ``_`` and ``-`` only).
    """
    part = (config or {}).get("record_part")
    return None if part is None else _file_name_piece("record_part", part)


def record_name(study: str, block: str | None = None, part: str | None = None) -> str:
    """The file name of a study's record.

    Args:
        study: the study's name.
        block: its seed block (:func:`record_block`; None: the exploratory block).
        part: the part of the study it holds (:func:`record_part`; None: the whole study).

    Returns:
        ``"<study>.json"``; ``"<study>.<block>.json"`` for another block; ``.part-<part>`` before ``.json`` for a part.
    """
    stem = study if block is None else f"{study}.{block}"
    return f"{stem}.json" if part is None else f"{stem}.{PART_PREFIX}{part}.json"


def result_file_name(result: dict) -> str:
    """The file name a recorded result lives in (:func:`record_name` of its study, seed block and part)."""
    return record_name(result["study"], result_block(result), result.get("record_part"))


def result_block(result: dict) -> str | None:
    """The seed block of a recorded result.

    Args:
        result: a result file's content (:func:`load_results`).

    Returns:
        Its ``seeds_block`` (None for the exploratory block or a study without blocks).
    """
    block = result.get("seeds_block")
    return None if block in (None, EXPLORATORY_BLOCK) else block


def _running_studies_dir() -> str | None:
    """The ``studies/`` folder of the script being run (``python studies/<study>.py``), or None."""
    main = getattr(sys.modules.get("__main__"), "__file__", None)
    folder = os.path.dirname(os.path.abspath(main)) if main else None
    return folder if folder and os.path.basename(folder) == "studies" else None


def default_results_dir() -> str:
    """Where a full run records its result.

    Returns:
        ``validation/results`` of the checkout whose study is running; "" (record nothing) otherwise.
    """
    studies = _running_studies_dir()
    return os.path.join(os.path.dirname(studies), "validation", "results") if studies else ""


def study_code_hash(study: str, studies_dir: str) -> str | None:
    """The hash that marks a recorded result stale when the code that produced it changes.

    Args:
        study: the study's name.
        studies_dir: the ``studies/`` folder.

    Returns:
        SHA-256 over gflow's source (every ``.py``; the claims registry, validation/registry.toml, is data that
        VALIDATION.md reads, so editing it stales no result), ``studies/<study>.py`` and the modules of ``studies/``
        it imports; None when the script is not there.
    """
    script = os.path.join(studies_dir, f"{study}.py")
    if not os.path.isfile(script):
        return None
    gflow_files = sorted(os.path.join(base, f) for base, _, names in os.walk(PACKAGE_DIR) for f in names
                         if f.endswith(".py"))
    h = hashlib.sha256()
    for path in gflow_files + [script] + _local_imports(script, studies_dir):
        with open(path, "rb") as f:
            rel = os.path.relpath(path, os.path.dirname(PACKAGE_DIR)).replace(os.sep, "/")
            h.update(rel.encode() + b"\0" + f.read() + b"\0")
    return h.hexdigest()


_code_at_start: dict[str, str | None] = {}  # study -> its code hash when its parser was built (the run's start)


def note_code_at_start() -> None:
    """Hash the running study's code as it starts (:func:`study_parser` calls this), so that its result records the
    code that produced it: a file edited during a long run then makes the result stale, not falsely current."""
    studies = _running_studies_dir()
    if studies:
        study = os.path.splitext(os.path.basename(sys.modules["__main__"].__file__))[0]
        _code_at_start[study] = study_code_hash(study, studies)


def _local_imports(script: str, studies_dir: str) -> list[str]:
    with open(script) as f:
        tree = ast.parse(f.read())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return sorted(os.path.join(studies_dir, f"{n}.py") for n in names
                  if os.path.isfile(os.path.join(studies_dir, f"{n}.py")))


def record_result(folder: str, summary: dict, studies_dir: str | None = None) -> str:
    """Write ``folder/<study>.json``, or ``folder/<study>.<block>.json`` for a run on a seed block other than the
    exploratory one, ``.part-<part>`` before ``.json`` for a part (:func:`record_name`), from a full run's summary
    (atomically).

    Args:
        folder: the results folder (validation/results).
        summary: the run's summary (:func:`write_summary`).
        studies_dir: where the study's code is hashed when no hash was noted at its start (default: the running
            script's folder, else ``<folder>/../../studies``).

    Returns:
        The path written. Its code hash is the one noted when the run started (:func:`note_code_at_start`); its
        ``seeds_block`` is the configuration's (None for a study without blocks).
    """
    study = summary["study"]
    studies_dir = studies_dir or _running_studies_dir() or os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(folder))), "studies")
    config = {k: v for k, v in summary["config"].items() if k not in ("out", "record")}
    block, part = record_block(config), record_part(config)
    result = {"study": study, "recorded": time.strftime("%Y-%m-%d"),
              "code_hash": _code_at_start.get(study) or study_code_hash(study, studies_dir),
              "wall_time_s": round(float(summary["wall_time_s"]), 1), "config": config,
              "provenance": summary["provenance"], "checks": summary["checks"]}
    if "seeds_block" in config:
        result["seeds_block"] = config["seeds_block"]
    if part is not None:
        result["record_part"] = part
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, record_name(study, block, part))
    write_json_atomic(path, result, indent=1, ensure_ascii=False, final_newline=True)
    return path


def load_results(folder: str) -> list[dict]:
    """The recorded results.

    Args:
        folder: the results folder.

    Returns:
        Every ``<study>.json``, ``<study>.<block>.json`` and part record in ``folder``, sorted by study, each study's
        exploratory records first, parts after the whole (empty when the folder does not exist). A block or part
        record that does not say its block or part gets ``seeds_block`` or ``record_part`` from its file name.
    """
    if not os.path.isdir(folder):
        return []
    out = []
    for name in os.listdir(folder):
        if name.endswith(".json"):
            with open(os.path.join(folder, name)) as f:
                result = json.load(f)
            stem = name[:-len(".json")]
            if f".{PART_PREFIX}" in stem:
                stem, part = stem.split(f".{PART_PREFIX}", 1)
                result.setdefault("record_part", part)
            if stem != result.get("study") and stem.startswith(f"{result.get('study')}."):
                result.setdefault("seeds_block", stem[len(result["study"]) + 1:])
            out.append(result)
    return sorted(out, key=lambda r: (r["study"], result_block(r) is not None, result_block(r) or "",
                                      r.get("record_part") or ""))
