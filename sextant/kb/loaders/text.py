"""Plain text loader: the file's text verbatim, titled by its first non-empty line."""

from __future__ import annotations

from sextant.kb.documents import LoadedDocument, LoadError
from sextant.kb.loaders.builder import clean_title, stem


def load(data: bytes, name: str) -> LoadedDocument:
    """Load a plain text file; it has no pages, sections or tables.

    Raises:
        LoadError: the file is empty, binary, or not UTF-8.
    """
    text = decode_text(data, name)
    return LoadedDocument(text=text, title=first_line_title(text) or stem(name))


def first_line_title(text: str) -> str:
    """The first non-empty line, trimmed to a title's length; empty if there is none."""
    for line in text.splitlines():
        if line.strip():
            return clean_title(line)
    return ""


def decode_text(data: bytes, name: str) -> str:
    """Decode a text file: UTF-8 (BOM optional) or UTF-16 with a BOM.

    Raises:
        LoadError: the bytes are binary (NUL bytes) or not valid UTF-8, or hold only whitespace.
    """
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise LoadError(name, f"not valid UTF-16 text (byte {exc.start}); save it as UTF-8") from exc
    else:
        if b"\x00" in data:
            raise LoadError(name, "binary content (NUL bytes), not text; convert it to a text format first")
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise LoadError(
                name, f"not valid UTF-8 text (byte {exc.start}); re-save the file with UTF-8 encoding"
            ) from exc
    if not text.strip():
        raise LoadError(name, "empty: the file holds no text")
    return text
