"""The deterministic half of answer judging: do the citations resolve, and does an abstention say so?

Needs no model. Every ``[n]`` in an answer must name a passage that was shown to the model; every
sentence that states something should carry one. The model-graded half (is each claim supported by
its passage) is wired by the agent server.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from sextant.agent.citations import claims_in, labels_in, says_not_answered


@dataclass(frozen=True, slots=True)
class CitationReport:
    """What the citation check found in one answer."""

    cited: list[int]
    unresolved: list[int] = field(default_factory=list)
    uncited_sentences: list[str] = field(default_factory=list)
    abstained: bool = False

    @property
    def ok(self) -> bool:
        """Every citation resolves and every claim is cited (an abstention needs no citation)."""
        return not self.unresolved and (self.abstained or not self.uncited_sentences)


def check_citations(answer: str, shown: Mapping[int, str]) -> CitationReport:
    """Check ``answer`` against the passages ``shown`` to the model, keyed by their number."""
    cited = sorted(set(labels_in(answer)))
    unresolved = [n for n in cited if n not in shown]
    abstained = says_not_answered(answer) and not cited
    uncited = [s for s in claims_in(answer) if not labels_in(s) and _states_something(s)]
    return CitationReport(cited=cited, unresolved=unresolved, uncited_sentences=uncited, abstained=abstained)


def _states_something(sentence: str) -> bool:
    """A sentence that makes a claim: not a heading, a question, or a bare list marker."""
    words = re.findall(r"[A-Za-z]+", sentence)
    return len(words) >= 4 and not sentence.endswith("?") and not sentence.endswith(":")
