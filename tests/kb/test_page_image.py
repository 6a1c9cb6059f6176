"""A cited PDF page as a PNG: rendered from the kept original in a child process, or refused with the reason."""

from __future__ import annotations

import pymupdf
import pytest

from sextant.contract.meta import NO_PAGE_IMAGE
from sextant.kb.documents import LoadedDocument, PageSpan
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.page_image import NoPageImage, RenderFailed, page_image

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
