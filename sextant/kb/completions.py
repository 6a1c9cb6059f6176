"""What ``completion/complete`` offers while a person types a document id or a page number."""

from __future__ import annotations

from collections.abc import Sequence

from mcp_types import Completion

from sextant.contract.results import DocumentInfo

MAX_VALUES = 100  # the protocol's limit per response; `total` and `has_more` tell the rest


def document_ids(documents: Sequence[DocumentInfo], typed: str) -> Completion:
    """Ids that start with what was typed, then those whose id or title contains it (case-insensitive)."""
    needle = typed.casefold()
    starting = [d.id for d in documents if d.id.casefold().startswith(needle)]
    first = set(starting)
    containing = [
        d.id for d in documents if d.id not in first and (needle in d.id.casefold() or needle in d.title.casefold())
    ]
    return _capped(starting + containing)


def page_numbers(document: DocumentInfo | None, typed: str) -> Completion:
    """The document's physical page numbers (1-based) that start with what was typed; none for an unknown id."""
    pages = document.pages if document is not None else 0
    return _capped([str(n) for n in range(1, pages + 1) if str(n).startswith(typed)])


def _capped(values: list[str]) -> Completion:
    return Completion(values=values[:MAX_VALUES], total=len(values), has_more=len(values) > MAX_VALUES)
