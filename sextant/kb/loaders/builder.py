"""Shared bookkeeping for loaders: build a text piece by piece and record exact spans into it.

Loaders that rebuild text (PDF, DOCX) append through ``TextBuilder`` so that every offset is the
length of what came before, never recomputed by searching. Loaders that keep the source verbatim
(Markdown, plain text) use ``lines_with_offsets`` to walk it.
"""

from __future__ import annotations

import io
import lzma
import re
import zipfile
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import PurePath

from sextant.kb.documents import LoadError, RowSpan, SectionSpan, TableSpan

TITLE_MAX_CHARS = 120
CELL_SEPARATOR = " | "  # between a table row's cells, in every format: one row is one line
# Word 97-2003, PowerPoint 97-2003 and password-protected Office files are OLE compound files, not zips.
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
# What reading a damaged zip package or member raises: a bad header or CRC (BadZipFile), a damaged deflate,
# LZMA or bzip2 stream (zlib.error, LZMAError, OSError, EOFError), an offset before the file's start
# (ValueError: negative seek), an unknown compression method (NotImplementedError), a password (RuntimeError).
ZIP_ERRORS: tuple[type[Exception], ...] = (
    zipfile.BadZipFile,
    zlib.error,
    lzma.LZMAError,
    OSError,
    EOFError,
    ValueError,
    NotImplementedError,
    RuntimeError,
)

# "Table 3:", "TABLE 3.", "Table IV -", "Tab. 2:"; the number keeps prose like "Table captions" out.
CAPTION_RE = re.compile(r"^\s*(?:table|tab\.)\s*(?:\d+|[ivxlc]+)(?:\.\d+)*\s*[:.|—–-]", re.IGNORECASE)

_BLANK_BREAK = "\n\n"


@dataclass(frozen=True, slots=True)
class Heading:
    """A heading found while loading; its section runs to the next heading of the same or a higher level."""

    start: int
    title: str
    level: int


class TextBuilder:
    """Appends pieces of text and hands back the ``[start, end)`` range each one occupies."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._length = 0

    def __len__(self) -> int:
        return self._length

    def append(self, piece: str) -> tuple[int, int]:
        """Append ``piece`` verbatim and return its range."""
        start = self._length
        self._parts.append(piece)
        self._length += len(piece)
        return start, self._length

    def paragraph(self, piece: str) -> tuple[int, int]:
        """Start ``piece`` after a blank line (unless it is the first thing) and return its range."""
        if self._length:
            self.append(_BLANK_BREAK)
        return self.append(piece)

    def table(self, header: str, rows: Sequence[str], caption: str = "") -> TableSpan:
        """Append a table as a paragraph of lines, header first, one line per body row."""
        start, end = self.paragraph(header)
        spans: list[RowSpan] = []
        for index, row in enumerate(rows):
            self.append("\n")
            row_start, end = self.append(row)
            spans.append(RowSpan(row_start, end, index))
        return TableSpan(start, end, tuple(spans), header=header, caption=caption)

    def text(self) -> str:
        """The text built so far."""
        return "".join(self._parts)


def close_sections(headings: Sequence[Heading], text_length: int) -> tuple[SectionSpan, ...]:
    """Turn headings into sections, each ending where the next same-or-higher-level heading starts."""
    ordered = sorted(headings, key=lambda h: h.start)
    sections: list[SectionSpan] = []
    for i, head in enumerate(ordered):
        end = text_length
        for later in ordered[i + 1 :]:
            if later.level <= head.level and later.start > head.start:
                end = later.start
                break
        sections.append(SectionSpan(head.start, end, head.title, head.level))
    return tuple(sections)


def lines_with_offsets(text: str) -> Iterator[tuple[int, str]]:
    """Yield ``(start, line)`` for each line, without its ``\\n`` or ``\\r\\n`` ending.

    ``str.splitlines`` is not used because it also breaks on form feeds and Unicode separators,
    which would make offsets disagree with what a reader calls a line.
    """
    start = 0
    for raw in text.split("\n"):
        yield start, raw.removesuffix("\r")
        start += len(raw) + 1


def refuse_unless_office_zip(data: bytes, name: str, *, suffix: str, app: str, legacy: str, kind: str) -> None:
    """Refuse, saying how to fix it, a legacy binary or password-protected Office file, or one that is no zip.

    Raises:
        LoadError: ``data`` is an OLE compound file, or not a zip package.
    """
    if data.startswith(OLE_MAGIC):
        raise LoadError(
            name,
            f"a legacy {legacy} file or a password-protected {kind}, not a {suffix}; "
            f"open it in {app} and save it as {suffix} without a password",
        )
    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise LoadError(name, f"not a {suffix} file (it is not a zip package); re-save it from {app} as {suffix}")


def stem(name: str) -> str:
    """The file name without folders and suffix, as a fallback title."""
    return PurePath(name).stem or name


def clean_title(candidate: str) -> str:
    """One line of at most ``TITLE_MAX_CHARS`` characters, cut at a word boundary."""
    title = " ".join(candidate.split())
    if len(title) <= TITLE_MAX_CHARS:
        return title
    cut = title[:TITLE_MAX_CHARS].rsplit(" ", 1)[0]
    return cut + "…"
