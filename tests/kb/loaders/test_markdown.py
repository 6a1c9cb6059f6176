"""Markdown: the source is the text; ATX headings become sections and GFM pipe tables become tables."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sextant.kb.documents import LoadedDocument, LoadError
from sextant.kb.loaders import load_bytes, markdown
from sextant.kb.loaders.builder import lines_with_offsets
from tests.kb.loaders.pdf_factory import assert_well_formed

GUIDE = """\
# Climbing Gym Guide

Welcome.

## Fees

**Table 1:** Day passes

| Pass | Price | Notes |
|:-----|------:|-------|
| Adult | 18 | |
| Child \\| under 12 | 10 | with a parent |

Prices include shoes.

### Rentals
#### Deep ####
```sh
# this is a shell comment, not a heading
| not | a | table |
|-----|---|-------|
```

# Safety

| Rule | Why |
|------|-----|
| Check knots | falls |
"""


@pytest.fixture(scope="module")
def guide() -> LoadedDocument:
    return markdown.load(GUIDE.encode(), "gym/guide.md")


def test_the_source_is_the_text_and_the_first_h1_the_title(guide: LoadedDocument) -> None:
    assert guide.text == GUIDE
    assert guide.title == "Climbing Gym Guide"
    assert guide.pages == ()
    assert_well_formed(guide)


def test_atx_headings_nest_by_level_and_code_fences_hide_hashes(guide: LoadedDocument) -> None:
    found = [(s.title, s.level) for s in guide.sections]
    assert found == [("Climbing Gym Guide", 1), ("Fees", 2), ("Rentals", 3), ("Deep", 4), ("Safety", 1)]
    fees = guide.sections[1]
    assert guide.text[fees.start : fees.end].startswith("## Fees\n")
    assert fees.end == guide.text.index("# Safety")
    inner = guide.section_at(guide.text.index("Prices include"))
    assert inner is not None and inner.title == "Fees"


def test_pipe_tables_have_header_caption_and_one_row_per_body_line(guide: LoadedDocument) -> None:
    fees, safety = guide.tables
    assert fees.header == "| Pass | Price | Notes |"
    assert fees.caption == "Table 1: Day passes"
    rows = [guide.text[r.start : r.end] for r in fees.rows]
    assert rows == ["| Adult | 18 | |", "| Child \\| under 12 | 10 | with a parent |"]
    assert guide.text[fees.start : fees.end].endswith("with a parent |")
    assert (safety.caption, len(safety.rows)) == ("", 1)


def test_split_cells_respects_escaped_pipes() -> None:
    assert markdown.split_cells("| a \\| b | c |") == ["a \\| b", "c"]
    assert markdown.split_cells("a | b") == ["a", "b"]


def test_a_header_without_a_matching_delimiter_row_is_not_a_table() -> None:
    doc = markdown.load(b"| a | b |\n|---|\n| 1 | 2 |\n\nx | y\nnot a rule\n", "t.md")
    assert doc.tables == ()


def test_without_an_h1_the_file_stem_is_the_title_and_crlf_offsets_stay_exact() -> None:
    source = "## Only a subsection\r\n\r\n| k | v |\r\n|---|---|\r\n| a | 1 |\r\n"
    doc = load_bytes(source.encode("utf-8-sig"), "notes/meeting-2024.markdown")
    assert doc.title == "meeting-2024"
    (table,) = doc.tables
    assert doc.text[table.rows[0].start : table.rows[0].end] == "| a | 1 |"
    assert doc.text[doc.sections[0].start :].startswith("## Only a subsection")


SETEXT = """\
Climbing Gym Guide
==================

Welcome to the gym.

Fees and
day passes
----------
Prices include shoes.

---

A rule after a blank line is a thematic break, not a heading.

- a list item
---
> a quote
---
    indented code
---
| Pass | Price |
|------|------:|
| Adult | 18 |

