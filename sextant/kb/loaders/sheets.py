"""What every spreadsheet loader shares: a sheet's rows -> one section holding one table.

A reader (XLSX, ODS, CSV/TSV) yields each sheet's rows as raw cell values; ``WorkbookBuilder`` does the
rest the same way for all of them:

- each cell becomes the text a person reads: ``88`` not ``88.0``, dates in ISO form, whitespace collapsed;
- empty rows, and columns empty in every row, are dropped;
- the first non-empty row is the header, repeated above every chunk of rows, unless it looks like data
  (``first_row_is_header``); body rows are one line each, cells joined with ``" | "`` as Word tables are
  (``docx.table_lines``);
- up to three leading rows with a single cell (a report's title over its table) are kept as a paragraph
  and added to the caption;
- free-text notes written over a table (rows of words, narrower than the table, no numbers or dates) are a
  paragraph, and the header is the first row of the first run of near-full rows (``_note_rows``); a few
  half-empty rows of words under the table are a paragraph too;
- the sheet is a section titled with its name, and the name is the table's caption;
- a sheet is bounded (rows and columns per sheet, cells in the whole workbook); what lies beyond a
  bound, and every sheet left out, is named in ``skipped_pages`` with the sheet's number and name.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from sextant.kb.documents import LoadedDocument, LoadError, RowSpan, SectionSpan, SkippedPage, TableSpan
from sextant.kb.loaders.builder import CELL_SEPARATOR, TextBuilder, clean_title

# Table rows chunk two at a time: 19,000 rows in all sheets stay within SEXTANT_MAX_CHUNKS_PER_DOCUMENT's 10,000,
# so a larger workbook is cut and the cut named, rather than the whole file refused at the store.
MAX_ROWS = 19_000
MAX_COLUMNS = 200
# openpyxl reads ~16 µs a cell here: 500,000 cells is ~8 s, within SEXTANT_PARSE_TIMEOUT_S's 20.
MAX_CELLS = 500_000
_MAX_TITLE_ROWS = 3
# Floats print with 15 significant digits, Excel's own display precision: 0.1 + 0.2 reads 0.3.
_FLOAT_FORMAT = ".15g"
_YEAR_RE = re.compile(r"^(?:19|20)\d\d$")
_ISO_DATE_RE = re.compile(r"^\d{4}-\d\d-\d\d")
# Free-text notes over a table (readxl's deaths.xlsx has four rows of them) are looked for this far down.
_MAX_NOTE_ROWS = 10


@dataclass(frozen=True, slots=True)
class Bounds:
    """How much of a workbook is read: columns per sheet; rows and non-empty cells in all sheets together."""

    max_rows: int = MAX_ROWS
    max_columns: int = MAX_COLUMNS
    max_cells: int = MAX_CELLS

    def __post_init__(self) -> None:
        if min(self.max_rows, self.max_columns, self.max_cells) < 1:
            raise ValueError(f"every bound must be at least 1: {self!r}")


def format_cell(value: object) -> str:
    """A cell's value as a person reads it in the sheet, on one line."""
    if value is None:
        return ""
    if type(value) is str:  # the common case first: this runs once per cell
        return " ".join(value.split())
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float | Decimal):
        return format_number(value)
    if isinstance(value, dt.datetime):
        if value.time() == dt.time():
            return value.date().isoformat()
        return value.isoformat(sep=" ", timespec="seconds" if value.second or value.microsecond else "minutes")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dt.time):
        return value.isoformat(timespec="seconds" if value.second or value.microsecond else "minutes")
    if isinstance(value, dt.timedelta):
        return format_duration(value)
    return " ".join(str(value).split())


def format_number(value: float | Decimal) -> str:
    """``88`` for 88.0, 15 significant digits otherwise; NaN and infinities as words."""
    number = float(value)
    if math.isnan(number) or math.isinf(number):
        return str(number)
    if number.is_integer() and abs(number) < 1e15:
        return str(int(number))
    return format(number, _FLOAT_FORMAT)


def format_percent(value: float | Decimal, decimals: int) -> str:
    """A fraction shown as a percentage with ``decimals`` places, as a ``0.00%`` format shows it: 0.25 -> ``25%``."""
    return f"{float(value) * 100:.{decimals}f}%"


def format_duration(value: dt.timedelta) -> str:
    """A duration as ``[-]H:MM:SS``, hours not wrapped at a day, as spreadsheets show ``[h]:mm:ss``."""
    seconds = round(value.total_seconds())
    sign = "-" if seconds < 0 else ""
    hours, rest = divmod(abs(seconds), 3600)
    return f"{sign}{hours}:{rest // 60:02d}:{rest % 60:02d}"


