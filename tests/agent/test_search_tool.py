"""What the loop sends to ``kb_search`` and what it makes of the result, over a real knowledge base's results."""

from __future__ import annotations

from sextant.agent.kb_client import ToolOutcome
from sextant.agent.passages import PassageBook
from sextant.agent.policies import SEARCH_K
from sextant.agent.search_tool import EMPTY_KNOWLEDGE_BASE, read_search, search_arguments
from sextant.kb.documents import LoadedDocument
from sextant.kb.knowledge_base import KnowledgeBase


def _outcome(kb: KnowledgeBase, query: str) -> ToolOutcome:
    return ToolOutcome(ok=True, structured=kb.search(query, k=3).model_dump(mode="json"), text="")


def test_the_query_loses_citation_markers_falls_back_to_the_question_and_asks_for_full_chunks() -> None:
    sent = search_arguments({"query": "descaling interval [2][3]"}, "How often?")
    assert sent == {"query": "descaling interval", "k": SEARCH_K, "detail": "full"}
    assert search_arguments({"query": "[1]", "k": 3}, "How often?") == {"query": "How often?", "k": 3, "detail": "full"}


def test_hits_become_passages_numbered_once(kb: KnowledgeBase) -> None:
    kb.ingest("espresso", LoadedDocument(text="Descale the espresso machine every eight weeks.", title="Espresso"))
    book = PassageBook()
    first = read_search(_outcome(kb, "descale espresso machine"), book, "descale espresso machine")
    assert [p.label for p in first.passages] == [1] and not first.empty and not first.abstained
    assert first.for_model.startswith("Passages for 'descale espresso machine':") and "[1]" in first.summary
    again = read_search(_outcome(kb, "descale espresso machine"), book, "descale espresso machine")
    assert [p.label for p in again.passages] == [1] and book.get(2) is None  # seen before: its first label


def test_nothing_relevant_and_an_empty_store_are_said_apart(kb: KnowledgeBase) -> None:
    empty = read_search(_outcome(kb, "espresso"), PassageBook(), "espresso")
    assert empty.empty and empty.for_model == empty.summary == EMPTY_KNOWLEDGE_BASE
    kb.ingest("bees", LoadedDocument(text="Swarm control starts in May by adding supers.", title="Bees"))
    nothing = read_search(_outcome(kb, "quarterly VAT return deadline"), PassageBook(), "quarterly VAT return deadline")
    assert nothing.abstained and not nothing.empty and nothing.passages == []
    assert nothing.for_model.startswith("Nothing found in the documents for 'quarterly VAT return deadline'")
