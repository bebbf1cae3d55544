"""References a reader of a checkout can follow.

No ticket numbers ("issue N", "(#N)": say what, not which ticket), no citations of the distilled specs ("spec NNN §x":
cite the paper's own equation, theorem or section, docs/sources.md), no paths outside the repository (the folder
of distilled specs beside a checkout), and no private module paths (a ``gflow/…/_name.py``) in the docs or in the
docstrings the API pages render. The scan covers the library, the studies, the bench, the tests, the docs, the
notebooks, the README and the hand-written notes in validation/ (not validation/results/, nor VALIDATION.md, which is
generated). Each rule is shown to fire on a
planted example first, so that a scan that finds nothing means something.
"""

import ast
import os
import re

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
FOLDERS = ("gflow", "studies", "bench", "tests", "docs", "notebooks")
TOP_FILES = ("README.md",)
SUFFIXES = (".py", ".md")

RULES = {
    "ticket number": re.compile(r"\b[Ii]ssues? #?\d+|\(#\d+\)"),
    "spec citation": re.compile(r"\b[Ss]pec \d{3}\b"),
    "path outside the repository": re.compile(r"\.\./shared\b"),
}
# a private gflow module named by its path (gflow/flow/_solve.py) or bare (_refill.py); not __init__.py, and not
# a private script of another folder (bench/_problems.py), which is a file a reader can open
PRIVATE_PATH = re.compile(r"(?<![\w./])(?:gflow/(?:\w+/)*)?_(?!_)\w+\.py\b")


def _files():
    """Every scanned file, as a path relative to the repository root."""
    out = [name for name in TOP_FILES if os.path.isfile(os.path.join(ROOT, name))]
    validation = os.path.join(ROOT, "validation")
    if os.path.isdir(validation):
        out += [f"validation/{name}" for name in sorted(os.listdir(validation)) if name.endswith(".md")]
    for folder in FOLDERS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, folder)):
            dirnames[:] = sorted(d for d in dirnames if d not in ("__pycache__", "results", "images"))
            out += [os.path.relpath(os.path.join(dirpath, name), ROOT) for name in sorted(filenames)
                    if name.endswith(SUFFIXES)]
    return out


def findings(text: str, private_paths: bool = False) -> list[tuple[int, str, str]]:
    """(line, rule, matched text) for every reference in ``text`` a checkout cannot follow.

    Args:
        text: The text to scan.
        private_paths: Also report private module paths (for docs and rendered docstrings).

    Returns:
        The findings in order of line.
    """
    rules = dict(RULES, **({"private module path": PRIVATE_PATH} if private_paths else {}))
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        for rule, pattern in rules.items():
            out += [(number, rule, m.group(0)) for m in pattern.finditer(line)]
    return out


def _public(name: str) -> bool:
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def public_docstrings(source: str, module_is_public: bool) -> list[tuple[int, str]]:
    """(first line, text) of every docstring of ``source`` that the API pages can render.

    Args:
        source: A module's Python source.
        module_is_public: Whether the module itself is public (no path component with a leading underscore), so
            that its own docstring is rendered.

    Returns:
        The docstrings of the module (if public), of public classes and functions not nested in a private one,
        and of the attributes of those classes (a string under an annotated field).
    """
    tree = ast.parse(source)
    out = []
    if module_is_public and ast.get_docstring(tree, clean=False) is not None:
        out.append((tree.body[0].lineno, ast.get_docstring(tree, clean=False)))

    def visit(body):
        previous = None
        for node in body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and _public(node.name):
                doc = ast.get_docstring(node, clean=False)
                if doc is not None:
                    out.append((node.body[0].lineno, doc))
                if isinstance(node, ast.ClassDef):
                    visit(node.body)
            elif (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                  and isinstance(node.value.value, str) and isinstance(previous, ast.AnnAssign)
                  and isinstance(previous.target, ast.Name) and _public(previous.target.id)):
                out.append((node.lineno, node.value.value))
            previous = node

    visit(tree.body)
    return out


