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

The second half of this module keeps traced programs on disk (``jax.export``), so that a fresh process neither
traces nor lowers a solve that an earlier process ran: :func:`exported_call`. The compilation cache keeps compiled
executables keyed by the lowered program, so to find one a fresh process must still trace and lower the solve (for
a d = 10 flow on two cores ~0.9 s of tracing diffrax's loop and ~0.5 s of lowering, for a lookup of ~0.2 s).
:func:`exported_call` keeps the lowered program itself, serialized by ``jax.export``, under a digest of everything
the program depends on; a later process deserializes and calls it, its executable coming from the compilation cache.

What the digest covers (a key that two different programs could share would run the wrong program; a key with a
memory address in it would only never hit):

- the code: the SHA-256 of gflow's source files (as :func:`gflow.results.source_hash`) and the versions of jax,
  jaxlib, equinox, diffrax, lineax, optimistix and numpy; the platform; the JAX configuration values, equinox's
  error mode and gflow's ``GFLOW_*`` environment variables, which tracing may read;
- the arguments' structure: the pytree structure with every node's type and auxiliary data, every array leaf's
  shape, dtype and weak type, and every non-array leaf's value.

Types, functions and values are encoded by a strict encoder (:func:`_encode`): a class or function only when it is
defined, under its own name, in gflow or one of the packages above (whose code the digest covers); a value only when
it is plain data (numbers, strings, tuples, named tuples, dataclasses of those, enumerations, stateless sentinels).
Anything else (a user's own loss class, a lambda, a closure) makes the call uncacheable: it runs through the
ordinary ``jit`` path, never through a stored program. A program whose export fails (a host callback, such as a
progress meter, cannot be exported) is run through the ordinary path too, and remembered so that the next process
does not trace it twice.

``GFLOW_PROGRAM_CACHE=0`` turns the program cache off; it is off when the compilation cache is, and when the
``flatbuffers`` package (which ``jax.export`` serializes with) is not installed.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import importlib
import importlib.util
import os
import sys
import tempfile
import types
from typing import Any, Callable

import jax
import numpy as np

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


# ==================================================================================================================
# the program cache
# ==================================================================================================================
FORMAT = 1  # bump when what is stored, or how the key is made, changes
# the packages whose code a program may depend on: a class or function from one of them is named in the key by its
# qualified name, its code covered by the package's version (gflow: by its source hash)
TRUSTED = ("gflow", "jax", "jaxlib", "equinox", "diffrax", "lineax", "optimistix", "numpy", "builtins", "math",
           "operator")
VERSIONED = ("jax", "jaxlib", "equinox", "diffrax", "lineax", "optimistix", "numpy")


class Uncacheable(Exception):
    """An argument the key cannot describe exactly."""


@functools.lru_cache(maxsize=1)
def _can_serialize() -> bool:
    """Whether ``flatbuffers``, which ``jax.export`` serializes with (an optional dependency of jax), is installed."""
    return importlib.util.find_spec("flatbuffers") is not None


def program_dir() -> str | None:
    """The folder of stored programs: ``gflow-programs`` inside the compilation cache's folder (None when off)."""
    if os.environ.get("GFLOW_PROGRAM_CACHE", "1").strip().lower() in OFF_VALUES:
        return None
    if not _can_serialize():
        return None
    base = jax.config.jax_compilation_cache_dir
    return None if not base else os.path.join(base, "gflow-programs")


# ------------------------------------------------------------------------------------------------------------------
# the key
# ------------------------------------------------------------------------------------------------------------------
def _trusted(module: str | None) -> bool:
    return module is not None and module.split(".")[0] in TRUSTED


def _named(obj) -> str:
    """``module:qualname`` of a class or function that is importable under that name from a trusted package."""
    if obj is type(None):
        return "builtins:NoneType"
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not _trusted(module) or not qualname or "<" in qualname:
        raise Uncacheable(f"{obj!r} is not a named object of a trusted package")
    found = sys.modules.get(module)
    for part in qualname.split("."):
        found = getattr(found, part, None)
    if found is not obj:
        raise Uncacheable(f"{module}:{qualname} does not name {obj!r}")
    return f"{module}:{qualname}"


def _encode(x) -> Any:
    """A canonical, process-independent description of a non-array value (nested tuples of strings and numbers).

    Raises:
        Uncacheable: ``x`` is not plain data or a named object of a trusted package.
    """
    if x is None or isinstance(x, (bool, str, bytes)):
        return (type(x).__name__, x)
    if isinstance(x, (int, float, complex)) and type(x) in (int, float, complex):
        return (type(x).__name__, repr(x))
    if isinstance(x, np.generic):
        return ("np", str(x.dtype), x.tobytes().hex())
    if isinstance(x, np.dtype):
        return ("dtype", str(x))
    if isinstance(x, enum.Enum):
        return ("enum", _named(type(x)), x.name)
    if isinstance(x, type):
        return ("type", _named(x))
    if isinstance(x, (types.FunctionType, types.BuiltinFunctionType, np.ufunc)) or type(x).__name__ == "PjitFunction":
        return ("function", _named(x))
    if isinstance(x, functools.partial):
        return ("partial", _encode(x.func), _encode(x.args), _encode(x.keywords))
    if isinstance(x, (tuple, list)):
        kind = type(x)
        head = kind.__name__ if kind in (tuple, list) else _named(kind)
        return (head, *(_encode(v) for v in x))
    if isinstance(x, dict) and type(x) is dict:
        return ("dict", *sorted((repr(_encode(k)), _encode(v)) for k, v in x.items()))
    if isinstance(x, (frozenset, set)) and type(x) in (frozenset, set):
        return (type(x).__name__, *sorted(repr(_encode(v)) for v in x))
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return ("dataclass", _named(type(x)),
                *((f.name, _encode(getattr(x, f.name))) for f in dataclasses.fields(x)))
    if _trusted(type(x).__module__) and not getattr(x, "__dict__", None) and not getattr(type(x), "__slots__", ()):
        return ("sentinel", _named(type(x)))  # e.g. equinox's Missing: an instance with no state
    raise Uncacheable(f"a {type(x).__module__}.{type(x).__qualname__} in the arguments")


def _treedef(t) -> Any:
    """A pytree structure as nested tuples: each node's type and (encoded) auxiliary data, then its children."""
    data = t.node_data()
    if data is None:
        return "*"
    kind, aux = data
    return (_named(kind), _encode(aux), *(_treedef(c) for c in t.children()))


def package_source_hash() -> str:
    """SHA-256 (hex) over the relative path and bytes of every ``.py`` file of gflow, in sorted order: what
    :func:`gflow.results.source_hash` records in provenance, and part of every stored program's key."""
    package = os.path.dirname(os.path.abspath(__file__))
    h = hashlib.sha256()
    files = sorted(os.path.relpath(os.path.join(base, f), package) for base, _, names in os.walk(package)
                   for f in names if f.endswith(".py"))
    for rel in files:
        h.update(rel.replace(os.sep, "/").encode() + b"\0")
        with open(os.path.join(package, rel), "rb") as f:
            h.update(f.read() + b"\0")
    return h.hexdigest()


@functools.lru_cache(maxsize=1)
def _environment() -> tuple:
    """What a program depends on besides its arguments, fixed for a process."""
    import importlib.metadata as metadata

    versions = []
    for name in VERSIONED:
        try:
            versions.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            versions.append((name, None))
    return (FORMAT, package_source_hash(), tuple(versions), sys.version_info[:3], jax.default_backend(),
            tuple(sorted({d.device_kind for d in jax.local_devices()})))


def _switches() -> tuple:
    """gflow's own switches, read when a module is imported or a program traced (GFLOW_KRYLOV picks the Krylov
    schedule); read at every key, since a process may change them."""
    return tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("GFLOW_")))


