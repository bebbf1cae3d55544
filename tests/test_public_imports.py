"""Studies, bench, notebooks and tests use gflow through its public names only: no import of a
private module or name (a path component starting with ``_``), and no ``sys.path`` edits in the scripts."""

from __future__ import annotations

import ast
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FOLDERS = ("studies", "bench", "notebooks", "tests")


def _sources():
    for folder in FOLDERS:
        for dirpath, _, files in os.walk(os.path.join(ROOT, folder)):
            for name in sorted(files):
                if name.endswith(".py"):
                    yield os.path.relpath(os.path.join(dirpath, name), ROOT)


def private_gflow_uses(source: str) -> list[str]:
    """Every ``gflow…._x`` import or attribute chain in ``source`` (dunder names such as ``__version__`` allowed)."""
    found = []

    def private(parts):
        return parts[0] == "gflow" and any(p.startswith("_") and not p.startswith("__") for p in parts[1:])

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            parts = node.module.split(".")
            if private(parts) or (parts[0] == "gflow" and private(["gflow", *(a.name for a in node.names)])):
                found.append(f"line {node.lineno}: from {node.module} import {', '.join(a.name for a in node.names)}")
        elif isinstance(node, ast.Import):
            found += [f"line {node.lineno}: import {a.name}" for a in node.names if private(a.name.split("."))]
        elif isinstance(node, ast.Attribute):
            chain, inner = [node.attr], node.value
            while isinstance(inner, ast.Attribute):
                chain.insert(0, inner.attr)
                inner = inner.value
            if isinstance(inner, ast.Name) and private([inner.id, *chain]):
                found.append(f"line {node.lineno}: {'.'.join([inner.id, *chain])}")
    return found


def test_the_detector_sees_private_uses():
    bad = "import gflow\nfrom gflow._flow import x\nfrom gflow.flow import _solve\nimport gflow._json\ngflow.flow._solve.y\n"
    assert {use.split(':')[0] for use in private_gflow_uses(bad)} == {'line 2', 'line 3', 'line 4', 'line 5'}
    assert private_gflow_uses("import gflow\ngflow.flow.solve_flow\ngflow.__version__\nfrom gflow.study import check\n") == []


@pytest.mark.slow
@pytest.mark.parametrize("path", list(_sources()))
def test_no_private_gflow_imports(path):
    source = open(os.path.join(ROOT, path)).read()
    if path == os.path.join("tests", "test_public_imports.py"):
        source = source.split("def test_the_detector_sees_private_uses")[0]
    assert private_gflow_uses(source) == [], f"{path} uses private gflow names"


@pytest.mark.parametrize("path", [p for p in _sources() if not p.startswith("tests")])
def test_scripts_do_not_edit_sys_path(path):
    source = open(os.path.join(ROOT, path)).read()
    assert "sys.path.insert" not in source and "sys.path.append" not in source, path
