"""What the loop tells the client, in order: each is one SSE frame (``event:`` name, JSON ``data:``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from sextant.agent.passages import Passage


class ToolCallEvent(BaseModel):
    event: Literal["tool_call"] = "tool_call"
    id: str
    name: str
    arguments: dict[str, Any]
    turn: int
    forced: bool = Field(description="The loop, not the model, asked for this call.")


class ToolResultEvent(BaseModel):
    event: Literal["tool_result"] = "tool_result"
    id: str
    name: str
    ok: bool
    found: int = Field(description="Passages returned (0 is 'nothing found').")
    abstained: bool = False
    labels: list[int] = Field(default_factory=list, description="Labels of the passages this call returned.")
    summary: str


class SourcesEvent(BaseModel):
    """The complete list of passages so far; each frame replaces the previous one."""

    event: Literal["sources"] = "sources"
    passages: list[Passage]


class TokenEvent(BaseModel):
    event: Literal["token"] = "token"
    text: str


class CitationEvent(BaseModel):
    event: Literal["citation"] = "citation"
    label: int
    valid: bool


class Evidence(BaseModel):
    """The words of one passage that support a statement, found there by the backend before the label was kept."""

    label: int = Field(description="The passage's label, as in the sources list.")
    quote: str = Field(description="The supporting words exactly as they stand in the passage's text.")
    start: int = Field(ge=0, description="Offset of the quote's first character in the passage's text.")
    end: int = Field(ge=0, description="Offset just past the quote's last character in the passage's text.")

    @classmethod
    def at(cls, label: int, text: str, start: int, end: int) -> Evidence:
        """``text[start:end]`` of passage ``label`` as evidence."""
        return cls(label=label, quote=text[start:end], start=start, end=end)


Rule = Literal["quote", "says", "own_words", "fact_sentence", "supported", "answer_kind", "answer_check"]
Reason = Literal[
    # quote: one quote looked up in the passage it names
    "found",
    "found_by_run",
    "same_sentences",
    "label_not_shown",
    "not_in_passage",
    # says: the sentences a found quote stands in, against what the statement claims
    "misses_number",
    "misses_words",
    "adds_nothing",
    "off_the_proposition",
    "no_without_denial",
    "yes_denied",
    # own_words: the statement's own text in a passage shown; fact_sentence: one sentence holding every added word
    "in_passage",
    "nowhere",
    "holds_every_word",
    "no_sentence_holds_it",
    # supported: the decision on the quotes' outcome
    "evidence",
    "abstains",
    "marked",
    "no_evidence",
    # answer_kind: a quantity question needs a number
    "not_a_quantity_question",
    "holds_a_number",
    "no_number",
    # answer_check: the checker model's reading of the evidence
    "answers",
    "does_not_answer",
    "unavailable",
]


class Verdict(BaseModel):
    """One rule's verdict on a statement, in the order the rules ran: the statement's trail."""

    rule: Rule = Field(description="The rule (``sextant.agent.statement_rules`` documents each).")
    passed: bool
    reason: Reason = Field(description="Why, as a code a client can show or count.")
    label: int | None = Field(default=None, description="The passage the verdict is about, where it is about one.")
    quote: str | None = Field(default=None, description="The words the model quoted, for a verdict on one quote.")
    detail: str = Field(default="", description="What the rule read: the words missing, the checker's P(yes).")
    score: float | None = Field(default=None, description="The answer check's P(yes), which its verdict cuts at 0.5.")


class AnswerStatement(BaseModel):
    """One claim of the answer with its checked evidence; ``supported`` is False when no quote was found."""

    text: str
    evidence: list[Evidence] = Field(default_factory=list)
    supported: bool = Field(description="At least one quote was found in the passage it names.")
    trail: list[Verdict] = Field(default_factory=list, description="Every rule's verdict on it, in order.")


class StatementEvent(BaseModel):
    """A statement of the answer, sent as soon as it is complete and checked."""

    event: Literal["statement"] = "statement"
    index: int = Field(ge=0, description="Its position in the answer.")
    statement: AnswerStatement


class CitationSummary(BaseModel):
    claims: int = Field(description="Sentences and list items in the answer.")
    claims_cited: int = Field(description="Of those, how many carry at least one valid label.")
    labels_total: int
    labels_valid: int
    dangling: list[int] = Field(description="Labels that named no passage the model was shown; removed.")
    unsourced: list[str] = Field(
        default_factory=list,
        description="Structured statements dropped because they cited no passage the model was shown.",
    )


class WrittenQuote(BaseModel):
    """A quote as the model wrote it, before the backend looked for it."""

    label: int = Field(description="The passage the model said the words are from.")
    quote: str


class RemovedStatement(BaseModel):
    """A statement the checks took out of the answer, as the model wrote it, so a client or an evaluation can
    see what was claimed and why it went."""

    text: str
    quotes: list[WrittenQuote] = Field(default_factory=list)
    check: Literal["quote", "answer"] = Field(
        description="'quote': none of its quotes was found in a passage shown; 'answer': its quotes were found, "
        "but it is not the kind of answer the question asks for (no number for 'how many') or the answer check "
        "judged that their sentences do not answer the question."
    )
    trail: list[Verdict] = Field(
        default_factory=list, description="Every rule's verdict on it, in order; the last is the one that removed it."
    )


class Verification(BaseModel):
    checked: bool
    statements: int = 0
    unsupported: list[str] = Field(default_factory=list, description="Statements the check found unsupported.")
    action: Literal["mark", "drop", "off"] = "off"
    addresses_question: bool | None = None
    note: str = ""
    answer_checks: int = Field(
        default=0,
        ge=0,
        description="Statements checked for answering the question: the kind of answer it asks for, then (with a "
        "checker model) whether their sentences answer it.",
    )
    not_answering: list[str] = Field(
        default_factory=list,
        description="Statements the answer check removed: their quotes stand in the passages but do not answer.",
    )
    removed: list[RemovedStatement] = Field(
        default_factory=list, description="Every statement either check removed, with the quotes the model wrote."
    )


class UsageInfo(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0
    thinking_tokens: int = 0
    cost_usd: float = 0.0


class AnswerEvent(BaseModel):
    event: Literal["answer"] = "answer"
    text: str
    mode: Literal["model", "excerpts"] = Field(description="'excerpts': no model wrote this; it is the passages.")
    model: str | None = None
    reason: str = Field(default="", description="Why excerpts, when they are.")
    citations: CitationSummary
    statements: list[AnswerStatement] = Field(
        default_factory=list, description="The answer's statements with their quotes and spans, in order."
    )
    verification: Verification
    abstained: bool = Field(
        description="The answer states nothing the documents support: no supported statement (or excerpt) was "
        "kept, or prose cites no passage. What an evaluation counts as an abstention."
    )
    usage: UsageInfo
    turns: int


class DoneEvent(BaseModel):
    event: Literal["done"] = "done"
    request_id: str
    elapsed_ms: float


class ErrorEvent(BaseModel):
    event: Literal["error"] = "error"
    message: str
    status: int = 500


AgentEvent = (
    ToolCallEvent
    | ToolResultEvent
    | SourcesEvent
    | TokenEvent
    | CitationEvent
    | StatementEvent
    | AnswerEvent
    | DoneEvent
    | ErrorEvent
)
