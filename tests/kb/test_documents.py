from __future__ import annotations

import pytest

from sextant.kb.documents import LoadedDocument, PageSpan, RowSpan, SectionSpan, TableSpan, join_pages


def test_spans_must_lie_inside_the_text() -> None:
    with pytest.raises(ValueError, match="outside the text"):
        LoadedDocument(text="abc", title="t", pages=(PageSpan(0, 4, 1, "1"),))
    with pytest.raises(ValueError, match="outside its table"):
        LoadedDocument(text="abcdef", title="t", tables=(TableSpan(0, 3, rows=(RowSpan(2, 5, 0),)),))


def test_page_and_section_lookup() -> None:
    doc = LoadedDocument(
        text="aaaa\n\nbbbb",
        title="t",
        pages=(PageSpan(0, 4, 1, "i"), PageSpan(6, 10, 2, "1")),
        sections=(SectionSpan(0, 10, "Whole", 1), SectionSpan(6, 10, "Part", 2)),
    )
    page = doc.page_at(7)
    assert page is not None and page.label == "1"
    section = doc.section_at(7)
    assert section is not None and section.title == "Part"
    outer = doc.section_at(1)
    assert outer is not None and outer.title == "Whole"


def test_join_pages_shifts_every_span() -> None:
    first = LoadedDocument(text="# A\nalpha", title="A", sections=(SectionSpan(0, 9, "A", 1),))
    table = TableSpan(0, 9, rows=(RowSpan(4, 9, 0),), header="h | h", caption="")
    second = LoadedDocument(text="h|h\n1 | 2", title="B", tables=(table,))
    joined = join_pages([(first, 3), (second, 4)], title="Joined")
    assert joined.text == "# A\nalpha\n\nh|h\n1 | 2"
    assert [(p.number, joined.text[p.start : p.end]) for p in joined.pages] == [(3, "# A\nalpha"), (4, "h|h\n1 | 2")]
    row = joined.tables[0].rows[0]
    assert joined.text[row.start : row.end] == "1 | 2"
    assert joined.text[joined.sections[0].start : joined.sections[0].end] == "# A\nalpha"
