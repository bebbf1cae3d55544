"""Griffe extension for the API pages: a name a gflow package re-exports with ``from ._x import y as y`` is public.

gflow's ``__init__.py`` files re-export their public names explicitly (``import y as y``) instead of listing them in
``__all__``; griffe counts an imported name as private unless told, so without this the API pages would be empty.
"""

import griffe


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
