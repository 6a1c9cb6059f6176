"""Sections of a PDF: outline entries placed at their printed headings, and headings read from fonts."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from sextant.kb.documents import PageSpan
from sextant.kb.loaders import pdf
from sextant.kb.loaders.builder import Heading
from sextant.kb.loaders.pdf_layout import Block, TextLine
from sextant.kb.loaders.pdf_sections import PlacedBlock, font_headings, outline_headings
from tests.kb.loaders.pdf_factory import FILLER, assert_well_formed, new_page, page_of, paragraph, to_bytes
from tests.kb.loaders.scans import needs_tesseract

TEXT = (
    "Front page\n\n"  # page 1: 0-10
    "We cite the Methods of others here.\n\n2.1 Methods\n\nOur methods are plain.\n\n"  # page 2
    "The “Quoted” Results\nfollow."  # page 3
)


def _pages() -> list[PageSpan]:
    second = TEXT.index("We cite")
    third = TEXT.index("The “Quoted”")
    return [PageSpan(0, 10, 1, "1"), PageSpan(second, third - 2, 2, "2"), PageSpan(third, len(TEXT), 3, "3")]


def test_an_outline_entry_lands_on_its_heading_not_on_a_mention() -> None:
    (heading,) = outline_headings([[2, "Methods", 2]], TEXT, _pages())
    assert heading == Heading(TEXT.index("2.1 Methods"), "Methods", 2)


def test_outline_titles_match_despite_case_quotes_and_line_breaks() -> None:
    (heading,) = outline_headings([[1, "The ``quoted'' results follow", 3]], TEXT, _pages())
    assert heading.start == TEXT.index("The “Quoted”")


def test_an_unprinted_title_starts_at_the_top_of_its_page_and_bad_pages_are_skipped() -> None:
    entries = [[1, "Nowhere in the text", 2], [1, "Beyond the end", 9], [1, "", 1]]
    assert outline_headings(entries, TEXT, _pages()) == [Heading(_pages()[1].start, "Nowhere in the text", 1)]


def _paper_without_outline() -> bytes:
    doc = pymupdf.open()
    for number in range(1, 4):
        page = new_page(doc)
        page.insert_text((72, 40), "Journal of Drawn Examples", fontsize=8)  # running head
        if number == 1:
            page.insert_text((72, 90), "Owls of the Northern Forest", fontsize=18, fontname="hebo")
            page.insert_text((72, 140), "1. Introduction", fontsize=10, fontname="hebo")
        if number == 2:
            page.insert_text((72, 90), "1.1 Field methods", fontsize=10, fontname="hebo")
            page.insert_text((72, 300), "This bold sentence is emphasis, not a heading.", fontname="hebo")
        if number == 3:
            page.insert_text((72, 90), "References", fontsize=10, fontname="hebo")
        paragraph(page, (72, 160, 540, 280), f"Body text of page {number}. {FILLER}")
    return to_bytes(doc)


def test_without_an_outline_headings_come_from_size_and_weight() -> None:
    doc = pdf.load(_paper_without_outline(), "owls.pdf")
    found = [(s.title, s.level) for s in doc.sections]
    assert found == [
        ("Owls of the Northern Forest", 1),
        ("1. Introduction", 1),
        ("1.1 Field methods", 2),
        ("References", 1),
    ]
    assert doc.title == "Owls of the Northern Forest"
    methods = doc.sections[2]
    assert doc.text[methods.start :].startswith("1.1 Field methods")
    assert methods.end == doc.sections[3].start and page_of(doc, methods.start).number == 2
    assert_well_formed(doc)


def _placed(text: str, size: float, page: int, y: float) -> PlacedBlock:
    line = TextLine(text, (72.0, y, 400.0, y + size), size, False)
    return PlacedBlock(Block((72.0, y, 400.0, y + size), (line,)), int(y), page, text)


def test_on_an_ocr_page_only_words_set_larger_than_its_body_are_headings() -> None:
    body = [_placed(f"Body text line {i} of the scanned page goes on here.", 8.0, 0, 100 + 10 * i) for i in range(9)]
    blocks = [
        _placed("Equations", 12.0, 0, 40),
        _placed("f(@@)=a? +2 (2)", 12.0, 0, 200),  # an equation as OCR reads it, its boxes stretched
        _placed("cos? 9 +sin?6 =1 (1)", 12.0, 0, 220),
        _placed("i-1 k k-1 j a *) _ bia", 12.0, 0, 240),
        _placed("The method converges for every starting point.", 12.0, 0, 260),
        *body,
    ]
    assert [h.title for h in font_headings(blocks, ocr_pages={0})] == ["Equations"]
    # On a typeset page the same sizes are trusted as they are printed.
    assert len(font_headings(blocks)) == 5


PMLR = Path("/work/shared/data/pdfs/pmlr-sample.pdf")
SIGCONF = Path("/work/shared/data/pdfs/sample-sigconf.pdf")


def _scan_of(path: Path, page: int) -> bytes:
    if not path.is_file():
        pytest.skip(f"{path} is absent (see /work/shared/data/README.md)")
    with pymupdf.open(path) as source, pymupdf.open() as out:
        pixmap = source[page].get_pixmap(dpi=300, colorspace=pymupdf.csGRAY)
        scan = out.new_page(width=source[page].rect.width, height=source[page].rect.height)
        scan.insert_image(scan.rect, stream=pixmap.tobytes("jpeg", jpg_quality=85))
        return out.tobytes(deflate=True)


@needs_tesseract
def test_a_scanned_page_of_equations_has_no_equation_headings() -> None:
    doc = pdf.load(_scan_of(PMLR, 1), "pmlr-page-2-scan.pdf")  # "3. Equations": five displayed equations
    assert doc.ocr_pages and "Equations" in doc.text
    assert [s.title for s in doc.sections if any(sign in s.title for sign in "=+()?")] == []
    assert_well_formed(doc)


@needs_tesseract
def test_a_scanned_page_keeps_its_larger_headings() -> None:
    doc = pdf.load(_scan_of(SIGCONF, 1), "sigconf-page-2-scan.pdf")
    titles = [(s.title, s.level) for s in doc.sections]
    assert ("2 TEMPLATE OVERVIEW", 1) in titles and ("2.1 Template Styles", 2) in titles
    assert [t for t, _ in titles if t.endswith(".")] == []
    assert_well_formed(doc)
