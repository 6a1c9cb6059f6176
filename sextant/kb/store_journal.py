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

The same run of entries tells an opening process whether the store can hold chunks of a write that died half-way
(orphans): the entry of a check of the whole store (``ChunkStore.repair``) is marked clean, and while every write
since has its entry, none died half-way, so the next open need not list every record again (an open at 100k
chunks: 1.1-1.7 s with the listing, 0.33 s without, learning/scale.md).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
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
    clean: bool = False  # the store held no orphan chunks once this write was done (a repair's own entry)


class StoreJournal:
    """The journal of one store folder (the folder of its ``StoreLock``)."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / JOURNAL_FILE

    def append(self, entry: JournalEntry) -> None:
        """Record one write; the caller holds the store's lock. Best effort: a journal that cannot be written only
        sends the others to the listing."""
        line = _line(entry)
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

    def clean_at(self, now: int, generation: int) -> bool:
        """Whether the store can hold no orphan chunks: a clean entry, then one entry for each counter value after
        it up to ``now`` (no writer died half-way since), the last to change the store leaving it at ``generation``
        (nobody this machine cannot see, such as a replica on a Chroma server, wrote since)."""
        run = _clean_run({e.change: e for e in self._entries() if e.change <= now}, now)
        if run is None:
            return False
        changed = [e.generation for e in run if e.generation is not None]
        return bool(changed) and changed[-1] == generation

    def _entries(self) -> list[JournalEntry]:
        try:
            lines = self.path.read_bytes().splitlines()
        except OSError:
            return []
        entries = []
        for line in lines:
            entry = _parsed(line)
            if entry is not None:
                entries.append(entry)
        return entries

    def _keep_newer_half(self) -> None:
        """Drop the older half; where the dropped entries run unbroken from a clean one, their last is kept marked
        clean, so that dropping history does not send the next open to a listing."""
        lines = self.path.read_bytes().splitlines(keepends=True)
        half = len(lines) // 2
        dropped = {e.change: e for e in map(_parsed, lines[:half]) if e is not None}
        run = _clean_run(dropped, max(dropped, default=0))
        carried = [_line(replace(run[-1], clean=True)).encode("utf-8")] if run else []
        tmp = self.path.with_name(f".{JOURNAL_FILE}-{os.getpid()}")
        tmp.write_bytes(b"".join(carried + lines[half:]))
        os.replace(tmp, self.path)


def _line(entry: JournalEntry) -> str:
    fields: list[object] = [entry.change, entry.generation, entry.removed, entry.added]
    return json.dumps([*fields, 1] if entry.clean else fields, separators=(",", ":")) + "\n"


def _parsed(line: bytes) -> JournalEntry | None:
    """The entry of a line; None for a torn line (a writer that died mid-append) or a malformed one."""
    try:
        change, generation, removed, added, *flag = json.loads(line)
    except (ValueError, TypeError):
        return None
    if not _valid(change, generation, removed, added) or flag not in ([], [1]):
        return None
    return JournalEntry(change, generation, tuple(removed), tuple(added), clean=bool(flag))


def _clean_run(entries: dict[int, JournalEntry], now: int) -> list[JournalEntry] | None:
    """The entries from the last clean one up to counter ``now``, in order, if there is one for each value."""
    clean = [change for change, e in entries.items() if e.clean]
    if not clean:
        return None
    wanted = range(max(clean), now + 1)
    if any(change not in entries for change in wanted):
        return None
    return [entries[change] for change in wanted]


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
