from __future__ import annotations

from sextant.agent.events import AnswerStatement, Evidence
from sextant.agent.excerpts import EXCERPT_SENTENCES, excerpt_answer, excerpt_statements
from sextant.agent.passages import Passage
from sextant.agent.sentences import MAX_SENTENCE_CHARS


def passage(label: int, text: str) -> Passage:
    return Passage(label=label, title="Sourdough", page_label="4", section="Starter", text=text)


def excerpts(question: str, *passages: Passage) -> str:
    return excerpt_answer(excerpt_statements(question, passages), passages, "no model")


def test_excerpts_say_what_they_are_and_cite_each_passage() -> None:
    text = excerpts(
        "How often do I feed the starter, and how hot do I bake?",
        passage(1, "Feed the starter twice a day."),
        passage(2, "Bake at 240 degrees when hot."),
    )
    assert text.startswith("**Excerpts, not a written answer** (no model).")
    assert "> Feed the starter twice a day. [1]\n>\n> — Sourdough, p. 4, Starter" in text
    assert "Bake at 240 degrees when hot. [2]" in text


def test_each_excerpt_is_a_sentence_quoted_with_its_exact_span() -> None:
    text = "## Feeding\n\nKeep it warm. Feed the starter\ntwice a day with rye flour. Bake later."
    [statement] = excerpt_statements("How often should I feed the starter?", [passage(3, text)])
    assert statement.text == "Feed the starter twice a day with rye flour."
    [evidence] = statement.evidence
    assert evidence.label == 3 and statement.supported
    assert text[evidence.start : evidence.end] == evidence.quote == "Feed the starter\ntwice a day with rye flour."


def test_only_the_best_sentences_that_share_the_question_s_words() -> None:
    sentences = " ".join(f"Starter note {i} on feeding." for i in range(EXCERPT_SENTENCES + 3))
    chosen = excerpt_statements(
        "starter feeding", [passage(1, sentences), passage(2, "Espresso wants 18 grams of coffee.")]
    )
    assert len(chosen) == EXCERPT_SENTENCES
    assert all(s.evidence[0].label == 1 for s in chosen)


def test_a_passage_that_starts_like_a_markdown_block_stays_text() -> None:
    for start in ("- flour", "| a | b |", "> quoted"):
        text = excerpts("which words?", passage(1, start + " and more words"))
        assert f"> \\{start} and more words [1]" in text
    statement = AnswerStatement(
        text="# Not a heading here", evidence=[Evidence(label=1, quote="x", start=0, end=1)], supported=True
    )
    assert "> \\# Not a heading here [1]" in excerpt_answer([statement], [passage(1, "x")], "no model")


def test_a_table_row_is_quoted_under_its_header_and_its_span_is_the_row() -> None:
    table = "| Stage | Total ascent |\n| 1 | 310 m |\n| 2 | 540 m |"
    [statement, *_] = excerpt_statements("What is the total ascent of stage 2?", [passage(1, table)])
    assert statement.text == "| Stage | Total ascent |\n| 2 | 540 m |"
    assert statement.evidence[0].quote == "| 2 | 540 m |"
    text = excerpt_answer([statement], [passage(1, table)], "no model")
    assert "> \\| Stage | Total ascent |\n>\n> \\| 2 | 540 m | [1]\n" in text


def test_headings_and_over_long_sentences_are_not_excerpts_and_nothing_found_is_said() -> None:
    long = passage(1, "starter " * (MAX_SENTENCE_CHARS // 8 + 10))
    heading = passage(2, "## Making a starter")
    assert excerpt_statements("starter", [long, heading]) == []
    assert "Nothing in the documents matches" in excerpts("starter", long, heading)
    assert "Nothing in the documents matches" in excerpt_answer([], [], "no model")
    assert excerpt_statements("espresso grams", [passage(1, "Feed the starter twice a day.")]) == []


def test_a_sentence_overlapping_passages_share_is_one_excerpt() -> None:
    shared = "Feed the starter twice a day."
    chosen = excerpt_statements("feed the starter", [passage(1, shared), passage(2, f"{shared} Keep it warm.")])
    assert [(s.text, s.evidence[0].label) for s in chosen] == [(shared, 1)]
