"""A mailbox's messages and a message's attachments, stored as documents of their own: through sextant-ingest,
--sync (which follows the mailbox as it grows and shrinks) and forgetting the container."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sextant.kb.embeddings import Embedder
from sextant.kb.ingest_service import ingest_file
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.loader_sandbox import BoundedParser, ParseLimits, ParserCrash
from sextant.kb.loaders import mbox as mbox_loader
from tests.kb.cli.ingest_runs import reopen, run_ingest, use_store
from tests.kb.loaders.mail_factory import mbox, message

pytestmark = pytest.mark.slow

NOTES = ("notes.md", b"# Tasting notes\n\nThe 2019 oolong tasted of roasted chestnut.\n", "text/markdown")


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, embedder: Embedder) -> Path:
    return use_store(tmp_path, monkeypatch)


def _three() -> list[bytes]:
    return [
        message(subject="Budget", message_id="<budget@example.com>", body="The budget was approved.\n").as_bytes(),
        message(
            subject="Tea order",
            message_id="<tea@example.com>",
            body="Notes attached.\n",
            attachments=[NOTES],
        ).as_bytes(),
        message(subject="Offsite", message_id="<offsite@example.com>", body="The offsite is in May.\n").as_bytes(),
    ]


def test_a_message_and_its_attachment_are_two_documents_the_attachment_naming_its_message(
    store: Path, tmp_path: Path, embedder: Embedder, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "order.eml"
    diagram = ("diagram.vsdx", b"PK\x03\x04", "application/vnd.ms-visio.drawing")
    order = message(subject="Tea order", message_id="<tea@example.com>", attachments=[NOTES, diagram])
    path.write_bytes(order.as_bytes())
    assert run_ingest([str(path), "--no-summaries"]) == 0  # a part left out is named; the message itself was stored
    out = capsys.readouterr().out
    assert "2 files: 2 added" in out
    assert f"left out {path} › diagram.vsdx: no loader reads .vsdx; the rest is stored" in out

    kb = reopen(store, embedder)
    records = {r.id: r for r in kb.store.list_documents()}
    assert set(records) == {"order", "order.tea-example.com-1-notes.md"}
    attachment = records["order.tea-example.com-1-notes.md"]
    assert attachment.title.startswith("notes.md — attachment to 'Tea order' from alice@example.com")
    assert attachment.source == f"{path.resolve()}#tea@example.com/1-notes.md"
    hit = kb.search("what did the 2019 oolong taste of", k=1).hits[0]
    assert hit.document_id == attachment.id

    kb.forget("order")  # the message takes its attachment with it
    assert kb.store.list_documents() == []
    kb.close()


def test_sync_follows_a_mailbox_as_messages_come_and_go(
    store: Path, tmp_path: Path, embedder: Embedder, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "mail"
    folder.mkdir()
    budget, tea, offsite = _three()
    box = folder / "archive.mbox"
    box.write_bytes(mbox(budget, tea))
    assert run_ingest(["--sync", str(folder), "--no-summaries"]) == 0
    kb = reopen(store, embedder)
    ids = {r.id for r in kb.store.list_documents()}
    assert ids == {
        "archive",
        "archive.budget-example.com",
        "archive.tea-example.com",
        "archive.tea-example.com-1-notes.md",
    }
    kb.close()

    box.write_bytes(mbox(budget, offsite))  # one message gone (with its attachment), one new
    assert run_ingest(["--sync", str(folder), "--no-summaries"]) == 0
    capsys.readouterr()
    kb = reopen(store, embedder)
    ids = {r.id for r in kb.store.list_documents()}
    assert ids == {"archive", "archive.budget-example.com", "archive.offsite-example.com"}
    assert kb.search("when is the offsite", k=1).hits[0].document_id == "archive.offsite-example.com"
    kb.close()

    box.unlink()
    assert run_ingest(["--sync", str(folder), "--no-summaries"]) == 0
    kb = reopen(store, embedder)
    assert kb.store.list_documents() == []
    kb.close()


def test_a_mailbox_document_lists_its_messages_a_broken_one_named() -> None:
    budget, _, offsite = _three()
    doc = mbox_loader.load(mbox(budget, b"not a message at all\n", offsite), "archive.mbox")
    (table,) = doc.tables
    rows = [doc.text[r.start : r.end] for r in table.rows]
    assert table.header == "Date | From | Subject"
    assert rows[0] == "2024-03-01T09:30:00+01:00 | alice@example.com | Budget"
    assert rows[1].startswith(" |  | (message 2 could not be read: ")
    assert rows[2].endswith("| Offsite") and doc.title == "Mailbox archive"


def test_the_worker_reads_a_mailbox_with_its_parts_and_names_what_it_left_out() -> None:
    budget, tea, _ = _three()
    with BoundedParser() as parser:
        doc, unpacked = parser.parse_with_parts(mbox(budget, tea, b"Subject\n"), "archive.mbox")
        assert doc.title == "Mailbox archive" and unpacked is not None
        assert [f.name for f in unpacked.files] == ["Budget.eml", "Tea order.eml", "notes.md"]
        assert unpacked.files[2].data == NOTES[1] and unpacked.files[2].loaded is None  # parsed on its own
        # A message comes back read as parsing it alone reads it.
        assert [f.loaded for f in unpacked.files[:2]] == [parser.parse(f.data, f.name) for f in unpacked.files[:2]]
        assert [s.name for s in unpacked.skipped] == ["archive.mbox message 3"]
        assert parser.parse_with_parts(b"# Plain\n", "plain.md")[1] is None


def _quiet(done: int, total: int, message: str) -> None:
    pass


def test_a_mailbox_is_read_in_one_request_and_its_messages_are_not_parsed_again(
    kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    with BoundedParser(ParseLimits.from_settings(kb.settings)) as parser:
        asked: list[tuple[str, str]] = []
        ask = parser._ask

        def recorded(op: str, data: bytes, name: str) -> dict[str, Any]:
            asked.append((op, name))
            return ask(op, data, name)

        monkeypatch.setattr(parser, "_ask", recorded)
        outcome = ingest_file(
            kb, parser, "archive.mbox", mbox(*_three()), title=None, progress=_quiet, before_writing=lambda: None
        )
    assert asked == [("parse_with_parts", "archive.mbox"), ("parse", "notes.md")]
    assert outcome.status == "added"
    assert [(p.id, p.status) for p in outcome.parts] == [
        ("archive.budget-example.com", "added"),
        ("archive.tea-example.com", "added"),
        ("archive.tea-example.com-1-notes.md", "added"),
        ("archive.offsite-example.com", "added"),
    ]
    assert kb.search("when is the offsite", k=1).hits[0].document_id == "archive.offsite-example.com"


def test_a_mailbox_whose_parts_crash_the_parser_is_stored_and_its_parts_refused_not_forgotten(
    kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    budget, tea, offsite = _three()
    with BoundedParser(ParseLimits.from_settings(kb.settings)) as parser:
        first = ingest_file(
            kb, parser, "archive.mbox", mbox(budget, tea), title=None, progress=_quiet, before_writing=lambda: None
        )
        assert len(first.parts) == 3

        def crash(data: bytes, name: str) -> None:
            raise ParserCrash(name, "the parser process died (signal SIGSEGV) while reading it")

        monkeypatch.setattr(parser, "parse_with_parts", crash)
        again = ingest_file(
            kb,
            parser,
            "archive.mbox",
            mbox(budget, tea, offsite),
            title=None,
            progress=_quiet,
            before_writing=lambda: None,
        )
    assert again.status == "replaced"  # the mailbox's list, now of three messages
    (refused,) = again.parts
    assert refused.id == "archive" and refused.status == "refused"
    assert refused.reason == "its parts could not be read: the parser process died (signal SIGSEGV) while reading it"
    assert set(kb.parts_of("archive.mbox")) == {p.id for p in first.parts}  # nothing forgotten for want of reading
