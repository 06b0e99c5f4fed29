"""Files written whole or not at all, and their digests: the file helpers every stage
uses (``evidence.records`` for a run directory's evidence, ``driver.kat`` for KAT logs,
``library.build`` for a library's sidecar, ``evidence.leak`` for leak evidence).

A write goes to a temporary file beside its target (``.<name>.tmp-<pid>``), is flushed
and fsynced, renamed over the target (``os.replace``), and the folder is fsynced: a
process killed at any instant leaves the old file, the new one, or none, and perhaps
a temporary file that :func:`remove_temp_files` clears.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ngcc.base.untrusted import open_regular


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically and durably (temp file, fsync, rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(".%s.tmp-%d" % (path.name, os.getpid()))
    try:
        with open(temp, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    finally:
        if temp.exists():
            temp.unlink()
    _fsync_dir(path.parent)


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def remove_temp_files(folder: Path) -> list[Path]:
    """Delete leftover ``.*.tmp-*`` files of killed writers under ``folder``; return
    what was removed."""
    removed = []
    for temp in folder.rglob(".*.tmp-*"):
        if temp.is_file():
            temp.unlink()
            removed.append(temp)
    return removed


def sha256_file(path: Path) -> str:
    """Hex sha256 of a regular file's bytes (opened without blocking: a FIFO or a
    device is an ``OSError``, never a wait)."""
    digest = hashlib.sha256()
    with open_regular(path) as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
