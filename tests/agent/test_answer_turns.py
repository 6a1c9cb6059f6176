"""The turn that answers, by the shape of its answer: which handler ends it, and what each adds to the run."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from sextant.agent.answer_turns import AnswerTurn, ProseTurn, StatementsTurn, WebProseTurn, answer_turn
from sextant.agent.events import AgentEvent, SourcesEvent, StatementEvent
from sextant.agent.passages import Passage, PassageBook
from sextant.agent.statement_checks import StatementChecks, StatementTally
from sextant.llm.chat import (
    ChatRequest,
    GroundingSupport,
    ModelTurn,
    Quote,
    Statement,
    TurnEnd,
    Usage,
    WebSource,
)

BREW = "Brew espresso with water at 93 degrees Celsius."


@dataclass
class Run:
    question: str = "How hot should espresso water be?"
    book: PassageBook = field(default_factory=lambda: PassageBook([Passage(label=1, title="Espresso", text=BREW)]))
    shown: set[int] = field(default_factory=lambda: {1})
    tally: StatementTally = field(default_factory=StatementTally)
    prose: list[str] = field(default_factory=list)


def end(text: str = "", **fields: object) -> TurnEnd:
    return TurnEnd(ModelTurn(text), Usage(), **fields)  # type: ignore[arg-type]


def request(**fields: object) -> ChatRequest:
    return ChatRequest("system", (), **fields)  # type: ignore[arg-type]


async def close(
    turn: AnswerTurn, run: Run, ended: TurnEnd, *, written: str = "", streamed: int = 0
) -> list[AgentEvent]:
    return [event async for event in turn.close(run, ended, written=written, streamed=streamed)]


@pytest.mark.parametrize(
    ("asked", "sources", "handler"),
    [
        (request(tool_choice="none", answer_format="statements"), (), StatementsTurn),
        (request(tool_choice="none"), (), ProseTurn),
        (request(tool_choice="none"), (WebSource("https://example.org", "Example"),), WebProseTurn),
        (request(tool_choice="auto"), (), type(None)),
        (request(tool_choice="kb_search"), (), type(None)),
    ],
    ids=["statements", "prose", "web-prose", "tool-call", "forced-search"],
)
def test_one_dispatch_point_picks_the_handler_by_the_answer_s_shape(
    asked: ChatRequest, sources: tuple[WebSource, ...], handler: type
) -> None:
    assert isinstance(answer_turn(asked, end(web_sources=sources), StatementChecks()), handler)


async def test_statements_reported_only_at_the_turn_s_end_are_checked_then() -> None:
    run = Run()
    statement = Statement("Water at 93 degrees.", (Quote(1, "water at 93 degrees Celsius"),))
    turn = StatementsTurn(StatementChecks())
    assert await close(turn, run, end(statements=(statement,)), streamed=1) == []  # already checked as they came
    events = await close(turn, run, end(statements=(statement,)))
    assert [e.statement.text for e in events if isinstance(e, StatementEvent)] == ["Water at 93 degrees."]
    assert [s.text for s in run.tally.statements] == ["Water at 93 degrees."] and run.prose == []


async def test_prose_is_the_draft_as_written_or_as_the_turn_ended() -> None:
    run = Run()
    assert await close(ProseTurn(), run, end("from the end"), written="as streamed") == []
    assert await close(ProseTurn(), run, end("from the end")) == []
    assert run.prose == ["as streamed", "from the end"]


async def test_web_prose_numbers_the_pages_and_labels_each_grounded_span() -> None:
    run = Run()
    text = "Espresso is from Italy."
    grounded = end(
        text,
        web_sources=(WebSource("https://example.org/espresso", "Espresso history"),),
        grounding=(GroundingSupport(0, len(text) - 1, (0,)),),
    )
    events = await close(WebProseTurn(), run, grounded)
    assert run.prose == ["Espresso is from Italy[2]."]
    assert 2 in run.shown
    [sources] = events
    assert isinstance(sources, SourcesEvent) and [p.label for p in sources.passages] == [1, 2]
