"""The watcher over real temporary folders and a real knowledge base: each change becomes a sync pass.

No test measures time: each waits on the watcher's own report (``on_pass``) for an outcome, with a generous
bound, and asserts on what the store holds. Latency and idle cost are bench/watch_latency.py's.
"""

from __future__ import annotations

import hashlib
import logging
import os
import queue
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pymupdf
import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import rule, run_state_machine_as_test
from mcp import Client, StdioServerParameters
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourcesListChanged, ServerEvent

from sextant.kb.document_ids import document_id_for, uri_safe_id
from sextant.kb.documents import LoadedDocument
from sextant.kb.embeddings import Embedder
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.loader_sandbox import BoundedParser
from sextant.kb.server import create_server
from sextant.kb.stored import DocumentRecord
from sextant.kb.sync import Done, SyncError
from sextant.kb.watch import Pass, Watcher, watching
from tests.kb.kb_process import server_command, server_environment
from tests.kb.loaders.pdf_factory import new_page, paragraph, to_bytes
from tests.kb.test_sync import SyncMachine

BOUND_S = 120.0  # only a hung watcher reaches this: the machine running the tests may be very busy


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def parser() -> Iterator[BoundedParser]:
    with BoundedParser() as shared:
        yield shared


class Passes:
    """The watcher's ``on_pass`` reports, to wait on: each pass's steps, in order."""

    def __init__(self) -> None:
        self.seen: queue.Queue[Pass] = queue.Queue()
        self.history: list[Pass] = []

    def __call__(self, report: Pass) -> None:
        self.seen.put(report)

    def until(self, condition: Callable[[], bool]) -> None:
        """Wait for passes until ``condition`` holds after one (or holds already)."""
        while not condition():
            self.history.append(self.seen.get(timeout=BOUND_S))

    def next(self) -> Pass:
        report = self.seen.get(timeout=BOUND_S)
        self.history.append(report)
        return report

    def steps(self) -> list[Done]:
        return [step for report in self.history for step in report.done]


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = (tmp_path / "docs").resolve()
    folder.mkdir()
    return folder


@pytest.fixture
def watched(kb: KnowledgeBase, parser: BoundedParser, docs: Path) -> Iterator[Passes]:
    """A watcher on ``docs`` whose first pass (over the empty folder) is over."""
    passes = Passes()
    with Watcher(kb, parser, [docs], on_pass=passes):
        assert passes.next().done == []
        yield passes


def _record(kb: KnowledgeBase, doc_id: str) -> DocumentRecord | None:
    return kb.store.get_document(doc_id)


def _hash_of(kb: KnowledgeBase, doc_id: str) -> str:
    record = _record(kb, doc_id)
    return record.file_hash if record is not None else ""


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.mark.slow
def test_files_saved_changed_renamed_and_deleted_are_followed(kb: KnowledgeBase, docs: Path, watched: Passes) -> None:
    (docs / "tea.md").write_text("# Tea\n\nOolong is a partially oxidised tea.\n", encoding="utf-8")
    watched.until(lambda: _record(kb, "tea") is not None)
    assert watched.history[-1].changed
    assert kb.search("partially oxidised tea").hits[0].document_id == "tea"

    (docs / "tea.md").write_text("# Tea\n\nMatcha is a powdered green tea.\n", encoding="utf-8")
    watched.until(lambda: "Matcha" in kb.document("tea").text)
    assert "Oolong" not in " ".join(c.text for batch in kb.store.iter_chunks() for c in batch)

    (docs / "sub").mkdir()
    (docs / "tea.md").rename(docs / "sub" / "green.md")
    watched.until(lambda: _record(kb, "green") is not None and _record(kb, "tea") is None)
    [move] = [s for s in watched.steps() if s.action.kind == "move"]
    assert move.outcome is not None and move.outcome.embedded == 0  # a move re-embeds nothing

    (docs / "sub" / "green.md").unlink()
    watched.until(lambda: kb.store.document_count() == 0)
    assert set(kb.lexical.ids()) == set() and kb.store.chunk_count() == 0


