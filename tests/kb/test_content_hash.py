"""The content hash and the dense key: what decides that an ingest is unchanged, and which vectors are kept."""

from __future__ import annotations

import dataclasses

from sextant.kb.chunking import ChunkingConfig
from sextant.kb.content_hash import content_hash, dense_key, span_key
from sextant.kb.documents import LoadedDocument, PageSpan, SectionSpan
from sextant.kb.indexing import DEFAULT_POLICY

TEXT = "Tea\n\nBrew green tea at 80 degrees."
DOC = LoadedDocument(
    text=TEXT,
    title="Tea",
    pages=(PageSpan(0, len(TEXT), 1, "1"),),
    sections=(SectionSpan(0, len(TEXT), "Tea", 1, anchor="tea"),),
)


def _hash(
    doc: LoadedDocument = DOC, file_hash: str = "", *, chunking: int = 256, embedder: str = "all-MiniLM-L6-v2"
) -> str:
    config = ChunkingConfig(target=chunking)
    return content_hash(doc, "tea.md", "drinks", file_hash, chunking=config, embedder=embedder, policy=DEFAULT_POLICY)


def test_a_section_without_an_anchor_hashes_as_before_the_field_existed() -> None:
    # Stores written before sections had anchors keep their documents' hashes: nothing is embedded again.
    assert span_key(SectionSpan(0, 5, "Tea", 2)) == {"start": 0, "end": 5, "title": "Tea", "level": 2}
    assert span_key(SectionSpan(0, 5, "Tea", 2, anchor="tea"))["anchor"] == "tea"


def test_the_hashes_of_stored_documents_do_not_move() -> None:
    # A stored document whose hash changed would be chunked and embedded again at its next ingest.
    assert _hash() == "cb7e06b1d7d6ffaf353ac0ddf8de44e2fe65ce3019dfe28ad5dfe7ec9d4ab36b"
    assert _hash(file_hash="abc") == "c277b9718677409657ab67b141ebf71eb9b2cf69f799a016d1fbdecbf7a47bd3"
    assert dense_key("x") == "2d711642b726b04401627ca9fbac32f5"


def test_whatever_the_chunks_are_made_from_changes_the_hash() -> None:
    assert _hash(dataclasses.replace(DOC, title="Green tea")) != _hash()
    assert _hash(chunking=128) != _hash()
    assert _hash(embedder="another-embedder") != _hash()
