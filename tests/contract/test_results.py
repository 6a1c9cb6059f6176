"""The agent's typed reads of the real server's results: every field the server emits arrives, none as None.

A field renamed on one side only is what this guards: the server's JSON must validate into the contract
model and dump back to the same JSON, and a passage must carry its hit's citation as the hit has it.
"""

from __future__ import annotations

from typing import Any

import pytest

from sextant.agent.kb_client import SHARED_STORE, KbClient, KbScope, ScopedKb, ToolOutcome, search_result
from sextant.agent.passages import PassageBook
from sextant.contract.results import IngestReport
from sextant.contract.tools import KB_SEARCH, IngestDocument
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.server import create_server
from sextant.llm.chat import ToolSpec

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


class Recorded:
    """A client's calls, each raw outcome kept to compare with what the typed read made of it."""

    def __init__(self, client: KbClient) -> None:
        self.client = client
        self.outcomes: dict[str, ToolOutcome] = {}

    def offered(self) -> list[ToolSpec]:
        return self.client.offered()

    async def call(self, name: str, arguments: dict[str, Any], scope: KbScope) -> ToolOutcome:
        self.outcomes[name] = outcome = await self.client.call(name, arguments, scope)
        return outcome

    async def read(self, uri: str, scope: KbScope) -> str:
        return await self.client.read(uri, scope)


async def test_typed_reads_round_trip_every_field_the_server_emits(kb: KnowledgeBase) -> None:
    async with KbClient(create_server(kb)) as client:
        recorded = Recorded(client)
        kb_tools = ScopedKb(recorded, SHARED_STORE)
        read = {
            "kb_ingest": await kb_tools.ingest([MANUAL]),
            "kb_list": await kb_tools.list_documents(),
            "kb_set_overview": await kb_tools.set_overview("manual", "How to care for the machine.", None),
            "kb_upload": await kb_tools.upload("notes.md", b"# Notes\n\nGrind finer when the shot runs fast."),
            "kb_ann_compare": await kb_tools.ann_compare("descale", 2),
        }
        searched = await kb_tools.call(KB_SEARCH, {"query": "how often to descale", "k": 2, "detail": "full"})
    read[KB_SEARCH] = search_result(searched)
    for name, typed in read.items():
        assert typed.model_dump(mode="json") == recorded.outcomes[name].structured, name
    assert isinstance(read["kb_ingest"], IngestReport) and read["kb_ingest"].results[0].status == "added"


async def test_a_passage_carries_its_hit_s_citation_as_the_server_sent_it(kb: KnowledgeBase) -> None:
    async with KbClient(create_server(kb)) as client:
        shared = ScopedKb(client, SHARED_STORE)
        await shared.ingest([MANUAL])
        outcome = await shared.call(KB_SEARCH, {"query": "descale the espresso machine", "detail": "full"})
    assert outcome.structured is not None
    sent = outcome.structured["hits"][0]
    [passage] = PassageBook().add_hits(search_result(outcome).hits[:1])
    fields = ("chunk_id", "document_id", "title", "source", "page", "page_label", "section", "text", "uri")
    assert {f: getattr(passage, f) for f in fields} == {f: sent[f] for f in fields}
    assert (passage.page, passage.page_label, passage.section) == (3, "3", "Descaling")
