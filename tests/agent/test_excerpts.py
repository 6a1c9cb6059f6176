from __future__ import annotations

from sextant.agent.excerpts import excerpt_answer
from sextant.agent.passages import Passage


def passage(label: int, text: str) -> Passage:
    return Passage(label=label, title="Sourdough", page_label="4", section="Starter", text=text)


def test_excerpts_say_what_they_are_and_cite_each_passage() -> None:
    text = excerpt_answer([passage(1, "Feed the starter twice a day."), passage(2, "Bake at 240 degrees.")], "no model")
    assert text.startswith("**Excerpts, not a written answer** (no model).")
    assert "> Feed the starter twice a day. [1]\n>\n> — Sourdough, p. 4, Starter" in text
    assert "Bake at 240 degrees. [2]" in text


def test_a_passage_that_starts_like_a_markdown_block_stays_text() -> None:
    for start in ("## Making a starter", "- flour", "1. Mix", "| a | b |", "> quoted"):
        text = excerpt_answer([passage(1, start + " and more words")], "no model")
        assert f"> \\{start} and more words [1]" in text


def test_long_passages_are_cut_at_a_word_and_nothing_found_is_said() -> None:
    text = excerpt_answer([passage(1, "word " * 200)], "no model")
    quoted = text.split("\n\n")[1]
    assert quoted.endswith("… [1]\n>\n> — Sourdough, p. 4, Starter") and len(quoted) < 500
    assert "Nothing in the documents matches" in excerpt_answer([], "no model")
