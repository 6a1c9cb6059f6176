"""The checks a written statement passes to reach the answer, and their tally, without a loop or a model."""

from __future__ import annotations

from dataclasses import dataclass, field

from sextant.agent.answer_check import AnswerCheck
from sextant.agent.events import CitationEvent, StatementEvent, TokenEvent, Verdict
from sextant.agent.passages import Passage, PassageBook
from sextant.agent.statement_checks import StatementChecks, StatementTally
from sextant.llm.chat import ModelError, Quote, Statement
from sextant.llm.scripted import ScriptedYesNo

BREW = "Brew espresso with water at 93 degrees Celsius."
BOOK = PassageBook([Passage(label=1, title="Espresso guide", text=f"{BREW} A double shot uses 18 grams of coffee.")])


@dataclass
class Run:
    question: str
    book: PassageBook = BOOK
    shown: set[int] = field(default_factory=lambda: {1})
    tally: StatementTally = field(default_factory=StatementTally)


def quoted(text: str, words: str, label: int = 1) -> Statement:
    return Statement(text, (Quote(label, words),))


async def test_a_statement_whose_quote_stands_in_a_shown_passage_is_kept_with_its_evidence() -> None:
    run = Run("How hot should espresso water be?")
    events = await StatementChecks().check(run, quoted("Brew at 93 degrees.", BREW))
    assert [type(e) for e in events] == [TokenEvent, CitationEvent, StatementEvent]
    assert [s.text for s in run.tally.statements] == ["Brew at 93 degrees."]
    assert (run.tally.quotes, run.tally.quotes_found, run.tally.removed) == (1, 1, [])
    assert run.tally.note() == "1 of 1 quotes found in the passages they named; the rest were removed"
    assert trail(run.tally.statements[0].trail) == [
        ("quote", True, "found"),
        ("supported", True, "evidence"),
        ("answer_kind", True, "holds_a_number"),  # "how hot" asks for a measure
    ]


async def test_a_quote_not_found_or_in_a_passage_not_shown_removes_the_statement_as_unsourced() -> None:
    run = Run("How hot?", shown=set())
    assert await StatementChecks().check(run, quoted("Brew at 93 degrees.", BREW)) == []
    assert await StatementChecks().check(Run("How hot?", tally=run.tally), quoted("At 99.", "water at 99")) == []
    assert run.tally.unsourced == ["Brew at 93 degrees.", "At 99."] and run.tally.statements == []
    assert [r.quotes[0].quote for r in run.tally.removed] == [BREW, "water at 99"]
    # Each removal says which rule removed it and why: the label was not shown; the words are nowhere.
    nowhere = [("own_words", False, "nowhere"), ("fact_sentence", False, "no_sentence_holds_it")]
    assert [trail(r.trail) for r in run.tally.removed] == [
        [("quote", False, "label_not_shown"), *nowhere, ("supported", False, "no_evidence")],
        [("quote", False, "not_in_passage"), *nowhere, ("supported", False, "no_evidence")],
    ]


async def test_a_statement_not_of_the_kind_asked_is_removed_before_the_checker_is_asked() -> None:
    checker = ScriptedYesNo([])
    run = Run("How many grams of coffee does a double shot use?")
    checks = StatementChecks(answer_check=AnswerCheck(checker))
    assert await checks.check(run, quoted("A double shot uses coffee.", "A double shot uses 18 grams")) == []
    assert run.tally.not_answering == ["A double shot uses coffee."] and checker.questions == []
    assert trail(run.tally.removed[0].trail)[-1] == ("answer_kind", False, "no_number")
    assert run.tally.note().endswith("; 1 of 1 statements removed because their sentences do not answer the question")


async def test_the_checker_s_verdict_decides_and_a_check_that_cannot_be_made_keeps_the_statement() -> None:
    run = Run("How hot should espresso water be?")
    checks = StatementChecks(answer_check=AnswerCheck(ScriptedYesNo([0.1, ModelError("too long")])))
    assert await checks.check(run, quoted("Brew at 93 degrees.", BREW)) == []
    assert await checks.check(run, quoted("Brew at 93 degrees.", BREW)) != []
    assert run.tally.not_answering == ["Brew at 93 degrees."] and len(run.tally.statements) == 1
    assert run.tally.answer_checks == 1  # the check that could not be made is not counted
    removed = run.tally.removed[0].trail[-1]
    assert (removed.rule, removed.passed, removed.reason, removed.detail) == (
        "answer_check",
        False,
        "does_not_answer",
        "P(yes) = 0.100",
    )
    unavailable = run.tally.statements[0].trail[-1]
    assert (unavailable.rule, unavailable.passed, unavailable.reason) == ("answer_check", True, "unavailable")


def trail(verdicts: list[Verdict]) -> list[tuple[str, bool, str]]:
    return [(v.rule, v.passed, v.reason) for v in verdicts]
