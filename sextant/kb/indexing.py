"""What each retriever indexes for a chunk: the chunk alone, or under its document title and section.

A chunk cut from the middle of a document often does not name what it is about ("it", "the
machine"); prefixing the title and section restores that context for retrieval. The stored chunk,
its offsets and what a citation shows stay exactly the chunk. Whether each retriever gets the
context is decided by measurement (learning/chunk-context.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class IndexingPolicy:
    """Whether the dense and the BM25 index see a chunk under its title and section."""

    dense_context: bool = True
    lexical_context: bool = True


def index_text(text: str, meta: Mapping[str, Any], context: bool) -> str:
    """The text a retriever indexes for a chunk with metadata ``meta`` (title, section)."""
    if not context:
        return text
    heads = [str(meta.get("title") or ""), str(meta.get("section") or "")]
    lines = [h for i, h in enumerate(heads) if h and h not in heads[:i] and not text.startswith(h)]
    return "\n".join([*lines, text])


DEFAULT_POLICY = IndexingPolicy()
