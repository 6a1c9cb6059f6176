"""A second, cheap model pass: does each drafted statement follow from the passages it cites?

It is a guard, not a guarantee: the checker is the same model family as the writer and shares its
blind spots. Unsupported statements are marked or dropped; the answer reports which.
"""

from __future__ import annotations

import logging
import re
from typing import Any, Literal

from sextant.agent.citations import claims_in, labels_in
from sextant.agent.events import Verification
from sextant.agent.passages import PassageBook
from sextant.llm.chat import ChatModel, ModelError, Usage

log = logging.getLogger(__name__)

MARK = " _(not supported by the cited passages)_"
SYSTEM = (
    "You check a drafted answer against its sources. For each numbered statement, decide whether the "
    "passages it cites state or directly imply it. Then say whether the answer as a whole addresses the "
    "question. Judge only support, not style."
)
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "results": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"statement": {"type": "integer"}, "supported": {"type": "boolean"}},
                "required": ["statement", "supported"],
            },
        },
        "addresses_question": {"type": "boolean"},
    },
    "required": ["results", "addresses_question"],
}


async def verify_answer(
    model: ChatModel, question: str, answer: str, book: PassageBook, action: Literal["mark", "drop", "off"]
) -> tuple[str, Verification, Usage]:
    """Check the cited statements of ``answer``; returns the revised answer and what was found."""
    statements = [s for s in claims_in(answer) if labels_in(s)]
    if not statements:
        return answer, Verification(checked=False, action=action, note="no cited statement to check"), Usage()
    try:
        reply, usage = await model.complete_json(SYSTEM, _prompt(question, statements, book), SCHEMA)
    except ModelError as exc:
        log.warning("verification skipped: %s", exc)
        return answer, Verification(checked=False, action=action, note=f"check failed: {exc}"), Usage()
    unsupported = _unsupported(reply, len(statements))
    revised = answer
    for index in unsupported:
        statement = statements[index]
        replacement = "" if action == "drop" else statement + MARK
        revised = revised.replace(statement, replacement, 1)
    addresses = reply.get("addresses_question")
    verification = Verification(
        checked=True,
        statements=len(statements),
        unsupported=[statements[i] for i in unsupported],
        action=action,
        addresses_question=addresses if isinstance(addresses, bool) else None,
        note="a check by the same model family: a guard, not a guarantee",
    )
    # A dropped statement leaves the spaces on both its sides.
    return re.sub(r" {2,}", " ", revised).strip(), verification, usage


def _prompt(question: str, statements: list[str], book: PassageBook) -> str:
    labels = sorted({label for s in statements for label in labels_in(s)})
    passages = "\n\n".join(p.for_model() for label in labels if (p := book.get(label)) is not None)
    numbered = "\n".join(f"{i}. {s}" for i, s in enumerate(statements))
    return f"Question: {question}\n\nPassages:\n\n{passages}\n\nStatements:\n{numbered}"


def _unsupported(reply: dict[str, Any], count: int) -> list[int]:
    found: list[int] = []
    for item in reply.get("results") or []:
        if not isinstance(item, dict):
            continue
        index = item.get("statement")
        if isinstance(index, int) and 0 <= index < count and item.get("supported") is False and index not in found:
            found.append(index)
    return sorted(found)
