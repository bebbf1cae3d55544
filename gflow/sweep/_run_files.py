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

    @property
    def ts(self) -> np.ndarray:
        return self.arrays["ts"]

    @property
    def loss(self) -> np.ndarray:
        return self.arrays["loss"]

    @property
    def final(self):
        """The final model (from ``final.json`` + ``final.npz``)."""
        return load_model(self.path, FINAL_STEM)

    def trajectory(self) -> Trajectory:
        """The full trajectory, if the sweep kept it (``keep_trajectory=True``)."""
        path = os.path.join(self.path, TRAJECTORY_DIR)
        if not os.path.isdir(path):
            raise GflowInputError(f"run {self.name} was saved without its trajectory (keep_trajectory=False)")
        return Trajectory.load(path)


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


def _load_run(path: str, identity: dict, name: str, code: dict | None = None) -> tuple[SweepRun | None, str | None]:
    """(the run stored in ``path``, None) if it is complete, uncorrupted, matches ``identity`` and, when ``code`` is
    given, was made by that code (gflow's source hash, the build and record functions: a resume without ``record``
    reuses runs made with any record); else (None, why not)."""
    if not os.path.exists(os.path.join(path, RUN_FILE)):
        return None, MISSING
    if os.path.exists(os.path.join(path, LEGACY_FINAL_FILE)):
        return None, "written with pickle by gflow 0.1 (never unpickled)"
    try:
        with open(os.path.join(path, RUN_FILE)) as f:
            meta = json.load(f)
        stale = why_stale(meta, json.loads(_canonical_json(identity, "run")), code)
        if stale:
            return None, stale
        files = meta["files"]
        if sorted(files) != _files_under(path):
            return None, CORRUPT
        for rel, digest in files.items():
            if file_sha256(os.path.join(path, rel)) != digest:
                return None, CORRUPT
        arrays = read_npz(os.path.join(path, ARRAYS_FILE))
    except (OSError, ValueError, KeyError, TypeError, EOFError):  # GflowInputError is a ValueError
        return None, CORRUPT
    record = {k[len(_RECORD_PREFIX):]: v for k, v in arrays.items() if k.startswith(_RECORD_PREFIX)}
    arrays = {k: v for k, v in arrays.items() if not k.startswith(_RECORD_PREFIX)}
    return SweepRun(config=identity["config"], name=name, path=path, status=meta["status"],
                    message=meta.get("message", ""), stats=meta.get("stats", {}), arrays=arrays, record=record,
                    computed=False, program_size=meta.get("program_size")), None


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
                    computed=True, program_size=program_size)


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
