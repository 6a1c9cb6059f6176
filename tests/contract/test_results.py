"""The agent's typed reads of the real server's results: every field the server emits arrives, none as None.

A field renamed on one side only is what this guards: the server's JSON must validate into the contract
model and dump back to the same JSON, and a passage must carry its hit's citation as the hit has it.
"""

from __future__ import annotations

from typing import Any

import pytest

from sextant.agent.kb_client import KbClient, ToolOutcome, TypedCalls, search_result
from sextant.agent.passages import PassageBook
from sextant.contract.results import IngestReport
from sextant.contract.tools import KB_SEARCH, IngestDocument
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.server import create_server

pytestmark = pytest.mark.anyio

MANUAL = IngestDocument(
    id="manual",
    title="Espresso manual",
    source="manual.md",
    content="## Descaling\nDescale the espresso machine every eight weeks with a citric acid solution.",
    page=3,
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Recorded(TypedCalls):
    """A client's typed calls, each raw outcome kept to compare with what the typed read made of it."""

    def __init__(self, client: KbClient) -> None:
        self.client = client
        self.outcomes: dict[str, ToolOutcome] = {}

    async def call(self, name: str, arguments: dict[str, Any], request_id: str | None = None) -> ToolOutcome:
        self.outcomes[name] = outcome = await self.client.call(name, arguments, request_id)
        return outcome


async def test_typed_reads_round_trip_every_field_the_server_emits(kb: KnowledgeBase) -> None:
    async with KbClient(create_server(kb)) as client:
        kb_tools = Recorded(client)
        read = {
            "kb_ingest": await kb_tools.ingest([MANUAL]),
            "kb_list": await kb_tools.list_documents(),
            "kb_set_overview": await kb_tools.set_overview("manual", "How to care for the machine.", None),
            "kb_upload": await kb_tools.upload("notes.md", b"# Notes\n\nGrind finer when the shot runs fast."),
            "kb_ann_compare": await kb_tools.ann_compare("descale", 2),
        }
        searched = await client.call(KB_SEARCH, {"query": "how often to descale", "k": 2, "detail": "full"})
    read[KB_SEARCH] = search_result(searched)
    kb_tools.outcomes[KB_SEARCH] = searched
    for name, typed in read.items():
        assert typed.model_dump(mode="json") == kb_tools.outcomes[name].structured, name
    assert isinstance(read["kb_ingest"], IngestReport) and read["kb_ingest"].results[0].status == "added"


async def test_a_passage_carries_its_hit_s_citation_as_the_server_sent_it(kb: KnowledgeBase) -> None:
    async with KbClient(create_server(kb)) as client:
        await client.ingest([MANUAL])
        outcome = await client.call(KB_SEARCH, {"query": "descale the espresso machine", "detail": "full"})
    assert outcome.structured is not None
    sent = outcome.structured["hits"][0]
    [passage] = PassageBook().add_hits(search_result(outcome).hits[:1])
    fields = ("chunk_id", "document_id", "title", "source", "page", "page_label", "section", "text", "uri")
    assert {f: getattr(passage, f) for f in fields} == {f: sent[f] for f in fields}
    assert (passage.page, passage.page_label, passage.section) == (3, "3", "Descaling")
