"""The local sites the fetch and crawl tests ask: Debian's Python manual, and an empty one a test fills with routes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.kb.web.docs_server import DocsServer, python_docs


@pytest.fixture
def docs() -> Iterator[DocsServer]:
    with DocsServer(python_docs()) as server:
        yield server


@pytest.fixture
def site() -> Iterator[DocsServer]:
    with DocsServer() as server:
        yield server