@pytest.mark.slow
def test_a_save_by_rename_replaces_the_document_without_a_moment_gone(
    kb: KnowledgeBase, docs: Path, watched: Passes
) -> None:
    (docs / "notes.md").write_text("# Notes\n\nThe keeper lit the lamp at dusk.\n", encoding="utf-8")
    watched.until(lambda: _record(kb, "notes") is not None)
    watched.history.clear()
    # As vim, gedit and most IDEs save: write a hidden temporary file beside it, then rename it over the file.
    for n in range(3):
        temporary = docs / f".notes.md.{n}.tmp"
        temporary.write_text(f"# Notes\n\nThe keeper lit the lamp at dusk, {n + 2} times.\n", encoding="utf-8")
        os.replace(temporary, docs / "notes.md")
    final = (docs / "notes.md").read_bytes()
    watched.until(lambda: _hash_of(kb, "notes") == _sha(final))
    assert all((s.action.kind, s.action.doc_id) == ("update", "notes") for s in watched.steps())


@pytest.mark.slow
def test_a_half_written_file_keeps_the_stored_version_until_it_is_complete(
    kb: KnowledgeBase, docs: Path, watched: Passes
) -> None:
    pdf = pymupdf.open()
    paragraph(new_page(pdf), (72, 72, 500, 300), "The harbour light shines over the reef every night.")
    whole = to_bytes(pdf)
    (docs / "harbour.pdf").write_bytes(whole)
    watched.until(lambda: _hash_of(kb, "harbour") == _sha(whole))
    stored = _record(kb, "harbour")

    pdf = pymupdf.open()
    paragraph(new_page(pdf), (72, 72, 500, 300), "The harbour light was rebuilt in stone after the storm.")
    replacement = to_bytes(pdf)
    with (docs / "harbour.pdf").open("wb") as stream:  # a writer caught halfway, its file cut short
        stream.write(replacement[: len(replacement) // 3])
    report = watched.next()
    [step] = report.done
    assert step.action.kind == "update" and step.refused and not report.changed
    assert _record(kb, "harbour") == stored  # the old version, whole, still searchable
    assert kb.search("harbour light over the reef").hits[0].document_id == "harbour"

    with (docs / "harbour.pdf").open("ab") as stream:  # ...who then finishes
        stream.write(replacement[len(replacement) // 3 :])
    watched.until(lambda: _hash_of(kb, "harbour") == _sha(replacement))
    assert "rebuilt in stone" in kb.document("harbour").text


@pytest.mark.slow
def test_documents_from_elsewhere_and_unsupported_files_are_left_alone(
    kb: KnowledgeBase, docs: Path, watched: Passes
) -> None:
    kb.ingest("upload", LoadedDocument(text="An uploaded note about owls.", title="Owls"), source="upload.md")
    for name in ("~$report.docx", ".hidden.md", "drawing.svg"):
        (docs / name).write_bytes(b"not a document")
    assert watched.next().done == []
    assert [r.id for r in kb.store.list_documents()] == ["upload"]


def test_files_no_loader_reads_are_counted_by_type_and_logged_once(
    kb: KnowledgeBase, parser: BoundedParser, docs: Path, caplog: pytest.LogCaptureFixture
) -> None:
    for name in ("drawing.svg", "logo.SVG", "archive.zip", ".hidden.svg"):
        (docs / name).write_bytes(b"not a document")
    watcher = Watcher(kb, parser, [docs])  # not started: each pass is run here
    with caplog.at_level(logging.WARNING, logger="sextant.kb.watch"):
        watcher.sync_once()
        watcher.sync_once()
    assert watcher.unreadable == {".svg": 2, ".zip": 1}
    lines = [r.getMessage() for r in caplog.records if "cannot read" in r.getMessage()]
    assert lines == ["watch: 3 files Sextant cannot read were left out: .svg 2, .zip 1"]  # said again only on a change


@pytest.mark.slow
def test_a_folder_that_disappears_pauses_the_watch_and_forgets_nothing(
    kb: KnowledgeBase, parser: BoundedParser, tmp_path: Path
) -> None:
    drive = (tmp_path / "drive").resolve()
    (drive / "docs").mkdir(parents=True)
    (drive / "docs" / "tea.md").write_text("Oolong is a partially oxidised tea.\n", encoding="utf-8")
    passes = Passes()
    watcher = Watcher(kb, parser, [drive / "docs"], on_pass=passes)
    with watcher:
        passes.until(lambda: _record(kb, "tea") is not None)
        (drive / "docs").rename(tmp_path / "unmounted")
        assert watcher.sync_once() == []  # what a pass does while the folder is gone
        assert _record(kb, "tea") is not None


def test_folders_are_checked_when_the_watcher_is_made(kb: KnowledgeBase, parser: BoundedParser, docs: Path) -> None:
    with pytest.raises(SyncError, match="no such folder"):
        Watcher(kb, parser, [docs / "missing"])
    (docs / "sub").mkdir()
    with pytest.raises(SyncError, match="lies inside"):
        Watcher(kb, parser, [docs, docs / "sub"])


@pytest.mark.slow
def test_a_stopped_watcher_leaves_whole_documents_and_the_next_one_finishes(
    kb: KnowledgeBase, parser: BoundedParser, docs: Path
) -> None:
    for n in range(6):
        (docs / f"note-{n}.md").write_text(f"# Note {n}\n\nThe lamp was lit {n} times.\n", encoding="utf-8")
    stopping = threading.Event()
    watcher = Watcher(kb, parser, [docs])
    original = kb.ingest

    def ingest_then_stop(*args: Any, **kwargs: Any) -> Any:
        outcome = original(*args, **kwargs)
        stopping.set()
        return outcome

    kb.ingest = ingest_then_stop  # type: ignore[method-assign]
    watcher.start()
    assert stopping.wait(BOUND_S)
    watcher.stop()
    kb.ingest = original  # type: ignore[method-assign]
    some = {r.id: r for r in kb.store.list_documents()}
    assert 1 <= len(some) < 6  # stopped between two documents, not after the whole plan
    assert set(kb.lexical.ids()) == {cid for r in some.values() for cid in r.chunk_ids()}

    passes = Passes()
    with Watcher(kb, parser, [docs], on_pass=passes):
        passes.until(lambda: kb.store.document_count() == 6)
    assert all(s.action.kind == "add" for s in passes.steps())


# --- a search during a replacement sees one version ----------------------------------------------


class _Interposed:
    """Chroma's document collection, with ``during`` run just before the record of a new version is written:
    the moment a replacement's new chunks are stored and its old ones not yet removed."""

    def __init__(self, inner: Any, during: Callable[[], None]) -> None:
        self._inner, self._during = inner, during

    def upsert(self, **kwargs: Any) -> Any:
        self._during()
        return self._inner.upsert(**kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@pytest.mark.slow
def test_a_search_during_a_replacement_sees_the_old_version_or_the_new_never_both(kb: KnowledgeBase) -> None:
    old = "\n\n".join(f"## Part {n}\n\nThe lighthouse keeper logged storm {n} in the old book." for n in range(8))
    new = "\n\n".join(f"## Part {n}\n\nThe lighthouse keeper logged gale {n} in the new book." for n in range(8))
    kb.ingest("log", LoadedDocument(text=old, title="Log"))
    versions: list[set[str]] = []

    def search() -> None:
        hits = kb.search("lighthouse keeper logged", k=20).hits
        versions.append({hit.chunk_id.split("~")[1] for hit in hits})

    kb.store._docs = _Interposed(kb.store._docs, search)
    kb.ingest("log", LoadedDocument(text=new, title="Log"))
    search()  # after the commit
    assert versions and all(len(seen) == 1 for seen in versions), versions
    assert versions[0] != versions[-1]  # the search during the write saw the old version, the one after the new


# --- in a server's lifespan: clients hear of each pass that changed the documents ----------------


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_pass_that_changes_the_documents_publishes_list_changed_on_the_loop(
    kb: KnowledgeBase, parser: BoundedParser, docs: Path
) -> None:
    bus = InMemorySubscriptionBus()
    heard: list[tuple[ServerEvent, threading.Thread]] = []
    arrived = anyio.Event()

    def listener(event: ServerEvent) -> None:
        heard.append((event, threading.current_thread()))
        arrived.set()

    bus.subscribe(listener)
    async with watching(kb, parser, [docs], bus):
        (docs / "tea.md").write_text("Oolong is a partially oxidised tea.\n", encoding="utf-8")
        with anyio.fail_after(BOUND_S):
            await arrived.wait()
    assert _record(kb, "tea") is not None
    assert heard == [(ResourcesListChanged(), threading.main_thread())]  # once, and on the event loop's thread


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_listening_client_hears_of_a_saved_file_and_finds_it(kb: KnowledgeBase, docs: Path) -> None:
    async with (
        Client(create_server(kb, watch=[docs])) as client,
        client.listen(resources_list_changed=True) as changes,
    ):
        (docs / "drawing.svg").write_bytes(b"<svg/>")
        (docs / "tea.md").write_text("Oolong is a partially oxidised tea.\n", encoding="utf-8")
        with anyio.fail_after(BOUND_S):
            assert isinstance(await anext(changes), ResourcesListChanged)
        found = await client.call_tool("kb_search", {"query": "partially oxidised tea", "k": 1})
        assert found.structured_content is not None
        assert found.structured_content["hits"][0]["document_id"] == "tea"
        stats = (await client.call_tool("kb_stats", {})).structured_content
        assert stats is not None and stats["unread_files"] == {".svg": 1}


@pytest.mark.slow
@pytest.mark.anyio
async def test_the_real_process_watches_and_a_listening_stdio_client_hears_of_it(tmp_path: Path, docs: Path) -> None:
    script = server_command()
    env = server_environment(tmp_path)
    (docs / "bees.md").write_text("Bees make honey from nectar.\n", encoding="utf-8")  # there before the start
    params = StdioServerParameters(command=script, args=["--watch", str(docs)], env=env, cwd=str(tmp_path))
    async with (
        Client(params, read_timeout_seconds=BOUND_S) as client,
        client.listen(resources_list_changed=True) as changes,
    ):
        (docs / "tea.md").write_text("Oolong is a partially oxidised tea.\n", encoding="utf-8")

        async def listed() -> list[str]:
            result = await client.call_tool("kb_list", {})
            assert result.structured_content is not None
            return [d["id"] for d in result.structured_content["documents"]]

        # The first pass (bees.md) may end before the client listens; the pass that stores tea.md cannot.
        heard = 0
        with anyio.fail_after(BOUND_S):
            while not heard or await listed() != ["bees", "tea"]:
                assert isinstance(await anext(changes), ResourcesListChanged)
                heard += 1


# --- the sync rules, held by the watcher: test_sync's state machine with the watcher doing the syncs --------


class WatchMachine(SyncMachine):
    """``SyncMachine`` with a watcher running throughout: its ``sync`` waits for the watcher to catch up instead
    of syncing, and ``reopen`` stops the watcher (mid-pass, as it may be), reopens, and starts the next one."""

    def __init__(self, embedder: Embedder, parser: BoundedParser) -> None:
        super().__init__(embedder, parser)
        self.reports: queue.Queue[Pass] = queue.Queue()
        self.markers = 0
        self.watcher = Watcher(self.kb, parser, self.roots, on_pass=self.reports.put)
        self.watcher.start()

    def _caught_up(self) -> None:
        """Wait for a pass started by an event after every change so far: a hidden marker file's (no document),
        written now, so that pass's scan sees everything before it."""
        self.markers += 1
        marker = self.roots[0] / f".caught-up-{self.markers}"
        marker.touch()
        while marker not in self.reports.get(timeout=BOUND_S).paths:
            pass

    @rule()
    def sync(self) -> None:
        self._caught_up()
        self._expect_synced()
        self._check()

    @rule()
    def reopen(self) -> None:
        self.watcher.stop()
        self.kb.close()
        self.kb = KnowledgeBase.open(self.settings, embedder=self.embedder)
        self.watcher = Watcher(self.kb, self.parser, self.roots, on_pass=self.reports.put)
        self.watcher.start()
        self.sync()

    def _expect_synced(self) -> None:
        """As a sync's rule, but the watcher saw the states between the steps too, so which of two files with one
        name holds the name's id is whichever it saw first: the model takes each file's id from the store, and
        asks that it be one of the file's two ids, and that a file go unstored only when both are held."""
        records = {r.id: r for r in self.kb.store.list_documents()}
        by_source = {Path(r.source): r.id for r in records.values() if r.id not in self.others}
        self.synced = {}
        for name in sorted(self.disk):
            ids = (document_id_for(Path(name)), uri_safe_id(name))  # the folders lie directly in self.dir
            doc_id = by_source.get(self.dir / name)
            if doc_id is None:
                assert all(i in records for i in ids), f"{name} is not stored though one of its ids is free"
                continue
            assert doc_id in ids, f"{name} is stored as {doc_id!r}, neither of its ids"
            self.synced[doc_id] = (name, self.disk[name])

    def teardown(self) -> None:
        self.watcher.stop()
        super().teardown()


@pytest.mark.slow
def test_the_sync_rules_hold_while_watching(embedder: Embedder, parser: BoundedParser) -> None:
    run_state_machine_as_test(
        lambda: WatchMachine(embedder, parser),  # type: ignore[arg-type]
        settings=settings(
            max_examples=4,
            stateful_step_count=12,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )
