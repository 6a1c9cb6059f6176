"""The turn that answers, one handler per answer shape: statements, prose, web prose.

Every model turn streams the same way (the loop shows an answer's text as tokens and checks each statement as the
adapter completes it); what the turn's end adds to the run depends on the shape of its answer, and ``answer_turn``
is the one place that chooses the handler:

- statements (``answer_request``): the checked statements are the answer; an adapter that reports its statements
  only at the end of the turn gets them checked then.
- prose (web search on, nothing grounded in a page): the text as written is the answer's draft.
- web prose: the text the provider grounded in web pages; the pages are numbered as passages and each grounded
  span gets their labels.

A turn that asked for tools (``tool_choice`` other than "none") does not answer: the loop runs its calls.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Protocol

from sextant.agent.events import AgentEvent, SourcesEvent
from sextant.agent.statement_checks import CheckedRun, StatementChecks
from sextant.llm.chat import ChatRequest, TurnEnd


class AnsweringRun(CheckedRun, Protocol):
    """What an answer turn reads of the run in progress and adds to it: the checks' tally, the prose written."""

    prose: list[str]


class AnswerTurn(Protocol):
    def close(self, run: AnsweringRun, end: TurnEnd, *, written: str, streamed: int) -> AsyncIterator[AgentEvent]:
        """The events of the turn's end, each as it is ready; ``written``: the text streamed in the turn,
        ``streamed``: the statements the adapter reported (and the loop checked) as they completed."""
        ...


@dataclass(frozen=True)
class StatementsTurn:
    """Statements that quote the passages: each is kept or removed by ``checks``."""

    checks: StatementChecks

    async def close(self, run: AnsweringRun, end: TurnEnd, *, written: str, streamed: int) -> AsyncIterator[AgentEvent]:
        if streamed:
            return
        # An adapter that only reports statements at the end still gets them checked.
        for statement in end.statements:
            for event in await self.checks.check(run, statement):
                yield event


class ProseTurn:
    """Text with nothing grounded in it: the answer's draft as written."""

    async def close(self, run: AnsweringRun, end: TurnEnd, *, written: str, streamed: int) -> AsyncIterator[AgentEvent]:
        run.prose.append(written or end.turn.text)
        return
        yield  # an async generator that has nothing to stream: the text was streamed as it came


class WebProseTurn:
    """Text the provider grounded in web pages: the pages become passages, their labels follow the spans."""

    async def close(self, run: AnsweringRun, end: TurnEnd, *, written: str, streamed: int) -> AsyncIterator[AgentEvent]:
        run.prose.append(ground(run, written or end.turn.text, end))
        yield SourcesEvent(passages=run.book.all())


def answer_turn(request: ChatRequest, end: TurnEnd, checks: StatementChecks) -> AnswerTurn | None:
    """The handler of the turn that ``end`` closed, by the shape of its answer; None: the turn called tools."""
    if request.answer_format == "statements":
        return StatementsTurn(checks)
    if request.tool_choice != "none":
        return None
    return WebProseTurn() if end.web_sources else ProseTurn()


def ground(run: CheckedRun, text: str, end: TurnEnd) -> str:
    """Number the web sources and write their labels after each grounded span."""
    labels = run.book.add_web(end.web_sources)
    run.shown.update(labels)
    insertions: dict[int, list[int]] = {}
    for support in end.grounding:
        cited = [labels[i] for i in support.source_indices if 0 <= i < len(labels)]
        if cited and 0 < support.end <= len(text):
            insertions.setdefault(support.end, []).extend(cited)
    for position in sorted(insertions, reverse=True):
        markers = "".join(f"[{label}]" for label in dict.fromkeys(insertions[position]))
        text = text[:position] + markers + text[position:]
    return text