def _config() -> tuple:
    """The JAX configuration values (plain data only) and equinox's error mode: tracing may read any of them."""
    values = tuple(sorted((k, repr(v)) for k, v in jax.config.values.items()
                          if v is None or isinstance(v, (bool, int, float, str))))
    errors = getattr(importlib.import_module("equinox"), "_errors", None)
    return values, getattr(errors, "EQX_ON_ERROR", None)


def _flags() -> tuple:
    """The configuration a process may change between two calls that tracing reads (cheap; :func:`_config` is
    the whole of it, read once per structure)."""
    errors = getattr(sys.modules.get("equinox"), "_errors", None)
    return (jax.config.jax_enable_x64, jax.config.jax_default_matmul_precision, jax.config.jax_numpy_rank_promotion,
            jax.config.jax_numpy_dtype_promotion, getattr(errors, "EQX_ON_ERROR", None))


def _is_array(x) -> bool:
    return isinstance(x, (jax.Array, np.ndarray))


def _aval(x) -> tuple:
    return (tuple(x.shape), str(x.dtype), bool(getattr(x, "weak_type", False)))


def program_key(name: str, args: tuple) -> str:
    """The digest naming ``name``'s program for ``args`` (arrays stand for their shape and dtype only).

    Args:
        name: What the program computes (a function's qualified name).
        args: Its positional arguments, any pytree.

    Returns:
        A SHA-256 hex digest.

    Raises:
        Uncacheable: An argument is not described exactly by the key.
    """
    leaves, treedef = jax.tree_util.tree_flatten(args)
    described = tuple(("array", *_aval(x)) if _is_array(x) else _encode(x) for x in leaves)
    text = repr((name, _environment(), _switches(), _config(), _treedef(treedef), described))
    return hashlib.sha256(text.encode()).hexdigest()


