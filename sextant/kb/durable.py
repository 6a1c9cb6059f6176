"""Making writes survive a crash: fsync of files and folders, so that a rename after them is the commit point."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any


def write_json(path: Path, value: Any) -> None:
    """``value`` as UTF-8 JSON (not fsynced: ``fsync_tree`` it before the rename that commits it)."""
    path.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")


def fsync_tree(root: Path) -> None:
    """fsync a file, or every file and folder under a folder, so a rename after it is durable."""
    if root.is_file():
        _fsync(root)
        return
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            _fsync(Path(dirpath, name))
        fsync_dir(Path(dirpath))


def fsync_dir(folder: Path) -> None:
    """Make a rename or unlink in ``folder`` durable (POSIX; a no-op where directories cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def replace_atomically(path: Path, data: bytes, *, prefix: str) -> None:
    """Write ``data`` to ``path`` whole or not at all: into a private (0600) temporary file beside it, named
    ``prefix``..., fsynced, then renamed over ``path``; a failure removes the temporary file and leaves ``path``
    as it was.

    Raises:
        OSError: the folder cannot be written.
    """
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=prefix, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
