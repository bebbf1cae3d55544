"""What a sweep's ``build`` (and ``record``) read besides their arguments, as one digest that enters each run's
identity (:func:`gflow.run_sweep`), the way ``joblib.Memory`` and ``dask.base.tokenize`` hash a function.

A function's inputs are the module globals its code loads (``LOAD_GLOBAL``/``LOAD_NAME`` of its code and of the
code nested in it: lambdas, comprehensions, inner functions) and the values of its closure cells. Each is hashed
by value: numbers, strings, bytes, None, tuples, lists, dicts and sets of those, NumPy and JAX arrays (dtype,
shape and bytes; PRNG keys by their data), a script's ``argparse.Namespace``, pytrees of those (an
``equinox.Module`` such as a teacher: its tree structure and leaves), dataclasses by their fields,
``functools.partial`` by its function and arguments, a wrapper (``jax.jit``, ``functools.lru_cache``) by the
function it wraps. Modules, builtins and the functions and classes of installed libraries (gflow, JAX, NumPy, the
standard library, ...) are identified by name (a library function made by a call, such as ``optax.sgd(0.1)``'s,
also by its closure's values): their code is in gflow's source hash or the package versions. A function defined in
the user's own code is identified by its source and, recursively, by its own inputs.

Anything else (an object of an arbitrary class, a generator, an open file) cannot be hashed deterministically:
it is reported with where it was read, and :func:`gflow.run_sweep` refuses to run until the caller names it
with ``params={name: value}`` (a JSON value that changes when the dependency does, which enters the identity in
its stead). Python's ``hash()`` is never used: it is salted per process.
"""

from __future__ import annotations

import argparse
import builtins
import dataclasses
import dis
import enum
import functools
import hashlib
import inspect
import math
import os
import pathlib
import re
import sys
import sysconfig
import types

import numpy as np

_ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")  # a repr with a memory address differs between processes
_MAX_OBJECTS = 20000  # values visited per function: beyond it the dependency is too large to walk


class _Unhashable(Exception):
    """A value that cannot be hashed deterministically; ``what`` says what it is."""

    def __init__(self, what: str, names: tuple[str, ...] = ()):
        super().__init__(what)
        self.what, self.names = what, names  # names: the variables inside it that could not be hashed


@functools.lru_cache(maxsize=1)
def _library_roots() -> tuple[str, ...]:
    """Folders whose code counts as a library's: the standard library, site-packages, gflow's own package."""
    roots = {os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}  # gflow/
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            roots.add(os.path.abspath(path))
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix}:
        roots.add(os.path.join(os.path.abspath(prefix), "lib"))
    return tuple(sorted(roots))


def _is_library(obj) -> bool:
    """Whether a function or class comes from an installed library (or gflow), not from the user's code."""
    module = getattr(obj, "__module__", None) or ""
    if module.split(".")[0] in ("builtins", "gflow", "jax", "jaxlib", "numpy", "equinox", "diffrax", "optax",
                                "lineax", "optimistix", "scipy"):
        return True
    mod = sys.modules.get(module)
    path = getattr(mod, "__file__", None)
    if path is None:
        code = getattr(obj, "__code__", None)
        path = getattr(code, "co_filename", None)
    if not path or path.startswith("<"):
        return False
    path = os.path.abspath(path)
    return any(path.startswith(root + os.sep) for root in _library_roots())


def _loaded_globals(code: types.CodeType) -> list[str]:
    """The global names ``code`` and the code nested in it load, in order of first use."""
    names: dict[str, None] = {}
    stack = [code]
    while stack:
        c = stack.pop()
        for ins in dis.get_instructions(c):
            if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME") and isinstance(ins.argval, str):
                names.setdefault(ins.argval, None)
        stack.extend(const for const in c.co_consts if isinstance(const, types.CodeType))
    return list(names)


