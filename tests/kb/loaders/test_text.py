"""Plain text: verbatim text, first-line title, refusals for empty, binary and non-UTF-8 files."""

from __future__ import annotations

import pytest

from sextant.kb.documents import LoadError
from sextant.kb.loaders import load_bytes, text


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
