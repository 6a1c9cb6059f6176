"""The shared OpenDocument reader: visible text, lengths, and table grids."""

from __future__ import annotations

import pytest
from lxml import etree

from sextant.kb.loaders.opendocument import inline_text, length_cm, table_lines
from tests.kb.loaders.slides_factory import _NS


def _element(xml: str) -> etree._Element:
    return etree.fromstring(f"<wrap {_NS}>{xml}</wrap>")[0]


def test_inline_text_keeps_spaces_tabs_and_breaks_but_not_notes_or_comments() -> None:
    paragraph = _element(
        "<text:p>a<text:s text:c='3'/>b<text:tab/>c<text:line-break/>d<text:span>e</text:span>"
        "<office:annotation><text:p>comment</text:p></office:annotation>"
        "<text:note><text:note-body><text:p>note</text:p></text:note-body></text:note>f</text:p>"
    )
    assert inline_text(paragraph) == "a   b\tc\nde" + "f"


@pytest.mark.parametrize(
    ("value", "cm"), [("2.54cm", 2.54), ("1in", 2.54), ("72pt", 2.54), ("10mm", 1.0), (None, 0.0), ("auto", 0.0)]
)
def test_lengths_are_read_in_centimetres(value: str | None, cm: float) -> None:
    assert length_cm(value) == pytest.approx(cm)


def test_repeated_empty_cells_do_not_widen_the_table() -> None:
    table = _element(
        "<table:table><table:table-row><table:table-cell><text:p>a</text:p></table:table-cell>"
        "<table:table-cell table:number-columns-repeated='1024'/></table:table-row>"
        "<table:table-row><table:table-cell table:number-columns-repeated='2'><text:p>x</text:p></table:table-cell>"
        "</table:table-row></table:table>"
    )
    assert table_lines(table, 1, "t.odt") == ("a | ", ["x | x"])