class _Tokenizer:
    """Deterministic tokens (nested tuples of strings) of values; :meth:`function_inputs` for a function."""

    def __init__(self, named: frozenset[str] = frozenset()):
        self.named = named  # variable names the caller named in params: not hashed
        self.functions: dict[int, int] = {}  # id(function) -> its position (a cycle refers back to it)
        self.visited = 0

    # ------------------------------------------------------------------------------------------- functions
    def function_inputs(self, fn, who: str) -> tuple[list, list[str]]:
        """([(variable name, token)] of what ``fn`` reads, [(variable names, what could not be hashed and where it is
        read)])."""
        tokens, problems = [], []
        for where, name, value in _inputs(fn, who):
            if name in self.named:
                tokens.append((name, ("named in params",)))
                continue
            try:
                tokens.append((name, self.token(value)))
            except _Unhashable as e:
                problems.append((e.names or (name,), f"{where} ({e.what})"))
            except RecursionError:
                problems.append(((name,), f"{where} (nested too deeply to hash)"))
        return tokens, problems

    def _function(self, fn) -> tuple:
        if _is_library(fn):
            name = ("function", getattr(fn, "__module__", "") or "", getattr(fn, "__qualname__", repr(fn)))
            if not fn.__closure__:
                return name
            # a library function made by a library call (optax.adam(lr)'s update): its closure holds the values
            cells = []
            for var, cell in zip(fn.__code__.co_freevars, fn.__closure__):
                try:
                    cells.append((var, self.token(cell.cell_contents)))
                except ValueError:  # an empty cell
                    continue
            return ("library-closure",) + name[1:] + (tuple(cells),)
        if id(fn) in self.functions:
            return ("function-cycle", str(self.functions[id(fn)]))
        self.functions[id(fn)] = len(self.functions)
        try:
            text = inspect.getsource(fn)
        except (OSError, TypeError):
            text = _code_text(fn.__code__)
        name = getattr(fn, "__qualname__", "")
        tokens, problems = self.function_inputs(fn, f"`{name}`")
        if problems:
            raise _Unhashable(f"the function `{name}`, which reads " + "; ".join(what for _, what in problems),
                              tuple(n for names, _ in problems for n in names))
        return ("user-function", name, hashlib.sha256(text.encode()).hexdigest(), tuple(tokens))

    # ------------------------------------------------------------------------------------------- values
    def token(self, value) -> tuple:
        self.visited += 1
        if self.visited > _MAX_OBJECTS:
            raise _Unhashable(f"more than {_MAX_OBJECTS} values to hash")
        if value is None or isinstance(value, (bool, str, bytes)):
            return (type(value).__name__, repr(value))
        if isinstance(value, int):
            return ("int", str(int(value)))
        if isinstance(value, float):
            return ("float", value.hex() if math.isfinite(value) else repr(value))
        if isinstance(value, complex):
            return ("complex", value.real.hex(), value.imag.hex())
        if isinstance(value, (tuple, list)):
            return (type(value).__name__,) + tuple(self.token(v) for v in value)
        if isinstance(value, (set, frozenset)):
            return (type(value).__name__,) + tuple(sorted((self.token(v) for v in value), key=repr))
        if isinstance(value, dict):
            return ("dict",) + tuple(sorted(((self.token(k), self.token(v)) for k, v in value.items()), key=repr))
        if isinstance(value, types.ModuleType):
            return ("module", value.__name__)
        if isinstance(value, (types.BuiltinFunctionType, types.BuiltinMethodType)):
            return ("builtin", getattr(value, "__module__", "") or "", value.__qualname__)
        if isinstance(value, types.FunctionType):
            return self._function(value)
        if isinstance(value, types.MethodType):
            return ("method", self.token(value.__func__), self.token(value.__self__))
        if isinstance(value, functools.partial):
            return ("partial", self.token(value.func), self.token(value.args), self.token(value.keywords))
        if isinstance(value, type):
            return self._class(value)
        if isinstance(value, enum.Enum):
            return ("enum", self._class(type(value)), value.name)
        if isinstance(value, pathlib.PurePath):
            return ("path", str(value))
        if isinstance(value, np.dtype):
            return ("dtype", str(value))
        if isinstance(value, (argparse.Namespace, types.SimpleNamespace)):  # a script's options
            return (type(value).__name__, self.token(vars(value)))
        if isinstance(value, (range, slice)):
            return (type(value).__name__, self.token((value.start, value.stop, value.step)))
        array = _array_token(value)
        if array is not None:
            return array
        wrapped = getattr(value, "__wrapped__", None)  # jax.jit, functools.lru_cache, ...: the function they wrap
        if callable(value) and isinstance(wrapped, (types.FunctionType, functools.partial)):
            return ("wrapped", self._class(type(value)), self.token(wrapped))
        return self._object(value)

    def _class(self, cls: type) -> tuple:
        if _is_library(cls):
            return ("class", cls.__module__, cls.__qualname__)
        try:
            text = inspect.getsource(cls)
        except (OSError, TypeError):
            raise _Unhashable(f"the class `{cls.__qualname__}`, whose source is not available") from None
        return ("user-class", cls.__qualname__, hashlib.sha256(text.encode()).hexdigest())

    def _object(self, value) -> tuple:
        import jax

        kind = self._class(type(value))
        leaves, treedef = jax.tree_util.tree_flatten(value, is_leaf=lambda x: x is not value and _array_like(x))
        if not (len(leaves) == 1 and leaves[0] is value):  # a registered pytree (an equinox Module, ...)
            structure = str(treedef)
            if _ADDRESS.search(structure):
                raise _Unhashable(f"a {type(value).__qualname__} whose structure holds objects known by their "
                                  "memory address")
            return ("pytree", kind, structure, tuple(self.token(leaf) for leaf in leaves))
        if dataclasses.is_dataclass(value):
            return ("dataclass", kind) + tuple((f.name, self.token(getattr(value, f.name)))
                                               for f in dataclasses.fields(value))
        raise _Unhashable(f"a {type(value).__module__}.{type(value).__qualname__} object, which gflow cannot hash")


