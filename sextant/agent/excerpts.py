"""The answer when no model writes one: the retrieved passages, quoted and labelled as excerpts."""

from __future__ import annotations

import re
from collections.abc import Sequence

from sextant.agent.passages import Passage

EXCERPT_CHARS = 400


# A quoted passage that starts like a Markdown block ("## Heading", "- item", "1. step", "| cell") would
# render as one inside the quote; a backslash keeps it text.
_BLOCK_START = re.compile(r"^(#{1,6}\s|[-*+]\s|\d{1,9}[.)]\s|\||>)")


def _literal(text: str) -> str:
    return "\\" + text if _BLOCK_START.match(text) else text


def excerpt_answer(passages: Sequence[Passage], reason: str) -> str:
    """Markdown that cannot be mistaken for a model's prose: a label line, then quoted passages."""
    header = f"**Excerpts, not a written answer** ({reason})."
    if not passages:
        return f"{header}\n\nNothing in the documents matches this question."
    quotes = []
    for passage in passages:
        snippet = _literal(" ".join(passage.text.split()))
        if len(snippet) > EXCERPT_CHARS:
            snippet = snippet[:EXCERPT_CHARS].rsplit(" ", 1)[0] + " …"
        quotes.append(f"> {snippet} [{passage.label}]\n>\n> — {passage.citation()}")
    return f"{header} The passages that best match the question:\n\n" + "\n\n".join(quotes)
