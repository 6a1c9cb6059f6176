"""When to say the corpus has no answer rather than cite the least-bad passage.

The rule: abstain when the best cosine among the candidates is below ``min_dense``; between
``min_dense`` and ``confident_dense``, abstain too unless some content word of the query occurs in
the top passages. Thresholds are calibrated on ``eval/golden.jsonl`` (see learning/abstention.md).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class AbstentionRule:
    """Thresholds on the best dense cosine, with matched query terms as the tie-breaker."""

    min_dense: float = 0.25
    confident_dense: float = 0.45

    def decide(self, best_dense: float, matched_terms: int) -> tuple[bool, str]:
        """``(abstain, reason)`` for a query whose best candidate scored ``best_dense``."""
        if best_dense < self.min_dense:
            return True, (
                f"abstained: the closest passage has cosine {best_dense:.2f}, below {self.min_dense:.2f}; "
                "the knowledge base does not seem to cover this question"
            )
        if best_dense < self.confident_dense and matched_terms == 0:
            return True, (
                f"abstained: the closest passage has cosine {best_dense:.2f} and shares no content word "
                "with the question"
            )
        return False, f"best passage cosine {best_dense:.2f}, {matched_terms} query words matched"
