"""The loop's events on the wire: each frame's JSON names its kind and reads back as the same event."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

from sextant.agent.events import (
    AgentEvent,
    AnswerEvent,
    AnswerStatement,
    CitationEvent,
    CitationSummary,
    DoneEvent,
    ErrorEvent,
    Evidence,
    SourcesEvent,
    StatementEvent,
    TokenEvent,
    ToolCallEvent,
    ToolResultEvent,
    UsageInfo,
    Verification,
)
from sextant.agent.passages import Passage

WIRE: TypeAdapter[AgentEvent] = TypeAdapter(AgentEvent)
TEXT = "A double shot uses 18 grams of finely ground coffee."
SUMMARY = CitationSummary(claims=1, claims_cited=1, labels_total=1, labels_valid=1, dangling=[])
EVENTS: list[AgentEvent] = [
    ToolCallEvent(id="c1", name="kb_search", arguments={"query": "dose"}, turn=1, forced=False),
    ToolResultEvent(id="c1", name="kb_search", ok=True, found=1, labels=[1], summary="1 passage"),
    SourcesEvent(passages=[Passage(label=1, title="Guide", text=TEXT)]),
    TokenEvent(text="A double"),
    CitationEvent(label=1, valid=True),
    StatementEvent(index=0, statement=AnswerStatement(text="18 grams.", supported=True)),
    AnswerEvent(
        text="18 grams [1].",
        mode="model",
        citations=SUMMARY,
        verification=Verification(checked=False),
        abstained=False,
        usage=UsageInfo(),
        turns=2,
    ),
    DoneEvent(request_id="r1", elapsed_ms=12.5),
    ErrorEvent(message="the answer failed"),
]


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: e.event)
def test_every_event_reads_back_from_its_json_as_its_own_kind(event: AgentEvent) -> None:
    wire = event.model_dump_json()
    assert WIRE.validate_json(wire) == event


def test_the_event_names_are_distinct() -> None:
    assert len({e.event for e in EVENTS}) == len(EVENTS)


def test_evidence_is_the_passage_s_own_words_at_their_offsets() -> None:
    start = TEXT.index("18 grams")
    evidence = Evidence.at(3, TEXT, start, start + len("18 grams"))
    assert (evidence.label, evidence.quote, evidence.start, evidence.end) == (3, "18 grams", start, start + 8)
    with pytest.raises(ValidationError):
        Evidence(label=3, quote="x", start=-1, end=0)
