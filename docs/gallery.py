"""MkDocs hook (mkdocs.yml, ``hooks:``): the plain-text notebooks in ``notebooks/`` as pages of an examples gallery.

Each notebook is a jupytext "percent" script. Its ``# %% [markdown]`` cells become Markdown and its code cells
Python code blocks, in order; a figure the code saves with ``fig.savefig(os.path.join(figures_out, "name.png"))`` is
shown under its cell when a copy is committed as ``docs/images/examples/<notebook>/name.png``, and the run that
made those copies is described by ``docs/images/examples/<notebook>/about.txt`` (Markdown). The pages are
generated at build time (``examples/<notebook>.md``), with an index (``examples/index.md``) listing every notebook
by its title and first paragraph, so the gallery cannot drift from the notebooks and needs no extra dependency.
"""

from __future__ import annotations

import os
import re

from mkdocs.structure.files import File

GALLERY = "examples"
NOTEBOOKS = "notebooks"
FIGURES = "images/examples"  # inside docs/
_SAVED = re.compile(r"""savefig\(\s*os\.path\.join\(\s*figures_out\s*,\s*["']([^"']+)["']""")


def cells(text: str) -> list[tuple[str, str]]:
    """The notebook ``text`` as (kind, source) pairs, kind ``"markdown"`` or ``"code"``, without the jupytext header.

    Args:
        text: A jupytext percent-format script.

    Returns:
        The cells in order; a markdown cell's lines have their leading ``# `` removed, a code cell keeps its source
        with blank lines trimmed at both ends. Text before the first ``# %%`` marker (the header) is dropped.
    """
    out: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("# %%"):
            out.append(("markdown" if "[markdown]" in line else "code", []))
        elif out:
            out[-1][1].append(line)
    result = []
    for kind, lines in out:
        if kind == "markdown":
            lines = [line[2:] if line.startswith("# ") else line.lstrip("#") for line in lines]
        source = "\n".join(lines).strip("\n")
        if source.strip():
            result.append((kind, source))
    return result


def title_and_summary(text: str, default: str) -> tuple[str, str]:
    """The notebook's title (its first Markdown heading) and its first paragraph of prose.

    Args:
        text: A jupytext percent-format script.
        default: The title when the notebook has no heading.

    Returns:
        ``(title, summary)``; the summary is empty when there is no paragraph after the heading.
    """
    title, summary = default, ""
    for kind, source in cells(text):
        if kind != "markdown":
            continue
        paragraphs = [p.strip() for p in source.split("\n\n") if p.strip()]
        if paragraphs and paragraphs[0].startswith("# "):
            title = paragraphs[0][2:].strip()
            paragraphs = paragraphs[1:]
        if paragraphs:
            summary = " ".join(paragraphs[0].split())
        break
    return title, summary


def notebook_page(name: str, text: str, figures: set[str], about: str = "") -> str:
    """The Markdown page of notebook ``name`` (its file stem).

    Args:
        name: The notebook's file stem, e.g. ``"trajectory"``.
        text: Its jupytext percent-format source.
        figures: The file names of its committed figures (``docs/images/examples/<name>/``).
        about: How those figures were made (Markdown), shown under the note on how to run the notebook.

    Returns:
        Markdown: the markdown cells as written, the code cells as Python blocks, each committed figure a cell
        saves shown under that cell.
    """
    parts = []
    body = cells(text)
    heading_done = False
    for kind, source in body:
        if kind == "markdown":
            parts.append(source)
            if not heading_done and source.lstrip().startswith("# "):
                heading_done = True
                parts.append(f'!!! note "Run it"\n    The source is `{NOTEBOOKS}/{name}.py`. Run it as a script '
                             "(`python notebooks/" + name + ".py`), or open it in Jupyter with jupytext or in VS Code "
                             "as a notebook." + (f" {about.strip()}" if about.strip() else ""))
            continue
        parts.append(f"```python\n{source}\n```")
        for figure in _SAVED.findall(source):
            if figure in figures:
                parts.append(f"![{figure}](../{FIGURES}/{name}/{figure})")
    return "\n\n".join(parts) + "\n"


def index_page(entries: list[tuple[str, str, str]]) -> str:
    """The gallery's index: one section per notebook, its title linking to its page, then its summary.

    Args:
        entries: ``(name, title, summary)`` for each notebook, in the order shown.

    Returns:
        Markdown.
    """
    lines = ["# Examples", "",
             f"The notebooks in `{NOTEBOOKS}/`, rendered. Each is a plain Python script in jupytext's percent format: "
             "run it as it is, or open it as a notebook. The figures shown were made by the notebooks themselves "
             "(on small runs, so that the gallery can be rebuilt in minutes).", ""]
    for name, title, summary in entries:
        lines += [f"## [{title}]({name}.md)", "", summary, ""]
    return "\n".join(lines)


def on_files(files, config):
    """Add ``examples/index.md`` and one ``examples/<notebook>.md`` per notebook to the site's files."""
    root = os.path.dirname(os.path.abspath(config["config_file_path"]))
    folder = os.path.join(root, NOTEBOOKS)
    entries = []
    for filename in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if not filename.endswith(".py") or filename.startswith("_"):
            continue
        name = filename[:-3]
        with open(os.path.join(folder, filename), encoding="utf-8") as f:
            text = f.read()
        figure_dir = os.path.join(config["docs_dir"], FIGURES, name)
        figures = set(os.listdir(figure_dir)) if os.path.isdir(figure_dir) else set()
        about = ""
        if "about.txt" in figures:
            with open(os.path.join(figure_dir, "about.txt"), encoding="utf-8") as f:
                about = " ".join(f.read().split())
        page = notebook_page(name, text, figures, about)
        files.append(File.generated(config, f"{GALLERY}/{name}.md", content=page))
        entries.append((name, *title_and_summary(text, name)))
    files.append(File.generated(config, f"{GALLERY}/index.md", content=index_page(entries)))
    return files
