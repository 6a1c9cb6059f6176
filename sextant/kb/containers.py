"""Storing the parts of a container (a mailbox's messages, a message's attachments) as documents of their own.

A container is stored as a document (a message's text; a mailbox's list of messages), then each file it holds
as a part (named as ``sextant.kb.document_ids`` says). Storing the container again stores its parts again
(unchanged ones cost nothing) and forgets the parts no longer in it; forgetting the container forgets its
parts (``KnowledgeBase.forget``). Parts are unpacked and parsed in the bounded worker, like any file.
"""

from __future__ import annotations

import dataclasses

from sextant.contract.results import IngestOutcome
from sextant.kb.document_ids import is_container, part_id, part_source
from sextant.kb.documents import LoadError
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.loader_sandbox import BoundedParser
from sextant.kb.refusal import KnowledgeBaseError
from sextant.kb.store import StoreError


def store_parts(
    kb: KnowledgeBase,
    parser: BoundedParser,
    data: bytes,
    name: str,
    *,
    container_id: str,
    source: str,
    category: str = "",
) -> list[IngestOutcome]:
    """Store the parts of the container just stored as ``container_id`` (none for a file that is no container),
    forget its earlier parts that are gone, and return one outcome per part: a part that cannot be read or
    stored, or that was left out (an inline image, a type no loader reads), is refused with its reason."""
    if not is_container(name):
        return []
    try:
        unpacked = parser.unpack(data, name)
    except LoadError as exc:
        return [IngestOutcome(id=container_id, status="refused", reason=f"its parts could not be read: {exc.reason}")]
    outcomes: list[IngestOutcome] = []
    taken: set[str] = set()
    for part in unpacked.files:
        doc_id = part_id(container_id, part.key, taken)
        taken.add(doc_id)
        try:
            loaded = dataclasses.replace(parser.parse(part.data, part.name), title=part.title)
            original = parser.original(part.data, part.name)
            outcomes.append(
                kb.ingest(doc_id, loaded, source=part_source(source, part.key), category=category, original=original)
            )
        except LoadError as exc:
            outcomes.append(IngestOutcome(id=doc_id, title=part.title, status="refused", reason=exc.reason))
        except (KnowledgeBaseError, StoreError) as exc:
            outcomes.append(IngestOutcome(id=doc_id, title=part.title, status="refused", reason=str(exc)))
    outcomes.extend(
        IngestOutcome(id=skipped.name, status="refused", reason=skipped.reason) for skipped in unpacked.skipped
    )
    for gone in sorted(set(kb.parts_of(source)) - taken):
        kb.forget(gone)
    return outcomes
