"""A cited PDF page as a PNG: rendered from the kept original in a child process, or refused with the reason."""

from __future__ import annotations

import pymupdf
import pytest

from sextant.contract.meta import NO_PAGE_IMAGE
from sextant.kb.documents import LoadedDocument, PageSpan
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.loader_sandbox import BoundedParser
from sextant.kb.loaders.pdf import load as load_pdf
from sextant.kb.page_image import NoPageImage, RenderFailed, _ocr_words, page_image
from sextant.kb.page_render import ZOOM, find_in_words
from tests.kb.loaders.scans import PAGES as SCANNED
from tests.kb.loaders.scans import image_bytes, needs_tesseract, scanned_pdf, typed

pytestmark = pytest.mark.slow

PAGES = ("Descale the boiler every eight weeks.", "Replace the gasket when shots leak.")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def pdf(encrypted: bool = False) -> bytes:
    with pymupdf.open() as doc:
        for text in PAGES:
            doc.new_page(width=612, height=792).insert_text((72, 100), text)
        if encrypted:
            aes_256 = pymupdf.PDF_ENCRYPT_AES_256  # type: ignore[attr-defined]  # missing from the stubs
            return doc.tobytes(encryption=aes_256, owner_pw="owner", user_pw="user")
        return doc.tobytes()


def loaded(title: str) -> LoadedDocument:
    text = "\n\n".join(PAGES)
    second = len(PAGES[0]) + 2
    return LoadedDocument(
        text=text, title=title, pages=(PageSpan(0, second, 1, "1"), PageSpan(second, len(text), 2, "2"))
    )


@pytest.fixture
def manual(kb: KnowledgeBase) -> KnowledgeBase:
    kb.ingest("manual", loaded("Manual"), source="manual.pdf", original=pdf())
    return kb


def test_a_kept_page_is_a_png_with_the_quote_highlighted(manual: KnowledgeBase) -> None:
    png, info = page_image(manual, "manual", 1, "every eight weeks")
    assert png.startswith(PNG_SIGNATURE)
    assert (info.document_id, info.page, info.matched, info.highlights) == ("manual", 1, "quote", 1)
    assert (info.width_pt, info.height_pt) == (612, 792) and len(info.rects_px) == 1
    assert pymupdf.Pixmap(png).width == info.width_px


def test_a_quote_not_on_the_page_is_drawn_without_highlights(manual: KnowledgeBase) -> None:
    _, info = page_image(manual, "manual", 2, "every eight weeks")
    assert (info.matched, info.highlights, info.rects_px) == ("not_found", 0, [])
    _, plain = page_image(manual, "manual", 2)
    assert plain.matched == "no_quote"


def test_an_unknown_document_or_page_has_no_image_and_the_error_says_which(manual: KnowledgeBase) -> None:
    with pytest.raises(NoPageImage, match=f"^{NO_PAGE_IMAGE}: no document with id 'atlas'; kb_list shows the ids"):
        page_image(manual, "atlas", 1)
    with pytest.raises(NoPageImage, match=r"'manual' has no page 3 \(it has 2 pages\)"):
        page_image(manual, "manual", 3)


def test_only_pdfs_have_page_images(kb: KnowledgeBase) -> None:
    kb.ingest("notes", loaded("Notes"), source="notes.md")
    with pytest.raises(NoPageImage, match=r"only PDFs have them, and it came from 'notes\.md'"):
        page_image(kb, "notes", 1)
    kb.ingest("typed", LoadedDocument(text="Typed into the box.", title="Typed"))
    with pytest.raises(NoPageImage, match="only PDFs have them, and it came from 'text'"):
        page_image(kb, "typed", 1)


def test_a_pdf_stored_without_its_file_says_to_upload_the_file(kb: KnowledgeBase) -> None:
    kb.ingest("manual", loaded("Manual"), source="manual.pdf")
    with pytest.raises(NoPageImage, match=r"its original PDF is not kept .*upload the file to see its pages"):
        page_image(kb, "manual", 1)


def test_an_encrypted_pdf_is_refused_as_nothing_to_show(kb: KnowledgeBase) -> None:
    kb.ingest("locked", loaded("Locked"), source="locked.pdf", original=pdf(encrypted=True))
    with pytest.raises(NoPageImage, match="'locked': the PDF is encrypted"):
        page_image(kb, "locked", 1)


def test_a_kept_file_that_cannot_be_rendered_is_a_failure_not_a_missing_page(manual: KnowledgeBase) -> None:
    kept = manual.originals.get("manual")
    assert kept is not None
    kept.write_bytes(b"%PDF-1.7 damaged beyond repair")
    with pytest.raises(RenderFailed, match="page 1 of 'manual' could not be rendered"):
        page_image(manual, "manual", 1)


@needs_tesseract
def test_a_scanned_pages_quote_is_highlighted_where_its_words_are(kb: KnowledgeBase) -> None:
    scan = scanned_pdf()
    kb.ingest("scan", load_pdf(scan, "scan.pdf"), source="scan.pdf", original=scan)
    with typed() as source:
        expected = source[1].search_for("Replace the group gasket")[0] * pymupdf.Matrix(ZOOM, ZOOM)
    _, info = page_image(kb, "scan", 2, "Replace the group gasket")
    assert (info.matched, info.highlights) == ("quote", 1)
    x0, y0, x1, y1 = info.rects_px[0]
    # MuPDF's box spans the font's whole line height, OCR's the inked letters: the highlight lies within it.
    assert pymupdf.Rect(expected).contains(pymupdf.Rect(x0 + 6, y0 + 6, x1 - 6, y1 - 6))
    assert x1 - x0 > 0.8 * expected.width and y1 - y0 > 0.4 * expected.height
    key = next(key for key in _ocr_words if key[3] == 2)
    _, again = page_image(kb, "scan", 2, "gasket when the shots")  # from the kept words, no second OCR
    assert again.matched == "quote" and again.highlights == 1 and key in _ocr_words
    _, elsewhere = page_image(kb, "scan", 1, "Replace the group gasket")
    assert (elsewhere.matched, elsewhere.highlights) == ("not_found", 0)


def test_a_quote_is_found_in_ocr_words_across_lines_and_a_hyphen() -> None:
    words = [
        [10, 10, 40, 20, "Descale", "1.1.1"],
        [45, 10, 70, 20, "the", "1.1.1"],
        [75, 10, 100, 20, "boil-", "1.1.1"],
        [10, 30, 30, 40, "er", "1.1.2"],
        [35, 30, 60, 40, "weekly.", "1.1.2"],
    ]
    assert find_in_words(words, "the boiler weekly") == [(45, 10, 100, 20), (10, 30, 60, 40)]
    assert find_in_words(words, "descale THE") == [(10, 10, 70, 20)]
    assert find_in_words(words, "kettle") == [] and find_in_words(words, "...") == []


@needs_tesseract
def test_an_uploaded_image_keeps_its_pages_as_a_pdf_so_they_can_be_shown(kb: KnowledgeBase) -> None:
    png = image_bytes("png", SCANNED[:1])
    with BoundedParser() as parser:
        original = parser.original(png, "scan.png")
        assert original is not None and original.startswith(b"%PDF")
        assert parser.original(b"# Notes\n", "notes.md") is None
        kb.ingest("scan-png", parser.parse(png, "scan.png"), source="scan.png", original=original)
    _, info = page_image(kb, "scan-png", 1, "Descale the boiler")
    assert (info.matched, info.highlights) == ("quote", 1)
