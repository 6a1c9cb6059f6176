"""The quote check's lookup: a quote is found in its passage after undoing only how the text reached us."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sextant.agent.evidence import MIN_QUOTE_CHARS, Span, fold, locate, locate_run, quote_pieces

PASSAGE = "Descale the machine every 3 months. Use citric acid, never vinegar, for the boiler."


def found(quote: str, passage: str) -> str | None:
    span = locate(quote, passage)
    return None if span is None else passage[span.start : span.end]


def test_an_exact_quote_is_found_at_its_own_characters() -> None:
    span = locate("every 3 months", PASSAGE)
    assert span == Span(PASSAGE.index("every"), PASSAGE.index("every") + len("every 3 months"))


def test_whitespace_and_line_breaks_read_as_one_space() -> None:
    passage = "Descale the\n  machine\tevery 3\r\nmonths."
    assert found("the machine every 3 months", passage) == "the\n  machine\tevery 3\r\nmonths"


def test_a_word_hyphenated_across_a_line_is_read_whole() -> None:
    passage = "Regular descal-\ning keeps the boiler clean."
    assert found("regular descaling keeps", passage) == "Regular descal-\ning keeps"
    assert found("descaling keeps the boiler", "Regular descal- \n  ing keeps the boiler clean.") is not None


def test_ligatures_and_full_width_forms_fold_by_nfkc() -> None:
    passage = "Fill the ﬁlter basket to the line."
    assert found("fill the filter basket", passage) == "Fill the ﬁlter basket"
    assert found("ＡＢＣ model", "The ABC model ships soon.") == "ABC model"


def test_curly_quotes_and_dashes_read_as_ascii() -> None:
    passage = "The \u201cauto\u201d mode \u2014 the default \u2014 won\u2019t descale."
    assert found('the "auto" mode - the default - won\'t descale', passage) is not None
    assert found("won't descale", passage) == "won\u2019t descale"


def test_case_does_not_matter() -> None:
    assert found("DESCALE THE MACHINE", PASSAGE) == "Descale the machine"


def test_surrounding_quote_marks_and_trailing_punctuation_are_trimmed() -> None:
    assert found('"every 3 months."', PASSAGE) == "every 3 months"


def test_an_ellipsis_skips_words_and_its_pieces_must_stand_in_order() -> None:
    assert found("Descale the machine … never vinegar", PASSAGE) == PASSAGE[: PASSAGE.index("vinegar") + 7]
    assert found("Descale the machine...never vinegar", PASSAGE) is not None
    assert found("never vinegar … Descale the machine", PASSAGE) is None
    assert quote_pieces("Descale the machine … never vinegar") == ["descale the machine", "never vinegar"]


def test_a_quote_too_short_to_count_is_refused() -> None:
    assert locate("every", PASSAGE) is None
    assert locate("...", PASSAGE) is None
    assert quote_pieces("x" * (MIN_QUOTE_CHARS - 1)) == []
    assert quote_pieces("x" * MIN_QUOTE_CHARS) == ["x" * MIN_QUOTE_CHARS]


def test_a_match_that_begins_or_ends_mid_word_is_refused() -> None:
    assert locate("escale the machine", PASSAGE) is None
    assert locate("the machin", PASSAGE) is None
    # A later, word-bounded occurrence is still found.
    assert found("cale the boiler", "Descale the boiler, then scale the boiler's walls.") is None
    assert found("scale the boiler", "Descale the boiler, then scale the boiler.") == "scale the boiler"


def test_a_quote_not_in_the_passage_is_not_found() -> None:
    assert locate("descale every week", PASSAGE) is None
    assert locate("every 3 months", "") is None


CORE = "Our week is 37.5 hours. We use core hours: everyone should be available between 10:00 and 15:00 on weekdays."


def test_a_run_that_is_most_of_a_changed_quote_is_found_at_the_passage_s_words() -> None:
    changed = "Quillfeather Ltd. uses core hours: everyone should be available between 10:00 and 15:00 on weekdays."
    assert locate(changed, CORE) is None
    span = locate_run(changed, CORE)
    assert span is not None
    assert CORE[span.start : span.end] == "core hours: everyone should be available between 10:00 and 15:00 on weekdays"


def test_a_run_that_is_a_third_of_the_quote_or_under_six_words_is_not_enough() -> None:
    assert (
        locate_run("The boiler uses core hours: everyone should be here at dawn and at dusk every day.", CORE) is None
    )
    assert locate_run("They use core hours: everyone", CORE) is None  # four of five words, but only four
    assert locate_run("Nothing of this stands anywhere in the passage at all.", CORE) is None


def test_fold_is_what_the_check_compares() -> None:
    # Leading space is never emitted, a soft hyphen is not a character, trailing space folds to one.
    assert fold("  The\u00adﬁlter \u2014 “Done”  ") == 'thefilter - "done" '


words = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFÉéﬁ0123456789", min_size=1, max_size=8)
separators = st.sampled_from([" ", "  ", "\n", " \n ", "\t", ", ", ". "])


@given(st.lists(st.tuples(words, separators), min_size=1, max_size=30), st.data())
def test_any_run_of_whole_words_is_found_where_its_text_folds_to_the_quote(
    parts: list[tuple[str, str]], data: st.DataObject
) -> None:
    passage = "".join(word + sep for word, sep in parts)
    first = data.draw(st.integers(0, len(parts) - 1))
    last = data.draw(st.integers(first, len(parts) - 1))
    quote = "".join(word + sep for word, sep in parts[first:last]) + parts[last][0]
    span = locate(quote, passage)
    if not quote_pieces(quote):
        assert span is None
        return
    assert span is not None
    assert fold(passage[span.start : span.end]).strip(" .,") == fold(quote).strip(" .,")
