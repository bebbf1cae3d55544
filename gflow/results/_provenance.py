"""What made a result: gflow's version and source, the git commit and whether the checkout was dirty, the package
versions, the command line and the device (docs/design.md, "Results and provenance").

:func:`source_hash` is the SHA-256 of every ``.py`` file of the installed gflow package: a result computed by other
gflow code has another hash, so cached runs from other code are recomputed (gflow/sweep). :func:`function_hash`
does the same for a function a study hands to gflow (``build``, ``record``), from its source text.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import os
import platform
import subprocess
import sys

from .._compilation_cache import package_source_hash

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def package_versions() -> dict[str, str]:
    """Python's and the packages' versions (read once per process: the metadata lookup costs ~20 ms, which a
    sweep used to pay for every run it wrote).

    Returns:
        name → version.
    """
    return dict(_package_versions())


@functools.lru_cache(maxsize=1)
def _package_versions() -> dict[str, str]:
    import importlib.metadata as md

    out = {"python": platform.python_version()}
    for name in ("gflow", "jax", "jaxlib", "diffrax", "equinox", "optax", "numpy", "scipy"):
        try:
            out[name] = md.version(name)
        except md.PackageNotFoundError:
            out[name] = "not installed"
    return out


@functools.lru_cache(maxsize=1)
def source_hash() -> str:
    """SHA-256 (hex) over the relative path and bytes of every ``.py`` file of the gflow package, in sorted order
    (:func:`gflow._compilation_cache.package_source_hash`, which keys the stored programs too)."""
    return package_source_hash()


def function_hash(fn) -> str | None:
    """The SHA-256 of a Python function's qualified name and source text.

    Args:
        fn: The function.

    Returns:
        The digest in hex; None for anything without source (a builtin, a callable object, code typed into a REPL).
    """
    try:
        text = inspect.getsource(fn)
    except (TypeError, OSError):
        return None
    return hashlib.sha256(f"{getattr(fn, '__qualname__', '')}\0{text}".encode()).hexdigest()


@functools.lru_cache(maxsize=1)
def git_state() -> dict:
    """``{"commit", "dirty"}`` of the git checkout gflow was imported from (dirty: uncommitted changes under
    ``gflow/``); ``{}`` for an installed copy or where git is not available."""
    root = os.path.dirname(PACKAGE_DIR)
    if not os.path.exists(os.path.join(root, ".git")):
        return {}
    try:
        commit = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, text=True,
                                timeout=10, check=True).stdout.strip()
        status = subprocess.run(["git", "-C", root, "status", "--porcelain", "--", "gflow"], capture_output=True,
                                text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    return {"commit": commit, "dirty": bool(status.strip())}


@functools.lru_cache(maxsize=1)
def _device() -> str:
    import jax

    device = jax.devices()[0]
    return f"{device.platform}: {getattr(device, 'device_kind', device.platform)} × {jax.device_count()}"


def provenance() -> dict:
    """The code and machine that made a result.

    Returns:
        gflow's version, its source hash, the git commit and dirty flag (from a checkout), the package versions, the
        command line and the device.
    """
    versions = package_versions()
    return {"gflow_version": versions.get("gflow"), "source_hash": source_hash(), "git": git_state(),
            "packages": versions, "command": list(sys.argv), "device": _device()}
