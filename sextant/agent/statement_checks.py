"""The checks a statement the model writes passes before it reaches the answer, the trail of their verdicts, and
their tally for the answer's note.

The rules run in this order, each giving a typed ``Verdict`` (rule, passed, reason code) that the statement carries
in its ``trail`` (kept: ``AnswerStatement.trail``; removed: ``RemovedStatement.trail``, whose last verdict is the
one that removed it):

1. ``quote``: each quote looked up in the passage it names, among those the model was shown (``grounding``);
2. ``says``: the sentences a found quote stands in say what the statement claims (its numbers, half its words;
   a yes or no on its proposition);
3. ``own_words``: with no evidence, the statement's own text in a passage shown is its quote;
4. ``fact_sentence`` (``quotes="facts"``): evidence that does not hold every word the statement adds gives way to
   the one sentence that does;
5. ``supported``: the decision on 1-4: kept with its evidence, an abstention ("the documents do not say"), kept
   and marked (``unsupported="mark"``), or removed;
6. ``answer_kind``: a question after a quantity needs a number (``answer_type``);
7. ``answer_check``: the checker model reads the evidence sentences and the question (``answer_check``); a check
   that cannot be made keeps the statement.

A kept statement is streamed at once with its evidence; a removed one is recorded as the model wrote it. ``replay``
checks a recorded statement again, for the evaluation's rule table and the regression fixture.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol

from sextant.agent.answer_check import KEEP_AT, AnswerCheck
from sextant.agent.answer_type import asks_for_quantity, holds_a_number
from sextant.agent.events import (
    AgentEvent,
    AnswerStatement,
    CitationEvent,
    Reason,
    RemovedStatement,
    StatementEvent,
    TokenEvent,
    Verdict,
    WrittenQuote,
)
from sextant.agent.grounding import QuoteMatch, Unsupported, check_statement, render
from sextant.agent.passages import Passage, PassageBook
from sextant.llm.chat import ModelError, Statement

log = logging.getLogger(__name__)


@dataclass
class StatementTally:
    """What the checks did over one run: the statements kept, and what the answer's verification reports."""

    statements: list[AnswerStatement] = field(default_factory=list)
    quotes: int = 0
    quotes_found: int = 0
    answer_checks: int = 0
    removed: list[RemovedStatement] = field(default_factory=list)  # by either check, as the model wrote them

    @property
    def unsourced(self) -> list[str]:
        """Statements dropped because no quote was found in a passage shown."""
        return [r.text for r in self.removed if r.check == "quote"]

    @property
    def not_answering(self) -> list[str]:
        """Statements kept by the quote check and dropped by the answer check."""
        return [r.text for r in self.removed if r.check == "answer"]

    def note(self) -> str:
        """The verification's note: how many quotes were found, and how many statements did not answer."""
        if not self.quotes:
            note = "statements are kept only where their quotes stand in the passages they cite"
        else:
            note = (
                f"{self.quotes_found} of {self.quotes} quotes found in the passages they named; the rest were removed"
            )
        if self.answer_checks:
            gone, why = len(self.not_answering), "because their sentences do not answer the question"
            note += f"; {gone} of {self.answer_checks} statements removed {why}"
        return note


class CheckedRun(Protocol):
    """What the checks read of the run in progress, and the tally they add to."""

    question: str
    book: PassageBook
    shown: set[int]
    tally: StatementTally


