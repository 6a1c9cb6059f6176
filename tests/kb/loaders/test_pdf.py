"""The PDF loader on drawn PDFs (refusals, labels, fallback) and on the real papers in the shared data."""

from __future__ import annotations

import re
from typing import Literal

import pymupdf
import pytest

from sextant.kb.documents import LoadedDocument, LoadError
from sextant.kb.loaders import load_bytes, ocr, pdf
from tests.conftest import require_data
from tests.kb.loaders.pdf_factory import (
    FILLER,
    assert_well_formed,
    damage_page,
    new_page,
    page_of,
    paragraph,
    to_bytes,
)
from tests.kb.loaders.scans import PAGES as SCANNED
from tests.kb.loaders.scans import needs_tesseract, scanned_pdf


def _squash(text: str) -> str:
    return " ".join(text.split())


def _three_page_pdf(**metadata: str) -> bytes:
    doc = pymupdf.open()
    for number, body in enumerate(["Cover sheet", "Contents and notes", "Chapter body text"], start=1):
        page = new_page(doc)
        paragraph(page, (72, 72, 540, 200), f"{body} on page {number}. {FILLER}")
    doc.set_page_labels(
        [
            {"startpage": 0, "prefix": "T-", "style": "D", "firstpagenum": 1},
            {"startpage": 1, "prefix": "", "style": "r", "firstpagenum": 1},
            {"startpage": 2, "prefix": "", "style": "D", "firstpagenum": 1},
        ]
    )
    doc.set_toc([[1, "Contents and notes", 2], [1, "Chapter body text", 3]])
    if metadata:
        doc.set_metadata(metadata)
    return to_bytes(doc)


def test_pages_carry_number_and_printed_label() -> None:
    doc = pdf.load(_three_page_pdf(), "labels.pdf")
    assert [(p.number, p.label) for p in doc.pages] == [(1, "T-1"), (2, "i"), (3, "1")]
    for page in doc.pages:
        assert doc.text[page.start : page.end].startswith(("Cover", "Contents", "Chapter"))
    # Pages are separated by a blank line, and nothing sits outside a page.
    assert doc.text[doc.pages[0].end : doc.pages[1].start] == "\n\n"
    assert_well_formed(doc)


def test_pages_without_labels_are_labelled_by_number() -> None:
    doc = pymupdf.open()
    for _ in range(2):
        paragraph(new_page(doc), (72, 72, 540, 200), FILLER)
    loaded = pdf.load(to_bytes(doc), "plain.pdf")
    assert [p.label for p in loaded.pages] == ["1", "2"]


def test_outline_entries_become_sections_at_their_printed_heading() -> None:
    doc = pdf.load(_three_page_pdf(), "outline.pdf")
    assert [s.title for s in doc.sections] == ["Contents and notes", "Chapter body text"]
    first, second = doc.sections
    assert doc.text[first.start :].startswith("Contents and notes")
    assert first.end == second.start and second.end == len(doc.text)
    assert page_of(doc, second.start).label == "1"


def test_title_prefers_meaningful_metadata() -> None:
    assert pdf.load(_three_page_pdf(title="Field Guide to Owls"), "x.pdf").title == "Field Guide to Owls"
    # A placeholder a converter wrote is not a title; the first line is better.
    placeholder = pdf.load(_three_page_pdf(title="Microsoft Word - draft3.docx"), "x.pdf")
    assert placeholder.title.startswith("Cover sheet on page 1.")


def test_the_dispatcher_routes_pdf_suffix() -> None:
    assert load_bytes(_three_page_pdf(), "Report.PDF").pages[2].label == "1"


def test_encrypted_pdf_is_refused() -> None:
    doc = pymupdf.open()
    paragraph(new_page(doc), (72, 72, 540, 200), "secret " + FILLER)
    aes_256 = pymupdf.PDF_ENCRYPT_AES_256  # type: ignore[attr-defined]  # missing from the stubs
    data = to_bytes(doc, encryption=aes_256, owner_pw="owner", user_pw="user")
    with pytest.raises(LoadError, match="encrypted") as caught:
        pdf.load(data, "locked.pdf")
    assert "password" in caught.value.reason and caught.value.name == "locked.pdf"


