"""Griffe extension for the API pages (mkdocs.yml): what gflow's docstrings need to render as Markdown.

- A name a gflow package re-exports with ``from ._x import y as y`` is public. gflow's ``__init__.py`` files re-export
  their public names explicitly instead of listing them in ``__all__``; griffe counts an imported name as private
  unless told, so without this the API pages would be empty.
- The docstrings are written for reading in the source, with a few reStructuredText habits: roles
  (``:func:`solve_flow```) become code spans, and simple tables (rows between ``=====  =====`` rules) are shown as
  preformatted text instead of being reflowed into one paragraph.
"""

import re

import griffe

_ROLE = re.compile(r":(?:func|class|meth|data|attr|mod|exc|obj|const|ref|py:\w+):`~?([^`]+)`")
_RULE = re.compile(r"^\s*=+(\s+=+)+\s*$")


def markdown_docstring(text: str) -> str:
    """The docstring ``text`` with roles as code spans and simple tables fenced as text."""
    text = _ROLE.sub(r"`\1`", text)
    lines, out, rules = text.split("\n"), [], 0
    for line in lines:
        if _RULE.match(line):
            rules += 1
            if rules % 2 == 1:
                out += ["", "```text", line]
                continue
            out += [line, "```", ""]
            continue
        out.append(line)
    return "\n".join(out) if rules % 2 == 0 else text


class ReExports(griffe.Extension):
    def on_alias(self, *, alias: griffe.Alias, **kwargs) -> None:
        parent = alias.parent
        if (
            parent is not None
            and parent.is_module
            and parent.is_init_module
            and parent.path != "gflow"
            and not alias.name.startswith("_")
            and alias.target_path.startswith("gflow.")
        ):
            alias.public = True

    def on_instance(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown_docstring(obj.docstring.value)
