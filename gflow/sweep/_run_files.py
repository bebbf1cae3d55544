"""One run of a sweep on disk: ``out/runs/<name>/`` written atomically (temporary folder, then ``os.replace``),
with ``run.json`` last, holding the SHA-256 of every other file; loaded only when complete and uncorrupted
(:func:`gflow.run_sweep`, module docstring). Reuse is decided like every cached result's (:func:`gflow.results.cached_json`)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shutil
import socket

import numpy as np

from .._checks import GflowInputError
from ..models._flatten import flatten
from ..results._cache import cache_record, CORRUPT, MISSING as MISSING, why_stale
from ..results._file_reading import read_npz
from ..results._file_sha256 import file_sha256
from ..results._json import jsonable
from ..results._model_file import load_model, save_model
from ..results._provenance import package_versions
from ..results._trajectory import Trajectory
from ._grid import _canonical_json
from ._lock import process_alive

RUNS_DIR = "runs"
RUN_FILE = "run.json"
ARRAYS_FILE = "arrays.npz"
FINAL_STEM = "final"  # final.json + final.npz
LEGACY_FINAL_FILE = "final.pkl"  # written by gflow before the pickle-free format; never loaded
TRAJECTORY_DIR = "trajectory"
_TMP_PREFIX = ".tmp-"
_RECORD_PREFIX = "record__"
# Keyword arguments of solve_flows that a sweep passes through (and that identify a run).


@dataclasses.dataclass
class SweepRun:
    """One finished run of a sweep: its configuration, where it lives, what it produced.

    Attributes:
        config: The run's configuration.
        name: Its folder's name.
        path: Its folder.
        status: How it ended (``gflow.results.STATUSES``).
        message: What happened, for a run that did not complete.
        stats: The run's statistics.
        arrays: ``ts``, ``loss``, ``final_params`` (flat).
        record: The arrays returned by the sweep's ``record`` function.
        computed: Whether this call computed it (False: loaded from disk).
        program_size: The size of the compiled program that computed it.
        recomputed_because: Why a run on disk was not reused (None when it was, or when there was none).
        identity: What identifies it (``run.json``'s ``identity``: the configuration, the method and its options,
            and, when present, the digest of what ``build`` reads (``inputs``) and the sweep's ``params``).
    """

    config: dict
    name: str
    path: str
    status: str
    message: str
    stats: dict
    arrays: dict[str, np.ndarray]
    record: dict[str, np.ndarray]
    computed: bool
    program_size: int | None = None  # flows in the compiled program that computed it (None: older gflow)
    recomputed_because: str | None = None  # why a run on disk was not reused (None: none was there)
    identity: dict | None = None  # run.json's identity (None: made without one)

    @property
    def params(self) -> dict:
        """The ``params`` of the sweep that made it.

        Returns:
            The dict given to :func:`gflow.run_sweep` as ``params`` (empty when none were given).
        """
        return dict((self.identity or {}).get("params") or {})

    @property
    def ts(self) -> np.ndarray:
        return self.arrays["ts"]

    @property
    def loss(self) -> np.ndarray:
        return self.arrays["loss"]

    @property
    def final(self):
        """The final model (from ``final.json`` + ``final.npz``), checked against what the run recorded.

        Returns:
            The model.

        Raises:
            GflowInputError: A file differs from the SHA-256 the run's ``run.json`` recorded, or the model's
                parameter count from the run's ``final_params`` (the message names the file).
        """
        self._verify(lambda rel: rel in (f"{FINAL_STEM}.json", f"{FINAL_STEM}.npz"))
        model = load_model(self.path, FINAL_STEM)
        n = int(np.size(flatten(model)[0]))
        if "final_params" in self.arrays and n != np.size(self.arrays["final_params"]):
            raise GflowInputError(f"sweep run {self.name}: {os.path.join(self.path, FINAL_STEM + '.npz')} holds a "
                                  f"model of {n} parameters, the run's final_params has "
                                  f"{np.size(self.arrays['final_params'])}; {_REMEDY}")
        return model

    def trajectory(self) -> Trajectory:
        """The full trajectory, if the sweep kept it (``keep_trajectory=True``), its files checked against the
        SHA-256 the run recorded.

        Returns:
            The :class:`gflow.Trajectory`.

        Raises:
            GflowInputError: The run was saved without its trajectory, or one of its files is missing or differs
                from what the run's ``run.json`` recorded (the message names the file).
        """
        path = os.path.join(self.path, TRAJECTORY_DIR)
        if not os.path.isdir(path):
            raise GflowInputError(f"run {self.name} was saved without its trajectory (keep_trajectory=False)")
        self._verify(lambda rel: rel.startswith(TRAJECTORY_DIR + os.sep))
        return Trajectory.load(path)

    def _verify(self, which) -> None:
        """The files of the run's folder for which ``which(relative path)`` holds (those present and those
        recorded) are those its ``run.json`` recorded (else an error naming one)."""
        try:
            meta = _read_meta(self.path)
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise GflowInputError(f"sweep run {self.name}: {os.path.join(self.path, RUN_FILE)} is damaged "
                                  f"({type(e).__name__}: {e}); {_REMEDY}") from None
        rels = sorted(rel for rel in set(meta["files"]) | set(_files_under(self.path)) if which(rel))
        wrong = _verify_files(self.path, meta, rels)
        if wrong:
            raise GflowInputError(f"sweep run {self.name}: {wrong}; {_REMEDY}")


def _files_under(root: str) -> list[str]:
    out = []
    for base, _, files in os.walk(root):
        out.extend(os.path.relpath(os.path.join(base, f), root) for f in files)
    return sorted(f for f in out if f != RUN_FILE)


def run_name(config: dict, identity: dict) -> str:
    """Folder name of a run: the readable ``key=value`` pairs of its configuration (shortened) and a hash of the
    configuration and solver options, so that a changed option never reuses an old result."""
    digest = hashlib.sha256(_canonical_json(identity, "run").encode()).hexdigest()[:12]
    readable = "_".join(f"{k}={_short(v)}" for k, v in config.items())
    readable = re.sub(r"[^A-Za-z0-9._=+-]", "", readable)[:80]
    return f"{readable}-{digest}" if readable else digest


def _short(v) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, list):
        return "+".join(_short(x) for x in v)
    return str(v)


_REMEDY = "rerun the sweep (it recomputes a damaged run) or delete the run's folder"


def _verify_files(path: str, meta: dict, rels=None) -> str | None:
    """None when the files of the run in ``path`` are those its ``run.json`` (``meta``) recorded, with their SHA-256
    (all of them, or those in ``rels``); else what differs, naming the file."""
    files = meta["files"]
    if rels is None:
        present = _files_under(path)
        extra = sorted(set(present) - set(files))
        if extra:
            return f"{os.path.join(path, extra[0])} is not one of the files its run.json records"
        rels = sorted(files)
    for rel in rels:
        file = os.path.join(path, rel)
        if rel not in files:
            return f"{file} is not one of the files its run.json records"
        if not os.path.exists(file):
            return f"{file} is missing"
        if file_sha256(file) != files[rel]:
            return f"{file} does not match the SHA-256 its run.json records (changed or replaced after the run)"
    return None


def _verify_arrays(path: str, meta: dict, arrays: dict) -> str | None:
    """None when ``arrays`` (from ``arrays.npz``) have the shapes and parameter count ``run.json`` recorded (runs
    written before they were recorded: not checked); else what differs, naming the file."""
    file = os.path.join(path, ARRAYS_FILE)
    shapes = meta.get("shapes") or {}
    for key, shape in shapes.items():
        if key not in arrays:
            return f"{file} lacks the array {key!r} its run.json records"
        if list(np.shape(arrays[key])) != list(shape):
            return (f"{file} holds {key} of shape {tuple(np.shape(arrays[key]))}, its run.json records "
                    f"{tuple(shape)}")
    n_params = meta.get("n_params")
    if n_params is not None and np.size(arrays.get("final_params", ())) != n_params:
        return (f"{file} holds {np.size(arrays.get('final_params', ()))} final parameters, its run.json records "
                f"{n_params}")
    return None


def _read_meta(path: str) -> dict:
    with open(os.path.join(path, RUN_FILE)) as f:
        meta = json.load(f)
    if not isinstance(meta, dict) or not isinstance(meta.get("files"), dict) or "status" not in meta:
        raise ValueError("not a run record")
    return meta


def _load_run(path: str, identity: dict, name: str, code: dict | None = None, *,
              strict: bool = False) -> tuple[SweepRun | None, str | None]:
    """(the run stored in ``path``, None) if it is complete, uncorrupted, matches ``identity`` and, when ``code`` is
    given, was made by that code (gflow's source hash, the build and record functions: a resume without ``record``
    reuses runs made with any record); else (None, why not). A damaged run (a file that differs from what its
    ``run.json`` recorded: SHA-256, array shapes, parameter count) is ``"incomplete or corrupt (<what, naming the
    file>)"``, or with ``strict`` a :class:`GflowInputError` that names the file."""
    if not os.path.exists(os.path.join(path, RUN_FILE)):
        return None, MISSING
    if os.path.exists(os.path.join(path, LEGACY_FINAL_FILE)):
        return None, "written with pickle by gflow 0.1 (never unpickled)"

    def damaged(what: str):
        if strict:
            raise GflowInputError(f"sweep run {name}: {what}; {_REMEDY}")
        return None, f"{CORRUPT} ({what.replace(path + os.sep, '')})"

    try:
        meta = _read_meta(path)
    except (OSError, ValueError, KeyError, TypeError) as e:
        return damaged(f"{os.path.join(path, RUN_FILE)} is damaged ({type(e).__name__}: {e})")
    try:
        stale = why_stale(meta, json.loads(_canonical_json(identity, "run")), code)
    except (ValueError, TypeError, AttributeError):
        return damaged(f"{os.path.join(path, RUN_FILE)} is damaged (not a run record)")
    if stale:
        return None, stale
    try:
        wrong = _verify_files(path, meta)
        if wrong:
            return damaged(wrong)
        arrays = read_npz(os.path.join(path, ARRAYS_FILE))
    except (OSError, ValueError, EOFError) as e:  # GflowInputError is a ValueError; it names the file
        return damaged(str(e))
    wrong = _verify_arrays(path, meta, arrays)
    if wrong:
        return damaged(wrong)
    record = {k[len(_RECORD_PREFIX):]: v for k, v in arrays.items() if k.startswith(_RECORD_PREFIX)}
    arrays = {k: v for k, v in arrays.items() if not k.startswith(_RECORD_PREFIX)}
    return SweepRun(config=identity["config"], name=name, path=path, status=meta["status"],
                    message=meta.get("message", ""), stats=meta.get("stats", {}), arrays=arrays, record=record,
                    computed=False, program_size=meta.get("program_size"), identity=identity), None


