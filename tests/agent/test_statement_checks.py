"""The checks a written statement passes to reach the answer, and their tally, without a loop or a model; and the
statements the 1.5B writer wrote in recorded runs, replayed (``recorded_statements.jsonl``, made by
``bench/check_replay.py --fixture`` from ``sextant-eval-agent`` runs over the golden and Python documentation sets)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from sextant.agent.answer_check import AnswerCheck
from sextant.agent.events import CitationEvent, StatementEvent, TokenEvent, Verdict
from sextant.agent.passages import Passage, PassageBook
from sextant.agent.statement_checks import StatementChecks, StatementTally, replay
from sextant.llm.chat import ModelError, Quote, Statement
from sextant.llm.scripted import ScriptedYesNo

RECORDED = [
    json.loads(line)
    for line in Path(__file__).with_name("recorded_statements.jsonl").read_text(encoding="utf-8").splitlines()
]
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


@pytest.mark.parametrize("row", RECORDED, ids=lambda r: f"{r['id']}-{'kept' if r['kept'] else 'removed'}")
async def test_a_recorded_statement_meets_the_same_fate_by_the_same_verdicts(row: dict[str, Any]) -> None:
    statement = Statement(row["text"], tuple(Quote(label, words) for label, words in row["quotes"]))
    # The answer check's model is not run: its recorded P(yes) is given again.
    checks = StatementChecks(answer_check=AnswerCheck(ScriptedYesNo([row["p_yes"]])))
    passages = {int(label): text for label, text in row["passages"].items()}
    replayed = await replay(row["question"], passages, statement, checks)
    assert replayed.kept == row["kept"]
    assert [v.model_dump(exclude_defaults=True) for v in replayed.trail] == row["trail"]


def test_the_recorded_statements_cover_every_rule_that_decided_one_and_every_tolerance_that_kept_one() -> None:
    deciding = {(r["kept"], r["trail"][-1]["rule"], r["trail"][-1]["reason"]) for r in RECORDED}
    assert {
        (True, "answer_check", "answers"),
        (False, "supported", "no_evidence"),
        (False, "answer_kind", "no_number"),
        (False, "answer_check", "does_not_answer"),
    } <= deciding
    passed = {(v["rule"], v["reason"]) for r in RECORDED if r["kept"] for v in r["trail"] if v["passed"]}
    assert {("quote", "found_by_run"), ("own_words", "in_passage"), ("fact_sentence", "holds_every_word")} <= passed