def _array_like(x) -> bool:
    return isinstance(x, np.ndarray) or type(x).__module__.startswith(("jax", "jaxlib"))


def _array_token(value) -> tuple | None:
    """The token of a NumPy or JAX array or scalar (its dtype, shape and bytes); None for anything else."""
    if isinstance(value, np.generic):
        value = np.asarray(value)
    if not isinstance(value, np.ndarray):
        if not type(value).__module__.startswith(("jax", "jaxlib")) or not hasattr(value, "dtype"):
            return None
        import jax

        if jax.dtypes.issubdtype(value.dtype, jax.dtypes.prng_key):
            return ("prng_key", str(jax.random.key_impl(value)), _array_token(np.asarray(jax.random.key_data(value))))
        try:
            value = np.asarray(value)
        except Exception:  # a tracer: not a value
            raise _Unhashable("a traced JAX value") from None
    if value.dtype.hasobject:
        raise _Unhashable("an array of Python objects")
    data = np.ascontiguousarray(value)
    return ("array", str(data.dtype), str(data.shape), hashlib.sha256(data.tobytes()).hexdigest())


def _code_text(code: types.CodeType) -> str:
    """A deterministic text of a code object without source (its bytecode, names and constants)."""
    consts = tuple(_code_text(c) if isinstance(c, types.CodeType) else repr(c) for c in code.co_consts)
    return repr((code.co_code.hex(), code.co_names, code.co_varnames, code.co_freevars, consts))


def _inputs(fn, who: str) -> list[tuple[str, str, object]]:
    """[(where it is read, variable name, value)] of what ``fn`` reads besides its arguments."""
    if isinstance(fn, functools.partial):
        out = [(f"an argument of the functools.partial {who}", f"arg{i}", v) for i, v in enumerate(fn.args)]
        out += [(f"keyword `{k}` of the functools.partial {who}", k, v) for k, v in fn.keywords.items()]
        return out + _inputs(fn.func, who)
    if isinstance(fn, types.MethodType):
        return [(f"the object {who} is a method of", "self", fn.__self__)] + _inputs(fn.__func__, who)
    if not isinstance(fn, types.FunctionType):
        return [(f"{who} itself, a callable object", "self", fn)]
    out = []
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell (a name assigned after the function was made)
            continue
        out.append((f"closure variable `{name}` of {who}", name, value))
    scope = fn.__globals__
    for name in _loaded_globals(fn.__code__):
        if name in scope:
            out.append((f"global `{name}` of {who}", name, scope[name]))
        elif not hasattr(builtins, name):
            continue  # not defined yet: calling fn would fail the same way everywhere
    return out


def inputs_digest(functions: dict[str, object], named=()) -> tuple[str | None, list[tuple[tuple[str, ...], str]]]:
    """One digest of what the given functions read besides their arguments: what :func:`gflow.run_sweep` puts in
    each run's identity (``inputs``) for its ``build``, and in its code for ``record``. A function's inputs are the
    module globals its code loads and its closure variables, hashed by value (numbers, strings, containers, NumPy
    and JAX arrays, pytrees, dataclasses, ``argparse.Namespace``; the user's own functions by source and, recursively,
    their inputs; modules and library code by name); never with Python's salted ``hash()``.

    Args:
        functions: role (``"build"``, ``"record"``) → the function.
        named: Variable names the caller named in ``params``: not hashed (the params' value stands for them).

    Returns:
        (the SHA-256 in hex, or None when the functions read nothing but modules, builtins and library
        functions; the dependencies that could not be hashed, each as (the names of the variables that would name
        it in ``params``, "global `x` of `build` (a Foo object ...)")).
    """
    tokenizer = _Tokenizer(frozenset(named))
    tokens, problems = [], []
    for role, fn in functions.items():
        found, bad = tokenizer.function_inputs(fn, f"`{role}`")
        tokens.append((role, tuple(found)))
        problems += bad
    if all(_trivial(token) for _, found in tokens for _, token in found):
        return None, problems
    return hashlib.sha256(repr(tokens).encode()).hexdigest(), problems


def _trivial(token) -> bool:
    """Whether a token names code only (a module, builtin, library function or class): such reads never change
    what a run computes without gflow's source hash or the package versions changing too."""
    return isinstance(token, tuple) and bool(token) and token[0] in ("module", "builtin", "function", "class")
