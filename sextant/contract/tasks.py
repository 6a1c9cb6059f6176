"""Long ingests run as MCP tasks: the extension's identifier, and the progress a task's status carries."""

from __future__ import annotations

from pydantic import BaseModel, Field

# The tasks extension of the 2026-07-28 revision (SEP-2663); 2025-11-25 clients use that revision's own tasks.
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
# A task's _meta carries its IngestProgress here, on tasks/get and on the result that created it.
INGEST_PROGRESS_META = "sextant/ingest_progress"


class IngestProgress(BaseModel):
    """How far a kb_ingest or kb_upload task has come."""

    documents_done: int = Field(description="Documents finished: stored, unchanged or refused.")
    documents_total: int = Field(description="Documents in the call (one for kb_upload).")
    chunks_done: int = Field(0, description="Chunks of the finished documents.")
    embedding_done: int = Field(0, description="Chunks of the document in progress embedded so far.")
    embedding_total: int = Field(0, description="Chunks of the document in progress that need embedding.")
