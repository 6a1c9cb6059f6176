"""Running heads, feet and page numbers: the rules on boxes, then drawn PDFs and the real ones."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from sextant.kb.loaders import pdf
from sextant.kb.loaders.pdf_furniture import PageBlocks, furniture, is_page_number, recurrence_key
from sextant.kb.loaders.pdf_layout import Block, TextLine
from tests.conftest import REPO
from tests.kb.loaders.pdf_factory import FILLER, HEIGHT, assert_well_formed, new_page, paragraph, to_bytes

EVAL_PDFS = sorted((REPO / "eval" / "corpus" / "documents").glob("*.pdf"))


def _block(text: str, top: float, size: float = 8.0, left: float = 72.0) -> Block:
    lines = tuple(
        TextLine(line, (left, top + n * size, left + 200, top + (n + 1) * size), size, False)
        for n, line in enumerate(text.split("\n"))
    )
    return Block((left, top, left + 200, top + len(lines) * size), lines)


def _page(*blocks: Block, label: str = "") -> PageBlocks:
    body = _block("Body text that changes from page to page.", 300, size=10)
    return PageBlocks([*blocks, body], HEIGHT, label)


def test_page_numbers_and_labels_are_recognised() -> None:
    for text in ("12", "xiv", "IV", "Page 3", "page 3 of 9", "- 4 -", "7 / 20", "p. 5"):
        assert is_page_number(text), text
    assert is_page_number("T-1", label="T-1")
    for text in ("2024 report", "iiii", "Chapter 3", "Xiv", "(5)", "12.5", ""):
        assert not is_page_number(text), text


def test_recurrence_ignores_digits_case_and_spacing() -> None:
    assert recurrence_key("Chapter 2:  Methods\n17") == recurrence_key("chapter 3: methods 104")


def test_a_head_on_every_page_and_the_numbers_go_but_a_title_printed_once_stays() -> None:
    pages = [_page(_block("Owls of the North", 30, size=16), _block("1", 760))]
    pages += [_page(_block("Owls of the North", 40), _block(str(n), 760)) for n in range(2, 6)]
    found = furniture(pages)
    assert found[0] == {1}  # the page number; the title in the top band is printed once
    assert all(found[n] == {0, 1} for n in range(1, 5))
    assert all(len(page.blocks) - 1 not in found[n] for n, page in enumerate(pages))  # bodies stay


def test_a_head_on_fewer_than_three_pages_or_half_of_them_stays() -> None:
    short = [_page(_block("Draft", 40)) for _ in range(2)]
    assert furniture(short) == [set(), set()]
    some = [_page(_block("Draft", 40)) if n < 3 else _page() for n in range(8)]
    assert furniture(some) == [set()] * 8


def test_verso_and_recto_heads_count_by_parity() -> None:
    # Odd pages carry the short title, even pages the authors: each on half the pages or fewer.
    pages = [_page()] + [_page(_block("Name1 Name2" if n % 2 else "Short Title", 40)) for n in range(1, 9)]
    found = furniture(pages)
    assert found[0] == set() and all(found[n] == {0} for n in range(1, 9))


def test_heads_that_change_by_chapter_go_by_their_slot() -> None:
    # A book: chapter-opening pages print only the number, others "Chapter k: title" and the number.
    pages = []
    for n in range(1, 13):
        chapter = (n - 1) // 4 + 1
        head = str(n) if n % 4 == 1 else f"Chapter {chapter}: Part {'ABC'[chapter - 1]}\n{n}"
        pages.append(_page(_block(head, 50, size=10)))
    found = furniture(pages)
    assert all(found[n] == {0} for n in range(1, 12)), found
    # A larger title at the same height on a later page is no head: its size differs.
    pages.append(_page(_block("A Title Set Large", 50, size=14)))
    assert furniture(pages)[-1] == set()


def test_only_blocks_wholly_in_a_band_can_go() -> None:
    pages = [_page(_block("Repeated near the top\nbut reaching into the body", 70, size=12)) for _ in range(4)]
    assert furniture(pages) == [set()] * 4


def _book_pdf() -> bytes:
    doc = pymupdf.open()
    for number in range(1, 6):
        page = new_page(doc)
        if number == 1:
            page.insert_text((72, 50), "Owls of the Northern Forest", fontsize=18, fontname="hebo")
        page.insert_text((72, 40 if number > 1 else 20), "Owls of the Northern Forest", fontsize=8)
        paragraph(page, (72, 100, 540, 300), f"Body of page {number}: {FILLER}")
        page.insert_text((300, 760), str(number), fontsize=9)
    return to_bytes(doc)


def test_a_drawn_book_loses_its_running_head_and_page_numbers() -> None:
    loaded = pdf.load(_book_pdf(), "owls.pdf")
    assert loaded.text.count("Owls of the Northern Forest") == 1  # the title, not the five heads
    assert loaded.text.startswith("Owls of the Northern Forest\n\nBody of page 1:")
    assert loaded.title == "Owls of the Northern Forest"
    for number, page in enumerate(loaded.pages, start=1):
        text = loaded.text[page.start : page.end]
        assert text.startswith(("Owls", f"Body of page {number}:"))
        assert text.endswith("lazy dog")  # the body, not the page number
    assert_well_formed(loaded)


@pytest.mark.parametrize("path", EVAL_PDFS, ids=lambda p: p.name)
def test_eval_pdfs_lose_heads_and_numbers_but_keep_their_title(path: Path) -> None:
    loaded = pdf.load(path.read_bytes(), path.name)
    with pymupdf.open(path) as source:
        head = str(source.metadata["title"])
    first = loaded.text[loaded.pages[0].start : loaded.pages[0].end]
    # The running head (the document title) is gone; a title page that prints it keeps it once.
    assert loaded.text.count(head) == (1 if first.startswith(head) else 0)
    for page in loaded.pages:
        last_line = loaded.text[page.start : page.end].rsplit("\n", 1)[-1]
        assert last_line != page.label
    assert not any("\ufb00" <= ch <= "\ufb06" for ch in loaded.text)
    assert_well_formed(loaded)


def test_espresso_keeps_entry_level_hyphenated() -> None:
    path = REPO / "eval" / "corpus" / "documents" / "espresso-maintenance.pdf"
    loaded = pdf.load(path.read_bytes(), path.name)
    page = loaded.pages[3]
    assert "many entry-level machines do not" in " ".join(loaded.text[page.start : page.end].split())
