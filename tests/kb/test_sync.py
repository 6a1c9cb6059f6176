"""Sync: the plan on hand-made states, apply through a real knowledge base, and a state machine over real folders."""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule, run_state_machine_as_test

from sextant.kb.document_ids import document_id_for, uri_safe_id
from sextant.kb.documents import LoadedDocument
from sextant.kb.embeddings import Embedder
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.loader_sandbox import BoundedParser
from sextant.kb.loaders import supported_files
from sextant.kb.stored import DocumentRecord
from sextant.kb.sync import Action, StoredFile, SyncError, apply, check_roots, plan, plan_for, stored_files
from sextant.settings import KbSettings

ROOT = Path("/docs")
TEA, COFFEE, OWLS = "1" * 64, "2" * 64, "3" * 64


def _stored(name: str, digest: str, category: str = "") -> StoredFile:
    path = ROOT / name
    return StoredFile(document_id_for(path), path, digest, category)


def _kinds(actions: tuple[Action, ...]) -> list[tuple[str, str, str | None]]:
    """Each action as (kind, document id, id of the document it supersedes)."""
    return [(a.kind, a.doc_id, a.previous.doc_id if a.previous else None) for a in actions]


# --- the plan: a pure function of two states ----------------------------------------------------


def test_new_changed_unchanged_and_gone_files() -> None:
    disk = {ROOT / "tea.md": TEA, ROOT / "coffee.md": "9" * 64, ROOT / "new.txt": OWLS}
    owned = [_stored("tea.md", TEA), _stored("coffee.md", COFFEE), _stored("old.md", "8" * 64)]
    todo = plan(disk, owned, set(), [ROOT])
    assert _kinds(todo.actions) == [("update", "coffee", "coffee"), ("add", "new", None), ("forget", "old", "old")]
    assert [s.doc_id for s in todo.unchanged] == ["tea"] and todo.refused == ()


def test_a_renamed_file_is_a_move_of_its_stored_document_then_a_forget_of_the_old_id() -> None:
    todo = plan({ROOT / "sub" / "green.md": TEA}, [_stored("tea.md", TEA)], set(), [ROOT])
    assert _kinds(todo.actions) == [("move", "green", "tea"), ("forget", "tea", "tea")]
    assert todo.counts() == {"add": 0, "update": 0, "move": 1, "forget": 1}


def test_a_file_moved_under_the_same_name_is_a_move_without_a_forget() -> None:
    todo = plan({ROOT / "sub" / "tea.md": TEA}, [_stored("tea.md", TEA)], set(), [ROOT])
    assert _kinds(todo.actions) == [("move", "tea", "tea")]


def test_a_copy_is_an_add_that_reuses_the_originals_vectors() -> None:
    todo = plan({ROOT / "tea.md": TEA, ROOT / "tea-copy.md": TEA}, [_stored("tea.md", TEA)], set(), [ROOT])
    assert _kinds(todo.actions) == [("add", "tea-copy", "tea")]


def test_a_file_moved_and_edited_at_once_updates_the_document_of_its_name() -> None:
    todo = plan({ROOT / "sub" / "tea.md": OWLS}, [_stored("tea.md", TEA)], set(), [ROOT])
    assert _kinds(todo.actions) == [("update", "tea", "tea")]


def test_a_file_whose_name_is_held_takes_its_paths_id_and_the_holder_keeps_its_own() -> None:
    disk = {ROOT / "a" / "guide.md": TEA, ROOT / "b" / "guide.txt": COFFEE, ROOT / "upload.md": OWLS}
    todo = plan(disk, [_stored("b/guide.txt", COFFEE)], {"upload"}, [ROOT])
    assert _kinds(todo.actions) == [("add", "docs-a-guide.md", None), ("add", "docs-upload.md", None)]
    assert [s.doc_id for s in todo.unchanged] == ["guide"] and todo.refused == ()


def test_among_new_files_with_one_name_the_first_in_path_order_takes_it() -> None:
    todo = plan({ROOT / "b" / "guide.md": TEA, ROOT / "a" / "guide.md": COFFEE}, [], set(), [ROOT])
    assert [(a.doc_id, a.path) for a in todo.actions] == [
        ("guide", ROOT / "a" / "guide.md"),
        ("docs-b-guide.md", ROOT / "b" / "guide.md"),
    ]


