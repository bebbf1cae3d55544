"""The layers of docs/design.md, one way: a subpackage of gflow imports only from the layers it builds on.
Data layers (models, objectives, results) never import an integrator; analysis never integrates; the two integrators
(flow, discrete) stand side by side on the run layer, neither importing the other."""

from __future__ import annotations

import ast
import os

import pytest

GFLOW = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "gflow")
BASE = {"_checks", "_dtype", "_compilation_cache", "stacking"}
# layer -> the layers it may import from (besides itself and BASE)
ALLOWED = {
    "base": set(),
    "models": set(),
    "objectives": {"models"},
    "results": {"models", "objectives"},
    "run": {"models", "objectives", "results"},  # what every run shares: options, validation, progress, assembly
    "flow": {"models", "objectives", "results", "run"},
    "discrete": {"models", "objectives", "results", "run"},
    "sweep": {"models", "objectives", "results", "run", "flow", "discrete"},
    "analysis": {"models", "objectives", "results"},
    # the papers' problems (teachers, losses, initializations, students, sweep helpers, figures) that studies, bench and
    # tests share; plot: the studies' figures are drawn next to their problem
    "problems": {"models", "objectives", "results", "run", "flow", "discrete", "sweep", "analysis", "plot"},
    "study": {"results", "analysis", "flow"},  # flow: DEFAULT_RTOL and RTOL_RANGE for --rtol
    "plot": {"models", "results"},  # pictures of results (gflow/plot.py); never integrates
}


def layer_of(module: str) -> str:
    """'gflow.flow._solve' -> 'flow'; the top-level infrastructure modules -> 'base'."""
    top = module.split(".")[1]
    return "base" if top in BASE else top


def gflow_imports(path: str, module: str) -> set[str]:
    """Absolute names of the gflow modules (or names) that ``path`` (module ``module``) imports."""
    package = module.split(".")[:-1] if not path.endswith("__init__.py") else module.split(".")
    found = set()
    for node in ast.walk(ast.parse(open(path).read())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
                found |= {f"{target}.{a.name}" if not node.module else target for a in node.names}
            elif node.module and node.module.split(".")[0] == "gflow":
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "gflow"}
    return {f for f in found if f.count(".") >= 1}


def _modules():
    for dirpath, _, files in os.walk(GFLOW):
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, os.path.dirname(GFLOW))[:-3].replace(os.sep, ".")
                if rel != "gflow.__init__":
                    yield path, rel.removesuffix(".__init__")


@pytest.mark.parametrize("path,module", list(_modules()), ids=lambda x: x if "." in str(x) else "")
def test_imports_follow_the_layers(path, module):
    own = layer_of(module)
    bad = sorted(f for f in gflow_imports(path, module)
                 if layer_of(f) not in ALLOWED[own] | {own, "base"})
    assert bad == [], f"{module} ({own}) imports {bad}; allowed: {sorted(ALLOWED[own] | {own, 'base'})}"


def private_names_from_other_layers(path: str, module: str) -> list[str]:
    """The private names (a leading underscore) that ``path`` imports from a module of another layer: what a layer
    offers the layers above it has a public name, even inside a private module."""
    package = module.split(".")[:-1] if not path.endswith("__init__.py") else module.split(".")
    found = []
    for node in ast.walk(ast.parse(open(path).read())):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").split(".")[0] == "gflow"):
            base = package[: len(package) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            if target.count(".") >= 1 and layer_of(target) != layer_of(module):
                found += [f"{target}.{a.name}" for a in node.names if a.name.startswith("_")
                          and not a.name.startswith("__")]
    return found


@pytest.mark.parametrize("path,module", list(_modules()), ids=lambda x: x if "." in str(x) else "")
def test_no_private_names_cross_a_layer(path, module):
    assert private_names_from_other_layers(path, module) == []


def test_the_layer_check_can_fail():
    assert layer_of("gflow.discrete._runners") not in ALLOWED["objectives"] | {"objectives", "base"}
    assert layer_of("gflow.flow._solve") not in ALLOWED["discrete"] | {"discrete", "base"}


def test_the_private_name_check_can_fail(tmp_path):
    path = tmp_path / "_runners.py"
    path.write_text("from ..flow._solve import _check_model_and_loss, solve_flow\nfrom ._schedules import _private\n")
    assert private_names_from_other_layers(str(path), "gflow.discrete._runners") == [
        "gflow.flow._solve._check_model_and_loss"]
