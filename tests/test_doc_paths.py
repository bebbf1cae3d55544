"""Every repository path named in a docstring, a comment, the README or the docs exists (issue 25).

A path is a token that starts with one of the repository's top-level folders (``gflow/``, ``studies/``, ``bench/``,
``tests/``, ``notebooks/``, ``validation/``, ``docs/``) and is not part of a longer path (``~/.cache/gflow/jax`` and
``out/balance_limit`` are not checked). A token with a wildcard (``*``) must match at least one file; a token with a
placeholder (``<study>``, ``{name}``) or a ``...`` is skipped. Files are read as text, so a path inside a string is
checked too: it is named in the code just as much.
"""

import glob
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOP = ("gflow", "studies", "bench", "tests", "notebooks", "validation", "docs")
# not preceded by a path character (so not the tail of another path or of a URL), then a top folder and a slash
TOKEN = re.compile(r"(?<![\w./~$-])((?:" + "|".join(TOP) + r")/[\w.*/<>{}-]*)")


def _sources() -> list[Path]:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    for top in ("gflow", "studies", "bench", "tests", "notebooks"):
        files += sorted((ROOT / top).rglob("*.py"))
    return [f for f in files if f.is_file() and f.resolve() != Path(__file__).resolve()]


def _named_paths(text: str) -> set[str]:
    found = set()
    for match in TOKEN.finditer(text):
        token = match.group(1).rstrip(".")
        if not token or "..." in token or re.search(r"[<>{}]", token):
            continue
        found.add(token)
    return found


def _exists(token: str) -> bool:
    if "*" in token:
        return bool(glob.glob(str(ROOT / token)))
    return (ROOT / token).exists()


def test_named_paths_exist():
    missing = []
    checked = 0
    for source in _sources():
        for number, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1):
            for token in sorted(_named_paths(line)):
                checked += 1
                if not _exists(token):
                    missing.append(f"{source.relative_to(ROOT)}:{number}: {token}")
    assert checked > 50, f"the scan found only {checked} paths: the token pattern is broken"
    assert not missing, "paths named in the docs, the README or the code that do not exist:\n  " + "\n  ".join(missing)


def test_token_pattern():
    text = "see gflow/flow/_solve.py, `studies/balance_limit.py`; not ~/.cache/gflow/jax nor out/gflow/x.py"
    assert _named_paths(text) == {"gflow/flow/_solve.py", "studies/balance_limit.py"}
    assert _named_paths("validation/results/<study>.json and bench/results/*orders*.json.") == {
        "bench/results/*orders*.json"
    }
