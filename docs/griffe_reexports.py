"""Griffe extension for the API pages (mkdocs.yml): what gflow's docstrings need to render as Markdown.

- A name a gflow package re-exports with ``from ._x import y as y`` is public. gflow's ``__init__.py`` files re-export
  their public names explicitly instead of listing them in ``__all__``; griffe counts an imported name as private
  unless told, so without this the API pages would be empty.
- The docstrings are written for reading in the source, with a few reStructuredText habits: roles
  (``:func:`solve_flow```) become cross-references to the named object's entry in the API pages (resolved in the
  docstring's scope; an object with no entry is shown as a plain code span, never a broken link), and simple tables
  (rows between ``=====  =====`` rules) are shown as preformatted text instead of being reflowed into one paragraph.
"""

import re

import griffe

_ROLE = re.compile(r":(?:func|class|meth|data|attr|mod|exc|obj|const|ref|py:\w+):`(~?[^`]+)`")
_RULE = re.compile(r"^\s*=+(\s+=+)+\s*$")


def _reference(name: str, obj: "griffe.Object | None") -> str:
    """A role's target as an optional cross-reference (autorefs drops the link, keeping the code span, when the
    target has no entry in the pages), or as a code span where the name does not resolve from ``obj``'s scope."""
    shown = name.rsplit(".", 1)[-1] if name.startswith("~") else name
    name = name.lstrip("~").removesuffix("()")
    target = name if name.startswith("gflow.") else None
    if target is None and obj is not None:
        head, _, rest = name.partition(".")
        scope = obj if obj.is_class or obj.is_module else obj.parent
        while scope is not None and target is None:
            try:
                target = scope.resolve(head) + ("." + rest if rest else "")
            except Exception:  # a name the scope does not bind (griffe.NameResolutionError) or a broken alias
                scope = scope.parent
    if target is None:
        return f"`{shown}`"
    return f'<autoref identifier="{target}" optional><code>{shown}</code></autoref>'


def markdown_docstring(text: str, obj: "griffe.Object | None" = None) -> str:
    """The docstring ``text`` with roles as cross-references (code spans where a name does not resolve from
    ``obj``'s scope) and simple tables fenced as text."""
    text = _ROLE.sub(lambda m: _reference(m.group(1), obj), text)
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
            obj.docstring.value = markdown_docstring(obj.docstring.value, obj)
