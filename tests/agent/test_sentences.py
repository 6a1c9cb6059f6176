"""Passages cut into quotable sentences, and the sentences that best match a question."""

from __future__ import annotations

from sextant.agent.sentences import (
    MAX_SENTENCE_CHARS,
    Sentence,
    answer_terms,
    candidates,
    distinct,
    rank,
    readable,
    split,
    terms,
)


def texts(sentences: list[Sentence]) -> list[str]:
    return [s.text for s in sentences]


def test_a_pdf_hard_wrap_inside_a_paragraph_does_not_split() -> None:
    text = "Descale the machine\nevery three months with\ncitric acid. Rinse twice."
    assert texts(split(1, text)) == ["Descale the machine every three months with citric acid.", "Rinse twice."]


def test_paragraph_breaks_split_and_headings_are_left_out() -> None:
    text = "# Cleaning\n\nDescale the machine monthly\n\n## Water\n\nUse filtered water always"
    assert texts(split(1, text)) == ["Descale the machine monthly", "Use filtered water always"]


def test_list_items_and_table_rows_are_units_of_their_own() -> None:
    text = (
        "Steps to follow\n- rinse the portafilter\n- wipe the steam wand\n| water | 93 degrees |\n| dose | 18 grams |"
    )
    assert texts(split(1, text)) == [
        "Steps to follow",
        "- rinse the portafilter",
        "- wipe the steam wand",
        "| water | 93 degrees |",
        "| dose | 18 grams |",
    ]


def test_offsets_are_exact_in_the_passage_s_characters() -> None:
    text = "  ## Intro\n\n  Brew at 93 degrees.\nThen wait\n30 seconds!  Done here now.\n"
    sentences = split(7, text)
    assert texts(sentences) == ["Brew at 93 degrees.", "Then wait 30 seconds!", "Done here now."]
    for sentence in sentences:
        assert sentence.label == 7
        assert " ".join(text[sentence.start : sentence.end].split()) == sentence.text
        assert text[sentence.start : sentence.end] == text[sentence.start : sentence.end].strip()
    assert text[sentences[1].start : sentences[1].end] == "Then wait\n30 seconds!"


def test_too_short_pieces_are_not_sentences() -> None:
    assert texts(split(1, "Yes. No. Descale the machine.")) == ["Descale the machine."]


def test_rare_question_words_weigh_more() -> None:
    sentences = [
        *split(1, "The espresso machine is heavy."),
        *split(2, "The espresso machine is red."),
        *split(3, "The espresso machine needs descaling monthly."),
        *split(4, "Descaling is a chore for everyone."),
        *split(5, "Espresso is served hot."),
    ]
    ranked = rank("How often should the espresso machine be descaled?", sentences)
    assert ranked[0].sentence.label == 3  # holds both the shared words and the rare one
    # "descal" (2 sentences) is rarer than "espresso" (4): holding only it scores more than holding only that.
    score = {r.sentence.label: r.score for r in ranked}
    assert score[4] > score[5] > 0
    assert all(0.0 <= r.coverage <= 1.0 for r in ranked)
    assert ranked[0].coverage == max(r.coverage for r in ranked) < 1.0  # "often" is in no sentence


def test_a_question_of_only_stopwords_ranks_nothing() -> None:
    sentences = split(1, "Descale the machine monthly.")
    assert [(r.score, r.coverage) for r in rank("what is it?", sentences)] == [(0.0, 0.0)]


def test_candidates_put_each_passage_s_best_first_within_the_limit_in_reading_order() -> None:
    passages = [
        (1, "Grind coffee finely for espresso. Espresso dose is 18 grams of coffee. The hopper holds beans."),
        (2, "Tamp the espresso firmly. Clean the group head daily."),
        (3, "Sourdough needs a starter fed twice daily."),
    ]
    picked = candidates("espresso coffee dose grams", passages, limit=2)
    # Passage 1's best sentence and passage 2's best, before passage 1's second best.
    assert texts(picked) == ["Espresso dose is 18 grams of coffee.", "Tamp the espresso firmly."]
    more = candidates("espresso coffee dose grams", passages, limit=10)
    assert texts(more) == [
        "Grind coffee finely for espresso.",
        "Espresso dose is 18 grams of coffee.",
        "Tamp the espresso firmly.",
    ]  # zero-overlap sentences (the hopper, the group head, sourdough) are left out
    assert candidates("espresso", passages, limit=0) == []


def test_candidates_keep_every_sentence_when_none_shares_a_word() -> None:
    passages = [(1, "Tamp the coffee firmly. Clean the group head."), (2, "Sourdough needs a starter.")]
    picked = candidates("lattice chromodynamics", passages, limit=10)
    assert texts(picked) == ["Tamp the coffee firmly.", "Clean the group head.", "Sourdough needs a starter."]


def test_table_rows_are_units_and_a_step_keeps_its_number() -> None:
    text = "Table 1: Caps\nCity | Cap\nHamburg | 170 EUR\n\n1. Mix the flour. Then rest it."
    assert [s.text for s in split(1, text)] == [
        "Table 1: Caps",
        "City | Cap",
        "Hamburg | 170 EUR",
        "1. Mix the flour.",
        "Then rest it.",
    ]


