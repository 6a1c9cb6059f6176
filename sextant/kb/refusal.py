"""What the knowledge base refuses: a request the caller can fix, as against a failure of the knowledge base."""

from __future__ import annotations


class KnowledgeBaseError(Exception):
    """A request the knowledge base refuses; the message says what to change.

    The MCP server answers it as a tool error the model can act on; anything else raised is the server's own
    failure, answered as a protocol error (``sextant.kb.mcp.context``).
    """