def test_a_file_keeps_its_paths_id_when_the_holder_of_its_name_goes() -> None:
    owned = [_stored("b/guide.md", COFFEE), StoredFile("docs-a-guide.md", ROOT / "a" / "guide.md", TEA)]
    todo = plan({ROOT / "a" / "guide.md": TEA}, owned, set(), [ROOT])
    assert _kinds(todo.actions) == [("forget", "guide", "guide")]
    assert [s.doc_id for s in todo.unchanged] == ["docs-a-guide.md"]


def test_a_file_whose_ids_are_both_held_is_refused_with_their_holders() -> None:
    disk = {ROOT / "a" / "guide.md": TEA, ROOT / "b" / "guide.md": COFFEE}
    todo = plan(disk, [_stored("b/guide.md", COFFEE)], {"docs-a-guide.md"}, [ROOT])
    assert todo.actions == () and [s.doc_id for s in todo.unchanged] == ["guide"]
    [(path, reason)] = todo.refused
    assert path == ROOT / "a" / "guide.md"
    assert reason == (
        "its ids are taken ('guide' by /docs/b/guide.md, 'docs-a-guide.md' by a document not from these "
        "folders); rename the file"
    )


def test_roots_name_the_paths_ids_and_tell_files_of_two_folders_apart() -> None:
    roots = [Path("/notes"), Path("/work/papers")]
    disk = {Path("/notes/README.md"): TEA, Path("/work/papers/README.md"): COFFEE}
    todo = plan(disk, [], set(), roots)
    assert [a.doc_id for a in todo.actions] == ["README", "papers-README.md"]


def test_another_category_updates_the_document() -> None:
    todo = plan({ROOT / "tea.md": TEA}, [_stored("tea.md", TEA, category="drinks")], set(), [ROOT], category="notes")
    assert _kinds(todo.actions) == [("update", "tea", "tea")]


def test_the_plan_describes_each_action_relative_to_its_folder() -> None:
    todo = plan({ROOT / "sub" / "green.md": TEA}, [_stored("tea.md", TEA)], set(), [ROOT])
    assert [a.describe([ROOT]) for a in todo.actions] == [
        "move   docs/tea.md -> docs/sub/green.md (as green)",
        "forget tea (docs/tea.md is gone)",
    ]


def test_only_documents_from_inside_the_folders_are_the_syncs() -> None:
    records = [
        _record("tea", "/docs/tea.md"),
        _record("notes", "/elsewhere/notes.md"),
        _record("upload", "upload.md"),  # kb_upload: a bare file name
        _record("pasted", ""),  # kb_ingest without a source
    ]
    assert [s.doc_id for s in stored_files(records, [ROOT])] == ["tea"]


def _record(doc_id: str, source: str) -> DocumentRecord:
    return DocumentRecord(
        id=doc_id, title=doc_id, source=source, category="", content_hash="0" * 64, chunk_count=1, chars=1,
        about="", ingested_at="",
    )  # fmt: skip


def test_folders_are_checked_before_anything_is_read(tmp_path: Path) -> None:
    (tmp_path / "docs" / "sub").mkdir(parents=True)
    (tmp_path / "file.md").write_text("x", encoding="utf-8")
    with pytest.raises(SyncError, match="no such folder"):
        check_roots([tmp_path / "missing"])
    with pytest.raises(SyncError, match="is a file, not a folder"):
        check_roots([tmp_path / "file.md"])
    with pytest.raises(SyncError, match="lies inside"):
        check_roots([tmp_path / "docs", tmp_path / "docs" / "sub"])
    assert check_roots([tmp_path / "docs", tmp_path / "docs"]) == [(tmp_path / "docs").resolve()]


def test_hidden_files_folders_and_lock_files_are_not_documents(tmp_path: Path) -> None:
    for name in ["notes.md", ".#notes.md", ".git/README.md", ".obsidian/x.md", "~$report.docx", "sub/ok.txt"]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x", encoding="utf-8")
    hidden_root = tmp_path / ".hidden-root"
    hidden_root.mkdir()
    (hidden_root / "inside.md").write_text("x", encoding="utf-8")
    assert [p.relative_to(tmp_path).as_posix() for p in supported_files(tmp_path)] == ["notes.md", "sub/ok.txt"]
    assert supported_files(hidden_root) == [hidden_root / "inside.md"]  # only names inside the folder count


# --- apply, through a real knowledge base ---------------------------------------------------------


