"""What the page renderer searches for when a quote is not on the page whole."""

from __future__ import annotations

from sextant.kb.page_render import OPENING_CHARS, quote_candidates


def test_the_whole_quote_then_its_longest_sentence_then_its_opening() -> None:
    quote = "Rinse the boiler twice.  Then descale it\nevery eight weeks with citric acid and plenty of water."
    found = quote_candidates(quote)
    assert [kind for kind, _ in found] == ["quote", "sentence", "opening"]
    assert found[0][1] == " ".join(quote.split())
    assert found[1][1] == "Then descale it every eight weeks with citric acid and plenty of water."
    assert found[2][1] == "Rinse the boiler twice. Then descale it every eight weeks"  # cut at a word
    assert len(found[2][1]) <= OPENING_CHARS


def test_a_short_single_sentence_is_searched_once_and_an_empty_quote_not_at_all() -> None:
    assert quote_candidates("  Rinse twice.\n") == [("quote", "Rinse twice.")]
    assert quote_candidates(" \n ") == []
