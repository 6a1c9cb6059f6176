"""Document overviews in the knowledge base: stored as given, searched like chunks, tied to one version."""

from __future__ import annotations

import pytest
from mcp import Client

from sextant.kb.documents import LoadedDocument
from sextant.kb.knowledge_base import KnowledgeBase, KnowledgeBaseError
from sextant.kb.server import create_server
from sextant.settings import KbSettings

ESPRESSO = (
    "Descale the espresso machine every eight weeks with a citric acid solution. "
    "Backflush the group head weekly using a blind basket and detergent."
)
BEES = "In early spring the beekeeper checks that the queen is laying and that honey stores last until May."
OVERVIEW = "A care guide for home espresso machines: which routine chores keep a machine healthy, and how often."


def _doc(text: str, title: str) -> LoadedDocument:
    return LoadedDocument(text=text, title=title)


def _overview_hits(kb: KnowledgeBase, query: str) -> list[str]:
    hits = kb.search(query, k=10, abstain=False, detail="full").hits
    return [h.text or "" for h in hits if h.kind == "overview"]


def test_an_overview_is_listed_searched_and_cited_to_the_document(kb: KnowledgeBase) -> None:
    outcome = kb.ingest("espresso", _doc(ESPRESSO, "Espresso care"))
    kb.ingest("bees", _doc(BEES, "Beekeeping"))
    info = kb.set_overview("espresso", f"  {OVERVIEW}\n", version=outcome.version)
    assert info.overview == OVERVIEW
    assert {d.id: d.overview for d in kb.documents()} == {"espresso": OVERVIEW, "bees": ""}

    hit = next(h for h in kb.search("routine chores for a healthy machine", k=5).hits if h.kind == "overview")
    assert (hit.document_id, hit.title, hit.page, hit.pages, hit.section) == (
        "espresso",
        "Espresso care",
        None,
        [],
        None,
    )
    assert hit.uri == "kb://documents/espresso" and hit.text == OVERVIEW
    assert kb.stats().chunks == kb.stats().lexical_chunks == 3


def test_a_new_overview_replaces_the_old_one(kb: KnowledgeBase) -> None:
    kb.ingest("espresso", _doc(ESPRESSO, "Espresso care"))
    kb.set_overview("espresso", OVERVIEW)
    kb.set_overview("espresso", "How to look after an espresso machine.")
    assert kb.documents()[0].overview == "How to look after an espresso machine."
    assert _overview_hits(kb, "espresso machine") == ["How to look after an espresso machine."]
    assert kb.stats().chunks == kb.stats().lexical_chunks == 2


def test_forget_removes_the_overview(kb: KnowledgeBase) -> None:
    kb.ingest("espresso", _doc(ESPRESSO, "Espresso care"))
    kb.set_overview("espresso", OVERVIEW)
    assert kb.forget("espresso") == 2
    assert kb.stats().chunks == kb.stats().lexical_chunks == 0


def test_changed_content_drops_the_overview_and_refuses_one_for_the_old_version(kb: KnowledgeBase) -> None:
    first = kb.ingest("espresso", _doc(ESPRESSO, "Espresso care"))
    kb.set_overview("espresso", OVERVIEW, version=first.version)
    again = kb.ingest("espresso", _doc(ESPRESSO, "Espresso care"))
    assert again.status == "unchanged" and kb.documents()[0].overview == OVERVIEW

    changed = kb.ingest("espresso", _doc(ESPRESSO + " Replace the gasket yearly.", "Espresso care"))
    assert changed.status == "replaced" and changed.version != first.version
    assert kb.documents()[0].overview == ""
    assert _overview_hits(kb, "routine chores for a healthy machine") == []
    assert kb.stats().chunks == kb.stats().lexical_chunks == 1
    with pytest.raises(KnowledgeBaseError, match="has changed since"):
        kb.set_overview("espresso", OVERVIEW, version=first.version)


def test_bad_overviews_are_refused(kb: KnowledgeBase) -> None:
    kb.ingest("espresso", _doc(ESPRESSO, "Espresso care"))
    with pytest.raises(KnowledgeBaseError, match="empty"):
        kb.set_overview("espresso", "  \n ")
    with pytest.raises(KnowledgeBaseError, match="no document"):
        kb.set_overview("nope", OVERVIEW)


def test_the_overview_survives_reopening_the_store(settings: KbSettings, kb: KnowledgeBase) -> None:
    kb.ingest("espresso", _doc(ESPRESSO, "Espresso care"))
    kb.set_overview("espresso", OVERVIEW)
    kb.close()
    with KnowledgeBase.open(settings, embedder=kb.embedder) as reopened:
        # repair() at open must count the overview as live, not as an orphan of a crashed ingest
        assert reopened.documents()[0].overview == OVERVIEW
        assert reopened.stats().chunks == reopened.stats().lexical_chunks == 2


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_tool_replaces_and_kb_list_shows_the_overview(kb: KnowledgeBase) -> None:
    async with Client(create_server(kb)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        annotations = tools["kb_set_overview"].annotations
        assert annotations is not None and not annotations.read_only_hint and annotations.destructive_hint
        ingested = await client.call_tool(
            "kb_ingest", {"documents": [{"id": "espresso", "title": "Espresso care", "content": ESPRESSO}]}
        )
        assert ingested.structured_content is not None
        version = ingested.structured_content["results"][0]["version"]
        result = await client.call_tool(
            "kb_set_overview", {"document_id": "espresso", "overview": OVERVIEW, "version": version}
        )
        assert result.structured_content is not None and result.structured_content["overview"] == OVERVIEW
        listed = await client.call_tool("kb_list", {})
        assert listed.structured_content is not None
        assert listed.structured_content["documents"][0]["overview"] == OVERVIEW
        stale = await client.call_tool(
            "kb_set_overview", {"document_id": "espresso", "overview": OVERVIEW, "version": "000000000000"}
        )
        assert stale.is_error
