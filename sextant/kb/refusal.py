"""What the knowledge base refuses: a request the caller can fix, as against a failure of the knowledge base.

A document is refused the same way wherever it arrives (an upload, a container's part): the file cannot be read
(``LoadError``), the request cannot be met (``KnowledgeBaseError``), or the store cannot take it (``StoreError``).
``refused`` turns each into the outcome a client shows its user.
"""

from __future__ import annotations

from sextant.contract.results import IngestOutcome
from sextant.kb.chroma_client import StoreError
from sextant.kb.documents import LoadError


class KnowledgeBaseError(Exception):
    """A request the knowledge base refuses; the message says what to change.

    The MCP server answers it as a tool error the model can act on; anything else raised is the server's own
    failure, answered as a protocol error (``sextant.kb.mcp.context``).
    """


# What a document can be refused for; anything else is the server's failure, not the document's.
REFUSALS = (LoadError, KnowledgeBaseError, StoreError)


def refusal_reason(exc: Exception) -> str:
    """Why a document was refused, in words a person can act on: a loader's reason, or the error's message."""
    return exc.reason if isinstance(exc, LoadError) else str(exc)


def refused(doc_id: str, exc: Exception, *, title: str = "") -> IngestOutcome:
    """The outcome of a document not taken (``exc`` one of ``REFUSALS``), with a reason a client can show its user."""
    return IngestOutcome(id=doc_id, title=title, status="refused", reason=refusal_reason(exc))
