"""The model-driven tool-use loop: search, read numbered passages, answer in statements whose quotes are checked.

One run answers one question. A policy (``sextant.agent.policies``) chooses each next step; the loop runs
it and yields events as they happen so the HTTP layer can stream them: each tool call and its outcome, the
whole passage list whenever it grows, each statement as soon as its quotes are found in its passages, then
the answer. With no model (or none reachable, or the budget spent) the answer is the best sentences of the
passages, labelled as excerpts. What a turn that answers adds at its end depends on the shape of its answer:
statements, prose or web prose (``sextant.agent.answer_turns``); how ``kb_search`` is called and its hits become
passages is ``sextant.agent.search_tool``'s.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from sextant.agent.answer_check import AnswerCheck
from sextant.agent.answer_turns import answer_turn
from sextant.agent.citations import CitationReport, MarkerScanner, check, labels_in
from sextant.agent.events import (
    AgentEvent,
    AnswerEvent,
    CitationEvent,
    CitationSummary,
    SourcesEvent,
    StatementEvent,
    TokenEvent,
    ToolCallEvent,
    ToolResultEvent,
    UsageInfo,
    Verification,
)
from sextant.agent.excerpts import excerpt_answer, excerpt_statements
from sextant.agent.grounding import QuoteMatch, Unsupported, render
from sextant.agent.kb_client import ToolOutcome
from sextant.agent.passages import Passage, PassageBook
from sextant.agent.policies import MAX_TURNS, ForcedSearch, Policy, Search, ToolUse
from sextant.agent.search_tool import EMPTY_KNOWLEDGE_BASE, read_search, search_arguments
from sextant.agent.settings import AgentSettings
from sextant.agent.statement_checks import StatementChecks, StatementTally
from sextant.agent.verify import verify_answer
from sextant.llm.chat import (
    ChatModel,
    ChatRequest,
    Message,
    ModelError,
    ModelTurn,
    StatementDone,
    TextDelta,
    ToolCall,
    ToolResult,
    ToolResults,
    ToolSpec,
    TurnEnd,
    Usage,
    UserText,
)

log = logging.getLogger(__name__)

# Earlier turns the model sees again; the tool transcript of those turns is not replayed.
HISTORY_MESSAGES = 10
HISTORY_CHARS = 4000
HELD_PASSAGES_SHOWN = 10
NOT_ANSWERED = "The documents do not answer this question."


class KnowledgeTools(Protocol):
    """What the loop needs of the knowledge base: a ``ScopedKb`` in the product, so every call it makes reaches
    the store of the request (or run) the loop answers for."""

    def offered(self) -> list[ToolSpec]: ...

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome: ...


class Spend(Protocol):
    """The daily model budget."""

    def exhausted(self) -> bool: ...

    def add(self, cost_usd: float) -> None: ...


@dataclass(frozen=True)
class HistoryItem:
    role: Literal["user", "assistant"]
    text: str


@dataclass
class _Run:
    question: str
    book: PassageBook
    history: tuple[Message, ...] = ()
    shown: set[int] = field(default_factory=set)
    usage: Usage = field(default_factory=Usage)
    turns: int = 0
    searches: int = 0
    found_any: bool = False
    empty_kb: bool = False  # a search found the knowledge base holding no documents at all
    ready: bool = False  # a tool-calling model stopped searching
    tally: StatementTally = field(default_factory=StatementTally)  # the statements kept, and what was removed
    prose: list[str] = field(default_factory=list)  # what the answer turns wrote as text

    def shown_passages(self) -> list[Passage]:
        return self.book.knowledge_base(self.shown)

    def unanswered(self) -> str:
        """The answer when nothing was found."""
        return EMPTY_KNOWLEDGE_BASE if self.empty_kb else NOT_ANSWERED


class AgentLoop:
    def __init__(
        self,
        kb: KnowledgeTools,
        model: ChatModel | None,
        *,
        budget: Spend | None = None,
        verify: Literal["mark", "drop", "off"] = "off",
        unsupported: Unsupported = "drop",
        quotes: QuoteMatch = "facts",
        web_search: bool = False,
        max_output_tokens: int = 1024,
        answer_check: AnswerCheck | None = None,
    ) -> None:
        self.kb = kb
        self.answer_check = answer_check
        self.model = model
        self.budget = budget
        self.verify = verify
        self.unsupported: Unsupported = unsupported
        self.quotes: QuoteMatch = quotes
        self.web_search = web_search
        self.max_output_tokens = max_output_tokens

    @property
    def checks(self) -> StatementChecks:
        """The checks each statement the model writes passes to reach the answer."""
        return StatementChecks(self.unsupported, self.quotes, self.answer_check)

    @classmethod
    def from_settings(
        cls,
        kb: KnowledgeTools,
        model: ChatModel | None,
        settings: AgentSettings,
        *,
        answer_check: AnswerCheck | None,
        budget: Spend | None,
    ) -> AgentLoop:
        """The loop as ``settings`` configure it: the one way the route, ``sextant-ask`` and ``sextant-eval-agent``
        build it, so that the loop the evaluation measures is the loop that is served.

        What is not a setting each caller names: the ``answer_check`` of the models it was given, and the daily
        ``budget`` (the route's when it applies to the model; None where the caller says why)."""
        return cls(
            kb,
            model,
            budget=budget,
            verify=settings.verify,
            unsupported=settings.unsupported,
            quotes=settings.quotes,
            web_search=settings.web_search == "on",
            max_output_tokens=settings.max_output_tokens,
            answer_check=answer_check,
        )

    async def run(
        self,
        question: str,
        *,
        history: Sequence[HistoryItem] = (),
        held: Sequence[Passage] = (),
    ) -> AsyncIterator[AgentEvent]:
        run = _Run(question, PassageBook(held))
        if self.model is None:
            async for event in self._excerpts(run, "no model is configured"):
                yield event
            return
        if self.budget is not None and self.budget.exhausted():
            async for event in self._excerpts(run, "today's model budget is spent"):
                yield event
            return

        model = self.model
        run.history = tuple(_history_messages(history))
        messages: list[Message] = [*run.history, UserText(self._question_text(run, history))]
        tools = tuple(self.kb.offered())
        policy: Policy = (
            ToolUse(tools, web_search=self.web_search, max_output_tokens=self.max_output_tokens)
            if model.calls_tools_itself
            else ForcedSearch(tools, max_output_tokens=self.max_output_tokens)
        )
        scanner = MarkerScanner()

        while run.turns < MAX_TURNS:
            step = policy.next_step(run, messages)
            if step is None:
                break
            if isinstance(step, Search):
                results: list[ToolResult] = []
                async for event in self._call_tool(run, step.call, True, results):
                    yield event
                continue
            if self.budget is not None and self.budget.exhausted():
                async for event in self._excerpts(run, "today's model budget ran out during the answer"):
                    yield event
                return
            run.turns += 1
            end: TurnEnd | None = None
            turn_text: list[str] = []
            streamed = 0  # statements the adapter reported as they completed
            try:
                async for chunk in model.stream(step):
                    if isinstance(chunk, TextDelta) and step.tool_choice == "none":
                        turn_text.append(chunk.text)
                        yield TokenEvent(text=chunk.text)
                        for label in scanner.feed(chunk.text):
                            yield CitationEvent(label=label, valid=label in run.shown)
                    elif isinstance(chunk, StatementDone):
                        streamed += 1
                        for event in await self.checks.check(run, chunk.statement):
                            yield event
                    elif isinstance(chunk, TurnEnd):
                        end = chunk
            except ModelError as exc:
                log.warning("model turn failed: %s", exc)
                if not run.prose and not turn_text and not run.tally.statements:
                    async for event in self._excerpts(run, f"the model could not be reached ({exc})"):
                        yield event
                    return
                raise
            if end is None:
                raise ModelError("the model stream ended without finishing its turn")
            run.usage = run.usage + end.usage
            if self.budget is not None:
                self.budget.add(end.usage.cost_usd)
            answered = answer_turn(step, end, self.checks)
            if answered is not None:
                async for event in answered.close(run, end, written="".join(turn_text), streamed=streamed):
                    yield event
                break
            calls = self._calls_to_make(run, end.turn, step)
            if not calls:
                run.ready = True
                continue
            messages.append(
                end.turn if end.turn.tool_calls else ModelTurn(end.turn.text, calls, end.turn.provider_state)
            )
            results = []
            for call, forced in calls_with_origin(calls, end.turn, step):
                async for event in self._call_tool(run, call, forced, results):
                    yield event
            messages.append(ToolResults(tuple(results)))

        async for event in self._answer(run, model, "".join(run.prose).strip()):
            yield event

    async def _answer(self, run: _Run, model: ChatModel, prose: str) -> AsyncIterator[AgentEvent]:
        tally = run.tally
        if not prose and not tally.statements:
            yield TokenEvent(text=run.unanswered())
        draft = (
            prose
            or "".join(render(s, first=i == 0) for i, s in enumerate(tally.statements)).strip()
            or run.unanswered()
        )
        report = check(draft, run.shown)
        verification = Verification(checked=False, action=self.verify, note=tally.note())
        answer_text = report.text
        if self.verify != "off" and report.cited:
            answer_text, verification, extra = await verify_answer(
                model, run.question, report.text, run.book, self.verify
            )
            run.usage = run.usage + extra
            if self.budget is not None:
                self.budget.add(extra.cost_usd)
        final = check(answer_text, run.shown)
        verification = verification.model_copy(
            update={
                "answer_checks": tally.answer_checks,
                "not_answering": tally.not_answering,
                "removed": tally.removed,
            }
        )
        yield AnswerEvent(
            text=final.text,
            mode="model",
            model=model.name,
            citations=_citation_summary(final, report, tally.unsourced),
            statements=tally.statements,
            verification=verification,
            abstained=not final.cited if prose else not any(s.supported for s in tally.statements),
            usage=_usage_info(run.usage),
            turns=run.turns,
        )

    def _question_text(self, run: _Run, history: Sequence[HistoryItem]) -> str:
        cited_before = [label for item in history for label in labels_in(item.text)]
        held = [p for label in dict.fromkeys(reversed(cited_before)) if (p := run.book.get(label)) is not None]
        held = held[:HELD_PASSAGES_SHOWN]
        if not held:
            return run.question
        run.shown.update(p.label for p in held)
        earlier = "\n\n".join(p.for_model() for p in sorted(held, key=lambda p: p.label))
        return f"Passages cited earlier in this conversation:\n\n{earlier}\n\nQuestion: {run.question}"

    def _calls_to_make(self, run: _Run, turn: ModelTurn, request: ChatRequest) -> tuple[ToolCall, ...]:
        if request.tool_choice == "none":
            return ()
        calls = turn.tool_calls
        if request.tool_choice == "kb_search" and not any(c.name == "kb_search" for c in calls):
            # The forced call came back unusable: search for the question itself.
            calls = (ToolCall(f"forced-{run.searches + 1}", "kb_search", {"query": run.question}),)
        return calls

    async def _call_tool(
        self, run: _Run, call: ToolCall, forced: bool, results: list[ToolResult]
    ) -> AsyncIterator[AgentEvent]:
        offered = {spec.name for spec in self.kb.offered()}
        arguments = search_arguments(call.arguments, run.question) if call.name == "kb_search" else dict(call.arguments)
        yield ToolCallEvent(id=call.id, name=call.name, arguments=arguments, turn=run.turns, forced=forced)
        if call.name not in offered:
            message = f"{call.name} is not available; use one of: {', '.join(sorted(offered))}"
            results.append(ToolResult(call.id, call.name, message, is_error=True))
            yield ToolResultEvent(id=call.id, name=call.name, ok=False, found=0, summary=message)
            return
        # A knowledge base that is down (KbUnavailable) or fails the call (KbFailed) raises through to the caller: an
        # answer built on a failed search would read as "the documents say nothing".
        outcome = await self.kb.call(call.name, arguments)
        if call.name == "kb_search":
            run.searches += 1
        if not outcome.ok or outcome.structured is None:
            results.append(ToolResult(call.id, call.name, outcome.text or "the tool failed", is_error=True))
            yield ToolResultEvent(id=call.id, name=call.name, ok=False, found=0, summary=outcome.text[:500])
            return
        if call.name != "kb_search":
            results.append(ToolResult(call.id, call.name, json.dumps(outcome.structured)[:8000]))
            yield ToolResultEvent(id=call.id, name=call.name, ok=True, found=0, summary=_summary(outcome.structured))
            return
        reading = read_search(outcome, run.book, arguments["query"])
        passages = reading.passages
        run.shown.update(p.label for p in passages)
        run.found_any = run.found_any or bool(passages)
        run.empty_kb = run.empty_kb or reading.empty
        results.append(ToolResult(call.id, call.name, reading.for_model))
        yield ToolResultEvent(
            id=call.id,
            name=call.name,
            ok=True,
            found=len(passages),
            abstained=reading.abstained,
            labels=[p.label for p in passages],
            summary=reading.summary,
        )
        if passages:
            yield SourcesEvent(passages=run.book.all())

    async def _excerpts(self, run: _Run, reason: str) -> AsyncIterator[AgentEvent]:
        results: list[ToolResult] = []
        if not run.searches:
            call = ToolCall("excerpts-1", "kb_search", {"query": run.question})
            async for event in self._call_tool(run, call, True, results):
                yield event
        shown = run.shown_passages()
        statements = excerpt_statements(run.question, shown)
        text = excerpt_answer(statements, shown, reason) if statements or not run.empty_kb else run.unanswered()
        yield TokenEvent(text=text)
        for index, statement in enumerate(statements):
            yield StatementEvent(index=index, statement=statement)
        report = check(text, run.shown)
        yield AnswerEvent(
            text=report.text,
            mode="excerpts",
            reason=reason,
            citations=_citation_summary(report, report, []),
            statements=statements,
            verification=Verification(checked=False, note="excerpts are quoted, not written"),
            abstained=not statements,
            usage=_usage_info(run.usage),
            turns=run.turns,
        )


def calls_with_origin(calls: Sequence[ToolCall], turn: ModelTurn, request: ChatRequest) -> list[tuple[ToolCall, bool]]:
    """Each call, and whether the loop asked for it: by forcing the tool, or by making the call up itself."""
    if request.tool_choice not in ("auto", "none"):
        return [(c, True) for c in calls]
    own = {c.id for c in turn.tool_calls}
    return [(c, c.id not in own) for c in calls]


def _history_messages(history: Sequence[HistoryItem]) -> list[Message]:
    messages: list[Message] = []
    for item in list(history)[-HISTORY_MESSAGES:]:
        text = item.text[:HISTORY_CHARS]
        messages.append(UserText(text) if item.role == "user" else ModelTurn(text))
    return messages


def _summary(structured: dict[str, Any]) -> str:
    if "documents" in structured:
        return f"{len(structured['documents'])} documents"
    return ", ".join(f"{k}={v}" for k, v in list(structured.items())[:4])[:300]


def _citation_summary(answer: CitationReport, draft: CitationReport, unsourced: list[str]) -> CitationSummary:
    """Claims counted in the final ``answer``; labels as the ``draft`` held them, before dangling ones went."""
    return CitationSummary(
        claims=answer.claims,
        claims_cited=answer.claims_cited,
        labels_total=draft.labels_total,
        labels_valid=draft.labels_valid,
        dangling=list(draft.dangling),
        unsourced=unsourced,
    )


def _usage_info(usage: Usage) -> UsageInfo:
    return UsageInfo(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        thinking_tokens=usage.thinking_tokens,
        cost_usd=round(usage.cost_usd, 6),
    )
