"""OpenDocument presentations: slides as pages, reading order, notes, tables, furniture, real files."""

from __future__ import annotations

from pathlib import Path

import pytest

from sextant.kb.documents import LoadError
from sextant.kb.loaders import odp
from tests.kb.loaders.pdf_factory import assert_well_formed
from tests.kb.loaders.slides_factory import ODP, opendocument

FILES = Path(__file__).parent / "files"

_DECK = """<office:presentation>
<draw:page draw:name="one">
  <draw:frame svg:x="1cm" svg:y="10cm"><draw:text-box><text:p>Lower</text:p></draw:text-box></draw:frame>
  <draw:frame presentation:class="title" svg:x="1cm" svg:y="5cm">
    <draw:text-box><text:p>Plan</text:p></draw:text-box></draw:frame>
  <draw:g><draw:custom-shape svg:x="2in" svg:y="1in"><text:p>Group right</text:p></draw:custom-shape>
          <draw:custom-shape svg:x="1in" svg:y="1in"><text:p>Group left</text:p></draw:custom-shape></draw:g>
  <draw:frame presentation:class="page-number" svg:x="1cm" svg:y="18cm">
    <draw:text-box><text:p>1</text:p></draw:text-box></draw:frame>
  <presentation:notes><draw:page-thumbnail/><draw:frame presentation:class="notes"><draw:text-box>
    <text:p>Say hello.</text:p><text:p>Then the plan.</text:p></draw:text-box></draw:frame></presentation:notes>
</draw:page>
<draw:page draw:name="empty"/>
<draw:page draw:name="three"><draw:frame svg:x="1cm" svg:y="1cm"><table:table>
  <table:table-row><table:table-cell><text:p>Item</text:p></table:table-cell><table:table-cell><text:p>Cost</text:p></table:table-cell></table:table-row>
  <table:table-row><table:table-cell><text:p>Tea</text:p></table:table-cell><table:table-cell><text:p>2</text:p></table:table-cell></table:table-row>
</table:table></draw:frame></draw:page>
</office:presentation>"""


def test_slides_are_pages_in_reading_order_with_marked_notes() -> None:
    loaded = odp.load(opendocument(ODP, _DECK), "plan.odp")
    assert [(p.number, p.label) for p in loaded.pages] == [(1, "1"), (2, "2"), (3, "3")]
    first = loaded.pages[0]
    assert loaded.text[first.start : first.end] == (
        "Plan\n\nGroup left\n\nGroup right\n\nLower\n\nSpeaker notes:\nSay hello.\nThen the plan."
    )
    assert loaded.pages[1].start == loaded.pages[1].end
    (section,) = loaded.sections
    assert (section.title, section.end) == ("Plan", first.end)
    (table,) = loaded.tables
    assert (table.header, loaded.text[table.rows[0].start : table.rows[0].end]) == ("Item | Cost", "Tea | 2")
    assert loaded.pages[2].start == table.start
    assert loaded.title == "Plan"
    assert_well_formed(loaded)


def test_real_deck_is_read_top_to_bottom_then_left_to_right() -> None:
    loaded = odp.load((FILES / "cols.odp").read_bytes(), "cols.odp")
    heads = loaded.text.split("\n\n")
    assert heads[:3] == ["Col 1", "Col 2", "Col 3"]
    assert loaded.title == "Col 1"  # the file's metadata title "Slide 1" is a placeholder
    assert_well_formed(loaded)


def test_real_deck_title_and_nested_lists() -> None:
    loaded = odp.load((FILES / "ol.odp").read_bytes(), "ol.odp")
    assert [s.title for s in loaded.sections] == ["OL"]
    assert loaded.text.startswith("OL\n\nEins\n\nTsvey\n\nDray")


def test_a_deck_without_text_is_refused() -> None:
    with pytest.raises(LoadError, match="empty: the presentation has no text"):
        odp.load(opendocument(ODP, "<office:presentation><draw:page/></office:presentation>"), "blank.odp")


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(100), "legacy binary office file"),
        (b"\x89garbage", "not a zip package"),
        ((FILES / "simpletable.odt").read_bytes(), "not an OpenDocument .odp file"),
        (opendocument(ODP, "<office:presentation>"), "content.xml does not parse"),
        (opendocument(ODP, "<office:presentation/>"), "has no slides"),
    ],
)
def test_unreadable_decks_are_refused(data: bytes, reason: str) -> None:
    with pytest.raises(LoadError, match=reason):
        odp.load(data, "bad.odp")
