"""Plain text loader: the file's text verbatim, with sections where it underlines its headings.

Plain text has no markup, but many files mark headings the way Markdown's setext headings and
reStructuredText do: a line underlined with ``=`` (level 1) or ``-`` (level 2). Such a heading is
a non-empty line after a blank line (or at the start of the file, or under an overline of the same
character), followed by a line of three or more ``=`` or ``-`` about as long as it. A file with no
underlined headings may instead set them in capitals, alone between blank lines ("SAFETY RULES");
those count only when there are at least two, so one shouted line is not taken for structure.
"""

from __future__ import annotations

import re

from sextant.kb.documents import LoadedDocument, LoadError
from sextant.kb.loaders.builder import TITLE_MAX_CHARS, Heading, clean_title, close_sections, lines_with_offsets, stem

_RULE_RE = re.compile(r"^[ \t]*(=+|-+)[ \t]*$")
_MIN_RULE = 3
_RULE_SLACK = 3  # characters a rule may miss or overshoot its title by, beyond the ratios below
_CAPS_MAX_CHARS = 60
_CAPS_MIN_LETTERS = 3
_CAPS_MIN_HEADINGS = 2
_SENTENCE_END = (".", ",", ";", ":", "!", "?")

Line = tuple[int, str]  # (start offset, text without its line ending)


def load(data: bytes, name: str) -> LoadedDocument:
    """Load a plain text file: no pages or tables; sections from underlined or capitalised headings.

    Raises:
        LoadError: the file is empty, binary, or not UTF-8.
    """
    text = decode_text(data, name)
    found = headings(text)
    title = next((h.title for h in found if h.level == 1), "") or first_line_title(text) or stem(name)
    return LoadedDocument(text=text, title=clean_title(title), sections=close_sections(found, len(text)))


def headings(text: str) -> list[Heading]:
    """Underlined headings; failing those, headings set in capitals between blank lines."""
    lines = list(lines_with_offsets(text))
    return _underlined(lines) or _capitalised(lines)


def _underlined(lines: list[Line]) -> list[Heading]:
    found: list[Heading] = []
    for n in range(len(lines) - 1):
        start, raw = lines[n]
        title = raw.strip()
        rule = _RULE_RE.match(lines[n + 1][1])
        if rule is None or not _heading_shaped(title) or not _fits(rule.group(1), title):
            continue
        char = rule.group(1)[0]
        above = lines[n - 1][1] if n else ""
        if _RULE_RE.match(above) and above.strip()[0] == char:  # an overline: the heading starts there
            start, above = lines[n - 1][0], lines[n - 2][1] if n >= 2 else ""
        if not above.strip():
            found.append(Heading(start, title, 1 if char == "=" else 2))
    return found


def _fits(rule: str, title: str) -> bool:
    """A rule is about as long as its title: at least half of it, at most twice it."""
    return len(rule) >= _MIN_RULE and len(title) / 2 <= len(rule) <= 2 * len(title) + _RULE_SLACK


def _heading_shaped(title: str) -> bool:
    return 0 < len(title) <= TITLE_MAX_CHARS and any(ch.isalnum() for ch in title)


def _capitalised(lines: list[Line]) -> list[Heading]:
    found: list[Heading] = []
    for n, (start, raw) in enumerate(lines):
        title = raw.strip()
        blank_above = n == 0 or not lines[n - 1][1].strip()
        blank_below = n + 1 < len(lines) and not lines[n + 1][1].strip()
        if blank_above and blank_below and _in_capitals(title):
            found.append(Heading(start, title, 1))
    return found if len(found) >= _CAPS_MIN_HEADINGS else []


def _in_capitals(title: str) -> bool:
    letters = [ch for ch in title if ch.isalpha()]
    return (
        len(title) <= _CAPS_MAX_CHARS
        and len(letters) >= _CAPS_MIN_LETTERS
        and all(ch.isupper() for ch in letters)
        and not title.endswith(_SENTENCE_END)
    )


def first_line_title(text: str) -> str:
    """The first line holding a letter or digit, trimmed to a title's length; empty if there is none."""
    for line in text.splitlines():
        if any(ch.isalnum() for ch in line):
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
