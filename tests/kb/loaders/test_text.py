"""Plain text: verbatim text, first-line title, refusals for empty, binary and non-UTF-8 files."""

from __future__ import annotations

from pathlib import Path

import pytest

from sextant.kb.documents import LoadError
from sextant.kb.loaders import load_bytes, text
from tests.conftest import REPO


def test_text_is_kept_verbatim_and_titled_by_its_first_line() -> None:
    source = "\n\n   Aquarium cycling notes  \r\nAmmonia first, then nitrite.\n"
    doc = text.load(source.encode(), "notes/cycling.txt")
    assert doc.text == source
    assert doc.title == "Aquarium cycling notes"
    assert (doc.pages, doc.sections, doc.tables) == ((), (), ())


def test_a_byte_order_mark_is_dropped_and_utf16_is_read() -> None:
    assert text.load("\ufeffHello".encode(), "a.txt").text == "Hello"
    assert text.load("Grüße aus Köln".encode("utf-16"), "b.txt").text == "Grüße aus Köln"


def test_long_first_lines_make_bounded_titles_and_the_dispatcher_routes_txt() -> None:
    doc = load_bytes(("x" * 500 + "\nrest").encode(), "long.TXT")
    assert 0 < len(doc.title) <= 121


@pytest.mark.parametrize("data", [b"", b"   \n\t\r\n  "])
def test_empty_files_are_refused(data: bytes) -> None:
    with pytest.raises(LoadError, match="empty") as caught:
        text.load(data, "blank.txt")
    assert caught.value.name == "blank.txt"


def test_binary_files_are_refused() -> None:
    with pytest.raises(LoadError, match="binary"):
        text.load(b"PK\x03\x04\x00\x00 zip bytes", "archive.txt")


def test_undecodable_bytes_are_refused_with_the_position() -> None:
    with pytest.raises(LoadError, match=r"UTF-8 .*byte 6"):
        text.load(b"caf\xc3\xa9 \xff menu", "latin.txt")


UNDERLINED = """\
Aquarium Cycling
================

Why cycle
---------
Ammonia burns gills.

=========
Overlined
=========

A paragraph line
----------------------------------------------------------------------

Too short a rule
--
Adding fish
-----------
text
"""


def test_underlined_headings_are_sections() -> None:
    doc = text.load(UNDERLINED.encode(), "notes.txt")
    assert doc.text == UNDERLINED
    found = [(s.title, s.level, doc.text[s.start : s.start + 12]) for s in doc.sections]
    # A rule far longer than its line, one too short, or under a line that follows text is no underline.
    assert found == [
        ("Aquarium Cycling", 1, "Aquarium Cyc"),
        ("Why cycle", 2, "Why cycle\n--"),
        ("Overlined", 1, "=========\nOv"),
    ]
    assert doc.title == "Aquarium Cycling"
    assert doc.sections[1].end == doc.text.index("=========\nOverlined")


def test_headings_in_capitals_count_when_there_are_two_and_nothing_is_underlined() -> None:
    source = "INSTALLATION\n\nRun the script.\n\nUSAGE NOTES\n\nCall it. NOT THIS: it runs on.\n\nOK\n"
    doc = text.load(source.encode(), "readme.txt")
    assert [(s.title, s.level) for s in doc.sections] == [("INSTALLATION", 1), ("USAGE NOTES", 1)]
    assert text.load(b"WARNING\n\nOne shouted line is not structure.\n", "w.txt").sections == ()
    # Underlined headings win: capitals are then ordinary lines.
    mixed = text.load(b"Title\n=====\n\nNOTE WELL\n\nbody\n\nALSO THIS\n\nmore\n", "m.txt")
    assert [s.title for s in mixed.sections] == ["Title"]


@pytest.mark.parametrize("path", sorted((REPO / "eval" / "corpus" / "documents").glob("*.txt")), ids=lambda p: p.name)
def test_eval_text_files_have_their_underlined_sections(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    lines = source.split("\n")
    expected = [
        (lines[n].strip(), 1 if lines[n + 1][0] == "=" else 2)
        for n in range(len(lines) - 1)
        if lines[n].strip() and lines[n + 1] and set(lines[n + 1]) in ({"="}, {"-"})
    ]
    doc = text.load(path.read_bytes(), path.name)
    assert [(s.title, s.level) for s in doc.sections] == expected
    assert len(expected) >= 5 and doc.title == expected[0][0]
