"""TextBuilder offsets, section closing and line walking: the bookkeeping every loader relies on."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sextant.kb.documents import SectionSpan
from sextant.kb.loaders.builder import (
    CAPTION_RE,
    Heading,
    TextBuilder,
    clean_title,
    close_sections,
    lines_with_offsets,
    stem,
)


@settings(derandomize=True, deadline=None, max_examples=200)
@given(st.lists(st.text(min_size=1), max_size=12))
def test_every_paragraph_range_slices_back_to_its_piece(pieces: list[str]) -> None:
    out = TextBuilder()
    ranges = [out.paragraph(piece) for piece in pieces]
    text = out.text()
    assert len(out) == len(text)
    assert [text[start:end] for start, end in ranges] == pieces
    assert text == "\n\n".join(pieces)


def test_table_rows_are_lines_under_the_header() -> None:
    out = TextBuilder()
    out.paragraph("Intro.")
    table = out.table("A | B", ["1 | 2", "3 | 4"], caption="Table 1: Numbers")
    text = out.text()
    assert text == "Intro.\n\nA | B\n1 | 2\n3 | 4"
    assert text[table.start : table.end] == "A | B\n1 | 2\n3 | 4"
    assert [text[r.start : r.end] for r in table.rows] == ["1 | 2", "3 | 4"]
    assert [r.index for r in table.rows] == [0, 1]
    assert (table.header, table.caption) == ("A | B", "Table 1: Numbers")


def test_sections_end_at_the_next_heading_of_the_same_or_higher_level() -> None:
    headings = [Heading(0, "One", 1), Heading(10, "One.A", 2), Heading(20, "One.B", 2), Heading(30, "Two", 1)]
    assert close_sections(headings, 50) == (
        SectionSpan(0, 30, "One", 1),
        SectionSpan(10, 20, "One.A", 2),
        SectionSpan(20, 30, "One.B", 2),
        SectionSpan(30, 50, "Two", 1),
    )
    assert close_sections([], 10) == ()


def test_lines_with_offsets_handles_crlf_and_keeps_form_feeds_inside_lines() -> None:
    text = "a\r\nbb\n\x0cc\n"
    lines = list(lines_with_offsets(text))
    assert lines == [(0, "a"), (3, "bb"), (6, "\x0cc"), (9, "")]
    assert all(text[start : start + len(line)] == line for start, line in lines)


def test_titles_are_one_bounded_line() -> None:
    assert clean_title("  A  title\nover lines ") == "A title over lines"
    long = clean_title("word " * 60)
    assert len(long) <= 121 and long.endswith("…") and "\n" not in long
    assert stem("docs/Annual Report.v2.pdf") == "Annual Report.v2"


def test_caption_pattern_needs_a_number() -> None:
    for caption in ("Table 3: Costs", "TABLE 3. Costs", "Table IV - Costs", "Tab. 2: x", "table 1.2: nested"):
        assert CAPTION_RE.match(caption), caption
    for prose in ("Table captions are placed above", "Tablet 3: no", "The Table 3: no"):
        assert not CAPTION_RE.match(prose), prose
