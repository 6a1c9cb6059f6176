"""Keep the store mirroring folders: ``scan`` the disk, ``plan`` the changes, ``apply`` them.

``plan`` is a pure function of two states: the supported files under the folders with the SHA-256 of their
bytes (``scan``), and the stored documents that came from those folders (``stored_files``: a document whose
``source`` is a path inside one of them). Everything else in the store (``kb_ingest``, uploads, files from
other folders) is outside the plan and never touched. For each file on disk, in path order:

- the document stored from that path, with the same bytes and category, is unchanged;
- with other bytes (or another category) it is updated;
- a file at a new path is added; when a stored document has the same bytes, its vectors are reused, and if
  that document's own file is gone the pair is a move: the new path is stored, then the old one forgotten;
- a new file's id is its name without the suffix (``document_id_for``); when another document holds that, it
  is its path from the synced folder's parent, suffix included (``path_id``: ``notes/a/README.md`` is
  ``notes-a-README.md``), so a folder of README files syncs whole; a file whose ids are both held is refused.
  A stored file keeps the id it has while it stays at its path.

A stored document whose file is gone (and was not moved) is forgotten. ``apply`` does the writes through
``KnowledgeBase.ingest`` and ``KnowledgeBase.forget``, each a commit of its own, writes before forgets: a
sync killed at any point leaves documents that the next sync plans again from what it finds, and the next
open repairs a half-written one. So a second sync after a complete one plans nothing, and a watcher can
call ``scan``, ``plan`` and ``apply`` on each change.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from sextant.contract.results import IngestOutcome
from sextant.kb.containers import ParsedFile, parse_file, store_parts
from sextant.kb.document_ids import container_source, document_id_for, uri_safe_id
from sextant.kb.documents import LoadedDocument
from sextant.kb.knowledge_base import KnowledgeBase, KnowledgeBaseError, ToIngest
from sextant.kb.loader_sandbox import BoundedParser
from sextant.kb.loaders import folder_files
from sextant.kb.refusal import REFUSALS, refusal_reason
from sextant.kb.store import StoreError
from sextant.kb.stored import DocumentRecord

log = logging.getLogger(__name__)

Kind = Literal["add", "update", "move", "forget"]


class SyncError(Exception):
    """A folder to sync cannot be: it is missing, a file, or inside another folder of the same sync."""


@dataclass(frozen=True, slots=True)
class StoredFile:
    """A stored document that came from a file: its id, the path it was read from, its bytes' hash."""

    doc_id: str
    path: Path
    file_hash: str
    category: str = ""


@dataclass(frozen=True, slots=True)
class Action:
    """One change: ``path`` is the file to store (None for a forget); ``previous`` the document it supersedes
    (its vectors are reused) or, for a forget, the document to remove."""

    kind: Kind
    doc_id: str
    path: Path | None = None
    previous: StoredFile | None = None

    def describe(self, roots: Sequence[Path]) -> str:
        """One line for a person: what changes, with paths shown relative to their folder."""
        if self.kind == "forget":
            assert self.previous is not None
            return f"forget {self.doc_id} ({_shown(self.previous.path, roots)} is gone)"
        assert self.path is not None
        where = _shown(self.path, roots)
        if self.kind == "move":
            assert self.previous is not None
            return f"move   {_shown(self.previous.path, roots)} -> {where} (as {self.doc_id})"
        return f"{self.kind:<6} {where} (as {self.doc_id})"


@dataclass(frozen=True, slots=True)
class Plan:
    """What a sync will do: the actions in order (stores first, then forgets), and what it leaves alone:
    ``unreadable`` are the files of types no loader reads, which a person is told of."""

    actions: tuple[Action, ...] = ()
    unchanged: tuple[StoredFile, ...] = ()
    refused: tuple[tuple[Path, str], ...] = ()
    unreadable: tuple[Path, ...] = ()

    def counts(self) -> dict[Kind, int]:
        kinds: tuple[Kind, ...] = ("add", "update", "move", "forget")
        return {kind: sum(a.kind == kind for a in self.actions) for kind in kinds}


def check_roots(folders: Iterable[Path]) -> list[Path]:
    """The folders to sync, resolved, in order given.

    Raises:
        SyncError: a folder is missing or is a file, or one lies inside another (its files would be claimed
            by both).
    """
    roots: list[Path] = []
    for folder in folders:
        if not folder.exists():
            raise SyncError(f"{folder}: no such folder")
        if not folder.is_dir():
            raise SyncError(f"{folder}: is a file, not a folder; --sync mirrors folders (add a file without --sync)")
        roots.append(folder.resolve())
    for root in roots:
        for other in roots:
            if root != other and root.is_relative_to(other):
                raise SyncError(f"{root} lies inside {other}, which is synced too; name only {other}")
    return sorted(set(roots), key=roots.index)