@pytest.fixture(scope="module")
def parser() -> Iterator[BoundedParser]:
    with BoundedParser() as shared:
        yield shared


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.mark.slow
def test_a_sync_mirrors_the_folder_and_a_second_changes_nothing(
    kb: KnowledgeBase, parser: BoundedParser, tmp_path: Path
) -> None:
    docs = (tmp_path / "docs").resolve()
    _write(docs / "tea.md", "# Tea\n\nOolong is partially oxidised.\n")
    _write(docs / "sub" / "coffee.txt", "Coffee: arabica beans grow at altitude.\n")
    kb.ingest("upload", LoadedDocument(text="An uploaded note about owls.", title="Owls"), source="upload.md")
    kb.set_overview("upload", "A note about owls.")
    first = apply(kb, parser, plan_for(kb, [docs]))
    assert [(s.action.kind, s.action.doc_id) for s in first] == [("add", "coffee"), ("add", "tea")]

    (docs / "tea.md").rename(docs / "sub" / "green-tea.md")
    (docs / "sub" / "coffee.txt").unlink()
    second = apply(kb, parser, plan_for(kb, [docs]))
    assert [(s.action.kind, s.action.doc_id) for s in second] == [
        ("move", "green-tea"),
        ("forget", "coffee"),
        ("forget", "tea"),
    ]
    moved = second[0].outcome
    assert moved is not None and moved.embedded == 0 and moved.chunks >= 1
    assert [d.id for d in kb.documents()] == ["green-tea", "upload"]
    assert kb.document("upload").overview == "A note about owls."  # not the sync's: untouched
    assert plan_for(kb, [docs]).actions == ()
    hits = kb.search("arabica beans", mode="lexical", abstain=False).hits
    assert all(hit.document_id != "coffee" for hit in hits)


@pytest.mark.slow
def test_a_moved_files_overview_moves_with_it(kb: KnowledgeBase, parser: BoundedParser, tmp_path: Path) -> None:
    docs = (tmp_path / "docs").resolve()
    _write(docs / "tea.md", "# Tea\n\nOolong is partially oxidised.\n")
    apply(kb, parser, plan_for(kb, [docs]))
    kb.set_overview("tea", "All about oolong.")
    (docs / "tea.md").rename(docs / "oolong.md")
    written: list[str] = []
    apply(kb, parser, plan_for(kb, [docs]), on_stored=lambda outcome, doc: written.append(outcome.id))
    assert kb.document("oolong").overview == "All about oolong." and written == []


@pytest.mark.slow
def test_a_file_that_cannot_be_stored_keeps_what_was_stored(
    kb: KnowledgeBase, parser: BoundedParser, tmp_path: Path
) -> None:
    docs = (tmp_path / "docs").resolve()
    _write(docs / "notes.md", "# Notes\n\nThe budget was approved.\n")
    apply(kb, parser, plan_for(kb, [docs]))
    (docs / "notes.md").write_text("   \n", encoding="utf-8")  # now nothing to index: refused
    [step] = apply(kb, parser, plan_for(kb, [docs]))
    assert step.action.kind == "update" and "no text" in step.refused
    assert "budget" in kb.document("notes").text


# --- the state machine: create, modify, rename, delete, sync, reopen against a plain model ------------

PATHS = ["one/alpha.md", "one/beta.md", "one/deep/alpha.md", "two/gamma.md", "two/delta.txt"]
BODIES = ["owls hunt at night", "bees make honey", "tea is a leaf", "ships need lighthouses"]
OTHERS = {"alpha": "upload.md", "one-deep-alpha.md": "/elsewhere/notes.md"}  # both can hold a synced file's id


def _text(title: str, body: str) -> str:
    # A title of its own: the document's text does not depend on its file's name, so a move embeds nothing.
    return f"# {title.title()}\n\n{title} says {body}.\n"


# Few enough that two files often hold the same bytes: copies, and moves recognised by their hash.
TEXTS = st.builds(_text, st.sampled_from(["amber", "blue"]), st.sampled_from(BODIES))