def test_questions_and_one_word_lines_are_not_quotable() -> None:
    text = "Descaling\n\nHow often should you descale? Every two months in hard water."
    assert [s.text for s in split(1, text)] == ["Every two months in hard water."]


def test_answer_terms_keep_the_function_words_an_answer_can_be_and_terms_do_not() -> None:
    text = "The default value is evaluated only once, not twice."
    assert terms(text) == ["default", "valu", "evaluat", "twic"]
    assert answer_terms(text) == ["default", "valu", "evaluat", "only", "once", "not", "twic"]


def test_i_e_and_e_g_do_not_end_a_sentence() -> None:
    text = "I will only talk about INET (i.e. IPv4) sockets. Use a flag, e.g. The verbose one."
    assert texts(split(1, text)) == [
        "I will only talk about INET (i.e. IPv4) sockets.",
        "Use a flag, e.g. The verbose one.",
    ]


def test_a_sentence_ending_in_a_colon_is_one_with_what_it_introduces() -> None:
    text = "Run the venv module with the directory path::\n\n   python3 -m venv tutorial-env\n\nThen activate it."
    first, second = split(1, text)
    assert first.text == "Run the venv module with the directory path:: python3 -m venv tutorial-env"
    assert (
        text[first.start : first.end]
        == "Run the venv module with the directory path::\n\n   python3 -m venv tutorial-env"
    )
    assert second.text == "Then activate it."


def test_a_list_or_table_under_a_colon_stays_rows_and_a_long_pair_stays_apart() -> None:
    listed = "The modules left out:\n- curses\n- readline module\n\nCaps by city:\n\nCity | Cap"
    assert texts(split(1, listed)) == ["The modules left out:", "- readline module", "Caps by city:", "City | Cap"]
    long = "word " * (MAX_SENTENCE_CHARS // 5 - 2)  # quotable alone, too long beside the colon's sentence
    apart = f"Run this command:\n\n{long}"
    assert texts(split(1, apart)) == ["Run this command:", long.strip()]


def test_a_sentence_two_overlapping_passages_share_is_read_once_under_the_first() -> None:
    passages = [(1, "Grind finely. Dose 18 grams of coffee."), (2, "Dose 18 grams of coffee. Tamp firmly.")]
    assert [(s.label, s.text) for s in distinct(passages)] == [
        (1, "Grind finely."),
        (1, "Dose 18 grams of coffee."),
        (2, "Tamp firmly."),
    ]
    assert texts(candidates("coffee dose", passages, limit=10)) == ["Dose 18 grams of coffee."]


def test_units_short_or_long_and_either_spelling_are_one_term() -> None:
    assert terms("10 g, 2%, 5 km, 20 min") == terms("10 grams, 2 percent, 5 kilometers, 20 minutes")
    assert terms("3 litres") == terms("3 liters") and terms("I'm sure") == ["m", "sure"]


def test_units_after_a_number_are_units_and_elsewhere_words() -> None:
    assert terms("540 m in 4.5 h, 30 s") == terms("540 metres in 4.5 hours, 30 seconds")
    assert "metre" not in terms("I'm here") and "second" not in terms("it's here")


STAGES = (
    "Table 1: Stages of the coastal path\n| Stage | Distance | Total ascent |\n| 1 | 16 km | 310 m |\n"
    "| 2 | 13 km | 540 m |\n\nThe path is waymarked."
)


def test_a_table_row_says_what_its_header_names_its_cells() -> None:
    sentences = split(1, STAGES)
    assert [(s.text, s.header) for s in sentences] == [
        ("Table 1: Stages of the coastal path", ""),
        ("| Stage | Distance | Total ascent |", ""),
        ("| 1 | 16 km | 310 m |", "| Stage | Distance | Total ascent |"),
        ("| 2 | 13 km | 540 m |", "| Stage | Distance | Total ascent |"),
        ("The path is waymarked.", ""),
    ]
    assert sentences[3].said == "| Stage | Distance | Total ascent |\n| 2 | 13 km | 540 m |"
    assert sentences[4].said == sentences[4].text


def test_a_markdown_separator_row_is_no_sentence_and_no_header() -> None:
    text = "| City | Cap |\n| --- | :---: |\n| Hamburg | 170 EUR |"
    assert [(s.text, s.header) for s in split(1, text)] == [
        ("| City | Cap |", ""),
        ("| Hamburg | 170 EUR |", "| City | Cap |"),
    ]


def test_a_row_ranks_by_its_header_and_is_read_after_it_once() -> None:
    question = "What is the total ascent of stage 2?"
    best = rank(question, split(1, STAGES))[0].sentence
    assert best.text == "| 2 | 13 km | 540 m |"
    rows = [s for s in split(1, STAGES) if s.header]
    assert readable(rows) == ["| Stage | Distance | Total ascent |", "| 1 | 16 km | 310 m |", "| 2 | 13 km | 540 m |"]
