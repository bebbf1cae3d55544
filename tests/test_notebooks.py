"""The plain-text notebooks in notebooks/ run end to end on a small trajectory and write their figures."""

import os
import runpy

import jax
import matplotlib
import numpy as np
import pytest

import gflow
from gflow import analysis, initializers, teachers

NOTEBOOKS = os.path.join(os.path.dirname(__file__), "..", "notebooks")


@pytest.fixture(autouse=True)
def _headless(monkeypatch):
    matplotlib.use("Agg")


def test_trajectory_notebook(tmp_path, monkeypatch):
    loss = gflow.PopulationLoss(teachers.balanced(jax.random.key(0), 2), 5)
    model0 = initializers.gaussian(jax.random.key(1), 4, scale=1e-2)
    traj = gflow.solve_flow(loss, model0, 30.0, save_at=12, progress=False,
                            diagnostics={"rho_bal": analysis.balance_ratio})
    traj.save(str(tmp_path / "run"))
    monkeypatch.setenv("GFLOW_TRAJECTORY", str(tmp_path / "run"))
    monkeypatch.setenv("GFLOW_TEACHER_DIM", "2")  # the teacher of this run, for the impulse-response overlay
    monkeypatch.setenv("GFLOW_NOTEBOOK_OUT", str(tmp_path))
    ns = runpy.run_path(os.path.join(NOTEBOOKS, "trajectory.py"))
    assert ns["eigenvalues"].shape == (12, 4)
    np.testing.assert_allclose(ns["rho"], traj.diagnostics["rho_bal"])
    assert ns["teacher"].A.shape == (2,)
    for name in ("loss_and_balance.png", "eigenvalues.png", "impulse_responses.png"):
        assert (tmp_path / name).stat().st_size > 1000


@pytest.mark.slow
def test_extrapolation_notebook_quick(tmp_path, monkeypatch):
    monkeypatch.setenv("GFLOW_NOTEBOOK_QUICK", "1")
    monkeypatch.setenv("GFLOW_NOTEBOOK_OUT", str(tmp_path))
    ns = runpy.run_path(os.path.join(NOTEBOOKS, "extrapolation.py"))
    errors, ks = ns["errors"], ns["ks"]
    assert len(errors) == len(ks) and np.all(np.isfinite(errors))
    # the text's transition is read off the printed errors: from k_after on every student's tail error is below a
    # tenth of the zero solution's, at k_before it is not
    zero, threshold = ns["zero"], ns["EXTRAPOLATES"]
    i = ks.index(ns["k_after"])
    assert ns["k_before"] == ks[i - 1] and errors[i - 1] >= threshold * zero[i - 1]
    assert np.all(errors[i:] < threshold * zero[i:])
    assert ns["k_before"] >= 2 * ns["TEACHER_DIM"]  # this run's drop lies at or past the theory's 2 d̂, not before
    assert all(tr.status == "completed" for tr in ns["trajs"])
    for name in ("extrapolation_vs_k.png", "losses_and_impulse_responses.png"):
        assert (tmp_path / name).stat().st_size > 1000


def _gallery():
    """docs/gallery.py, the mkdocs hook that renders the notebooks as the examples gallery."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("gallery", os.path.join(NOTEBOOKS, "..", "docs", "gallery.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_notebook_is_a_gallery_page_in_the_nav():
    import yaml

    names = sorted(f[:-3] for f in os.listdir(NOTEBOOKS) if f.endswith(".py") and not f.startswith("_"))
    assert names
    with open(os.path.join(NOTEBOOKS, "..", "mkdocs.yml"), encoding="utf-8") as f:
        config = yaml.load(f, Loader=yaml.BaseLoader)  # BaseLoader: mkdocs.yml's !!python tags stay unread
    examples = next(entry["Examples"] for entry in config["nav"] if isinstance(entry, dict) and "Examples" in entry)
    assert examples[0] == "examples/index.md"
    assert sorted(examples[1:]) == [f"examples/{name}.md" for name in names]
    assert "docs/gallery.py" in config["hooks"]


def test_gallery_pages_keep_every_cell_and_show_the_committed_figures():
    gallery = _gallery()
    figures_root = os.path.join(NOTEBOOKS, "..", "docs", gallery.FIGURES)
    for filename in ("trajectory.py", "extrapolation.py"):
        name = filename[:-3]
        with open(os.path.join(NOTEBOOKS, filename), encoding="utf-8") as f:
            text = f.read()
        cells = gallery.cells(text)
        code = [source for kind, source in cells if kind == "code"]
        assert code and all(source in text for source in code)  # code cells verbatim
        assert not any(source.startswith("# ---") for _, source in cells)  # the jupytext header is dropped
        figures = set(os.listdir(os.path.join(figures_root, name)))
        page = gallery.notebook_page(name, text, figures)
        saved = [fig for source in code for fig in gallery._SAVED.findall(source)]
        assert saved and set(saved) <= figures  # every figure the notebook saves is committed and shown
        for fig in saved:
            assert f"](../{gallery.FIGURES}/{name}/{fig})" in page
        assert page.count("```python") == len(code)
        title, summary = gallery.title_and_summary(text, name)
        assert title != name and summary and page.startswith(f"# {title}")
    index = gallery.index_page([("trajectory", "A title", "A summary.")])
    assert "## [A title](trajectory.md)" in index and "A summary." in index
