"""The SHA-256 of a file's bytes: the checksums a sweep run lists in its ``run.json``."""

from __future__ import annotations

import hashlib


def file_sha256(path: str) -> str:
    """The SHA-256 of a file's bytes, read in 1 MiB chunks.

    Args:
        path: The file.

    Returns:
        The digest in hex.
    """
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
