"""Adding documents that arrive as text or as a file's bytes (the ``kb_ingest`` and ``kb_upload`` tools): items
grouped into paged documents, a file parsed in the bounded worker, and a document refused with its reason
rather than failing the call. Blocking: the server runs each call in a worker thread."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from sextant.contract.results import IngestOutcome
from sextant.contract.tools import IngestDocument
from sextant.kb.containers import parse_file, store_parts
from sextant.kb.document_ids import document_id_for
from sextant.kb.documents import LoadedDocument, join_pages
from sextant.kb.knowledge_base import KnowledgeBase, Progress
from sextant.kb.loader_sandbox import BoundedParser
from sextant.kb.loaders import markdown
from sextant.kb.refusal import REFUSALS, refused


def group_pages(items: list[IngestDocument]) -> dict[str, list[IngestDocument]]:
    """The items of each id, in page order (an item without a page comes first)."""
    by_id: dict[str, list[IngestDocument]] = {}
    for item in items:
        by_id.setdefault(item.id, []).append(item)
    return {doc_id: sorted(parts, key=lambda p: p.page or 0) for doc_id, parts in by_id.items()}


def ingest_text(kb: KnowledgeBase, doc_id: str, parts: list[IngestDocument], progress: Progress) -> IngestOutcome:
    """Store the items of one id (``group_pages``) as one document, each part read as Markdown (plain text is
    valid Markdown) and the parts joined as pages; a refusal is the outcome, not an exception."""
    try:
        loaded = join_pages(
            [(markdown.load(p.content.encode("utf-8"), f"{p.id}.md"), p.page) for p in parts], title=parts[0].title
        )
        return kb.ingest(doc_id, loaded, source=parts[0].source, progress=progress)
    except REFUSALS as exc:
        return refused(doc_id, exc)


def ingest_file(
    kb: KnowledgeBase,
    parser: BoundedParser,
    filename: str,
    data: bytes,
    *,
    title: str | None,
    progress: Progress,
    before_writing: Callable[[], None],
) -> IngestOutcome:
    """Parse a file's bytes in the bounded worker (a hostile file costs the worker, not this process) and store
    it under its name's id; a PDF's bytes are kept for page images. ``before_writing`` runs between the parse and
    the write (a cancelled task stops there). A refusal is the outcome, not an exception."""
    doc_id = document_id_for(Path(filename))
    try:
        parsed = parse_file(parser, data, filename)
        loaded: LoadedDocument = parsed.document
        if title:
            loaded = dataclasses.replace(loaded, title=title)
        original = parser.original(data, filename)
        before_writing()
        outcome = kb.ingest(doc_id, loaded, source=filename, original=original, progress=progress)
    except REFUSALS as exc:
        return refused(doc_id, exc)
    if outcome.status != "unchanged":
        outcome.parts = store_parts(kb, parser, parsed, container_id=doc_id, source=filename)
    return outcome