def _write_run(runs_dir: str, name: str, identity: dict, traj: Trajectory, record: dict,
               keep_trajectory: bool, program_size: int, code: dict | None = None) -> SweepRun:
    """Write a run into a temporary folder, then rename it into place (atomic on POSIX)."""
    final_path = os.path.join(runs_dir, name)
    tmp = os.path.join(runs_dir, f"{_TMP_PREFIX}{os.getpid()}@{_host()}~{name}")
    if os.path.exists(tmp):
        shutil.rmtree(tmp)
    os.makedirs(tmp)
    theta, _, _ = flatten(traj.final)
    arrays = {"ts": np.asarray(traj.ts), "loss": np.asarray(traj.loss), "final_params": np.asarray(theta)}
    record_arrays = {f"{_RECORD_PREFIX}{k}": np.asarray(v) for k, v in record.items()}
    np.savez_compressed(os.path.join(tmp, ARRAYS_FILE), **arrays, **record_arrays)
    save_model(traj.final, tmp, FINAL_STEM)
    if keep_trajectory:
        traj.save(os.path.join(tmp, TRAJECTORY_DIR))
    meta = cache_record(identity, code, status=traj.status, message=traj.message, stats=traj.stats,
                        program_size=program_size, flow_config=traj.config, versions=package_versions(),
                        shapes={k: list(np.shape(v)) for k, v in {**arrays, **record_arrays}.items()},
                        n_params=int(np.size(theta)),
                        files={rel: file_sha256(os.path.join(tmp, rel)) for rel in _files_under(tmp)})
    with open(os.path.join(tmp, RUN_FILE), "w") as f:
        json.dump(jsonable(meta), f, indent=1, default=str)
        f.flush()
        os.fsync(f.fileno())
    for _ in range(2):
        if os.path.lexists(final_path):
            if _load_run(final_path, identity, name, code)[0] is not None:  # another attempt of this batch (a
                shutil.rmtree(tmp)  # worker thought dead) finished the same run first: same bits, keep it
                break
            shutil.rmtree(final_path, ignore_errors=True) if os.path.isdir(final_path) else os.remove(final_path)
        try:
            os.replace(tmp, final_path)
            break
        except OSError:  # the folder reappeared between the check and the rename: look again
            continue
    else:
        raise OSError(f"could not move the finished run {name} into place in {runs_dir} (another process keeps "
                      "writing it)")
    return SweepRun(config=identity["config"], name=name, path=final_path, status=traj.status, message=traj.message,
                    stats=traj.stats, arrays=arrays, record={k: np.asarray(v) for k, v in record.items()},
                    computed=True, program_size=program_size, identity=identity)


def _host() -> str:
    return re.sub(r"[^A-Za-z0-9.-]", "", socket.gethostname()) or "host"


def _remove_stale_temporaries(runs_dir: str) -> None:
    """Delete temporary run folders (``.tmp-<pid>@<host>~<name>``) left by processes that no longer run: on this
    host, those of dead processes (or of this one); on other hosts, all of them (the caller holds the folder's
    lock, so no live sweep of ours writes them)."""
    for entry in os.listdir(runs_dir):
        m = re.match(rf"{re.escape(_TMP_PREFIX)}(\d+)(?:@([^~]*)~|-)", entry)
        if not m:
            continue
        pid, host = int(m.group(1)), m.group(2)
        if (host is not None and host != _host()) or pid == os.getpid() or not process_alive(pid):
            shutil.rmtree(os.path.join(runs_dir, entry), ignore_errors=True)
