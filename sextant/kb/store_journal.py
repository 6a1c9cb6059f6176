"""What each write to a shared store changed, so that the other processes on this machine follow it in O(change).

``StoreLock``'s counter tells a process *that* another wrote; finding *what* changed meant listing every document
record and diffing chunk ids, a cost that grows with the store (1.2 s at 100k chunks, learning/scale.md). So each
write, at its end and still under the store's lock, appends one line to ``sextant.journal`` beside the counter:
the counter value it took, the store generation it left, and the chunk ids it removed and added. A follower reads
the entries after the counter it last saw and applies them, provided they are complete: one entry for every
counter value in between. A writer that died half-way wrote no entry, and a follower that fell behind the kept
entries finds a gap; either way it lists the records as before, which stays the truth.

The file is appended with ``O_APPEND`` under the lock, one line per write; past ``MAX_BYTES`` the writer rewrites
it with its newer half (replaced atomically). A torn last line (a crash mid-append) is ignored.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

JOURNAL_FILE = "sextant.journal"
MAX_BYTES = 1 << 20


@dataclass(frozen=True, slots=True)
class JournalEntry:
    """One write: the counter value it took, the store generation it left (None: it did not change the store's
    chunks), and the chunk ids it removed and then added."""

    change: int
    generation: int | None
    removed: tuple[str, ...]
    added: tuple[str, ...]


class StoreJournal:
    """The journal of one store folder (the folder of its ``StoreLock``)."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / JOURNAL_FILE

    def append(self, entry: JournalEntry) -> None:
        """Record one write; the caller holds the store's lock. Best effort: a journal that cannot be written only
        sends the others to the listing."""
        line = json.dumps([entry.change, entry.generation, entry.removed, entry.added], separators=(",", ":")) + "\n"
        try:
            if self.path.exists() and self.path.stat().st_size > MAX_BYTES:
                self._keep_newer_half()
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, line.encode("utf-8"))
            finally:
                os.close(fd)
        except OSError:
            return

    def since(self, seen: int, now: int) -> list[JournalEntry] | None:
        """The entries of the writes after counter ``seen`` up to ``now``, in order; None unless there is exactly
        one for each counter value in between."""
        wanted = range(seen + 1, now + 1)
        found: dict[int, JournalEntry] = {}
        for entry in self._entries():
            if entry.change in wanted:
                found[entry.change] = entry
        if len(found) != len(wanted):
            return None
        return [found[change] for change in wanted]

    def _entries(self) -> list[JournalEntry]:
        try:
            lines = self.path.read_bytes().splitlines()
        except OSError:
            return []
        entries = []
        for line in lines:
            try:
                change, generation, removed, added = json.loads(line)
            except (ValueError, TypeError):
                continue  # a torn line, left by a writer that died mid-append
            if _valid(change, generation, removed, added):
                entries.append(JournalEntry(change, generation, tuple(removed), tuple(added)))
        return entries

    def _keep_newer_half(self) -> None:
        lines = self.path.read_bytes().splitlines(keepends=True)
        tmp = self.path.with_name(f".{JOURNAL_FILE}-{os.getpid()}")
        tmp.write_bytes(b"".join(lines[len(lines) // 2 :]))
        os.replace(tmp, self.path)


def _valid(change: object, generation: object, removed: object, added: object) -> bool:
    def ids(value: object) -> bool:
        return isinstance(value, list) and all(isinstance(i, str) for i in value)

    return (
        isinstance(change, int) and (generation is None or isinstance(generation, int)) and ids(removed) and ids(added)
    )


def net_change(entries: Sequence[JournalEntry]) -> tuple[set[str], list[str]]:
    """What ``entries`` did in all, applied in order: the ids gone and the ids new (in the order they came)."""
    gone: set[str] = set()
    new: dict[str, None] = {}
    for entry in entries:
        for chunk_id in entry.removed:
            new.pop(chunk_id, None)
            gone.add(chunk_id)
        for chunk_id in entry.added:
            gone.discard(chunk_id)
            new[chunk_id] = None
    return gone, list(new)