def is_number(text: str) -> bool:
    """Whether a cell's text is a number (``88``, ``-1.5``, ``1e3``, ``1,024``)."""
    try:
        float(text.replace(",", ""))
    except ValueError:
        return False
    return bool(text.strip())


def first_row_is_header(rows: Sequence[Sequence[str]]) -> bool:
    """Whether the first row labels the columns below it.

    It does not when a column holds a number both in it and in the next row (``kerberos | 88 | tcp`` above
    ``kpasswd | 464 | udp``): labels are words, or years (``Region | 2023 | 2024``). A header wrongly taken
    for data costs more than the reverse (every chunk loses its column names), so anything else is one.
    """
    if len(rows) < 2:
        return True
    first, second = rows[0], rows[1]
    return not any(is_number(a) and not _YEAR_RE.match(a) and is_number(b) for a, b in zip(first, second, strict=False))


Row = tuple[int, Sequence[object]]
"""A sheet row as a reader yields it: its 1-based row number in the sheet and its raw cell values."""


class WorkbookBuilder:
    """Collects a workbook's sheets, in order, into one ``LoadedDocument``."""

    def __init__(self, name: str, bounds: Bounds) -> None:
        self._name = name
        self._bounds = bounds
        self._out = TextBuilder()
        self._sections: list[SectionSpan] = []
        self._tables: list[TableSpan] = []
        self._skipped: list[SkippedPage] = []
        self._sheets = 0
        self._cells = 0
        self._rows = 0

    def skip_sheet(self, title: str, reason: str) -> None:
        """Leave a sheet out and name it with ``reason``."""
        self._sheets += 1
        self._skipped.append(SkippedPage(self._sheets, title, reason))

    def add_sheet(self, title: str, rows: Iterable[Row]) -> None:
        """Read a sheet's rows within the bounds and append it as a section; an empty sheet adds nothing."""
        self._sheets += 1
        bounds = self._bounds
        if self._cells >= bounds.max_cells or self._rows >= bounds.max_rows:
            reason = self._cells_reason() if self._cells >= bounds.max_cells else self._rows_reason()
            self._skipped.append(SkippedPage(self._sheets, title, f"not read: {reason}"))
            return
        before = self._cells
        try:
            kept, cuts = self._read(rows)
        except LoadError:
            raise
        # A reader fails with whatever its zip, XML or csv layer hit; one damaged sheet loses only itself.
        except Exception as exc:
            self._cells = before
            self._skipped.append(SkippedPage(self._sheets, title, f"could not be read ({type(exc).__name__}: {exc})"))
            return
        if cuts:
            self._skipped.append(SkippedPage(self._sheets, title, "; ".join(cuts)))
        lines = _lines(_drop_empty_columns(kept))
        if lines:
            self._append(clean_title(title) or f"Sheet {self._sheets}", lines, kept)

    def _read(self, rows: Iterable[Row]) -> tuple[list[list[str]], list[str]]:
        bounds = self._bounds
        kept: list[list[str]] = []
        cuts: list[str] = []
        wide = False
        for number, raw in rows:
            if len(raw) > bounds.max_columns:
                wide = wide or _last_filled(raw) > bounds.max_columns
                raw = raw[: bounds.max_columns]
            cells = [format_cell(value) for value in raw]
            filled = len(cells) - cells.count("")
            if not filled:
                continue
            if self._rows == bounds.max_rows:
                cuts.append(f"rows from row {number:,} on left out: {self._rows_reason()}")
                break
            if self._cells + filled > bounds.max_cells:
                cuts.append(f"rows from row {number:,} on left out: {self._cells_reason()}")
                self._cells = bounds.max_cells
                break
            self._cells += filled
            self._rows += 1
            kept.append(cells)
        if wide:
            cuts.insert(
                0, f"columns from column {bounds.max_columns + 1:,} on left out (the bound is {bounds.max_columns:,})"
            )
        return kept, cuts

    def _rows_reason(self) -> str:
        return f"the workbook reached its bound of {self._bounds.max_rows:,} rows"

    def _cells_reason(self) -> str:
        return f"the workbook reached its bound of {self._bounds.max_cells:,} cells"

    def _append(self, title: str, lines: list[str], kept: list[list[str]]) -> None:
        out = self._out
        above, below = _note_rows(kept)
        footer = [_note_line(row) for row in kept[below:]]
        lines, kept = lines[:below], kept[:below]
        titles = _title_rows(kept) if not above else 0
        caption = title
        start = None
        if above:
            start, _ = out.paragraph("\n".join(_note_line(row) for row in kept[:above]))
            lines, kept = lines[above:], kept[above:]
        if titles:
            heading = " — ".join(lines[:titles])
            start, _ = out.paragraph(heading)
            caption = f"{title}: {heading}"
            lines = lines[titles:]
            kept = kept[titles:]
        if len(lines) == 1:
            # A lone row has nothing to sit above; a table without body rows would never be chunked.
            at, _ = out.paragraph(lines[0])
        else:
            header = lines[0] if first_row_is_header(kept) else ""
            body = lines[1:] if header else lines
            table = _table(out, header, body, caption)
            self._tables.append(table)
            at = table.start
        if footer:
            out.paragraph("\n".join(footer))
        self._sections.append(SectionSpan(at if start is None else start, len(out), title))

    def build(self, title: str) -> LoadedDocument:
        """The document, its sections closed at the next sheet.

        Raises:
            LoadError: no sheet holds a value.
        """
        if not len(self._out):
            left_out = "; ".join(f"sheet {s.label!r}: {s.reason}" for s in self._skipped)
            raise LoadError(self._name, "empty: no cell holds a value" + (f" ({left_out})" if left_out else ""))
        text = self._out.text()
        sections = [
            SectionSpan(s.start, self._sections[i + 1].start if i + 1 < len(self._sections) else len(text), s.title)
            for i, s in enumerate(self._sections)
        ]
        return LoadedDocument(
            text=text,
            title=clean_title(title) or self._name,
            sections=tuple(sections),
            tables=tuple(self._tables),
            skipped_pages=tuple(self._skipped),
        )