@dataclass(frozen=True)
class StatementChecks:
    """The checks as the loop's settings configure them."""

    unsupported: Unsupported = "drop"
    quotes: QuoteMatch = "facts"
    answer_check: AnswerCheck | None = None

    async def check(self, run: CheckedRun, statement: Statement) -> list[AgentEvent]:
        """Check one statement's quotes, then whether it answers; a kept one's events, to stream at once."""
        tally = run.tally
        checked = check_statement(
            statement, run.book, run.shown, self.unsupported, question=run.question, quotes=self.quotes
        )
        tally.quotes += checked.quotes
        tally.quotes_found += checked.found
        trail = list(checked.trail)
        if checked.statement is None:
            if not checked.abstains:
                tally.removed.append(_removed(statement, "quote", trail))
            return []
        kept = checked.statement
        if kept.supported and not await self._answers(run, kept, trail):
            tally.removed.append(_removed(statement, "answer", trail))
            return []
        kept = kept.model_copy(update={"trail": trail})
        events: list[AgentEvent] = [
            TokenEvent(text=render(kept, first=not tally.statements)),
            *(CitationEvent(label=e.label, valid=True) for e in kept.evidence),
            StatementEvent(index=len(tally.statements), statement=kept),
        ]
        tally.statements.append(kept)
        return events

    async def _answers(self, run: CheckedRun, statement: AnswerStatement, trail: list[Verdict]) -> bool:
        """Rules ``answer_kind`` and ``answer_check``: whether ``statement`` answers, their verdicts added to
        ``trail``. The kind of answer the question asks for (a number for "how many"), then the answer check's
        reading; a model check that cannot be made keeps the statement."""
        if not asks_for_quantity(run.question):
            trail.append(Verdict(rule="answer_kind", passed=True, reason="not_a_quantity_question"))
        elif holds_a_number(statement.text):
            trail.append(Verdict(rule="answer_kind", passed=True, reason="holds_a_number"))
        else:
            trail.append(Verdict(rule="answer_kind", passed=False, reason="no_number"))
            run.tally.answer_checks += 1
            return False
        if self.answer_check is None:
            return True
        try:
            probability = await self.answer_check.probability(run.question, statement, run.book)
        except ModelError as exc:
            log.warning("answer check skipped: %s", exc)
            trail.append(Verdict(rule="answer_check", passed=True, reason="unavailable", detail=str(exc)[:200]))
            return True
        run.tally.answer_checks += 1
        answers = probability >= KEEP_AT
        reason: Reason = "answers" if answers else "does_not_answer"
        detail = f"P(yes) = {probability:.3f}"
        trail.append(Verdict(rule="answer_check", passed=answers, reason=reason, detail=detail, score=probability))
        return answers


def _removed(statement: Statement, check: Literal["quote", "answer"], trail: list[Verdict]) -> RemovedStatement:
    quotes = [WrittenQuote(label=q.label, quote=q.text) for q in statement.quotes]
    return RemovedStatement(text=statement.text, quotes=quotes, check=check, trail=trail)


@dataclass
class _Replay:
    """A run of one recorded statement: the question, the passages it was shown, a tally of its own."""

    question: str
    book: PassageBook
    shown: set[int]
    tally: StatementTally = field(default_factory=StatementTally)


@dataclass(frozen=True)
class Replayed:
    """A recorded statement's fate under today's checks; an abstaining statement ("the documents do not say") is
    neither kept nor removed, and has no trail."""

    kept: bool
    trail: list[Verdict]


async def replay(question: str, passages: Mapping[int, str], statement: Statement, checks: StatementChecks) -> Replayed:
    """Check ``statement`` again as the loop would, over ``passages`` (label to text: what it was shown).

    The one replay of the checks: ``bench/check_replay.py``, the evaluation's rule table
    (``sextant.evals.rule_effects``) and the regression fixture of recorded statements
    (``tests/agent/test_recorded_statements.py``) all call it.
    Passages are known here by their text alone (no title or page), which only the answer check's model reads:
    a replay gives it the verdict recorded with the statement."""
    book = PassageBook(Passage(label=label, title="", text=text) for label, text in passages.items())
    run = _Replay(question, book, set(passages))
    await checks.check(run, statement)
    if run.tally.statements:
        return Replayed(True, run.tally.statements[0].trail)
    if run.tally.removed:
        return Replayed(False, run.tally.removed[0].trail)
    return Replayed(False, [])


def trail_line(trail: list[Verdict]) -> str:
    """A trail on one line: "quote [1] found; supported evidence; answer_check answers (P(yes) = 0.912)"."""
    parts = []
    for verdict in trail:
        where = f" [{verdict.label}]" if verdict.label is not None else ""
        detail = f" ({verdict.detail})" if verdict.detail else ""
        parts.append(f"{verdict.rule}{where} {verdict.reason.replace('_', ' ')}{detail}")
    return "; ".join(parts)
