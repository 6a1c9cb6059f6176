"""Storing the parts of a container (a mailbox's messages, a message's attachments) as documents of their own.

A container is stored as a document (a message's text; a mailbox's list of messages), then each file it holds
as a part (named as ``sextant.kb.document_ids`` says). Storing the container again stores its parts again
(unchanged ones cost nothing) and forgets the parts no longer in it; forgetting the container forgets its
parts (``KnowledgeBase.forget``). A container and its parts are read in the bounded worker in one request
(``parse_file``), a mailbox's messages coming back already read; the other parts are parsed there like any file.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from sextant.contract.results import IngestOutcome
from sextant.kb.document_ids import is_container, part_id, part_source
from sextant.kb.documents import LoadedDocument, Unpacked
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.loader_sandbox import BoundedParser, ParseLimitError, ParserCrash
from sextant.kb.refusal import REFUSALS, refused


@dataclass(frozen=True, slots=True)
class ParsedFile:
    """A file parsed for storing: its document and, for a container, the files it holds."""

    document: LoadedDocument
    parts: Unpacked | None = None  # None for a file that is no container, or whose parts could not be read
    parts_refused: str = ""  # why a container's parts could not be read; the container itself was


def parse_file(parser: BoundedParser, data: bytes, name: str) -> ParsedFile:
    """Parse a file in the bounded worker, with the files it holds when it is a container, from one reading
    (``BoundedParser.parse_with_parts``). If reading the parts crashes or hits a limit, the container is parsed
    alone: it is stored, and its parts refused with the reason.

    Raises:
        LoadError: the file is refused.
    """
    try:
        document, parts = parser.parse_with_parts(data, name)
    except (ParserCrash, ParseLimitError) as exc:
        if not is_container(name):
            raise
        return ParsedFile(parser.parse(data, name), parts_refused=exc.reason)
    return ParsedFile(document, parts)


def store_parts(
    kb: KnowledgeBase,
    parser: BoundedParser,
    parsed: ParsedFile,
    *,
    container_id: str,
    source: str,
    category: str = "",
) -> list[IngestOutcome]:
    """Store the parts of the container just stored as ``container_id`` (none for a file that is no container),
    forget its earlier parts that are gone, and return one outcome per part: a part that cannot be read or
    stored, or that was left out (an inline image, a type no loader reads), is refused with its reason."""
    if parsed.parts_refused:
        reason = f"its parts could not be read: {parsed.parts_refused}"
        return [IngestOutcome(id=container_id, status="refused", reason=reason)]
    if parsed.parts is None:
        return []
    outcomes: list[IngestOutcome] = []
    taken: set[str] = set()
    for part in parsed.parts.files:
        doc_id = part_id(container_id, part.key, taken)
        taken.add(doc_id)
        try:
            read = part.loaded if part.loaded is not None else parser.parse(part.data, part.name)
            loaded = dataclasses.replace(read, title=part.title)
            original = parser.original(part.data, part.name)
            outcomes.append(
                kb.ingest(doc_id, loaded, source=part_source(source, part.key), category=category, original=original)
            )
        except REFUSALS as exc:
            outcomes.append(refused(doc_id, exc, title=part.title))
    outcomes.extend(
        IngestOutcome(id=skipped.name, status="refused", reason=skipped.reason) for skipped in parsed.parts.skipped
    )
    for gone in sorted(set(kb.parts_of(source)) - taken):
        kb.forget(gone)
    return outcomes