# ------------------------------------------------------------------------------------------------------------------
# storing and calling
# ------------------------------------------------------------------------------------------------------------------
_loaded: dict[str, Callable | None] = {}  # digest -> the jitted call of its exported program (None: not exportable)
_by_structure: dict[tuple, Callable | None] = {}  # the arguments' structure -> the same, within this process
_UNSEEN = object()


def _write_atomic(path: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def _flat(fn: Callable, treedef, static: list, array_at: list[int]) -> Callable:
    """``fn`` as a function of its array leaves only (the other leaves fixed)."""

    def flat(*arrays):
        leaves = list(static)
        for i, a in zip(array_at, arrays):
            leaves[i] = a
        return fn(*jax.tree_util.tree_unflatten(treedef, leaves))

    return flat


def _program(digest: str, fn: Callable, args: tuple, folder: str) -> Callable | None:
    """The jitted call of the stored program ``digest``: read from ``folder``, or exported now and written there;
    None when it cannot be exported (recorded in ``folder`` so that the next process does not try again)."""
    path = os.path.join(folder, f"{digest}.jaxexport")
    refused = os.path.join(folder, f"{digest}.refused")
    if os.path.exists(refused):
        return None
    exported = None
    try:
        with open(path, "rb") as f:
            exported = jax.export.deserialize(bytearray(f.read()))
    except Exception:  # noqa: BLE001  (absent, or unreadable: a damaged file is rewritten below)
        exported = None
    if exported is None:
        leaves, treedef = jax.tree_util.tree_flatten(args)
        array_at = [i for i, x in enumerate(leaves) if _is_array(x)]
        static = [None if _is_array(x) else x for x in leaves]
        specs = [jax.ShapeDtypeStruct(leaves[i].shape, leaves[i].dtype, weak_type=_aval(leaves[i])[2])
                 for i in array_at]
        try:
            exported = jax.export.export(jax.jit(_flat(fn, treedef, static, array_at)))(*specs)
            data = exported.serialize()
        except Exception:  # noqa: BLE001  (a host callback, an unserializable output type: run it the ordinary way)
            try:
                _write_atomic(refused, b"")
            except OSError:
                pass
            return None
        try:
            _write_atomic(path, bytes(data))
        except OSError:
            pass  # a read-only cache: this process still uses the program it exported
    return jax.jit(exported.call)


def exported_call(name: str, fn: Callable, args: tuple, fallback: Callable):
    """``fn(*args)``, compiled, through a program stored by ``jax.export`` when the arguments allow one.

    The first process to make a call of a given structure traces ``fn`` once, exports and stores the program, and
    runs it; later processes read and run it without tracing. Arrays (JAX or numpy) in ``args`` are the program's
    inputs; every other leaf is part of the program (as for ``equinox.filter_jit``). Calls whose arguments the key
    cannot describe exactly, and programs that cannot be exported, go to ``fallback(*args)`` instead.

    Args:
        name: What the program computes; part of the key (e.g. ``"gflow.flow.integrate_one"``).
        fn: The function to run (not jitted; it is traced inside ``jax.jit``). Its outputs must be a pytree
            ``jax.export`` can serialize (tuples, lists, dicts, or named tuples registered with
            ``jax.export.register_namedtuple_serialization``).
        args: Its positional arguments.
        fallback: The ordinary path, e.g. ``eqx.filter_jit(fn)``, called with ``*args`` when no program is used.

    Returns:
        What ``fn(*args)`` returns.
    """
    folder = program_dir()
    if folder is None:
        return fallback(*args)
    leaves, treedef = jax.tree_util.tree_flatten(args)
    arrays = [x for x in leaves if _is_array(x)]
    # within a process, the call is found by the arguments' structure as jit finds its own (the structure hashes
    # by value); the digest, which reads the environment and encodes every node, is made once per structure
    try:
        fast = (name, folder, treedef, _flags(),
                tuple((x.shape, x.dtype, getattr(x, "weak_type", False)) if _is_array(x) else (type(x), x)
                      for x in leaves))
        call = _by_structure.get(fast, _UNSEEN)
    except TypeError:  # an unhashable leaf
        fast, call = None, _UNSEEN
    if call is _UNSEEN:
        try:
            digest = program_key(name, args)
        except Uncacheable:
            digest = None
        if digest is not None and digest not in _loaded:
            _loaded[digest] = _program(digest, fn, args, folder)
        call = None if digest is None else _loaded[digest]
        if fast is not None:
            _by_structure[fast] = call
    if call is None:
        return fallback(*args)
    return call(*arrays)