def test_pdf_with_only_drawings_and_images_is_refused_as_scanned() -> None:
    doc = pymupdf.open()
    page = new_page(doc)
    page.draw_rect(pymupdf.Rect(100, 100, 400, 300), color=(0, 0, 0), fill=(0.5, 0.5, 0.5))
    pixmap = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 32, 32), False)
    pixmap.clear_with(200)
    new_page(doc).insert_image(pymupdf.Rect(72, 72, 300, 300), pixmap=pixmap)
    with pytest.raises(LoadError, match=r"scanned, no text layer") as caught:
        pdf.load(to_bytes(doc), "scan.pdf")
    assert "OCR" in caught.value.reason


def _pdf_with_damaged_pages(pages: int, damaged: dict[int, Literal["inflate", "missing"]]) -> bytes:
    """``pages`` pages, page n saying "Page n is about topic n", with the pages in ``damaged`` (0-based) broken."""
    doc = pymupdf.open()
    for number in range(1, pages + 1):
        paragraph(new_page(doc), (72, 72, 540, 200), f"Page {number} is about topic {number}. {FILLER}")
    for index, how in damaged.items():
        damage_page(doc, index, how)
    return to_bytes(doc)


@pytest.mark.parametrize(
    ("how", "problem"),
    [("inflate", "MuPDF got no text from it (zlib error: incorrect header check)"), ("missing", "not a stream")],
)
def test_a_damaged_page_is_left_out_and_named(how: Literal["inflate", "missing"], problem: str) -> None:
    doc = pdf.load(_pdf_with_damaged_pages(3, {1: how}), "damaged.pdf")
    [skipped] = doc.skipped_pages
    assert (skipped.number, skipped.label) == (2, "2")
    assert skipped.reason.startswith("damaged, ") and problem in skipped.reason
    assert "Page 1 is about topic 1" in doc.text and "Page 3 is about topic 3" in doc.text
    assert "topic 2" not in doc.text
    # The damaged page keeps its place, empty, so the other pages keep their numbers.
    assert [(p.number, p.end - p.start > 0) for p in doc.pages] == [(1, True), (2, False), (3, True)]
    assert_well_formed(doc)


def test_a_pdf_without_damaged_pages_names_none() -> None:
    assert pdf.load(_pdf_with_damaged_pages(2, {}), "whole.pdf").skipped_pages == ()


def test_a_pdf_whose_every_page_is_damaged_is_refused_naming_them() -> None:
    with pytest.raises(
        LoadError, match=r"^ruined.pdf: no page could be read: page 1: .*zlib.*; page 2: .*not a stream"
    ):
        pdf.load(_pdf_with_damaged_pages(2, {0: "inflate", 1: "missing"}), "ruined.pdf")


def test_a_refusal_names_the_first_damaged_pages_and_counts_the_rest() -> None:
    with pytest.raises(LoadError) as caught:
        pdf.load(_pdf_with_damaged_pages(7, dict.fromkeys(range(7), "inflate")), "ruined.pdf")
    assert "page 5: " in caught.value.reason and "page 6: " not in caught.value.reason
    assert caught.value.reason.endswith("; and 2 more; repair or re-export the PDF and add it again")


@pytest.mark.parametrize("data", [b"this is not a pdf at all", b"%PDF-1.7\n\x00\x01\x02 broken", b""])
def test_unreadable_bytes_are_refused_with_a_reason(data: bytes) -> None:
    with pytest.raises(LoadError) as caught:
        pdf.load(data, "junk.pdf")
    assert caught.value.name == "junk.pdf" and len(caught.value.reason) > 10


