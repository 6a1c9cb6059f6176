"""One store, several processes: the lock every write holds and the counter every write moves.

Any number of Sextant processes may open one store folder at once (Claude Desktop's ``sextant-kb``, Claude
Code's, the agent's child, ``sextant-ingest``, ``--watch``). Chroma's embedded store is not made for that: each
process loads the vector index into memory once and never sees another's writes, and a process that writes
over a stale index saves it over the other's, losing its vectors (learning/shared-store.md has the
measurements). So, per store folder on this machine:

- ``StoreLock.exclusive()`` is held by every write and by every (re)load of Chroma's segments: an flock on
  ``sextant.lock`` between processes (the kernel releases it when a process dies, however it dies) and a
  re-entrant lock between the threads of one process.
- ``StoreLock.bump()``, called by a writer as it takes the lock, moves a counter in ``sextant.changes`` (replaced
  atomically). Another process reads it before each search, a file read of a few microseconds; when it moved,
  that process reopens Chroma's segments and brings its BM25 index up to the store under the lock. A writer
  killed mid-write has already moved it, so the others reload once the kernel releases its lock.

Nothing runs in the background: there is no owner process to hand over and nothing to stop.
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import ClassVar

LOCK_FILE = "sextant.lock"
CHANGES_FILE = "sextant.changes"


class StoreLock:
    """The lock and change counter of one store folder, one object per folder per process (``for_folder``).

    An flock belongs to an open file, so two objects on one folder in one process would lock each other out;
    ``for_folder`` hands out the same one.
    """

    _by_folder: ClassVar[dict[Path, StoreLock]] = {}
    _registry_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._threads = threading.RLock()
        self._depth = 0  # how deep the thread holding ``_threads`` has entered ``exclusive``
        self._fd: int | None = None
        self._owner: int | None = None  # the thread holding it

    def held_here(self) -> bool:
        """Whether the calling thread holds the lock (it is inside a write of its own)."""
        return self._owner == threading.get_ident()

    @classmethod
    def for_folder(cls, folder: Path) -> StoreLock:
        """This process's lock on ``folder`` (created with the folder when missing)."""
        folder.mkdir(parents=True, exist_ok=True)
        key = folder.resolve()
        with cls._registry_lock:
            found = cls._by_folder.get(key)
            if found is None:
                found = cls._by_folder[key] = cls(key)
            return found

    @contextmanager
    def exclusive(self, *, blocking: bool = True) -> Iterator[bool]:
        """Hold the folder against every other writer, in this process and in others; re-entrant.

        Yields whether it is held: with ``blocking=False`` it is not when another holds it, and the body
        should then leave the store alone.
        """
        if not self._threads.acquire(blocking=blocking):
            yield False
            return
        try:
            if self._depth == 0:
                fd = os.open(self.folder / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX if blocking else fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(fd)
                    yield False
                    return
                self._fd = fd
                self._owner = threading.get_ident()
            self._depth += 1
            try:
                yield True
            finally:
                self._depth -= 1
                if self._depth == 0 and self._fd is not None:
                    os.close(self._fd)  # closing the only descriptor releases the flock
                    self._fd, self._owner = None, None
        finally:
            self._threads.release()

    def changes(self) -> int:
        """The counter as it is now; 0 before the first write (or if the file is unreadable)."""
        try:
            return int((self.folder / CHANGES_FILE).read_bytes() or b"0")
        except (OSError, ValueError):
            return 0

    def bump(self) -> int:
        """Move the counter on by one and return it; the caller holds ``exclusive``."""
        value = self.changes() + 1
        tmp = self.folder / f".{CHANGES_FILE}-{os.getpid()}"  # not *.tmp: a BM25 save beside it sweeps those
        tmp.write_bytes(str(value).encode())
        os.replace(tmp, self.folder / CHANGES_FILE)  # a reader sees the old value or the new, never half of one
        return value
