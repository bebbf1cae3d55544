"""Every repository path named in a docstring, a comment, the README or the docs exists.

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


def _scan(sources, named, exists) -> tuple[int, list[str]]:
    """(how many names were checked, "file:line: name" of each that does not exist) over ``sources``' lines."""
    missing, checked = [], 0
    for source in sources:
        for number, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1):
            for name in sorted(named(line)):
                checked += 1
                if not exists(name):
                    missing.append(f"{source.relative_to(ROOT)}:{number}: {name}")
    return checked, missing


def test_named_paths_exist():
    checked, missing = _scan(_sources(), _named_paths, _exists)
    assert checked > 50, f"the scan found only {checked} paths: the token pattern is broken"
    assert not missing, "paths named in the docs, the README or the code that do not exist:\n  " + "\n  ".join(missing)


def test_token_pattern():
    text = "see gflow/flow/_solve.py, `studies/balance_limit.py`; not ~/.cache/gflow/jax nor out/gflow/x.py"
    assert _named_paths(text) == {"gflow/flow/_solve.py", "studies/balance_limit.py"}
    assert _named_paths("validation/results/<study>.json and bench/results/*orders*.json.") == {
        "bench/results/*orders*.json"
    }


# a dotted gflow name (gflow.sweep.load_sweep, gflow.flow.SolveOptions), not inside a path or a longer name
NAME = re.compile(r"(?<![\w/.-])(gflow(?:\.[A-Za-z_]\w*)+)")
FILE_SUFFIXES = ("md", "py", "json", "npz", "png", "toml", "txt")


def _named_apis(line: str) -> set[str]:
    return {name for name in NAME.findall(line) if name.rsplit(".", 1)[-1] not in FILE_SUFFIXES}


def _resolves(dotted: str) -> bool:
    """Whether ``gflow.a.b`` is an attribute chain from the package, importing submodules on the way."""
    import importlib

    parts = dotted.split(".")
    obj = importlib.import_module(parts[0])
    for i, part in enumerate(parts[1:], 2):
        if not hasattr(obj, part):
            try:
                importlib.import_module(".".join(parts[:i]))
            except ImportError:
                return False
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


def test_named_gflow_apis_exist():
    """Every ``gflow.x.y`` the README or the docs name can be reached from the package (a review found
    ``gflow.load_sweep``, which is ``gflow.sweep.load_sweep``)."""
    checked, missing = _scan([ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))], _named_apis, _resolves)
    assert checked > 30, f"the scan found only {checked} names: the pattern is broken"
    assert not missing, "gflow names in the README or the docs that do not exist:\n  " + "\n  ".join(missing)


def test_name_pattern():
    assert NAME.findall("use `gflow.sweep.load_sweep(out)`, docs/api/gflow.md, gflow.md and gflow.LinearRNN.") == [
        "gflow.sweep.load_sweep", "gflow.md", "gflow.LinearRNN"]  # a path's tail is not a name; gflow.md is skipped
    assert _resolves("gflow.sweep.load_sweep") and _resolves("gflow.flow.SolveOptions")
    assert not _resolves("gflow.load_sweep")