def file_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def scan(roots: Sequence[Path]) -> tuple[dict[Path, str], list[Path]]:
    """Every supported file under ``roots`` with the SHA-256 of its bytes, and the files no loader reads; a file
    that vanishes or cannot be read meanwhile is left out (a later scan sees it again)."""
    found: dict[Path, str] = {}
    unreadable: list[Path] = []
    for root in roots:
        files = folder_files(root)
        unreadable.extend(files.unreadable)
        for path in files.readable:
            try:
                with path.open("rb") as stream:
                    found[path] = hashlib.file_digest(stream, "sha256").hexdigest()
            except OSError:
                continue
    return found, unreadable


def stored_files(records: Iterable[DocumentRecord], roots: Sequence[Path]) -> list[StoredFile]:
    """The stored documents that came from a file inside ``roots``; the rest are none of a sync's business."""
    owned: list[StoredFile] = []
    for record in records:
        if container_source(record.source) is not None:
            continue  # a part comes and goes with its container's file
        path = Path(record.source)
        if path.is_absolute() and any(path.is_relative_to(root) for root in roots):
            owned.append(StoredFile(record.id, path, record.file_hash, record.category))
    return owned


def path_id(path: Path, roots: Sequence[Path]) -> str:
    """The id a synced file takes when its name's is held: its path from its folder's parent, made URI-safe."""
    root = next(root for root in roots if path.is_relative_to(root))
    return uri_safe_id(path.relative_to(root.parent).as_posix())


def plan(
    disk: dict[Path, str],
    owned: Sequence[StoredFile],
    others: set[str],
    roots: Sequence[Path],
    *,
    category: str = "",
) -> Plan:
    """The changes that make the documents ``owned`` mirror the files ``disk`` found under ``roots``;
    ``others``: the ids of every other stored document, which the plan never touches (a file whose ids are
    all held by them or by other files is refused)."""

    def ids(path: Path) -> tuple[str, str]:
        return document_id_for(path), path_id(path, roots)

    at_path = {s.path: s for s in owned if s.doc_id in ids(s.path)}
    gone = {s.doc_id: s for s in owned if at_path.get(s.path) is not s or s.path not in disk}
    by_hash: dict[str, list[StoredFile]] = {}
    for twin in sorted(owned, key=lambda s: str(s.path)):
        by_hash.setdefault(twin.file_hash, []).append(twin)
    taken: dict[str, Path] = {s.doc_id: s.path for s in owned if s.doc_id not in gone}

    stores: list[Action] = []
    unchanged: list[StoredFile] = []
    refused: list[tuple[Path, str]] = []
    moved: set[str] = set()
    for path in sorted(disk):
        digest = disk[path]
        stored = at_path.get(path)
        if stored is not None:
            if (stored.file_hash, stored.category) == (digest, category):
                unchanged.append(stored)
            else:
                stores.append(Action("update", stored.doc_id, path, stored))
            continue
        free = [doc_id for doc_id in ids(path) if doc_id not in others and doc_id not in taken]
        if not free:
            refused.append((path, _held(ids(path), taken)))
            continue
        doc_id = free[0]
        taken[doc_id] = path
        twins = by_hash.get(digest, [])
        source = next((s for s in twins if s.doc_id in gone and s.doc_id not in moved), None)
        if source is not None:
            moved.add(source.doc_id)
            stores.append(Action("move", doc_id, path, source))
            continue
        # A file at a new path under the id of a document whose file is gone takes that document's place.
        replaced = gone.get(doc_id)
        if replaced is not None:
            stores.append(Action("update", doc_id, path, replaced))
        else:
            stores.append(Action("add", doc_id, path, next(iter(twins), None)))
    kept = {a.doc_id for a in stores}
    forgets = [Action("forget", s.doc_id, None, s) for s in sorted(gone.values(), key=lambda s: s.doc_id)]
    return Plan(
        actions=(*stores, *(a for a in forgets if a.doc_id not in kept)),
        unchanged=tuple(unchanged),
        refused=tuple(refused),
    )


def _held(ids: Sequence[str], taken: dict[str, Path]) -> str:
    """Why a file gets no id: who holds each of its ids (a file of the sync, or a document from elsewhere)."""
    holders = (f"{doc_id!r} by {taken.get(doc_id, 'a document not from these folders')}" for doc_id in ids)
    return f"its ids are taken ({', '.join(holders)}); rename the file"


def plan_for(kb: KnowledgeBase, roots: Sequence[Path], *, category: str = "") -> Plan:
    """Scan ``roots`` and plan against what ``kb`` holds now."""
    records = kb.store.list_documents()
    owned = stored_files(records, roots)
    mine = {s.doc_id for s in owned}
    disk, unreadable = scan(roots)
    todo = plan(disk, owned, {r.id for r in records if r.id not in mine}, roots, category=category)
    return replace(todo, unreadable=tuple(unreadable))


