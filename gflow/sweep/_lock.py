"""One sweep process per output folder: a lock file naming its owner's host and pid.

Two drivers writing the same runs would each recompute what the other is computing; worse, both would rename
their temporaries into place. The lock file ``out/sweep.lock`` (created with O_EXCL) holds the owner's host, pid
and start time. A second driver gets a clear error naming them; a lock left by a process that no longer runs on
this host is taken over.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time

from .._checks import GflowInputError

LOCK_FILE = "sweep.lock"


def process_alive(pid: int) -> bool:
    """Whether a process with this pid runs on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _owner(path: str) -> dict | None:
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


@contextlib.contextmanager
def sweep_lock(out: str):
    """Hold ``out/sweep.lock`` for the duration of the block; GflowInputError if another live sweep holds it."""
    path = os.path.join(out, LOCK_FILE)
    me = {"host": socket.gethostname(), "pid": os.getpid(), "since": time.strftime("%Y-%m-%d %H:%M:%S")}
    for _ in range(2):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            owner = _owner(path) or {}
            stale = owner.get("host") == me["host"] and isinstance(owner.get("pid"), int) and \
                (owner["pid"] == me["pid"] or not process_alive(owner["pid"]))
            if stale:  # left by a process of ours that is gone (or by an earlier call in this one)
                with contextlib.suppress(FileNotFoundError):
                    os.remove(path)
                continue
            raise GflowInputError(
                f"{out} is being written by another sweep (host {owner.get('host', '?')}, pid {owner.get('pid', '?')}, "
                f"since {owner.get('since', '?')}; lock file {path}). Wait for it to finish, point this sweep at "
                "another folder, or delete the lock file if that process is gone.") from None
        with os.fdopen(fd, "w") as f:
            json.dump(me, f)
        break
    try:
        yield
    finally:
        if (_owner(path) or {}).get("pid") == me["pid"]:
            with contextlib.suppress(FileNotFoundError):
                os.remove(path)
