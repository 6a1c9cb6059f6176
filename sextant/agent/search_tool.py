"""How the loop uses ``kb_search``: the arguments it sends, and what a result becomes for the model and the trace.

The model writes the query; the loop strips citation markers from it (they match nothing in the documents), falls
back to the question, asks for full chunks (the browser opens the whole chunk; the model reads a bounded part),
and numbers the hits as passages. An empty knowledge base is said as such, not as "nothing matches".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sextant.agent.citations import MARKER
from sextant.agent.kb_client import ToolOutcome, search_result
from sextant.agent.passages import Passage, PassageBook
from sextant.agent.policies import SEARCH_K

# Not a verdict on the question. The search's own reason names the store's folder and settings, for the operator
# (kb_stats, the logs), not for whoever is asking.
EMPTY_KNOWLEDGE_BASE = (
    "The knowledge base is empty: no documents have been added yet, so there is nothing to answer from."
)


def search_arguments(arguments: Mapping[str, Any], question: str) -> dict[str, Any]:
    """The ``kb_search`` arguments the loop sends for the ones the model (or the loop itself) wrote."""
    sent = dict(arguments)
    query = MARKER.sub("", str(sent.get("query") or "")).strip()
    sent["query"] = query or question
    sent.setdefault("k", SEARCH_K)
    sent["detail"] = "full"
    return sent


@dataclass(frozen=True)
class SearchReading:
    """A ``kb_search`` result as the loop uses it: the newly numbered passages, the model's text, the trace's line."""

    passages: list[Passage]
    for_model: str
    summary: str
    empty: bool
    abstained: bool


def read_search(outcome: ToolOutcome, book: PassageBook, query: str) -> SearchReading:
    """Number the hits of a successful ``kb_search`` in ``book`` and say what was found.

    Raises:
        KbContractBroken: the result does not validate.
    """
    found = search_result(outcome)
    passages = book.add_hits(found.hits)
    if passages:
        body = f"Passages for {query!r}:\n\n" + "\n\n".join(p.for_model() for p in passages)
        summary = f"{len(passages)} passages: " + ", ".join(f"[{p.label}] {p.citation()}" for p in passages)
    elif found.empty:
        body = summary = EMPTY_KNOWLEDGE_BASE
    else:
        reason = found.reason or "no relevant passage"
        body = f"Nothing found in the documents for {query!r} ({reason})."
        summary = f"nothing found ({reason})"
    return SearchReading(passages, body, summary, empty=found.empty and not passages, abstained=found.abstained)