def _module_is_public(path: str) -> bool:
    parts = path[:-3].split("/")
    return all(_public(part) for part in parts)


def file_findings(path: str, text: str) -> list[str]:
    """Every finding of one file, as ``path:line: rule: text``.

    Args:
        path: The file's path relative to the repository root.
        text: Its contents.

    Returns:
        The rules of :data:`RULES` everywhere in the file; private module paths as well in the docs, the README
        and the notebooks (all of them is read by users) and in the library's rendered docstrings.
    """
    readable = path.endswith(".md") or path.startswith("notebooks/")
    found = [(line, rule, hit) for line, rule, hit in findings(text, private_paths=readable)]
    if path.startswith("gflow/") and path.endswith(".py"):
        for first, doc in public_docstrings(text, _module_is_public(path)):
            found += [(first + line - 1, rule, hit) for line, rule, hit in findings(doc, private_paths=True)
                      if rule == "private module path"]
    return [f"{path}:{line}: {rule}: {hit}" for line, rule, hit in sorted(set(found))]


# -- the rules fire on planted examples (built from pieces, so that this file does not match itself) ------------

TICKET, SPEC, SHARED = "is" + "sue", "sp" + "ec", "../" + "shared"


@pytest.mark.parametrize("text, rule", [
    (f"the descent guard ({TICKET} 24)", "ticket number"),
    (f"see {TICKET.capitalize()}s 28 and 29", "ticket number"),
    (f"fixed in {TICKET} #7", "ticket number"),
    ("fixed upstream (#" "123)", "ticket number"),
    (f"Population loss ({SPEC} 000 §2.2)", "spec citation"),
    (f"{SPEC.capitalize()} 003 P2", "spec citation"),
    (f"the text is in `{SHARED}/seeds/`", "path outside the repository"),
])
def test_each_rule_fires_on_a_planted_example(text, rule):
    assert [r for _, r, _ in findings(text)] == [rule]


def test_private_paths_fire_only_where_asked():
    text = ("integrated by gflow/flow/" "_solve.py, refilled in " "_refill.py; see gflow/__init__.py, gflow/plot.py and "
            "bench/_problems.py")
    assert [hit for _, _, hit in findings(text, private_paths=True)] == ["gflow/flow/" "_solve.py", "_refill.py"]
    assert findings(text) == []


def test_clean_text_has_no_findings():
    text = ("seed 000 eq. 3.4 and Lemma E.1; prediction 000-P10; an issue with the step size; 3 issues remain; "
            "see `gflow.flow.solve_flows` and docs/sources.md; # 12 items")
    assert findings(text, private_paths=True) == []


def test_public_docstrings_are_scanned_and_private_ones_are_not():
    private = "gflow/flow/" "_refill.py"
    source = (f'"""Module: {private}."""\n\n'
              f'class Public:\n    """Uses {private}."""\n\n    field: int\n    """Held by {private}."""\n\n'
              f'    def _helper(self):\n        """Calls {private}."""\n\n'
              f'def _private():\n    """Calls {private}."""\n')
    public, private, study = ("gflow" + "/thing.py", "gflow" + "/_thing.py", "studies" + "/thing.py")  # not real files
    assert [entry.split(":")[1] for entry in file_findings(public, source)] == ["1", "4", "7"]
    assert [entry.split(":")[1] for entry in file_findings(private, source)] == ["4", "7"]
    assert file_findings(study, source) == []  # a study's docstrings are not API pages


def test_the_scan_covers_the_tree():
    files = _files()
    for expected in ("README.md", "docs/sources.md", "gflow/__init__.py", "tests/test_references.py"):
        assert expected in files
    assert not any(f.startswith("validation/results/") or f == "VALIDATION.md" for f in files)


# -- the repository ----------------------------------------------------------------------------------------------


def test_references_resolve():
    found = []
    for path in _files():
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            found += file_findings(path, f.read())
    assert not found, f"{len(found)} references a checkout cannot follow:\n" + "\n".join(found)
