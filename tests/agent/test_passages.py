"""One numbered list of passages per conversation: labels assigned once, kept across turns and tiers."""

from __future__ import annotations

from typing import Any

from sextant.agent.passages import MODEL_TEXT_CHARS, Passage, PassageBook
from sextant.contract.results import Hit, Scores
from sextant.llm.chat import WebSource


def hit(chunk_id: str, rank: int = 1, **fields: Any) -> Hit:
    values: dict[str, Any] = {
        "rank": rank,
        "chunk_id": chunk_id,
        "document_id": "manual",
        "title": "Espresso manual",
        "source": "manual.pdf",
        "start": 0,
        "end": 10,
        "text": f"text of {chunk_id}",
        "scored_by": "dense",
        "scores": Scores(),
        "uri": "kb://documents/manual/pages/1",
    }
    return Hit.model_validate({**values, **fields})


def test_hits_are_numbered_in_rank_order_and_the_same_chunk_keeps_its_first_label() -> None:
    book = PassageBook()
    first = book.add_hits([hit("c1"), hit("c2", rank=2)])
    again = book.add_hits([hit("c3"), hit("c1", rank=2)])
    assert [p.label for p in first] == [1, 2]
    assert [(p.label, p.chunk_id) for p in again] == [(3, "c3"), (1, "c1")]
    assert book.labels() == {1, 2, 3}
    assert [p.chunk_id for p in book.all()] == ["c1", "c2", "c3"]


def test_a_hit_becomes_a_passage_with_its_citation_fields() -> None:
    [passage] = PassageBook().add_hits([hit("c1", page=4, page_label="iv", section="Descaling")])
    assert (passage.tier, passage.document_id, passage.title, passage.source) == (
        "kb",
        "manual",
        "Espresso manual",
        "manual.pdf",
    )
    assert (passage.page, passage.page_label, passage.section, passage.uri) == (
        4,
        "iv",
        "Descaling",
        "kb://documents/manual/pages/1",
    )
    assert passage.text == "text of c1"


def test_an_untitled_hit_is_named_by_its_document_and_a_hit_without_text_has_empty_text() -> None:
    [passage] = PassageBook().add_hits([hit("c1", title="", text=None)])
    assert (passage.title, passage.text) == ("manual", "")


def test_numbering_resumes_after_the_labels_the_client_already_holds() -> None:
    held = [Passage(label=1, chunk_id="c1", title="Manual"), Passage(label=5, chunk_id="c9", title="Manual")]
    book = PassageBook(held)
    added = book.add_hits([hit("c9"), hit("c2", rank=2)])
    assert [p.label for p in added] == [5, 6]
    assert book.get(5) == held[1]


def test_web_sources_share_the_numbering_and_a_url_seen_twice_keeps_its_label() -> None:
    book = PassageBook()
    book.add_hits([hit("c1")])
    labels = book.add_web([WebSource("https://a.example", "A"), WebSource("https://b.example", "")])
    assert labels == [2, 3]
    assert book.add_web([WebSource("https://b.example", "B again")]) == [3]
    web = book.get(3)
    assert web is not None
    assert (web.tier, web.title, web.uri, web.source) == (
        "web",
        "https://b.example",
        "https://b.example",
        "https://b.example",
    )


def test_the_knowledge_base_passages_among_labels_leave_out_web_pages_and_unknown_labels() -> None:
    book = PassageBook()
    book.add_hits([hit("c1"), hit("c2", rank=2)])
    book.add_web([WebSource("https://a.example", "A")])
    assert [p.label for p in book.knowledge_base([3, 2, 2, 1, 99])] == [1, 2]


def test_the_citation_names_title_page_label_and_section_and_falls_back_to_the_page_number() -> None:
    assert Passage(label=1, title="Manual", page=4, page_label="iv", section="Care").citation() == "Manual, p. iv, Care"
    assert Passage(label=1, title="Manual", page=4).citation() == "Manual, p. 4"
    assert Passage(label=1, title="Manual").citation() == "Manual"


def test_the_model_reads_the_label_the_citation_and_at_most_the_first_chars_of_the_text() -> None:
    short = Passage(label=3, title="Manual", page=2, text="Descale every eight weeks.")
    assert short.for_model() == "[3] Manual, p. 2\nDescale every eight weeks."
    long = Passage(label=4, title="Manual", text="x" * (MODEL_TEXT_CHARS + 10))
    assert long.for_model() == "[4] Manual\n" + "x" * MODEL_TEXT_CHARS + " …"


def test_a_slide_is_cited_as_a_slide_and_a_web_page_carries_its_sections_address() -> None:
    link = "https://docs.example.org/guide/tea.html#brewing"
    [slide, web] = PassageBook().add_hits(
        [
            hit("c1", page=7, page_label="7", page_unit="slide", section="Roadmap"),
            hit("c2", rank=2, source="https://docs.example.org/guide/tea.html", link=link),
        ]
    )
    assert slide.citation() == "Espresso manual, slide 7, Roadmap"
    assert web.link == link and web.page_unit == "page"
