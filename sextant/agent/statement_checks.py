"""The checks a statement the model writes passes before it reaches the answer, and their tally for the answer's note.

A statement is kept when its quotes stand in passages the model was shown (``grounding.check_statement``). One kept
as supported must then be the kind of answer the question asks for (``answer_type.answers_kind``: a number for
"how many") and, when an answer check is configured, answer the question by the checker model's verdict; a check
that cannot be made keeps the statement. A kept statement is streamed at once with its evidence; a removed one is
recorded as the model wrote it, with the check that removed it, for the answer's verification.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Literal, Protocol

from sextant.agent.answer_check import AnswerCheck
from sextant.agent.answer_type import answers_kind
from sextant.agent.events import (
    AgentEvent,
    AnswerStatement,
    CitationEvent,
    RemovedStatement,
    StatementEvent,
    TokenEvent,
    WrittenQuote,
)
from sextant.agent.grounding import QuoteMatch, Unsupported, check_statement, render
from sextant.agent.passages import PassageBook
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
        if checked.statement is None:
            if not checked.abstains:
                tally.removed.append(_removed(statement, "quote"))
            return []
        kept = checked.statement
        if kept.supported and not await self._answers(run, kept):
            tally.removed.append(_removed(statement, "answer"))
            return []
        events: list[AgentEvent] = [
            TokenEvent(text=render(kept, first=not tally.statements)),
            *(CitationEvent(label=e.label, valid=True) for e in kept.evidence),
            StatementEvent(index=len(tally.statements), statement=kept),
        ]
        tally.statements.append(kept)
        return events

    async def _answers(self, run: CheckedRun, statement: AnswerStatement) -> bool:
        """Whether ``statement`` answers: the kind of answer the question asks for (a number for "how many"),
        then the answer check's verdict; a model check that cannot be made keeps the statement."""
        if not answers_kind(run.question, statement.text):
            run.tally.answer_checks += 1
            return False
        if self.answer_check is None:
            return True
        try:
            answers = await self.answer_check.answers(run.question, statement, run.book)
        except ModelError as exc:
            log.warning("answer check skipped: %s", exc)
            return True
        run.tally.answer_checks += 1
        return answers


def _removed(statement: Statement, check: Literal["quote", "answer"]) -> RemovedStatement:
    quotes = [WrittenQuote(label=q.label, quote=q.text) for q in statement.quotes]
    return RemovedStatement(text=statement.text, quotes=quotes, check=check)
