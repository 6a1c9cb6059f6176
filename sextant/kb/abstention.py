"""When to say the corpus has no answer rather than cite the least-bad passage.

The rule: abstain when the best cosine between the query and any candidate passage is below
``min_dense``. Calibrated on ``eval/golden.jsonl`` and ``eval/golden-large.jsonl`` (see
learning/abstention.md): 0.30 catches off-corpus questions with no answerable question lost.
Questions on a topic the corpus covers but a detail it lacks score like answerable ones; no
retrieval score separates them, so that judgement is left to the reader of the passages.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class AbstentionRule:
    """A threshold on the best dense cosine among the candidates."""

    min_dense: float = 0.30

    def decide(self, best_dense: float, matched_terms: int) -> tuple[bool, str]:
        """``(abstain, reason)`` for a query whose best candidate scored ``best_dense``."""
        if best_dense < self.min_dense:
            return True, (
                f"abstained: the closest passage has cosine {best_dense:.2f}, below {self.min_dense:.2f}; "
                "the knowledge base does not seem to cover this question"
            )
        return False, f"best passage cosine {best_dense:.2f}, {matched_terms} query words matched"
