"""What documents are called: a file's id, a web page's, a part's, and finding a part's container."""

from __future__ import annotations

from pathlib import Path

import pytest

from sextant.kb.document_ids import (
    container_source,
    document_id_for,
    part_id,
    part_source,
    url_document_id,
    validate_document_id,
)
from sextant.kb.refusal import KnowledgeBaseError


def test_a_file_is_named_by_its_stem_made_uri_safe() -> None:
    assert document_id_for(Path("/notes/Tea & Coffee.md")) == "Tea-Coffee"
    with pytest.raises(KnowledgeBaseError, match="invalid document id"):
        validate_document_id("-starts-with-a-dash")


def test_a_web_page_is_named_by_host_path_and_query_and_a_long_one_keeps_a_hash() -> None:
    assert url_document_id("https://docs.python.org/3/library/socket.html") == "docs.python.org-3-library-socket"
    assert url_document_id("http://127.0.0.1:8000/") == "127.0.0.1-8000"
    assert url_document_id("https://wiki.example.org/index.php?title=Tea") == "wiki.example.org-index-title-Tea"
    long_a, long_b = (url_document_id(f"https://example.org/{'a' * 200}/{tail}") for tail in ("x", "y"))
    assert len(long_a) == 128 and long_a != long_b


def test_a_part_is_named_under_its_container_and_found_from_its_source() -> None:
    source = part_source("/mail/Archive.MBOX", "tea@example.com/1-notes.md")
    assert source == "/mail/Archive.MBOX#tea@example.com/1-notes.md"
    assert container_source(source) == "/mail/Archive.MBOX"
    assert container_source("/notes/issue#12.md") is None  # a '#' in a file name is no part
    taken: set[str] = set()
    first = part_id("archive", "tea@example.com", taken)
    assert first == "archive.tea-example.com"
    taken.add(first)
    again = part_id("archive", "tea#example.com", taken)  # the same readable id: the key's hash instead
    assert again != first and again.startswith("archive.") and len(again) == len("archive.") + 16
    assert len(part_id("x" * 120, "k" * 40, set())) == 128