def test_pypdf_reads_what_pymupdf_cannot(monkeypatch: pytest.MonkeyPatch) -> None:
    data = _three_page_pdf(title="Field Guide to Owls")

    def refuse(*args: object, **kwargs: object) -> None:
        raise RuntimeError("simulated MuPDF failure")

    monkeypatch.setattr(pdf.pymupdf, "open", refuse)
    doc = pdf.load(data, "fallback.pdf")
    assert [(p.number, p.label) for p in doc.pages] == [(1, "T-1"), (2, "i"), (3, "1")]
    assert "Chapter body text on page 3" in doc.text[doc.pages[2].start : doc.pages[2].end]
    assert [s.title for s in doc.sections] == ["Contents and notes", "Chapter body text"]
    assert doc.title == "Field Guide to Owls"
    assert_well_formed(doc)


def test_pypdf_text_is_normalised_too(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = pymupdf.open()
    new_page(doc).insert_htmlbox(pymupdf.Rect(72, 72, 540, 200), "<p>the \ufb01le is \ufb02at</p>")
    data = to_bytes(doc)

    def refuse(*args: object, **kwargs: object) -> None:
        raise RuntimeError("simulated MuPDF failure")

    monkeypatch.setattr(pdf.pymupdf, "open", refuse)
    assert "the file is flat" in pdf.load(data, "ligatures.pdf").text


def test_pypdf_leaves_out_a_damaged_page_too(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise RuntimeError("simulated MuPDF failure")

    data = _pdf_with_damaged_pages(3, {2: "missing"})
    monkeypatch.setattr(pdf.pymupdf, "open", refuse)
    doc = pdf.load(data, "damaged.pdf")
    [skipped] = doc.skipped_pages
    assert (
        skipped.number == 3
        and "pypdf got no text from it (Object " in skipped.reason
        and "not defined" in skipped.reason
    )
    assert "Page 2 is about topic 2" in doc.text and "topic 3" not in doc.text


def test_both_readers_failing_names_both_reasons(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(LoadError, match=r"PyMuPDF: .*pypdf: "):
        pdf.load(b"%PDF-1.4 nothing else", "half.pdf")


# --- the real PDFs in the shared data folder -------------------------------------------------


def _load_shared(file_name: str) -> LoadedDocument:
    path = require_data("pdfs", file_name)
    return pdf.load(path.read_bytes(), file_name)


@pytest.fixture(scope="module")
def r_intro() -> LoadedDocument:
    return _load_shared("R-intro.pdf")


@pytest.fixture(scope="module")
def sigconf() -> LoadedDocument:
    return _load_shared("sample-sigconf.pdf")


@pytest.fixture(scope="module")
def pmlr() -> LoadedDocument:
    return _load_shared("pmlr-sample.pdf")


@pytest.fixture(scope="module")
def elstest() -> LoadedDocument:
    return _load_shared("elstest-5p.pdf")


def test_r_intro_keeps_front_matter_labels(r_intro: LoadedDocument) -> None:
    labels = [p.label for p in r_intro.pages]
    assert len(r_intro.pages) == 113 and [p.number for p in r_intro.pages] == list(range(1, 114))
    assert labels[0] == "T-1"
    assert labels.index("i") < labels.index("1")
    assert labels[labels.index("1") + 1] == "2"
    assert all(r_intro.text[p.start : p.end].strip() for p in r_intro.pages)
    assert r_intro.title == "An Introduction to R"
    assert_well_formed(r_intro)


def test_r_intro_running_heads_and_page_numbers_are_gone(r_intro: LoadedDocument) -> None:
    # Each chapter prints its name and the page number atop its pages; chapter openings only the number.
    assert "Chapter 1: Introduction and preliminaries" not in r_intro.text
    assert "Appendix B: Invoking R" not in r_intro.text
    opening, second = (next(p for p in r_intro.pages if p.label == label) for label in ("2", "3"))
    assert r_intro.text[opening.start : opening.end].startswith("1 Introduction and preliminaries\n")
    assert r_intro.text[second.start : second.end].startswith("into the base R environment")
    # Hyphens the document itself writes survive a line break; syllable breaks are mended.
    assert "command-line use" in r_intro.text and "--no-site-file was" in r_intro.text
    assert "corre-\nsponding" not in r_intro.text and "correspond" in r_intro.text


def test_r_intro_sections_start_at_their_headings(r_intro: LoadedDocument) -> None:
    chapter = next(s for s in r_intro.sections if s.title == "1 Introduction and preliminaries")
    assert r_intro.text[chapter.start :].startswith("1 Introduction and preliminaries")
    assert page_of(r_intro, chapter.start).label == "2"
    nested = r_intro.section_at(r_intro.text.index("R is an integrated suite of software facilities"))
    assert nested is not None and nested.title == "The R environment" and nested.level == 2


def test_sigconf_reads_the_left_column_before_the_right(sigconf: LoadedDocument) -> None:
    text = sigconf.text
    assert text.index("A clear and well-documented") < text.index("ACM’s consolidated article template")
    # Page 2: the left column ends mid-sentence and the right column finishes it.
    assert "paragraph and list definitions, and the use of the \\vspace command" in _squash(text)
    assert sigconf.title == "The Name of the Title Is Hope"
    assert_well_formed(sigconf)


def test_sigconf_and_pmlr_lose_verso_and_recto_heads(sigconf: LoadedDocument, pmlr: LoadedDocument) -> None:
    assert "Trovato et al." not in sigconf.text
    assert sigconf.text.count("Conference acronym ’XX, June 03–05, 2018, Woodstock, NY") == 1  # the reference
    assert "Short Title" not in pmlr.text and "Name1 Name2" not in pmlr.text
    # The masthead of the first page is printed once, smaller than the heads: it stays.
    assert pmlr.text.startswith("Proceedings of Machine Learning Research 1:1–11, 2010")
    for page in pmlr.pages[1:]:
        assert not pmlr.text[page.start : page.end].endswith(f"\n\n{page.number}")


def test_sigconf_booktabs_tables_are_rows(sigconf: LoadedDocument) -> None:
    first = sigconf.tables[0]
    assert first.caption == "Table 1: Frequency of Special Characters"
    assert first.header == "Non-English or Math | Frequency | Comments"
    rows = [sigconf.text[r.start : r.end] for r in first.rows]
    assert "Ø | 1 in 1,000 | For Swedish names" in rows
    assert page_of(sigconf, first.start).number == 3
    # The table is written once, as rows, not a second time as prose.
    assert sigconf.text.count("For Swedish names") == 1
    assert any(t.caption.startswith("Table 2: Some Typical Commands") for t in sigconf.tables)


def test_sigconf_outline_sections(sigconf: LoadedDocument) -> None:
    intro = next(s for s in sigconf.sections if s.title == "1 Introduction")
    assert re.match(r"1\s+INTRODUCTION", sigconf.text[intro.start :])
    styles = next(s for s in sigconf.sections if s.title == "2.1 Template Styles")
    assert styles.level == 2 and page_of(sigconf, styles.start).number == 2


def test_pmlr_tables_have_rows_on_pages_5_to_8(pmlr: LoadedDocument) -> None:
    pages = {page_of(pmlr, t.start).number for t in pmlr.tables if t.rows}
    assert {5, 8} <= pages
    ruled = next(t for t in pmlr.tables if t.caption.startswith("Table 4:"))
    assert page_of(pmlr, ruled.start).number == 5
    assert ruled.header == "Dataset | Result"
    assert [pmlr.text[r.start : r.end] for r in ruled.rows] == [
        "Data1 | 0.12345",
        "Data2 | 0.67890",
        "Data3 | 0.54321",
        "Data4 | 0.09876",
    ]
    captions = {t.caption.split(":")[0] for t in pmlr.tables}
    assert {"Table 2", "Table 3", "Table 4", "Table 5", "Table 6"} <= captions
    assert_well_formed(pmlr)


def test_elstest_two_columns_and_font_headings(elstest: LoadedDocument) -> None:
    text = elstest.text
    left_end = text.index("tunneling through the potential caused")
    right_start = text.index("by dielectric mismatch on the PMS surface")
    assert left_end < right_start < left_end + 200  # only the footnote and page number between
    titles = [s.title for s in elstest.sections]
    for heading in ("Abstract", "1. Introduction", "3. Results and discussion", "4. Appendix", "References"):
        assert heading in titles
    assert elstest.title == "This is a specimen ab title"
    assert_well_formed(elstest)


PAGE_TWO = SCANNED[1]


# --- scanned pages (OCR) --------------------------------------------------------------------------


@needs_tesseract
def test_scanned_pages_are_read_by_ocr_and_cited_by_page() -> None:
    doc = pdf.load(scanned_pdf(), "scan.pdf")
    read = doc.ocr_pages
    assert [_squash(doc.text[p.start : p.end]) for p in doc.pages] == list(SCANNED)
    assert [(p.number, p.label) for p in read] == [(1, "1"), (2, "2"), (3, "3")]
    assert all(p.confidence > 85 and p.words > 5 for p in read)
    assert doc.skipped_pages == ()


@needs_tesseract
def test_a_scanners_stamp_does_not_hide_the_scan_under_it() -> None:
    doc = pdf.load(scanned_pdf(stamp="Scanned by the office copier"), "scan.pdf")
    read = doc.ocr_pages
    assert len(read) == 3
    assert PAGE_TWO in _squash(doc.text[doc.pages[1].start : doc.pages[1].end])


@needs_tesseract
def test_only_the_scanned_page_of_a_mixed_pdf_is_ocr_d() -> None:
    mixed = pymupdf.open()
    page = new_page(mixed)
    paragraph(page, (72, 72, 540, 200), f"Typed page about the grinder. {FILLER}")
    with pymupdf.open("pdf", scanned_pdf()) as scan:
        mixed.insert_pdf(scan, from_page=1, to_page=1)
    doc = pdf.load(to_bytes(mixed), "mixed.pdf")
    read = doc.ocr_pages
    assert [p.number for p in read] == [2]
    assert "grinder" in doc.text[doc.pages[0].start : doc.pages[0].end]
    assert _squash(doc.text[doc.pages[1].start : doc.pages[1].end]) == PAGE_TWO


def test_without_tesseract_a_scan_is_refused_naming_the_package_and_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ocr, "installed_languages", lambda: None)
    with pytest.raises(LoadError, match=r"^scan\.pdf: scanned, no text layer: it needs OCR") as caught:
        pdf.load(scanned_pdf(), "scan.pdf")
    assert "`apt install tesseract-ocr tesseract-ocr-eng`" in caught.value.reason
    assert "SEXTANT_OCR=off" in caught.value.reason


def test_with_ocr_off_the_scanned_page_of_a_mixed_pdf_is_skipped_and_named() -> None:
    mixed = pymupdf.open()
    paragraph(new_page(mixed), (72, 72, 540, 200), f"Typed page about the grinder. {FILLER}")
    with pymupdf.open("pdf", scanned_pdf()) as scan:
        mixed.insert_pdf(scan, from_page=1, to_page=1)
    with ocr.configured(ocr.OcrOptions(mode="off")):
        doc = pdf.load(to_bytes(mixed), "mixed.pdf")
        read = doc.ocr_pages
    assert read == () and "grinder" in doc.text
    assert [(p.number, p.reason.split(":")[0]) for p in doc.skipped_pages] == [(2, "scanned, not read")]
    assert "SEXTANT_OCR=off" in doc.skipped_pages[0].reason
    assert doc.pages[1].start == doc.pages[1].end


def test_no_born_digital_page_of_the_shared_pdfs_is_taken_for_a_scan() -> None:
    folder = require_data("pdfs")
    for path in sorted(folder.glob("*.pdf")):
        with pymupdf.open(path) as doc:
            scans = [page.number + 1 for page in doc if ocr.is_scan(page, len("".join(page.get_text().split())))]
        assert scans == [], f"{path.name}: pages {scans} would be OCR'd"
