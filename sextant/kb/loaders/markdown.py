"""Markdown loader: the source is the text, ATX headings are sections, pipe tables are tables.

The source is kept verbatim so every span is an exact range of the file as written. Only the
CommonMark/GFM structure that carries citations is parsed: ATX headings (``#`` to ``######``),
fenced code (so a ``# comment`` in a code block is not a heading) and GFM pipe tables.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sextant.kb.documents import LoadedDocument, RowSpan, TableSpan
from sextant.kb.loaders.builder import CAPTION_RE, Heading, clean_title, close_sections, lines_with_offsets, stem
from sextant.kb.loaders.text import decode_text

_ATX_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_DELIMITER_CELL_RE = re.compile(r"^\s*:?-+:?\s*$")
_UNESCAPED_PIPE_RE = re.compile(r"(?<!\\)\|")
# Emphasis around a caption line, as in "**Table 1:** Results" or "_Table 2. Costs_".
_EMPHASIS_CHARS = "*_ "


@dataclass(frozen=True, slots=True)
class _Line:
    start: int
    text: str

    @property
    def end(self) -> int:
        return self.start + len(self.text)


def load(data: bytes, name: str) -> LoadedDocument:
    """Load a Markdown file: sections from ATX headings, tables from GFM pipe tables.

    Raises:
        LoadError: the file is empty, binary, or not UTF-8.
    """
    text = decode_text(data, name)
    lines = [_Line(start, line) for start, line in lines_with_offsets(text)]
    headings: list[Heading] = []
    tables: list[TableSpan] = []
    fence: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        fence_match = _FENCE_RE.match(line.text)
        if fence is not None:
            if _closes(fence, line.text):
                fence = None
            i += 1
            continue
        if fence_match:
            fence = fence_match.group(1)
            i += 1
            continue
        heading = _heading(line)
        if heading is not None:
            headings.append(heading)
            i += 1
            continue
        table_end = _table_end(lines, i)
        if table_end is not None:
            tables.append(_table(lines, i, table_end))
            i = table_end
            continue
        i += 1
    title = next((h.title for h in headings if h.level == 1), "") or stem(name)
    return LoadedDocument(
        text=text,
        title=clean_title(title),
        sections=close_sections(headings, len(text)),
        tables=tuple(tables),
    )


def _closes(fence: str, line: str) -> bool:
    """A fence closes on a bare run of its own character at least as long as the opening run."""
    run = line.strip()
    return len(run) >= len(fence) and not run.strip(fence[0]) and len(line) - len(line.lstrip()) <= 3


def _heading(line: _Line) -> Heading | None:
    match = _ATX_RE.match(line.text)
    if match is None or not (match.group(2) or "").strip():
        return None
    return Heading(line.start, match.group(2).strip(), len(match.group(1)))


def split_cells(row: str) -> list[str]:
    """The cells of a pipe-table row, outer pipes dropped and cells trimmed."""
    body = row.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    return [cell.strip() for cell in _UNESCAPED_PIPE_RE.split(body)]


def _is_delimiter(row: str) -> bool:
    if "-" not in row:
        return False
    return all(_DELIMITER_CELL_RE.match(cell) for cell in split_cells(row))


def _table_end(lines: list[_Line], i: int) -> int | None:
    """The index after the last row of a pipe table whose header is line ``i``; None if there is none."""
    if i + 1 >= len(lines) or "|" not in lines[i].text:
        return None
    delimiter = lines[i + 1].text
    if "|" not in delimiter or not _is_delimiter(delimiter):
        return None
    # GFM: the header and the delimiter row must have the same number of cells.
    if len(split_cells(lines[i].text)) != len(split_cells(delimiter)):
        return None
    end = i + 2
    while end < len(lines) and lines[end].text.strip() and "|" in lines[end].text:
        end += 1
    return end


def _table(lines: list[_Line], header_at: int, end: int) -> TableSpan:
    header = lines[header_at]
    body = lines[header_at + 2 : end]
    rows = tuple(RowSpan(line.start, line.end, index) for index, line in enumerate(body))
    last = body[-1] if body else header
    return TableSpan(
        header.start,
        last.end,
        rows,
        header=header.text.strip(),
        caption=_caption_above(lines, header_at),
    )


def _caption_above(lines: list[_Line], header_at: int) -> str:
    """The line just above the table (one blank line allowed between) if it reads like a caption."""
    for back in (1, 2):
        if header_at - back < 0:
            return ""
        candidate = lines[header_at - back].text.strip()
        if candidate:
            if not CAPTION_RE.match(candidate.strip(_EMPHASIS_CHARS)):
                return ""
            return " ".join(candidate.replace("**", "").strip(_EMPHASIS_CHARS).split())
    return ""
