"""The one chat-model protocol every adapter speaks (Gemini, local llama.cpp, OpenAI-compatible, scripted).

The loop talks only in these neutral types. An adapter translates them to its provider's wire format
and back, and keeps anything provider-specific (Gemini's thought signatures) in ``ModelTurn.provider_state``
so that it can echo it back verbatim on the next turn.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the MCP server publishes it: the schema is passed to the model unchanged."""

    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class UserText:
    text: str


@dataclass(frozen=True)
class ModelTurn:
    """What the model said in one turn. ``provider_state`` is the adapter's own record of it (opaque)."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    provider_state: Any = None


@dataclass(frozen=True)
class ToolResult:
    call_id: str
    name: str
    content: str
    is_error: bool = False


@dataclass(frozen=True)
class ToolResults:
    results: tuple[ToolResult, ...]


Message = UserText | ModelTurn | ToolResults


@dataclass(frozen=True)
class Quote:
    """Words a statement quotes from passage ``label``, as the model wrote them; the loop checks them."""

    label: int
    text: str


@dataclass(frozen=True)
class Statement:
    """One claim of a structured answer and the quotes it rests on."""

    text: str
    quotes: tuple[Quote, ...] = ()

    @property
    def sources(self) -> tuple[int, ...]:
        return tuple(dict.fromkeys(quote.label for quote in self.quotes))


AnswerFormat = Literal["prose", "statements"]


@dataclass(frozen=True)
class ChatRequest:
    system: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    # "auto": the model decides; "none": answer now; a tool name: the model must call that tool.
    tool_choice: str = "auto"
    answer_format: AnswerFormat = "prose"
    # Statements only: the passage labels the model may cite. Adapters that constrain output with a grammar
    # (the local models) allow no other source number; empty allows any.
    citable: tuple[int, ...] = ()
    max_output_tokens: int = 1024
    web_search: bool = False


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    thinking_tokens: int = 0
    cost_usd: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.thinking_tokens + other.thinking_tokens,
            self.cost_usd + other.cost_usd,
        )


@dataclass(frozen=True)
class WebSource:
    """A web page the provider's own search grounded the answer on."""

    url: str
    title: str


@dataclass(frozen=True)
class GroundingSupport:
    """A span of this turn's text (character offsets, not bytes) and the web sources behind it."""

    start: int
    end: int
    source_indices: tuple[int, ...]


# Events an adapter yields while one turn streams.
@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class StatementDone:
    """Structured answers only: a statement finished streaming."""

    statement: Statement


@dataclass(frozen=True)
class TurnEnd:
    """Always the last event of a turn."""

    turn: ModelTurn
    usage: Usage
    finish_reason: str = "stop"
    web_sources: tuple[WebSource, ...] = ()
    grounding: tuple[GroundingSupport, ...] = ()
    statements: tuple[Statement, ...] = field(default_factory=tuple)


ChatEvent = TextDelta | StatementDone | TurnEnd


class ModelError(Exception):
    """The model could not be reached or refused the request; ``retryable`` says whether waiting may help."""

    def __init__(self, message: str, *, retryable: bool = False, status: int | None = None) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.status = status


@runtime_checkable
class ChatModel(Protocol):
    """A chat model the loop can drive.

    ``calls_tools_itself`` is False for small local models: the loop then forces the searches and asks
    for ``answer_format="statements"``, writing the citation markers itself.
    """

    name: str
    calls_tools_itself: bool
    # Whether turns cost money: the daily budget applies only to such a model.
    priced: bool

    def stream(self, request: ChatRequest) -> AsyncIterator[ChatEvent]:
        """Run one turn, yielding deltas as they arrive and a final ``TurnEnd``."""
        ...

    async def complete_json(self, system: str, prompt: str, schema: dict[str, Any]) -> tuple[dict[str, Any], Usage]:
        """One structured completion with no tools (verification, overviews); raises ``ModelError``."""
        ...

    async def aclose(self) -> None: ...


class YesNoModel(Protocol):
    """A model asked only yes-or-no questions, answering with the probability of yes (the answer check)."""

    name: str

    async def yes_probability(self, system: str, question: str) -> float:
        """P(yes) against P(no) as the reply's first word; raises ``ModelError``."""
        ...

    async def aclose(self) -> None: ...
