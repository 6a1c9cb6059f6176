"""The answer check: a statement whose quote is found still goes when its sentences do not answer the question."""

from __future__ import annotations

from sextant.agent.answer_check import KEEP_AT, AnswerCheck, answer_check_for, evidence_text, places
from sextant.agent.events import AnswerStatement, Evidence
from sextant.agent.passages import Passage, PassageBook
from sextant.llm.factory import ModelChoice
from sextant.llm.scripted import ScriptedYesNo

DESCALE = "Descale the machine\nevery three months. Use citric acid. Rinse the tank weekly."
BOOK = PassageBook(
    [
        Passage(label=1, title="Manual", text=DESCALE),
        Passage(label=2, title="Manual", text="Filtered water slows scale."),
    ]
)


def statement(*spans: tuple[int, int, int]) -> AnswerStatement:
    evidence = []
    for label, start, end in spans:
        passage = BOOK.get(label)
        assert passage is not None
        evidence.append(Evidence.at(label, passage.text, start, end))
    return AnswerStatement(text="Descale every three months.", evidence=evidence, supported=True)


def test_the_model_reads_the_whole_sentences_the_evidence_stands_in_reflowed_each_once() -> None:
    words = DESCALE.index("every three")
    both = statement((1, words, words + 11), (1, 0, 7), (2, 0, 8))
    assert evidence_text(both, BOOK) == "Descale the machine every three months. Filtered water slows scale."


def test_a_table_row_is_read_under_its_header() -> None:
    text = "Total | First approver | Second approver\nOver 100 | Manager | Director"
    table = PassageBook([Passage(label=1, title="Policy", text=text)])
    evidence = [Evidence.at(1, text, text.index("Over"), len(text))]
    row = AnswerStatement(text="The Director.", evidence=evidence, supported=True)
    assert evidence_text(row, table) == text


def test_evidence_in_a_passage_the_book_does_not_hold_is_left_out() -> None:
    held = statement((1, 0, 7))
    held.evidence.append(Evidence(label=9, quote="Elsewhere", start=0, end=9))
    assert evidence_text(held, BOOK) == "Descale the machine every three months."


def test_the_place_names_each_cited_passage_once_in_citation_order() -> None:
    book = PassageBook(
        [
            Passage(label=1, title="Manual", text=DESCALE, page=4, section="Care"),
            Passage(label=2, title="Water guide", text="Filtered water slows scale."),
        ]
    )
    evidence = [Evidence.at(2, "Filtered water slows scale.", 0, 8), Evidence.at(1, DESCALE, 0, 7)]
    twice = AnswerStatement(
        text="Descale.", evidence=[*evidence, Evidence.at(2, "Filtered water slows scale.", 9, 14)], supported=True
    )
    assert places(twice, book) == "Water guide; Manual, p. 4, Care"


async def test_the_check_gives_the_model_s_probability_of_yes_for_the_evidence_sentences() -> None:
    model = ScriptedYesNo([KEEP_AT, 0.49])
    check = AnswerCheck(model)
    assert await check.probability("How often do I descale?", statement((1, 0, 7)), BOOK) >= KEEP_AT
    assert await check.probability("Which descaler brand?", statement((1, 0, 7)), BOOK) < KEEP_AT
    assert model.questions[0].startswith("Text: From Manual: Descale the machine every three months.\n\n")
    assert model.questions[0].endswith(
        "Question: How often do I descale?\n\nDoes the text give the answer to this question? Reply yes or no."
    )


def test_only_a_choice_with_a_checker_checks() -> None:
    assert answer_check_for(ModelChoice(None, "none", "no model")) is None
    check = answer_check_for(ModelChoice(None, "local", "local", ScriptedYesNo([])))
    assert check is not None and check.model.name == "scripted-yes-no"
