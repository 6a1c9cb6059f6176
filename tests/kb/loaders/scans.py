"""Scanned documents made with PyMuPDF: text pages rendered to images, put back as image-only pages."""

from __future__ import annotations

import io

import pymupdf
import pytest
from PIL import Image

from sextant.kb.loaders import ocr

needs_tesseract = pytest.mark.skipif(
    "eng" not in (ocr.installed_languages() or ()),
    reason="Tesseract with English is not installed: apt install tesseract-ocr tesseract-ocr-eng",
)

PAGES = (
    "Descale the boiler every eight weeks with citric acid.",
    "Replace the group gasket when the shots start to leak.",
    "Store the beans in an airtight tin away from sunlight.",
)
WIDTH, HEIGHT = 612, 792
AT = (72, 120)  # where each page's sentence starts


def typed(pages: tuple[str, ...] = PAGES) -> pymupdf.Document:
    doc = pymupdf.open()
    for text in pages:
        doc.new_page(width=WIDTH, height=HEIGHT).insert_text(AT, text, fontsize=14)
    return doc


def frames(pages: tuple[str, ...] = PAGES, dpi: int = 300) -> list[pymupdf.Pixmap]:
    with typed(pages) as doc:
        return [page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY) for page in doc]


def scanned_pdf(pages: tuple[str, ...] = PAGES, stamp: str = "") -> bytes:
    """Each page an image of the typed page, with no text layer (but ``stamp`` typed on each, if given)."""
    out = pymupdf.open()
    for pixmap in frames(pages):
        page = out.new_page(width=WIDTH, height=HEIGHT)
        page.insert_image(page.rect, stream=pixmap.tobytes("jpeg", jpg_quality=85))
        if stamp:
            page.insert_text((20, HEIGHT - 20), stamp, fontsize=6)
    return out.tobytes(deflate=True)


def image_bytes(kind: str, pages: tuple[str, ...] = PAGES) -> bytes:
    """The pages as one PNG or JPEG (the first page) or a multi-page TIFF, at 300 dpi."""
    images = [Image.frombytes("L", (p.width, p.height), p.samples) for p in frames(pages)]
    out = io.BytesIO()
    if kind == "TIFF":
        images[0].save(out, format="TIFF", save_all=True, append_images=images[1:], dpi=(300, 300))
    else:
        images[0].save(out, format=kind, dpi=(300, 300))
    return out.getvalue()


def squash(text: str) -> str:
    return " ".join(text.split())
