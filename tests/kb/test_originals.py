"""The original PDFs kept beside the store: written with each version, replaced with it, removed with it."""

from __future__ import annotations

import os
from pathlib import Path

import pymupdf
import pytest

from sextant.kb.cli.forget import forget_ids
from sextant.kb.documents import LoadedDocument
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.originals import Originals, is_pdf
from sextant.kb.workspaces import Workspaces


def pdf_of(*pages: str) -> bytes:
    """A real PDF, one text line per page."""
    doc = pymupdf.open()
    for text in pages:
        doc.new_page().insert_text((72, 72), text)
    try:
        return doc.tobytes()
    finally:
        doc.close()


def _doc(text: str) -> LoadedDocument:
    return LoadedDocument(text=text, title="Manual")


def test_a_pdf_is_kept_in_the_stores_folder_and_replaced_with_its_document(kb: KnowledgeBase) -> None:
    first, second = pdf_of("Descale every eight weeks."), pdf_of("Descale every two months.")
    kb.ingest("manual", _doc("Descale every eight weeks."), source="manual.pdf", original=first)
    kept = kb.originals.get("manual")
    assert kept == kb.settings.store_dir() / "originals" / "manual.pdf"
    assert kept.read_bytes() == first

    replaced = kb.ingest("manual", _doc("Descale every two months."), source="manual.pdf", original=second)
    assert replaced.status == "replaced" and kept.read_bytes() == second
    assert [p.name for p in kept.parent.iterdir()] == ["manual.pdf"]  # no temporary file left behind

    # The same content again keeps what is there; the same id as text drops the PDF (it shows another version).
    assert kb.ingest("manual", _doc("Descale every two months."), source="manual.pdf").status == "unchanged"
    assert kept.read_bytes() == second
    kb.ingest("manual", _doc("Descale monthly."), source="manual.md")
    assert kb.originals.get("manual") is None


def test_only_pdf_bytes_are_kept_and_an_unchanged_pdf_fills_in_a_missing_original(kb: KnowledgeBase) -> None:
    kb.ingest("notes", _doc("Bring a torch."), source="notes.md", original=b"# Notes\n\nBring a torch.")
    assert kb.originals.get("notes") is None
    kb.ingest("manual", _doc("Descale every eight weeks."), source="manual.pdf")  # as before originals were kept
    assert kb.originals.get("manual") is None
    data = pdf_of("Descale every eight weeks.")
    again = kb.ingest("manual", _doc("Descale every eight weeks."), source="manual.pdf", original=data)
    assert again.status == "unchanged"
    kept = kb.originals.get("manual")
    assert kept is not None and kept.read_bytes() == data
    assert is_pdf(b"junk before the header %PDF-1.7") and not is_pdf(b"PK\x03\x04 a docx")


def test_forgetting_a_document_removes_its_original(kb: KnowledgeBase, capsys: pytest.CaptureFixture[str]) -> None:
    kb.ingest("manual", _doc("Descale every eight weeks."), source="manual.pdf", original=pdf_of("Descale."))
    kb.ingest("tea", _doc("Oolong is partially oxidised."), source="tea.pdf", original=pdf_of("Oolong."))
    kb.forget("manual")
    assert kb.originals.get("manual") is None and kb.originals.get("tea") is not None
    assert forget_ids(kb, ["tea"], assume_yes=True) is False  # sextant-forget's path
    assert "removed tea" in capsys.readouterr().out
    assert kb.originals.get("tea") is None


def test_a_failed_write_keeps_the_document_and_drops_the_stale_original(
    kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb.ingest("manual", _doc("Descale every eight weeks."), source="manual.pdf", original=pdf_of("Eight weeks."))

    def full_disk(doc_id: str, data: bytes) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(kb.originals, "keep", full_disk)
    outcome = kb.ingest("manual", _doc("Descale every two months."), source="manual.pdf", original=pdf_of("Two."))
    assert outcome.status == "replaced" and "two months" in kb.document("manual").text
    assert kb.originals.get("manual") is None  # the old file would show another version's pages


def test_each_workspace_keeps_its_own_originals_and_dropping_it_removes_them(kb: KnowledgeBase) -> None:
    workspaces = Workspaces(kb)
    try:
        alice = workspaces.get("a" * 32)
        alice.ingest("manual", _doc("Descale every eight weeks."), source="manual.pdf", original=pdf_of("Descale."))
        kept = alice.originals.get("manual")
        assert kept is not None and kept.is_relative_to(kb.settings.store_dir() / "workspaces" / ("a" * 32))
        assert kb.originals.get("manual") is None
        assert workspaces.drop("a" * 32) and not kept.exists()
    finally:
        workspaces.close()


def test_keep_replaces_atomically_and_remove_says_whether_there_was_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    originals = Originals(tmp_path / "originals")
    assert originals.remove("manual") is False
    originals.keep("manual", b"%PDF-1.7 first")
    originals.keep("manual", b"%PDF-1.7 second")
    assert originals.path("manual").read_bytes() == b"%PDF-1.7 second"

    def interrupted(src: object, dst: object) -> None:
        raise OSError(5, "Input/output error")

    with monkeypatch.context() as patched:
        patched.setattr(os, "replace", interrupted)
        with pytest.raises(OSError):
            originals.keep("manual", b"%PDF-1.7 third")
    assert originals.path("manual").read_bytes() == b"%PDF-1.7 second"  # the old file, whole
    assert [p.name for p in originals.root.iterdir()] == ["manual.pdf"]  # and no temporary one
    assert originals.remove("manual") is True and originals.get("manual") is None