def _last_filled(raw: Sequence[object]) -> int:
    """The 1-based column of the last cell that holds a value, 0 for none."""
    for i in range(len(raw) - 1, -1, -1):
        if raw[i] is not None and raw[i] != "":
            return i + 1
    return 0


def _drop_empty_columns(rows: list[list[str]]) -> list[list[str]]:
    width = max((len(row) for row in rows), default=0)
    used = [False] * width
    for row in rows:
        for i, cell in enumerate(row):
            if cell:
                used[i] = True
    if all(used):
        return rows
    keep = [i for i, u in enumerate(used) if u]
    return [[row[i] if i < len(row) else "" for i in keep] for row in rows]


def _lines(rows: list[list[str]]) -> list[str]:
    lines = []
    for row in rows:
        end = len(row)
        while end and not row[end - 1]:
            end -= 1
        lines.append(CELL_SEPARATOR.join(row[:end]))
    return lines


def _title_rows(rows: list[list[str]]) -> int:
    """How many leading one-cell rows title the table below them (none unless a wider row follows)."""
    count = 0
    while count < min(_MAX_TITLE_ROWS, len(rows)) and sum(1 for cell in rows[count] if cell) == 1:
        count += 1
    wider_follows = any(sum(1 for cell in row if cell) > 1 for row in rows[count:])
    return count if wider_follows else 0


def _note_rows(rows: list[list[str]]) -> tuple[int, int]:
    """Where the table lies between free-text notes: ``rows[:above]`` are notes over it, ``rows[below:]`` under it.

    The table is the first run of at least three rows (or all that is left) each filling all but at most one
    of the widest row's cells; the rows before it are notes only when each is narrower than the widest row and
    holds no number or date, so a table with gaps in its rows is never cut at a gap. The rows after it are
    notes when there are at most five, each at most half full and without a number or date.
    """
    filled = [sum(1 for cell in row if cell) for row in rows]
    width = max(filled, default=0)
    if width < 3:
        return 0, len(rows)
    dense = [count >= width - 1 for count in filled]
    above = 0
    while above < min(_MAX_NOTE_ROWS, len(rows)):
        run = next((i for i, d in enumerate(dense[above:]) if not d), len(rows) - above)
        if run >= min(3, len(rows) - above):
            break
        above += 1
    else:
        return 0, len(rows)
    if any(filled[i] >= width or _has_values(rows[i]) for i in range(above)):
        return 0, len(rows)
    below = len(rows)
    while below - above > 2 and len(rows) - below < 5 and filled[below - 1] * 2 <= width:
        if _has_values(rows[below - 1]):
            break
        below -= 1
    return above, below


def _has_values(row: list[str]) -> bool:
    return any(is_number(cell) or _ISO_DATE_RE.match(cell) for cell in row)


def _note_line(row: list[str]) -> str:
    return " ".join(cell for cell in row if cell)


def _table(out: TextBuilder, header: str, rows: Sequence[str], caption: str) -> TableSpan:
    if header:
        return out.table(header, rows, caption=caption)
    # No header line: the table starts at its first row, so no empty line is cited as part of it.
    spans: list[RowSpan] = []
    start = end = 0
    for index, row in enumerate(rows):
        if index:
            out.append("\n")
            row_start, end = out.append(row)
        else:
            row_start, end = out.paragraph(row)
            start = row_start
        spans.append(RowSpan(row_start, end, index))
    return TableSpan(start, end, tuple(spans), header="", caption=caption)
