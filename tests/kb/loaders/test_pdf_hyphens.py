"""Hyphens at line ends: each rule of the decision on hand-made vocabularies, then on a drawn PDF."""

from __future__ import annotations

import pymupdf

from sextant.kb.loaders import pdf
from sextant.kb.loaders.pdf_hyphens import Vocabulary, join_lines
from tests.kb.loaders.pdf_factory import new_page, to_bytes


def _vocabulary(*paragraphs: str) -> Vocabulary:
    return Vocabulary.of([paragraph.split("\n") for paragraph in paragraphs])


def test_without_a_vocabulary_every_candidate_is_joined_and_only_candidates() -> None:
    assert join_lines(["an exam-", "ple of it"]) == "an example of it"
    assert join_lines(["a well-", "known fact"]) == "a wellknown fact"
    assert join_lines(["pages 12-", "14 of the"]) == "pages 12-\n14 of the"
    assert join_lines(["the Smith-", "Jones law"]) == "the Smith-\nJones law"
    assert join_lines(["one", "two"]) == "one\ntwo"


def test_rule_1_the_joined_word_elsewhere_joins() -> None:
    words = _vocabulary("Keep a maintenance log.", "Each mainte nance step")  # halves as words too
    assert join_lines(["regular mainte-", "nance keeps it"], words) == "regular maintenance keeps it"


def test_rule_2_the_hyphenated_pair_elsewhere_keeps_the_hyphen() -> None:
    words = _vocabulary("Most entry-level machines lack a solenoid.")
    assert join_lines(["many entry-", "level models"], words) == "many entry-level models"
    # A pair inside a longer compound counts: "state-of-the-art" vouches for "the-art".
    words = _vocabulary("a state-of-the-art grinder")
    assert join_lines(["a state-of-the-", "art burr"], words) == "a state-of-the-art burr"


def test_rule_3_a_prefix_english_closes_up_joins() -> None:
    words = _vocabulary("the sub and the directory")
    assert join_lines(["the home sub-", "directory"], words) == "the home subdirectory"


def test_rule_4_a_break_between_two_words_keeps_the_hyphen() -> None:
    both = _vocabulary("The well is deep. It is known.")
    assert join_lines(["a well-", "known fact"], both) == "a well-known fact"
    # A tail of four letters or more vouches for the break alone ("entry" is nowhere else).
    tail = _vocabulary("Check the water level weekly.")
    assert join_lines(["many entry-", "level machines"], tail) == "many entry-level machines"


def test_rule_4_needs_halves_of_three_letters_and_a_known_tail() -> None:
    words = _vocabulary("The co and op and ing and level.")
    assert join_lines(["a co-", "op"], words) == "a coop"
    assert join_lines(["accord-", "ing to"], words) == "according to"  # a three-letter tail alone
    assert join_lines(["the entry-", "way"], _vocabulary("nothing here")) == "the entryway"


def test_rule_5_fragments_do_not_vouch_for_themselves() -> None:
    block = ["regular mainte-", "nance keeps the", "mainte-", "nance log"]
    words = Vocabulary.of([block])
    assert "mainte" not in words.words and "nance" not in words.words
    assert join_lines(block, words) == "regular maintenance keeps the\nmaintenance log"


def test_a_soft_hyphen_at_a_line_end_always_joins() -> None:
    words = _vocabulary("The well is deep. It is known.")
    assert join_lines(["a well\u00ad", "known fact"], words) == "a wellknown fact"
    assert join_lines(["ends here\u00ad"]) == "ends here"
    assert join_lines(["cut\u00ad", "42 more"]) == "cut\n42 more"


def test_a_drawn_pdf_keeps_compounds_and_mends_syllable_breaks() -> None:
    doc = pymupdf.open()
    page = new_page(doc)
    lines = "Many entry-\nlevel machines need regular mainte-\nnance; a level\nsurface helps."
    page.insert_text((72, 100), lines, fontsize=10)
    loaded = pdf.load(to_bytes(doc), "hyphens.pdf")
    assert "Many entry-level machines need regular maintenance; a level" in loaded.text
    assert "entrylevel" not in loaded.text and "mainte-" not in loaded.text