def read_file(
    parser: BoundedParser, path: Path, *, doc_id: str, source: str, category: str = ""
) -> tuple[ToIngest, ParsedFile]:
    """Read and parse (in the bounded worker) one file: the document to store, with the hash of the very bytes
    parsed and the bytes kept (a PDF's, or an image's made a PDF, serve its page images); and what was parsed.

    Raises:
        LoadError: the file cannot be read or parsed, or is over a limit.
    """
    data = parser.read_file(path)
    parsed = parse_file(parser, data, path.name)
    original = parser.original(data, path.name)
    item = ToIngest(doc_id, parsed.document, source, category, original=original, file_hash=file_hash(data))
    return item, parsed


def ingest_file(
    kb: KnowledgeBase,
    parser: BoundedParser,
    path: Path,
    *,
    doc_id: str,
    source: str,
    category: str = "",
    reuse_vectors_of: str | None = None,
) -> tuple[IngestOutcome, LoadedDocument]:
    """``read_file``, then store the document and its parts.

    Raises:
        LoadError: the file cannot be read or parsed, or is over a limit.
        KnowledgeBaseError, StoreError: as ``KnowledgeBase.ingest``; nothing stored is lost.
    """
    item, parsed = read_file(parser, path, doc_id=doc_id, source=source, category=category)
    outcome = kb.ingest(
        doc_id,
        item.doc,
        source=source,
        category=category,
        original=item.original,
        file_hash=item.file_hash,
        reuse_vectors_of=reuse_vectors_of,
    )
    if outcome.status != "unchanged":
        outcome.parts = store_parts(kb, parser, parsed, container_id=doc_id, source=source, category=category)
    return outcome, item.doc


@dataclass(frozen=True, slots=True)
class Done:
    """One action carried out: a store's outcome, a forget's chunks removed, or why the file was refused."""

    action: Action
    outcome: IngestOutcome | None = None
    removed: int = 0
    refused: str = ""


Stored = Callable[[IngestOutcome, LoadedDocument], None]
"""Called after each document a sync stores with content new to the store (e.g. to write its overview)."""


def apply(
    kb: KnowledgeBase,
    parser: BoundedParser,
    todo: Plan,
    *,
    category: str = "",
    on_done: Callable[[Done], None] | None = None,
    on_stored: Stored | None = None,
) -> list[Done]:
    """Carry out ``todo`` in order; a file that cannot be stored is refused and the rest goes on.

    A refused update or move leaves the stored version in place: nothing already stored is lost.
    """
    done: list[Done] = []
    kept: set[str] = set()  # documents whose file's new copy was refused: not forgotten
    with kb.batch():
        for action in todo.actions:
            if action.kind == "forget":
                if action.doc_id in kept:
                    continue
                step = Done(action, removed=_forget(kb, action.doc_id))
            else:
                step = _store(kb, parser, action, category, on_stored)
                if step.refused and action.kind == "move" and action.previous is not None:
                    kept.add(action.previous.doc_id)
            done.append(step)
            if on_done is not None:
                on_done(step)
    return done


def _store(kb: KnowledgeBase, parser: BoundedParser, action: Action, category: str, on_stored: Stored | None) -> Done:
    assert action.path is not None
    previous = action.previous
    # Read before the write: a move under the same id replaces the record that holds it.
    overview = _overview_of(kb, previous.doc_id) if previous is not None else ""
    try:
        outcome, doc = ingest_file(
            kb,
            parser,
            action.path,
            doc_id=action.doc_id,
            source=str(action.path),
            category=category,
            reuse_vectors_of=previous.doc_id if previous is not None else None,
        )
    except REFUSALS as exc:
        return Done(action, refused=refusal_reason(exc))
    carried = previous is not None and _carry_overview(kb, previous, overview, outcome)
    if on_stored is not None and not carried and outcome.status != "unchanged":
        on_stored(outcome, doc)
    return Done(action, outcome=outcome)


def _forget(kb: KnowledgeBase, doc_id: str) -> int:
    try:
        return kb.forget(doc_id)
    except KnowledgeBaseError:  # another client removed it since the plan: as planned
        return 0


def _overview_of(kb: KnowledgeBase, doc_id: str) -> str:
    record = kb.store.get_document(doc_id)
    return record.overview if record is not None else ""


def _carry_overview(kb: KnowledgeBase, previous: StoredFile, overview: str, outcome: IngestOutcome) -> bool:
    """Store ``previous``'s overview for the document just stored from the same bytes (a moved or copied file),
    rather than have a model write it again; returns whether it did."""
    stored = kb.store.get_document(outcome.id)
    if not overview or stored is None or stored.overview or stored.file_hash != previous.file_hash:
        return False
    try:
        kb.set_overview(outcome.id, overview, version=outcome.version)
    except (KnowledgeBaseError, StoreError) as exc:
        log.warning("%s: the overview of %s was not carried over: %s", outcome.id, previous.doc_id, exc)
        return False
    return True


def _shown(path: Path, roots: Sequence[Path]) -> str:
    for root in roots:
        if path.is_relative_to(root):
            return str(Path(root.name) / path.relative_to(root))
    return str(path)
