"""The image loader: PNG, JPEG and TIFF read by OCR, a page per image or TIFF frame."""

from __future__ import annotations

import pymupdf
import pytest

from sextant.kb.documents import LoadError
from sextant.kb.loaders import image, ocr
from tests.kb.loaders.scans import PAGES, image_bytes, needs_tesseract, squash


@needs_tesseract
@pytest.mark.parametrize(("kind", "name"), [("PNG", "notes.png"), ("JPEG", "notes.jpg"), ("JPEG", "NOTES.JPEG")])
def test_a_single_image_is_one_ocr_page(kind: str, name: str) -> None:
    doc = image.load(image_bytes(kind), name)
    read = doc.ocr_pages
    assert squash(doc.text) == PAGES[0]
    assert [(p.number, p.label) for p in doc.pages] == [(1, "1")]
    assert len(read) == 1 and read[0].number == 1 and read[0].confidence > 85 and read[0].words == 9


@needs_tesseract
@pytest.mark.parametrize("name", ["scan.tif", "scan.tiff"])
def test_each_tiff_frame_is_a_page_with_its_own_text(name: str) -> None:
    doc = image.load(image_bytes("TIFF"), name)
    assert [squash(doc.text[p.start : p.end]) for p in doc.pages] == list(PAGES)
    assert [p.number for p in doc.pages] == [1, 2, 3]


def test_as_pdf_makes_an_image_only_page_per_frame_at_the_image_resolution() -> None:
    with pymupdf.open("pdf", image.as_pdf(image_bytes("TIFF"), "scan.tiff")) as doc:
        assert doc.page_count == 3
        assert doc[0].get_text().strip() == ""
        assert doc[0].rect.width == pytest.approx(612, abs=1)  # 2550 px at 300 dpi


def test_too_many_frames_are_refused_before_any_is_read() -> None:
    with pytest.raises(LoadError, match=r"3 pages, more than SEXTANT_MAX_PDF_PAGES=2"):
        image.load(image_bytes("TIFF"), "scan.tiff", max_pages=2)


@pytest.mark.parametrize(
    ("data", "name"), [(b"not an image at all", "photo.png"), (b"\xff\xd8\xff\xe0broken", "x.jpg")]
)
def test_an_undecodable_image_is_refused_by_name(data: bytes, name: str) -> None:
    with pytest.raises(LoadError, match="not a readable") as caught:
        image.load(data, name)
    assert caught.value.name == name


def test_without_tesseract_an_image_is_refused_naming_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ocr, "installed_languages", lambda: None)
    with pytest.raises(LoadError) as caught:
        image.load(image_bytes("PNG"), "notes.png")
    assert "apt install tesseract-ocr tesseract-ocr-eng" in caught.value.reason
    assert "SEXTANT_OCR" in caught.value.reason


def test_with_ocr_off_an_image_is_refused_naming_the_setting() -> None:
    with ocr.configured(ocr.OcrOptions(mode="off")), pytest.raises(LoadError, match=r"SEXTANT_OCR=off"):
        image.load(image_bytes("PNG"), "notes.png")