a | b
---
```
Not a heading
=============
```
"""


def test_setext_headings_are_sections_and_thematic_breaks_are_not() -> None:
    doc = markdown.load(SETEXT.encode(), "setext.md")
    found = [(s.title, s.level) for s in doc.sections]
    # "a | b" over "---" is no table (one delimiter cell for two header cells): it is a heading.
    assert found == [("Climbing Gym Guide", 1), ("Fees and day passes", 2), ("a | b", 2)]
    assert doc.title == "Climbing Gym Guide"
    fees = doc.sections[1]
    assert doc.text[fees.start :].startswith("Fees and\nday passes\n---")
    assert fees.end == doc.text.index("a | b")
    assert [t.header for t in doc.tables] == ["| Pass | Price |"]
    assert_well_formed(doc)


def test_yaml_front_matter_is_skipped() -> None:
    source = "---\ntitle: Notes\n# a YAML comment\n---\nBody\n\n# Real heading\n"
    doc = markdown.load(source.encode(), "front.md")
    assert [(s.title, s.level) for s in doc.sections] == [("Real heading", 1)]
    # Without a closing line the opening one is a thematic break and what follows is Markdown.
    unclosed = markdown.load(b"---\nTitle\n=====\n", "open.md")
    assert [(s.title, s.level) for s in unclosed.sections] == [("Title", 1)]


def test_undecodable_and_empty_markdown_is_refused() -> None:
    with pytest.raises(LoadError, match="UTF-8"):
        markdown.load(b"# Caf\xe9\n", "latin1.md")
    with pytest.raises(LoadError, match="empty"):
        markdown.load(b"\n\n", "empty.md")


Block = tuple[str, list[tuple[str, int]], list[list[str]]]  # markdown, its headings, its table rows


def _table_block(cells: list[tuple[str, str]]) -> Block:
    rows = [f"| {a} | {b} |" for a, b in cells]
    return "\n".join(["| h1 | h2 |", "|----|----|", *rows]), [], [rows]


_words = st.text(alphabet="abcdefghij ", min_size=1, max_size=12).map(str.strip).filter(bool)
_heading: st.SearchStrategy[Block] = st.tuples(st.integers(1, 6), _words).map(
    lambda t: ("#" * t[0] + " " + t[1], [(t[1], t[0])], [])
)
_setext: st.SearchStrategy[Block] = st.tuples(st.sampled_from("=-"), st.integers(1, 12), _words).map(
    lambda t: (t[2] + "\n" + t[0] * t[1], [(t[2], 1 if t[0] == "=" else 2)], [])
)
_table = st.lists(st.tuples(_words, _words), min_size=1, max_size=4).map(_table_block)
_para: st.SearchStrategy[Block] = _words.map(lambda words: (words, [], []))


@settings(derandomize=True, deadline=None, max_examples=100)
@given(st.lists(st.one_of(_heading, _setext, _table, _para), min_size=1, max_size=10))
def test_generated_documents_give_back_what_was_written(blocks: list[Block]) -> None:
    doc = markdown.load("\n\n".join(text for text, _, _ in blocks).encode(), "gen.md")
    assert [(s.title, s.level) for s in doc.sections] == [h for _, heads, _ in blocks for h in heads]
    assert [[doc.text[r.start : r.end] for r in t.rows] for t in doc.tables] == [
        rows for _, _, tables in blocks for rows in tables
    ]
    assert_well_formed(doc)


# Lines from which documents are drawn at random and parsed by a CommonMark implementation too.
_LINES = [
    "word",
    "more words",
    "Title",
    "===",
    "---",
    "-",
    "   ---",
    "- - -",
    "***",
    "- item",
    "1. item",
    "2. item",
    "> quote",
    "# Title",
    "    code",
    "\tcode",
    "  indented",
    "| a | b |",
    "|---|---|",
    "```",
    "",
    "",
]


@settings(derandomize=True, deadline=None, max_examples=400)
@given(st.lists(st.sampled_from(_LINES), min_size=1, max_size=8))
def test_headings_agree_with_a_commonmark_parser(lines: list[str]) -> None:
    markdown_it = pytest.importorskip("markdown_it")
    source = "\n".join(lines) + "\n"
    if not source.strip() or lines[0] == "---" or ("|---|---|" in lines and any("code" in x for x in lines)):
        return  # front matter is not CommonMark; a table ended by indented code is a known difference
    parser = markdown_it.MarkdownIt("commonmark").enable("table")
    expected = [(t.map[0], int(t.tag[1])) for t in parser.parse(source) if t.type == "heading_open" and t.level == 0]
    doc = markdown.load(source.encode(), "random.md")
    line_of = {start: n for n, (start, _) in enumerate(lines_with_offsets(source))}
    assert [(line_of[s.start], s.level) for s in doc.sections] == expected