class SyncMachine(RuleBasedStateMachine):
    """Files on disk and documents from elsewhere, against a model of what a sync should leave stored."""

    def __init__(self, embedder: Embedder, parser: BoundedParser) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="sextant-sync-")).resolve()
        self.roots = [self.dir / "one", self.dir / "two"]
        for root in self.roots:
            root.mkdir()
        self.settings = KbSettings(chroma_dir=self.dir / "store", _env_file=None)  # type: ignore[call-arg]
        self.embedder, self.parser = embedder, parser
        self.kb = KnowledgeBase.open(self.settings, embedder=embedder)
        self.disk: dict[str, str] = {}  # path (relative to self.dir) -> text
        self.synced: dict[str, tuple[str, str]] = {}  # document id -> path and text of its file at the last sync
        self.others: dict[str, str] = {}  # document id -> content hash, for documents not from the folders

    def _write(self, name: str, text: str) -> None:
        _write(self.dir / name, text)
        self.disk[name] = text

    @initialize(files=st.dictionaries(st.sampled_from(PATHS), TEXTS, min_size=2, max_size=4))
    def fill(self, files: dict[str, str]) -> None:
        for name, text in files.items():
            self._write(name, text)

    @rule(name=st.sampled_from(PATHS), text=TEXTS)
    def create_or_modify(self, name: str, text: str) -> None:
        self._write(name, text)

    @precondition(lambda self: bool(self.disk))
    @rule(data=st.data(), new=st.sampled_from(PATHS))
    def rename(self, data: st.DataObject, new: str) -> None:
        old = data.draw(st.sampled_from(sorted(self.disk)))
        if new == old:
            return
        (self.dir / new).parent.mkdir(parents=True, exist_ok=True)
        (self.dir / old).replace(self.dir / new)
        self.disk[new] = self.disk.pop(old)

    @precondition(lambda self: bool(self.disk))
    @rule(data=st.data())
    def delete(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(sorted(self.disk)))
        (self.dir / name).unlink()
        del self.disk[name]

    @rule(doc_id=st.sampled_from(sorted(OTHERS)))
    def ingest_elsewhere(self, doc_id: str) -> None:
        if self.kb.store.get_document(doc_id) is not None:
            return  # re-using a stored id would take that document over; not what this models
        text = f"{doc_id} was added by kb_ingest or an upload, not from a synced folder."
        self.kb.ingest(doc_id, LoadedDocument(text=text, title=doc_id), source=OTHERS[doc_id])
        record = self.kb.store.get_document(doc_id)
        assert record is not None
        self.others[doc_id] = record.content_hash

    @rule()
    def sync(self) -> None:
        steps = apply(self.kb, self.parser, plan_for(self.kb, self.roots))
        assert not [s for s in steps if s.refused]
        for step in steps:
            action = step.action
            if action.kind == "move" and action.path and action.previous and step.outcome:
                # Read by the same loader, the moved bytes are the same text: nothing to embed.
                assert step.outcome.embedded == 0 or action.path.suffix != action.previous.path.suffix
        self._expect_synced()
        self._check()
        assert plan_for(self.kb, self.roots).actions == ()  # a second sync would change nothing

    @rule()
    def reopen(self) -> None:
        self.kb.close()
        self.kb = KnowledgeBase.open(self.settings, embedder=self.embedder)
        self._check()

    def _expect_synced(self) -> None:
        """The model's rule: a synced file keeps its id while it stays at its path; a new one, in path order,
        takes the first of its name's id and its path's (from the folder's parent) that no file, no earlier
        new file and no document from elsewhere holds, or none."""
        held = {doc_id: name for doc_id, (name, _) in self.synced.items() if name in self.disk}
        for name in sorted(set(self.disk) - set(held.values())):
            path_id = uri_safe_id(name)  # the folders lie directly in self.dir
            free = [i for i in (document_id_for(Path(name)), path_id) if i not in held and i not in self.others]
            held |= {free[0]: name} if free else {}
        self.synced = {doc_id: (name, self.disk[name]) for doc_id, name in held.items()}

    def _check(self) -> None:
        records = {r.id: r for r in self.kb.store.list_documents()}
        assert set(records) == set(self.synced) | set(self.others), "a stale or a missing document"
        for doc_id, (name, text) in self.synced.items():
            record = records[doc_id]
            assert Path(record.source) == self.dir / name
            assert record.file_hash == hashlib.sha256(text.encode()).hexdigest()
        for doc_id, content_hash in self.others.items():
            assert records[doc_id].content_hash == content_hash
        live = {cid for r in records.values() for cid in r.chunk_ids()}
        assert set(self.kb.lexical.ids()) == live and self.kb.store.chunk_count() == len(live)

    def teardown(self) -> None:
        self.kb.close()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.mark.slow
def test_sync_rules_hold_over_real_folders(embedder: Embedder, parser: BoundedParser) -> None:
    run_state_machine_as_test(
        lambda: SyncMachine(embedder, parser),  # type: ignore[arg-type]  # a factory works; the stubs want a class
        settings=settings(
            max_examples=12,
            stateful_step_count=12,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )
