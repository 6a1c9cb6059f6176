"""The hashes that decide what an ingest redoes: a document's content hash, and each chunk's dense key.

A document whose content hash is the one stored is left as it is (``unchanged``). The hash covers what the stored
chunks were made from: the text, title, source, category, the page, section and table spans, the chunking, the
embedder, the indexing policy and ``CHUNKER_VERSION``, and the file's own hash when there is one. A chunk whose
dense key (the hash of the text it is embedded from) was stored for the earlier version keeps that vector instead
of being embedded again.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from typing import Any

from sextant.kb.chunking import ChunkingConfig
from sextant.kb.documents import LoadedDocument, PageSpan, SectionSpan, TableSpan
from sextant.kb.indexing import IndexingPolicy

# Bump when chunk boundaries change for the same settings, so unchanged files are re-chunked.
CHUNKER_VERSION = 1
# Span fields added since stores were first written, with their defaults.
_LATER_FIELDS: dict[str, object] = {"anchor": "", "unit": "page"}


def content_hash(
    doc: LoadedDocument,
    source: str,
    category: str,
    file_hash: str,
    *,
    chunking: ChunkingConfig,
    embedder: str,
    policy: IndexingPolicy,
) -> str:
    """The SHA-256 of everything the document's stored chunks and vectors were made from (``embedder``: its name)."""
    spans = json.dumps([[span_key(s) for s in group] for group in (doc.pages, doc.sections, doc.tables)])
    parts = [doc.text, doc.title, source, category, spans, asdict(chunking), embedder, CHUNKER_VERSION, asdict(policy)]
    # Only when there is one, so that documents stored before files were hashed keep their hashes.
    key = json.dumps([*parts, file_hash] if file_hash else parts)
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def span_key(span: PageSpan | SectionSpan | TableSpan) -> dict[str, Any]:
    """A span's fields as hashed. A field added after documents were stored (a section's ``anchor``, a page's
    ``unit``) is left out at its default, so those documents keep their hashes and are not embedded again."""
    fields = asdict(span)
    return {name: value for name, value in fields.items() if name not in _LATER_FIELDS or value != _LATER_FIELDS[name]}


def dense_key(dense_text: str) -> str:
    """The key of the text a chunk's vector is embedded from."""
    return hashlib.sha256(dense_text.encode("utf-8")).hexdigest()[:32]
