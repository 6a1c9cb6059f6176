"""What ``completion/complete`` offers while a person types a document id or a page number."""

from __future__ import annotations

from sextant.contract.results import DocumentInfo
from sextant.kb.completions import MAX_VALUES, document_ids, page_numbers


def document(doc_id: str, title: str = "", pages: int = 0) -> DocumentInfo:
    return DocumentInfo(
        id=doc_id,
        title=title or doc_id,
        source=f"{doc_id}.md",
        category="",
        chunks=1,
        chars=10,
        pages=pages,
        about="",
        ingested_at="2026-12-02T00:00:00Z",
        uri=f"kb://documents/{doc_id}",
    )


DOCUMENTS = [
    document("espresso-guide", "Pulling a double"),
    document("manual", "Espresso machine manual", pages=12),
    document("bees", "Keeping bees"),
    document("Espresso-FAQ", "Questions"),
]


def test_ids_that_start_with_what_was_typed_come_first_then_those_containing_it_in_id_or_title() -> None:
    offered = document_ids(DOCUMENTS, "ESPRESSO")
    assert offered.values == ["espresso-guide", "Espresso-FAQ", "manual"]
    assert (offered.total, offered.has_more) == (3, False)


def test_nothing_typed_offers_every_id_and_nothing_matching_offers_none() -> None:
    assert document_ids(DOCUMENTS, "").values == [d.id for d in DOCUMENTS]
    nothing = document_ids(DOCUMENTS, "tax")
    assert (nothing.values, nothing.total, nothing.has_more) == ([], 0, False)


def test_past_the_protocol_s_limit_the_rest_is_counted_not_sent() -> None:
    many = [document(f"doc-{n:03d}") for n in range(MAX_VALUES + 5)]
    offered = document_ids(many, "doc")
    assert offered.values == [d.id for d in many[:MAX_VALUES]]
    assert (offered.total, offered.has_more) == (MAX_VALUES + 5, True)


def test_page_numbers_are_the_document_s_pages_that_start_with_what_was_typed() -> None:
    manual = DOCUMENTS[1]
    assert page_numbers(manual, "1").values == ["1", "10", "11", "12"]
    assert page_numbers(manual, "").values == [str(n) for n in range(1, 13)]
    assert page_numbers(manual, "0").values == []


def test_an_unknown_document_or_one_without_pages_offers_no_page() -> None:
    assert page_numbers(None, "1").values == []
    assert page_numbers(DOCUMENTS[0], "").values == []


def test_a_document_of_many_pages_offers_the_first_and_counts_them_all() -> None:
    offered = page_numbers(document("atlas", pages=500), "")
    assert offered.values == [str(n) for n in range(1, MAX_VALUES + 1)]
    assert (offered.total, offered.has_more) == (500, True)
