"""Request and response bodies of the agent's HTTP API, bounded in their schemas."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from sextant.agent.events import (
    AnswerStatement,
    CitationSummary,
    ToolCallEvent,
    ToolResultEvent,
    UsageInfo,
    Verification,
)
from sextant.agent.passages import Passage
from sextant.contract.results import DocumentInfo, IngestOutcome, IngestStatus
from sextant.contract.tools import IngestDocument

MAX_QUESTION_CHARS = 2000
MAX_DOCUMENT_CHARS = 2_000_000


class Turn(BaseModel):
    role: Literal["user", "assistant"]
    text: str = Field(max_length=20_000)


class QueryRequest(BaseModel):
    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    history: list[Turn] = Field(
        default_factory=list, max_length=40, description="Earlier turns of this conversation, oldest first."
    )
    passages: list[Passage] = Field(
        default_factory=list,
        max_length=200,
        description="Passages the client already holds from earlier turns: their labels keep their meaning and "
        "new passages are numbered after them.",
    )


class QueryResponse(BaseModel):
    request_id: str
    answer: str
    mode: Literal["model", "excerpts"]
    model: str | None
    reason: str
    sources: list[Passage] = Field(description="Every passage numbered in this conversation, by label.")
    citations: CitationSummary
    statements: list[AnswerStatement] = Field(
        default_factory=list, description="The answer's statements, each with its quote, passage label and span."
    )
    verification: Verification
    abstained: bool = Field(description="The answer states nothing the documents support (as AnswerEvent.abstained).")
    usage: UsageInfo
    turns: int
    trace: list[ToolCallEvent | ToolResultEvent]


class TextDocument(IngestDocument):
    """``kb_ingest``'s document within the agent's own bounds: an id of safe characters, a bounded text."""

    id: str = Field(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9._-]+$")
    content: str = Field(min_length=1, max_length=MAX_DOCUMENT_CHARS)


class IngestRequest(BaseModel):
    documents: list[TextDocument] = Field(min_length=1, max_length=100)


class IngestResult(BaseModel):
    id: str
    status: IngestStatus
    reason: str | None = None
    chunks: int | None = None
    name: str | None = Field(default=None, description="For uploads: the file's name as sent.")
    title: str = ""
    version: str = Field("", description="This version of the document's content.")
    overview: bool = Field(False, description="A model-written overview of the document was stored.")

    @classmethod
    def of(cls, outcome: IngestOutcome, name: str | None = None) -> IngestResult:
        """The knowledge base's outcome for one document, as the API reports it (``name``: the uploaded file's)."""
        return cls(
            id=outcome.id,
            status=outcome.status,
            reason=outcome.reason,
            chunks=outcome.chunks,
            name=name,
            title=outcome.title,
            version=outcome.version,
        )


class IngestResponse(BaseModel):
    request_id: str
    results: list[IngestResult]


class ToolInfo(BaseModel):
    name: str
    description: str
    read_only: bool
    offered_to_model: bool
    input_schema: dict[str, Any]


class ModelHealth(BaseModel):
    configured: bool = Field(description="A model is set up; without one answers are excerpts.")
    reachable: bool | None = Field(description="Whether the last call reached it; null before the first call.")
    provider: str
    name: str | None
    detail: str


class Health(BaseModel):
    status: Literal["ok", "degraded"]
    kb_connected: bool = Field(description="The knowledge-base process is running and answered its last probe.")
    kb_reason: str | None = Field(None, description="Why the knowledge base is not connected; null when it is.")
    kb_restarts: int = Field(0, description="How often the knowledge-base process was restarted since the agent began.")
    kb_tools: int
    model: ModelHealth
    answers: Literal["model", "excerpts"]
    budget_usd: float
    budget: str = Field(description="What the daily budget means for the model in use.")
    spent_today_usd: float
    workspaces: bool = Field(
        False, description="Each caller works in a private, expiring workspace: POST /workspaces, then send its token."
    )


class DocumentEntry(DocumentInfo):
    """One document as ``kb_list`` reports it."""


class DocumentsResponse(BaseModel):
    documents: list[DocumentEntry]


class PageText(BaseModel):
    document_id: str
    page: int
    text: str


class WorkspaceLimits(BaseModel):
    documents: int = Field(description="Most documents in the workspace (SEXTANT_WORKSPACE_DOCUMENTS).")
    questions: int = Field(description="Most questions the workspace may ask (SEXTANT_WORKSPACE_QUESTIONS).")
    file_mb: int = Field(description="Largest file an upload may carry, in MB.")


class WorkspaceInfo(BaseModel):
    """A private workspace: its documents are seen and searched by the holder of its token alone."""

    expires_at: float = Field(description="When it and its documents are deleted (Unix time, seconds).")
    questions_asked: int
    limits: WorkspaceLimits


class WorkspaceCreated(WorkspaceInfo):
    token: str = Field(description="Bearer token for every later request (Authorization: Bearer …). Shown once.")


class WorkspaceDeleted(BaseModel):
    status: Literal["deleted", "deleting"] = Field(
        description="deleting: a request still running in it finishes first; it is gone within about 30 s."
    )
