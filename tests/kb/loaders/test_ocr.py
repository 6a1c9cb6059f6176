"""OCR with Tesseract: its TSV read into words, boxes and confidences; the scan rule; settings and refusals."""

from __future__ import annotations

import pymupdf
import pytest
from pydantic import ValidationError

from sextant.kb.documents import LoadError
from sextant.kb.loader_sandbox import BoundedParser, ParseLimits
from sextant.kb.loaders import ocr
from sextant.kb.loaders.pdf_layout import read_blocks
from sextant.settings import KbSettings
from tests.kb.loaders.scans import AT, PAGES, needs_tesseract, scanned_pdf, squash, typed

HEADER = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext"
TSV = "\n".join(
    [
        HEADER,
        "1\t1\t0\t0\t0\t0\t0\t0\t1000\t2000\t-1\t",
        "2\t1\t1\t0\t0\t0\t100\t100\t400\t100\t-1\t",
        "5\t1\t1\t1\t1\t1\t100\t100\t80\t30\t96.5\tDescale",
        "5\t1\t1\t1\t1\t2\t190\t100\t60\t30\t91.5\tthe",
        "5\t1\t1\t1\t2\t1\t100\t140\t90\t30\t80.0\tboiler.",
        "5\t1\t1\t2\t1\t1\t100\t200\t50\t30\t-1\t ",
        "5\t1\t1\t2\t1\t2\t100\t200\t50\t30\t70.0\tDone",
    ]
)


def test_tesseract_tsv_becomes_words_with_boxes_and_a_mean_confidence() -> None:
    result = ocr.parse_tsv(TSV)
    assert (result.width, result.height) == (1000, 2000)
    assert [w.text for w in result.words] == ["Descale", "the", "boiler.", "Done"]
    assert (result.words[0].x0, result.words[0].y0, result.words[0].x1, result.words[0].y1) == (100, 100, 180, 130)
    assert result.confidence == pytest.approx((96.5 + 91.5 + 80.0 + 70.0) / 4)
    assert result.text == "Descale the\nboiler.\n\nDone"
    assert ocr.parse_tsv(HEADER).confidence == 0.0


def test_words_take_the_shapes_the_pdf_loader_reads() -> None:
    result = ocr.parse_tsv(TSV)
    blocks = read_blocks(ocr.page_dict(result))
    assert [[line.text for line in block.lines] for block in blocks] == [["Descale the", "boiler."], ["Done"]]
    assert blocks[0].lines[0].bbox == (100, 100, 250, 130)
    words = ocr.page_words(result)
    assert [(w[4], w[5], w[6], w[7]) for w in words] == [
        ("Descale", 0, 0, 0),
        ("the", 0, 0, 1),
        ("boiler.", 0, 1, 0),
        ("Done", 1, 0, 0),
    ]


def test_off_refuses_and_names_the_setting() -> None:
    with pytest.raises(ocr.OcrUnavailable, match="SEXTANT_OCR=off"):
        ocr.check_available(ocr.OcrOptions(mode="off"))


def test_without_tesseract_the_refusal_names_the_debian_packages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ocr, "installed_languages", lambda: None)
    with pytest.raises(ocr.OcrUnavailable) as caught:
        ocr.check_available(ocr.OcrOptions())
    assert "apt install tesseract-ocr tesseract-ocr-eng" in caught.value.reason
    assert "SEXTANT_OCR=off" in caught.value.reason


def test_a_missing_language_names_its_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ocr, "installed_languages", lambda: frozenset({"eng", "osd"}))
    with pytest.raises(ocr.OcrUnavailable, match=r"SEXTANT_OCR_LANG='eng\+deu' \(missing deu;.*tesseract-ocr-deu"):
        ocr.check_available(ocr.OcrOptions(lang="eng+deu"))


def test_settings_read_the_ocr_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEXTANT_OCR", "off")
    monkeypatch.setenv("SEXTANT_OCR_LANG", "eng+fra")
    monkeypatch.setenv("SEXTANT_OCR_TIMEOUT_S", "12")
    chosen = ocr.OcrOptions.from_settings(KbSettings(_env_file=None))
    assert chosen == ocr.OcrOptions(mode="off", lang="eng+fra", timeout_s=12.0)
    monkeypatch.setenv("SEXTANT_OCR_LANG", "eng; rm -rf /")
    with pytest.raises(ValidationError, match="ocr_lang"):
        KbSettings(_env_file=None)


def _image_page(doc: pymupdf.Document, rect: pymupdf.Rect) -> pymupdf.Page:
    page = doc.new_page(width=612, height=792)
    pixmap = pymupdf.Pixmap(pymupdf.csGRAY, pymupdf.IRect(0, 0, 40, 40), False)
    pixmap.clear_with(230)
    page.insert_image(rect, pixmap=pixmap)
    return page


