"""The quote check: a statement keeps a label only where its quote stands in that passage.

Deterministic, and the same for every model: a quote is looked up in the passage it names
(``sextant.agent.evidence``); found, the label stays and the quote's span travels with it; not found, the
label goes. A statement left with no found quote is dropped, or kept and visibly marked (``unsupported``).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Literal

from sextant.agent.chat import Statement
from sextant.agent.citations import says_not_answered
from sextant.agent.events import AnswerStatement, Evidence
from sextant.agent.evidence import locate
from sextant.agent.passages import PassageBook

Unsupported = Literal["drop", "mark"]
MARK = " _(not found in the passages)_"


@dataclass(frozen=True)
class Checked:
    """What the check made of one statement: ``statement`` is None when it was dropped."""

    statement: AnswerStatement | None
    quotes: int  # quotes the model gave
    found: int  # of those, found in the passage they named
    abstains: bool = False  # the statement says the documents do not answer


def check_statement(
    statement: Statement, book: PassageBook, shown: Collection[int], unsupported: Unsupported
) -> Checked:
    """Find each quote of ``statement`` in the passage it names (only passages the model was shown)."""
    evidence: list[Evidence] = []
    for quote in statement.quotes:
        passage = book.get(quote.label)
        if passage is None or quote.label not in shown or passage.tier != "kb":
            continue
        span = locate(quote.text, passage.text)
        if span is None or any(e.label == quote.label and e.start == span.start for e in evidence):
            continue
        words = passage.text[span.start : span.end]
        evidence.append(Evidence(label=quote.label, quote=words, start=span.start, end=span.end))
    found = len(evidence)
    if evidence:
        kept = AnswerStatement(text=statement.text, evidence=evidence, supported=True)
        return Checked(kept, len(statement.quotes), found)
    if not statement.quotes and says_not_answered(statement.text):
        return Checked(None, 0, 0, abstains=True)
    if unsupported == "mark":
        return Checked(AnswerStatement(text=statement.text, supported=False), len(statement.quotes), 0)
    return Checked(None, len(statement.quotes), 0)


def render(statement: AnswerStatement, *, first: bool) -> str:
    """'Brew at 93 °C.' with evidence in passages 3 and 4 → ' Brew at 93 °C [3][4].'; unsupported ones marked."""
    text = statement.text.strip()
    markers = "".join(f"[{label}]" for label in dict.fromkeys(e.label for e in statement.evidence))
    if markers:
        text = f"{text[:-1]} {markers}{text[-1]}" if text and text[-1] in ".!?" else f"{text} {markers}"
    elif not statement.supported:
        text += MARK
    return text if first else " " + text
