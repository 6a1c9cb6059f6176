"""A test double for the chat-model boundary: replays queued turns and records every request.

It lives in the source tree so that tests of the loop, the HTTP API and the browser can drive the
real agent deterministically. The product never builds it from settings; a test hands it in.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import Any

from sextant.llm.chat import (
    ChatEvent,
    ChatRequest,
    GroundingSupport,
    ModelError,
    ModelTurn,
    Statement,
    StatementDone,
    TextDelta,
    ToolCall,
    TurnEnd,
    Usage,
    WebSource,
)


@dataclass(frozen=True)
class ScriptedTurn:
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    statements: tuple[Statement, ...] = ()
    usage: Usage = field(default_factory=Usage)
    web_sources: tuple[WebSource, ...] = ()
    grounding: tuple[GroundingSupport, ...] = ()
    error: ModelError | None = None


def search_call(query: str, call_id: str = "call-1", **arguments: Any) -> ToolCall:
    return ToolCall(call_id, "kb_search", {"query": query, **arguments})


class ScriptedModel:
    """Replays ``turns`` in order; ``json_replies`` answer ``complete_json`` (verification)."""

    def __init__(
        self,
        turns: Iterable[ScriptedTurn],
        *,
        calls_tools_itself: bool = True,
        priced: bool = False,
        json_replies: Iterable[dict[str, Any]] = (),
        name: str = "scripted",
    ) -> None:
        self.name = name
        self.calls_tools_itself = calls_tools_itself
        self.priced = priced
        self._turns = deque(turns)
        self._json = deque(json_replies)
        self.requests: list[ChatRequest] = []
        self.json_prompts: list[str] = []

    async def stream(self, request: ChatRequest) -> AsyncIterator[ChatEvent]:
        self.requests.append(request)
        if not self._turns:
            raise ModelError("the script has no more turns")
        turn = self._turns.popleft()
        if turn.error is not None:
            raise turn.error
        # Word-sized deltas, so consumers see text arrive in pieces as from a real stream.
        for piece in re.findall(r"\S*\s*", turn.text):
            if piece:
                yield TextDelta(piece)
        for statement in turn.statements:
            yield StatementDone(statement)
        yield TurnEnd(
            turn=ModelTurn(turn.text, turn.tool_calls),
            usage=turn.usage,
            web_sources=turn.web_sources,
            grounding=turn.grounding,
            statements=turn.statements,
        )

    async def complete_json(self, system: str, prompt: str, schema: dict[str, Any]) -> tuple[dict[str, Any], Usage]:
        self.json_prompts.append(prompt)
        if not self._json:
            raise ModelError("the script has no more JSON replies")
        return self._json.popleft(), Usage()

    async def aclose(self) -> None:
        return None


class ScriptedYesNo:
    """A test double for the answer check's model: replays queued probabilities and records each question."""

    def __init__(self, probabilities: Iterable[float | ModelError], name: str = "scripted-yes-no") -> None:
        self.name = name
        self._replies = deque(probabilities)
        self.questions: list[str] = []

    async def yes_probability(self, system: str, question: str) -> float:
        self.questions.append(question)
        if not self._replies:
            raise ModelError("the script has no more yes-or-no replies")
        reply = self._replies.popleft()
        if isinstance(reply, ModelError):
            raise reply
        return reply

    async def aclose(self) -> None:
        return None
