"""PowerPoint decks: slides as pages, titles as sections, reading order, notes, tables, damage, refusals."""

from __future__ import annotations

import io
from pathlib import Path

import pptx
import pytest

from sextant.kb.documents import LoadedDocument, LoadError
from sextant.kb.loaders import pptx as pptx_loader
from sextant.kb.loaders.slides import NOTES_MARK
from tests.kb.loaders import slides_factory
from tests.kb.loaders.pdf_factory import assert_well_formed

FILES = Path(__file__).parent / "files"


@pytest.fixture(scope="module")
def made() -> LoadedDocument:
    return pptx_loader.load(slides_factory.deck(), "review.pptx")


def _page(doc: LoadedDocument, number: int) -> str:
    page = doc.pages[number - 1]
    assert page.number == number
    return doc.text[page.start : page.end]


def test_each_slide_is_a_page_labelled_with_its_number(made: LoadedDocument) -> None:
    assert [(p.number, p.label) for p in made.pages] == [(1, "1"), (2, "2"), (3, "3"), (4, "4")]
    assert made.title == "Quarterly review"
    assert_well_formed(made)


def test_title_first_then_frames_top_to_bottom_left_to_right_then_marked_notes(made: LoadedDocument) -> None:
    assert _page(made, 1) == (
        "Quarterly review\n\nUpper left\nsame paragraph\n\nUpper right\n\nLower box"
        "\n\nSpeaker notes:\nMention the budget."
    )
    (title, *_) = made.sections
    assert (title.title, title.level, title.start, title.end) == ("Quarterly review", 1, 0, made.pages[0].end)


def test_an_empty_slide_keeps_an_empty_page_and_the_numbering(made: LoadedDocument) -> None:
    empty = made.pages[1]
    assert empty.start == empty.end
    assert _page(made, 3).startswith("Region | Quarter | Sales")


def test_tables_are_rows_and_a_cell_merged_down_repeats_in_each_row(made: LoadedDocument) -> None:
    (table,) = made.tables
    assert table.header == "Region | Quarter | Sales"
    assert [made.text[r.start : r.end] for r in table.rows] == ["North | Q1 | 10", "North | Q2 | 12"]
    assert made.pages[2].start <= table.start < table.end <= made.pages[2].end


def test_grouped_shapes_are_read(made: LoadedDocument) -> None:
    assert _page(made, 3).endswith("Grouped one\n\nGrouped two")


def test_a_slide_whose_xml_does_not_parse_is_skipped_and_named() -> None:
    data = slides_factory.with_part(slides_factory.deck(), "ppt/slides/slide3.xml", b"<p:sld><broken")
    loaded = pptx_loader.load(data, "damaged.pptx")
    (skipped,) = loaded.skipped_pages
    assert (skipped.number, skipped.label) == (3, "3")
    assert "ppt/slides/slide3.xml does not parse" in skipped.reason
    assert loaded.pages[2].start == loaded.pages[2].end
    assert _page(loaded, 4) == "Will be damaged"
    assert "Region" not in loaded.text
    assert_well_formed(loaded)


def test_damaged_notes_cost_only_the_notes_and_are_named() -> None:
    data = slides_factory.with_part(slides_factory.deck(), "ppt/notesSlides/notesSlide1.xml", b"<p:notes")
    loaded = pptx_loader.load(data, "notes.pptx")
    (skipped,) = loaded.skipped_pages
    assert (skipped.number, skipped.label) == (1, "1")
    assert skipped.reason.startswith(
        "its speaker notes were left out: damaged, its XML part ppt/notesSlides/notesSlide1.xml does not parse"
    )
    assert _page(loaded, 1).endswith("Lower box")  # the slide itself is read
    assert NOTES_MARK not in _page(loaded, 1)
    assert_well_formed(loaded)


def test_a_deck_whose_only_text_was_in_damaged_notes_is_refused_naming_them() -> None:
    presentation = pptx.Presentation()
    blank = presentation.slides.add_slide(presentation.slide_layouts[6])
    blank.notes_slide.notes_text_frame.text = "All there is to say."
    saved = io.BytesIO()
    presentation.save(saved)
    data = slides_factory.with_part(saved.getvalue(), "ppt/notesSlides/notesSlide1.xml", b"<p:notes")
    with pytest.raises(LoadError, match=r"no text could be read: slide 1: its speaker notes were left out: damaged"):
        pptx_loader.load(data, "notes-only.pptx")


def test_a_deck_whose_only_slide_is_damaged_is_refused_naming_it() -> None:
    data = slides_factory.deck()
    for part in ("slide1", "slide3", "slide4"):
        data = slides_factory.with_part(data, f"ppt/slides/{part}.xml", b"not xml")
    with pytest.raises(LoadError, match=r"no slide could be read: slide 1: damaged"):
        pptx_loader.load(data, "ruined.pptx")


def test_real_deck_from_python_pptx_with_group_and_table() -> None:
    loaded = pptx_loader.load((FILES / "test_slides.pptx").read_bytes(), "test_slides.pptx")
    assert loaded.title == "python-pptx was here!"
    assert "Group test text" in loaded.text
    (table,) = loaded.tables
    assert (table.header, loaded.text[table.rows[0].start : table.rows[0].end]) == (
        "Col head 1 | Col head 2",
        "Cell text 1 | Cell text 2",
    )
    assert_well_formed(loaded)


def test_real_deck_notes_stay_inside_their_slide() -> None:
    loaded = pptx_loader.load((FILES / "ph-inherit-props.pptx").read_bytes(), "ph-inherit-props.pptx")
    assert _page(loaded, 1) == "Title Text\n\nBody Text\n\nSpeaker notes:\nNotes in inherited position and size."
    assert _page(loaded, 2) == "Speaker notes:\nNotes in modified position and size."
    assert [s.title for s in loaded.sections] == ["Title Text"]


def test_real_merged_table_keeps_one_line_per_row() -> None:
    loaded = pptx_loader.load((FILES / "tbl-cell.pptx").read_bytes(), "tbl-cell.pptx")
    merged = loaded.tables[1]  # "merged cell" spans two rows and two columns
    assert merged.header == "merged cell |  | "
    assert [loaded.text[r.start : r.end] for r in merged.rows] == ["merged cell |  | "]
    assert_well_formed(loaded)


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (slides_factory.OLE_BYTES, "legacy PowerPoint 97-2003"),
        (b"\x00garbage\xff" * 20, "not a zip package"),
        (slides_factory.with_part(slides_factory.deck(), "ppt/presentation.xml", b"<broken"), "not a readable .pptx"),
    ],
)
def test_files_that_are_not_readable_decks_are_refused(data: bytes, reason: str) -> None:
    with pytest.raises(LoadError, match=reason) as caught:
        pptx_loader.load(data, "bad.pptx")
    assert caught.value.name == "bad.pptx"
