"""Adding text and files for the ingest tools: items grouped into paged documents, refusals as outcomes, a cancelled
upload stopped between its parse and its write."""

from __future__ import annotations

import pytest

from sextant.contract.tools import IngestDocument
from sextant.kb.ingest_service import group_pages, ingest_file, ingest_text
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.loader_sandbox import BoundedParser, ParseLimits
from tests.kb.loaders import slides_factory
from tests.kb.loaders.html_factory import chapter, epub


def _item(doc_id: str, content: str, page: int | None = None) -> IngestDocument:
    return IngestDocument(id=doc_id, title=doc_id.title(), content=content, page=page)


def _quiet(done: int, total: int, message: str) -> None:
    pass


def test_items_of_one_id_are_grouped_in_page_order_the_unpaged_first() -> None:
    grouped = group_pages([_item("a", "two", 2), _item("b", "only"), _item("a", "one", 1), _item("a", "intro")])
    assert {k: [p.content for p in v] for k, v in grouped.items()} == {"a": ["intro", "one", "two"], "b": ["only"]}


@pytest.mark.slow
def test_a_paged_text_is_one_document_and_an_empty_one_is_refused_not_raised(kb: KnowledgeBase) -> None:
    parts = group_pages([_item("tax", "File by April.", 2), _item("tax", "Intro.", 1)])["tax"]
    stored = ingest_text(kb, "tax", parts, _quiet)
    assert stored.status == "added" and stored.pages == 2
    refused = ingest_text(kb, "blank", [_item("blank", " \n ")], _quiet)
    assert refused.status == "refused" and "no text" in (refused.reason or "")


@pytest.mark.slow
def test_a_file_is_refused_with_its_reason_and_a_cancel_before_writing_stores_nothing(kb: KnowledgeBase) -> None:
    with BoundedParser(ParseLimits.from_settings(kb.settings)) as parser:
        broken = ingest_file(
            kb, parser, "broken.pdf", b"%PDF-1.7 not a pdf", title=None, progress=_quiet, before_writing=lambda: None
        )
        assert broken.id == "broken" and broken.status == "refused" and broken.reason

        class Cancelled(Exception):
            pass

        def cancel() -> None:
            raise Cancelled

        with pytest.raises(Cancelled):
            ingest_file(
                kb, parser, "notes.md", b"# Notes\n\nKept.\n", title="Mine", progress=_quiet, before_writing=cancel
            )
        assert kb.store.document_count() == 0
        stored = ingest_file(
            kb, parser, "notes.md", b"# Notes\n\nKept.\n", title="Mine", progress=_quiet, before_writing=lambda: None
        )
        assert stored.status == "added" and stored.title == "Mine"


def _damaged_notes() -> bytes:
    return slides_factory.with_part(slides_factory.deck(), "ppt/notesSlides/notesSlide1.xml", b"<p:notes")


def _damaged_chapter() -> bytes:
    second = chapter("<h1>Two</h1><p>Write to <team@example.org> for help.</p>")
    return epub([("one.xhtml", chapter("<h1>One</h1><p>Read.</p>")), ("two.xhtml", second)])


@pytest.mark.slow
@pytest.mark.parametrize(
    ("filename", "data", "named"),
    [
        ("deck.pptx", _damaged_notes(), (1, "1", "its speaker notes were left out: damaged, its XML part")),
        ("book.epub", _damaged_chapter(), (2, "OEBPS/two.xhtml", "read in part: its XHTML is not well-formed XML")),
    ],
)
def test_a_part_of_a_file_left_out_is_named_in_the_outcome_and_the_rest_stored(
    kb: KnowledgeBase, filename: str, data: bytes, named: tuple[int, str, str]
) -> None:
    with BoundedParser(ParseLimits.from_settings(kb.settings)) as parser:
        outcome = ingest_file(kb, parser, filename, data, title=None, progress=_quiet, before_writing=lambda: None)
    assert outcome.status == "added" and outcome.chunks > 0
    (skipped,) = outcome.skipped_pages
    assert (skipped.number, skipped.label) == named[:2] and skipped.reason.startswith(named[2])
