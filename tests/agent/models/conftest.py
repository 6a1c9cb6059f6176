"""Fixtures for the local-model adapters: the real SmolLM2-135M file, fetched once through the registry."""

from __future__ import annotations

from sextant.agent.chat import ToolSpec
from tests.agent.conftest import TEST_MODEL

__all__ = ["KB_LIST", "KB_SEARCH", "PASSAGES", "SYSTEM", "TEST_MODEL"]

# kb_search's input schema exactly as sextant-kb publishes it (the agent side never imports sextant.kb).
KB_SEARCH = ToolSpec(
    name="kb_search",
    description="Find the passages that answer a question, ranked, each with its page and section citation.",
    input_schema={
        "properties": {
            "query": {
                "description": "The question or keywords.",
                "maxLength": 2000,
                "minLength": 1,
                "title": "Query",
                "type": "string",
            },
            "k": {
                "default": 5,
                "description": "How many passages to return.",
                "maximum": 20,
                "minimum": 1,
                "title": "K",
                "type": "integer",
            },
            "document_ids": {
                "anyOf": [{"items": {"type": "string"}, "maxItems": 50, "type": "array"}, {"type": "null"}],
                "default": None,
                "description": "Only search these documents (ids from kb_list).",
                "title": "Document Ids",
            },
            "detail": {
                "default": "snippets",
                "description": "'ids': citations only; 'snippets': ~300 characters around the match; 'full'.",
                "enum": ["ids", "snippets", "full"],
                "title": "Detail",
                "type": "string",
            },
        },
        "required": ["query"],
        "title": "kb_searchArguments",
        "type": "object",
    },
)
KB_LIST = ToolSpec("kb_list", "List every document in the knowledge base.", {"properties": {}, "type": "object"})

PASSAGES = (
    "[1] Descaling (Aurora espresso machine manual, page 12): descale the machine every 3 months, "
    "or every month if your water is hard.\n"
    "[2] Grinder care (page 14): brush the burrs once a week.\n"
    "[3] Warranty (page 30): the machine is covered for two years from purchase."
)
SYSTEM = "You answer questions using only the numbered passages from the user's documents."
