"""JAX's persistent compilation cache, on by default, so that a second process does not recompile.

JAX refuses to cache programs with host callbacks: gflow traces its solves with equinox's runtime checks as NaN
(the flow's compiled integration) so that they have none, but a progress meter is a callback, so only solves with
``progress=False`` are cached.

A stiff batched solve compiles for seconds to a minute; with the cache a later process loads the compiled program
from disk instead. The cache lives in ``$GFLOW_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/gflow/jax`` (default
``~/.cache/gflow/jax``). ``GFLOW_COMPILATION_CACHE=0`` turns it off; a cache directory set through JAX's own
``jax_compilation_cache_dir`` (or ``JAX_COMPILATION_CACHE_DIR``) is left as it is. Programs that compiled in under
``GFLOW_CACHE_MIN_COMPILE_S`` seconds (default 0: every program, since the many small ones a
script compiles add up to seconds on a small machine) are not written.
"""

from __future__ import annotations

import os

import jax

OFF_VALUES = ("0", "false", "off", "no")


def cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.environ.get("GFLOW_CACHE_DIR") or os.path.join(base, "gflow", "jax")


def enable_persistent_cache() -> str | None:
    """Point JAX's persistent compilation cache at :func:`cache_dir`; returns the folder (None when off)."""
    if os.environ.get("GFLOW_COMPILATION_CACHE", "1").strip().lower() in OFF_VALUES:
        return None
    if jax.config.jax_compilation_cache_dir:  # the user chose one
        return jax.config.jax_compilation_cache_dir
    path = cache_dir()
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:
        return None  # a read-only home: compile every time rather than fail
    jax.config.update("jax_compilation_cache_dir", path)
    jax.config.update("jax_persistent_cache_min_compile_time_secs",
                      float(os.environ.get("GFLOW_CACHE_MIN_COMPILE_S", "0")))
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    return path


CACHE_DIR = enable_persistent_cache()
