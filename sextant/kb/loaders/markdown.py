"""Markdown loader: the source is the text, ATX and setext headings are sections, pipe tables are tables.

The source is kept verbatim so every span is an exact range of the file as written. Only the
CommonMark/GFM structure that carries citations is parsed: ATX headings (``#`` to ``######``),
setext headings (a paragraph underlined with ``===`` for level 1 or ``---`` for level 2), fenced
code (so a ``# comment`` in a code block is not a heading), GFM pipe tables, and YAML front
matter (skipped). To tell a setext underline from a thematic break, the loader tracks whether the
line above belongs to a top-level paragraph: ``---`` after a blank line, a list item, a block
quote or indented code is a thematic break, as CommonMark has it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sextant.kb.documents import LoadedDocument, RowSpan, TableSpan
from sextant.kb.loaders.builder import CAPTION_RE, Heading, clean_title, close_sections, lines_with_offsets, stem
from sextant.kb.loaders.text import decode_text

_ATX_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT_RE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_THEMATIC_BREAK_RE = re.compile(r"^ {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$")
_LIST_ITEM_RE = re.compile(r"^( {0,3})([-+*]|\d{1,9}[.)])([ \t]*)(?=\S|$)")
_EMPTY_ITEM_RE = re.compile(r"^ {0,3}(?:[-+*]|\d{1,9}[.)])[ \t]*$")
_QUOTE_OR_HTML_RE = re.compile(r"^ {0,3}[><]")
# Inside a paragraph only these start a new block (CommonMark 5.2, 5.3); other list items continue it.
_INTERRUPTS_PARAGRAPH_RE = re.compile(r"^ {0,3}(?:[-+*][ \t]+\S|1[.)][ \t]+\S|>)")
_INDENTED_CODE_RE = re.compile(r"^(?: {4}|\t)")
_FRONT_MATTER_OPEN = "---"
_FRONT_MATTER_CLOSE = ("---", "...")
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
    """Load a Markdown file: sections from ATX and setext headings, tables from GFM pipe tables.

    Raises:
        LoadError: the file is empty, binary, or not UTF-8.
    """
    text = decode_text(data, name)
    headings, tables = _scan([_Line(start, line) for start, line in lines_with_offsets(text)])
    title = next((h.title for h in headings if h.level == 1), "") or stem(name)
    return LoadedDocument(
        text=text,
        title=clean_title(title),
        sections=close_sections(headings, len(text)),
        tables=tuple(tables),
    )


def _scan(lines: list[_Line]) -> tuple[list[Heading], list[TableSpan]]:
    """Headings and tables, found in one pass that keeps just enough block state for setext headings.

    A setext underline needs an open top-level paragraph above it. A paragraph is not open after a
    blank line, a thematic break, a heading, a table or a fence; inside a list item or a block
    quote (lazy continuation lines included); or in indented code.
    """
    headings: list[Heading] = []
    tables: list[TableSpan] = []
    fence: str | None = None
    paragraph: int | None = None  # the first line of the open top-level paragraph
    lazy = False  # a list item, block quote or table is open: a plain line continues it
    item_column: int | None = None  # where the content of the last list item starts
    i = _after_front_matter(lines)
    while i < len(lines):
        line = lines[i]
        i += 1
        if fence is not None:
            if _closes(fence, line.text):
                fence = None
            continue
        if not line.text.strip():
            if i >= 2 and lines[i - 2].text.strip() and _EMPTY_ITEM_RE.match(lines[i - 2].text):
                item_column = None  # an item can start with one blank line, not an empty line and a blank one
            paragraph, lazy = None, False
            continue
        underline = _SETEXT_RE.match(line.text)
        if paragraph is not None and underline:
            headings.append(_setext(lines[paragraph : i - 1], underline.group(1)))
            paragraph = None
            continue
        fence_match = _FENCE_RE.match(line.text)
        atx = _ATX_RE.match(line.text)
        table_end = None if fence_match or atx else _table_end(lines, i - 1)
        block = fence_match or atx or table_end is not None or _THEMATIC_BREAK_RE.match(line.text)
        item = _LIST_ITEM_RE.match(line.text)
        opens = item is not None or _QUOTE_OR_HTML_RE.match(line.text) is not None
        # Left of the list item's content, only a lazy paragraph line stays in the list.
        expanded = line.text.expandtabs(4)
        left = item_column is not None and len(expanded) - len(expanded.lstrip()) < item_column
        if left and (block or opens or not lazy):
            item_column = None
        if block:
            paragraph, lazy = None, False
            if fence_match:
                fence = fence_match.group(1)
            if (heading := _heading(line)) is not None:
                headings.append(heading)
            if table_end is not None:
                tables.append(_table(lines, i - 1, table_end))
                i = table_end
                lazy = True  # GFM: lines up to a blank one still belong to the table
            continue
        if paragraph is not None:
            if not _INTERRUPTS_PARAGRAPH_RE.match(line.text):
                continue
            paragraph = None
        if item is not None:
            item_column = _content_column(item)
            lazy = bool(line.text[item.end() :].strip())  # an empty item holds nothing to continue
        elif opens:
            lazy = True
        elif not lazy and item_column is None and not _INDENTED_CODE_RE.match(line.text):
            paragraph = i - 1
        elif item_column is not None:
            lazy = True  # content of the open list item
    return headings, tables


def _content_column(item: re.Match[str]) -> int:
    """Where a list item's content starts: after the marker and one to four spaces (CommonMark 5.2)."""
    spaces = len(item.group(3))
    return len(item.group(1)) + len(item.group(2)) + (spaces if 1 <= spaces <= 4 else 1)


def _closes(fence: str, line: str) -> bool:
    """A fence closes on a bare run of its own character at least as long as the opening run."""
    run = line.strip()
    return len(run) >= len(fence) and not run.strip(fence[0]) and len(line) - len(line.lstrip()) <= 3


def _after_front_matter(lines: list[_Line]) -> int:
    """The index of the first line after YAML front matter (``---`` ... ``---``), or 0 if there is none."""
    if not lines or lines[0].text.rstrip() != _FRONT_MATTER_OPEN:
        return 0
    for index in range(1, len(lines)):
        if lines[index].text.rstrip() in _FRONT_MATTER_CLOSE:
            return index + 1
    return 0


def _setext(paragraph: list[_Line], underline: str) -> Heading:
    title = " ".join(" ".join(line.text.split()) for line in paragraph)
    return Heading(paragraph[0].start, title, 1 if underline.startswith("=") else 2)


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
