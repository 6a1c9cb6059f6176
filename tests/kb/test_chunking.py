from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sextant.kb.chunking import ChunkingConfig, chunk_document
from sextant.kb.documents import LoadedDocument, PageSpan, RowSpan, SectionSpan, TableSpan
from sextant.kb.embeddings import Embedder

SENTENCE = "The keeper lit the lamp at dusk and trimmed the wick before the first ship passed the reef. "


def _paged(pages: list[str]) -> LoadedDocument:
    text, spans = "", []
    for number, body in enumerate(pages, start=1):
        start = len(text)
        text += body
        spans.append(PageSpan(start=start, end=len(text), number=number, label=f"p{number}"))
        text += "\n\n"
    return LoadedDocument(text=text, title="Paged", pages=tuple(spans))


def test_prose_chunks_are_exact_slices_within_the_token_budget(embedder: Embedder) -> None:
    doc = LoadedDocument(text=SENTENCE * 60, title="Lamp")
    config = ChunkingConfig(target=64)
    chunks = chunk_document(doc, embedder, config)
    assert len(chunks) > 5
    for chunk in chunks:
        assert chunk.text == doc.text[chunk.start : chunk.end]
        assert embedder.count_tokens(chunk.text) <= config.target
    # Consecutive chunks overlap (a fifth of the target), and together they cover the text.
    assert all(b.start < a.end for a, b in itertools.pairwise(chunks))
    assert chunks[0].start == 0 and chunks[-1].end == len(doc.text.rstrip())


def test_cuts_prefer_sentence_ends(embedder: Embedder) -> None:
    doc = LoadedDocument(text=SENTENCE * 40, title="Lamp")
    chunks = chunk_document(doc, embedder, ChunkingConfig(target=64))
    assert all(c.text.endswith(".") for c in chunks)
    assert all(c.text.startswith("The keeper") for c in chunks)


def test_chunks_carry_the_pages_and_section_they_touch(embedder: Embedder) -> None:
    doc = _paged([SENTENCE * 3, SENTENCE * 5, "Closing remarks on the reef light."])
    doc = LoadedDocument(
        text=doc.text,
        title=doc.title,
        pages=doc.pages,
        sections=(SectionSpan(start=doc.pages[1].start, end=len(doc.text), title="Second part"),),
    )
    chunks = chunk_document(doc, embedder, ChunkingConfig(target=80))
    # A page start is the strongest boundary: no chunk starts mid-page when a page start was in reach.
    by_page = {c.page.number: c for c in chunks if c.page is not None and c.start == c.page.start}
    assert set(by_page) >= {1, 2}
    assert by_page[2].section == "Second part" and by_page[1].section == ""
    assert by_page[2].page is not None and by_page[2].page.label == "p2"
    assert all(c.pages and c.pages[0] == c.page.number for c in chunks if c.page)


def test_table_chunks_repeat_caption_and_header_and_point_at_rows(embedder: Embedder) -> None:
    intro = "Prices for the season follow.\n"
    caption, header = "Table 1: Ferry fares", "route | adult | child"
    rows = [f"route {i} | {i + 3}.50 | {i + 1}.25" for i in range(12)]
    table_text = caption + "\n" + header + "\n" + "\n".join(rows)
    text = intro + table_text + "\n\nAfter the table comes prose again."
    t0 = len(intro)
    row_spans, cursor = [], t0 + len(caption) + 1 + len(header) + 1
    for i, row in enumerate(rows):
        row_spans.append(RowSpan(start=cursor, end=cursor + len(row), index=i))
        cursor += len(row) + 1
    table = TableSpan(start=t0, end=t0 + len(table_text), rows=tuple(row_spans), header=header, caption=caption)
    doc = LoadedDocument(text=text, title="Fares", tables=(table,))
    chunks = chunk_document(doc, embedder, ChunkingConfig(target=200, max_table_rows=5))
    tables = [c for c in chunks if c.kind == "table"]
    assert [c.rows for c in tables] == [(0, 1, 2, 3, 4), (5, 6, 7, 8, 9), (10, 11)]
    for c in tables:
        assert c.prefix == f"{caption}\n{header}\n"
        assert c.text == c.prefix + doc.text[c.start : c.end]
        assert doc.text[c.start : c.end].startswith("route ")  # the span holds rows alone
    prose = [c for c in chunks if c.kind == "text"]
    assert [c.text for c in prose] == ["Prices for the season follow.", "After the table comes prose again."]


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.text(alphabet=st.characters(codec="utf-8", categories=["L", "N", "P", "Zs"]), min_size=1, max_size=400),
        min_size=1,
        max_size=12,
    ),
    st.integers(min_value=32, max_value=120),
)
def test_any_text_is_covered_by_exact_chunks(embedder: Embedder, paragraphs: list[str], target: int) -> None:
    text = "\n\n".join(paragraphs)
    if not text.strip():
        return
    doc = LoadedDocument(text=text, title="t")
    chunks = chunk_document(doc, embedder, ChunkingConfig(target=target))
    assert chunks
    covered = [False] * len(text)
    for c in chunks:
        assert c.text == text[c.start : c.end]
        for i in range(c.start, c.end):
            covered[i] = True
    assert all(covered[i] for i, ch in enumerate(text) if not ch.isspace() and embedder.count_tokens(ch) > 0)


def test_a_chunk_size_past_the_embedder_window_is_refused(embedder: Embedder, tmp_path: pytest.TempPathFactory) -> None:
    from sextant.kb.knowledge_base import KnowledgeBase, KnowledgeBaseError
    from sextant.settings import KbSettings

    too_big = KbSettings(chroma_dir=tmp_path, chunk_tokens=embedder.max_tokens + 1, _env_file=None)  # type: ignore[call-arg]
    with pytest.raises(KnowledgeBaseError, match="SEXTANT_CHUNK_TOKENS"):
        KnowledgeBase.open(too_big, embedder=embedder)
