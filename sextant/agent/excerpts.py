"""The answer when no model writes one: the passages' sentences that best match the question, each quoted and cited.

Passages with no sentence that shares a content word with the question are left out: the search returns
five passages whatever it finds, and a sourdough guide has no place under an espresso question.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sextant.agent.events import AnswerStatement, Evidence
from sextant.agent.passages import Passage
from sextant.agent.sentences import distinct, rank

EXCERPT_SENTENCES = 3
# A sentence holding less than this share of the question's term weight is not an excerpt of an answer.
MIN_COVERAGE = 0.25

# A quoted sentence that starts like a Markdown block ("## Heading", "- item", "1. step", "| cell") would
# render as one inside the quote; a backslash keeps it text.
_BLOCK_START = re.compile(r"^(#{1,6}\s|[-*+]\s|\d{1,9}[.)]\s|\||>)")


def _literal(text: str) -> str:
    return "\\" + text if _BLOCK_START.match(text) else text


def excerpt_statements(question: str, passages: Sequence[Passage]) -> list[AnswerStatement]:
    """The best-matching sentences (at most ``EXCERPT_SENTENCES``), best first, each with its exact span; a
    table row is written under its header, which its span leaves out."""
    every = distinct((p.label, p.text) for p in passages)
    chosen = [r.sentence for r in rank(question, every) if r.score > 0 and r.coverage >= MIN_COVERAGE]
    by_label = {p.label: p for p in passages}
    return [
        AnswerStatement(
            text=s.said, evidence=[Evidence.at(s.label, by_label[s.label].text, s.start, s.end)], supported=True
        )
        for s in chosen[:EXCERPT_SENTENCES]
    ]


def excerpt_answer(statements: Sequence[AnswerStatement], passages: Sequence[Passage], reason: str) -> str:
    """Markdown that cannot be mistaken for a model's prose: a label line, then each sentence quoted and cited."""
    header = f"**Excerpts, not a written answer** ({reason})."
    if not statements:
        return f"{header}\n\nNothing in the documents matches this question."
    by_label = {p.label: p for p in passages}
    quotes = []
    for statement in statements:
        label = statement.evidence[0].label
        lines = "\n>\n".join(f"> {_literal(line)}" for line in statement.text.split("\n"))
        quotes.append(f"{lines} [{label}]\n>\n> — {by_label[label].citation()}")
    return f"{header} The sentences that best match the question:\n\n" + "\n\n".join(quotes)