@pytest.mark.parametrize(
    ("image", "text", "scan"),
    [
        (None, "", False),  # a blank page
        (None, "short", False),  # a short text page
        ((0, 0, 612, 792), "", True),  # an image and no text
        ((0, 0, 612, 792), "Scanned by the office copier", True),  # a stamp over a scan
        ((72, 72, 200, 200), "Figure 1 below.", False),  # a small figure and a caption
        ((0, 0, 612, 792), "word " * 60, False),  # a text layer (an OCR'd scan) over the image
        ((72, 72, 140, 140), "", True),  # a lone image and no text: worth a look
    ],
)
def test_which_pages_are_scans(image: tuple[float, ...] | None, text: str, scan: bool) -> None:
    with pymupdf.open() as doc:
        page = _image_page(doc, pymupdf.Rect(image)) if image else doc.new_page(width=612, height=792)
        if text:
            page.insert_textbox(pymupdf.Rect(20, 700, 590, 790), text, fontsize=6)
        chars = len("".join(page.get_text().split()))
        assert ocr.is_scan(page, chars) is scan


@needs_tesseract
def test_a_scanned_page_is_read_with_each_word_where_it_was_typed() -> None:
    with typed() as source, pymupdf.open("pdf", scanned_pdf()) as scan:
        expected = source[0].search_for("boiler")[0]
        result = ocr.ocr_page(scan[0], ocr.OcrOptions())
    assert squash(result.text) == PAGES[0]
    assert result.confidence > 85
    boiler = next(w for w in result.words if w.text == "boiler")
    assert abs(boiler.x0 - expected.x0) < 3 and abs(boiler.y1 - expected.y1) < 4
    assert boiler.y0 < AT[1] < boiler.y1 + 2


@needs_tesseract
def test_a_page_that_runs_out_of_time_fails_naming_the_setting() -> None:
    with pymupdf.open("pdf", scanned_pdf()) as scan, pytest.raises(ocr.OcrFailed, match="SEXTANT_OCR_TIMEOUT_S"):
        ocr.ocr_page(scan[0], ocr.OcrOptions(timeout_s=0.001))


@needs_tesseract
def test_the_sandbox_gives_each_ocr_page_more_time() -> None:
    # Three OCR'd pages take longer than a 1 s file limit: the worker's more_time_s frames extend it.
    limits = ParseLimits(timeout_s=1.0, ocr=ocr.OcrOptions(timeout_s=60.0))
    with BoundedParser(limits) as parser:
        doc = parser.parse(scanned_pdf(), "scan.pdf")
    assert [squash(doc.text[p.start : p.end]) for p in doc.pages] == list(PAGES)


def test_the_sandbox_passes_ocr_off_to_the_worker() -> None:
    with BoundedParser(ParseLimits(ocr=ocr.OcrOptions(mode="off"))) as parser, pytest.raises(LoadError) as caught:
        parser.parse(scanned_pdf(), "scan.pdf")
    assert caught.value.reason.startswith("scanned, no text layer: OCR is turned off (SEXTANT_OCR=off)")


def test_a_lines_size_is_its_median_words_height_not_its_box() -> None:
    # An equation's line: one tall symbol (a sum sign, a fraction) stretches the line's box to twice the words.
    rows = [
        "5\t1\t1\t1\t1\t1\t100\t100\t40\t30\t90\tf(x)",
        "5\t1\t1\t1\t1\t2\t150\t85\t40\t60\t90\t=",
        "5\t1\t1\t1\t1\t3\t200\t100\t60\t30\t90\tsum",
        "5\t1\t1\t1\t1\t4\t270\t100\t40\t31\t90\t(3)",
    ]
    (block,) = read_blocks(ocr.page_dict(ocr.parse_tsv("\n".join([HEADER, *rows]))))
    assert block.lines[0].size == round(30.5 / 1.2)
    assert block.lines[0].bbox == (100, 85, 310, 145)


def test_a_sentence_tesseract_splits_across_paragraphs_is_one_paragraph_again() -> None:
    def word(text: str, paragraph: int, line: int, top: float) -> ocr.OcrWord:
        return ocr.OcrWord(10, top, 60, top + 12, text, 95.0, 1, paragraph, line)

    words = [
        word("rennet", 1, 1, 100),
        word("for", 1, 1, 100),
        word("every", 1, 1, 100),
        word("ten", 2, 1, 116),  # Tesseract's new paragraph: a shorter line, mid-sentence
        word("litres.", 2, 1, 116),
        word("Turn", 3, 1, 132),  # after a full stop: a paragraph of its own
        word("daily.", 3, 1, 132),
        word("Far", 4, 1, 400),  # mid-sentence but far below: the layout says a new paragraph
    ]
    blocks = ocr.page_dict(ocr.OcrResult(words=tuple(words), width=612, height=792))["blocks"]
    assert [[span["text"] for line in b["lines"] for span in line["spans"]] for b in blocks] == [
        ["rennet for every", "ten litres."],
        ["Turn daily."],
        ["Far"],
    ]
