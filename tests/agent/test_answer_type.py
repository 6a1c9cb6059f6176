"""The kind of answer a question asks for: a question after a quantity is answered only with a number."""

from __future__ import annotations

import pytest

from sextant.agent.answer_type import asks_for_quantity, holds_a_number


@pytest.mark.parametrize(
    "question",
    [
        "How many slug nematodes per square metre should be watered onto the soil?",
        "How much salt goes into the loaf?",
        "How long is security camera footage kept?",
        "How often should brake cables be replaced?",
        "What rear tyre pressure is suggested for 32 mm commuting tyres?",
        "What torque should a thru-axle be tightened to?",
        "What share of my pay does Quillfeather put into my pension?",
        "Which water temperature should I use for oolong?",
        "In which year was the first edition published?",
    ],
)
def test_questions_after_a_quantity(question: str) -> None:
    assert asks_for_quantity(question)


@pytest.mark.parametrize(
    "question",
    [
        "What length requirement applies to vectors used as variables of a data frame?",
        "How do I break in new disc brake pads?",
        "Which espresso machines must never be backflushed?",
        "Who gives the second approval for an expense claim?",
        "What does the wheel tag py3-none-any mean?",
        "When should I descale the machine?",
    ],
)
def test_questions_after_anything_else(question: str) -> None:
    assert not asks_for_quantity(question)


def test_a_quantity_is_digits_a_number_word_a_count_a_frequency_or_a_span_of_time() -> None:
    question = "How often should the machine be descaled?"
    for statement in (
        "Every 2 months.",
        "Every two months.",
        "Twice a year.",
        "Weekly.",
        "Fourteen of them.",
        "A week.",
    ):
        assert asks_for_quantity(question) and holds_a_number(statement)
    assert not holds_a_number("Descale it with citric acid.")
    assert not asks_for_quantity("What does the wheel tag mean?")  # any statement is its kind of answer
