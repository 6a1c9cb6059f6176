"""The typed chunk metadata: what the writer stores is what search reads back, through Chroma's scalars."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sextant.kb.chunk_meta import ChunkMeta
from sextant.kb.chunking import Chunk
from sextant.kb.documents import PageSpan
from sextant.kb.stored import DocumentRecord

RECORD = DocumentRecord(
    id="manual", title="Manual", source="manual.pdf", category="howto", content_hash="0" * 64,
    chunk_count=1, chars=100, about="", ingested_at="",
)  # fmt: skip

numbers = st.lists(st.integers(0, 100_000), max_size=6).map(tuple)
metas = st.builds(
    ChunkMeta,
    doc_id=st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,20}", fullmatch=True),
    title=st.text(max_size=30),
    source=st.text(max_size=30),
    category=st.text(max_size=10),
    index=st.integers(-1, 10_000),
    start=st.integers(0, 10**7),
    end=st.integers(0, 10**7),
    kind=st.sampled_from(["text", "table", "overview"]),
    prefix_chars=st.integers(0, 500),
    section=st.text(max_size=30),
    pages=numbers,
    rows=numbers,
    page=st.none() | st.integers(1, 5000),
    page_label=st.none() | st.text(max_size=8),
    page_unit=st.sampled_from(["page", "slide"]),
    anchor=st.text(max_size=30),
    dense_key=st.text(alphabet="0123456789abcdef", max_size=32),
)


@given(metas)
def test_every_record_round_trips_through_scalars_only(meta: ChunkMeta) -> None:
    stored = meta.to_chroma()
    assert all(isinstance(v, str | int) for v in stored.values())
    assert ChunkMeta.from_chroma(stored) == meta


def test_a_chunk_on_a_page_carries_its_document_place_and_spans() -> None:
    page = PageSpan(start=0, end=100, number=3, label="iii")
    chunk = Chunk(index=2, start=10, end=60, text="| a | b |\nrow", prefix="| a | b |\n", kind="table",
                  page=page, pages=(3, 4), section="Care", rows=(1, 2))  # fmt: skip
    meta = ChunkMeta.of_chunk(RECORD, chunk)
    assert (meta.doc_id, meta.title, meta.source, meta.category) == ("manual", "Manual", "manual.pdf", "howto")
    assert (meta.page, meta.page_label, meta.pages, meta.rows, meta.prefix_chars) == (3, "iii", (3, 4), (1, 2), 10)
    assert meta.to_chroma()["pages"] == "3,4" and meta.to_chroma()["rows"] == "1,2"


def test_an_overview_is_cited_to_the_whole_document() -> None:
    meta = ChunkMeta.of_overview(RECORD)
    assert (meta.kind, meta.index, meta.page, meta.pages) == ("overview", -1, None, ())
    assert "page" not in meta.to_chroma() and "dense_key" not in meta.to_chroma()


def test_metadata_written_before_a_field_existed_reads_as_its_default() -> None:
    old = {"doc_id": "notes", "start": 0, "end": 12, "kind": "text"}
    assert ChunkMeta.from_chroma(old) == ChunkMeta(doc_id="notes", title="notes", start=0, end=12)


def test_a_slide_and_a_sections_anchor_travel_with_the_chunk() -> None:
    slide = PageSpan(start=0, end=100, number=7, label="7", unit="slide")
    chunk = Chunk(index=0, start=0, end=40, text="Roadmap", prefix="", kind="text", page=slide, pages=(7,),
                  section="Roadmap", anchor="roadmap")  # fmt: skip
    meta = ChunkMeta.of_chunk(RECORD, chunk)
    assert (meta.page_unit, meta.anchor) == ("slide", "roadmap")
    assert ChunkMeta.from_chroma(meta.to_chroma()) == meta
    plain = ChunkMeta.of_chunk(RECORD, Chunk(0, 0, 4, "text", "", "text", None, (), ""))
    assert "page_unit" not in plain.to_chroma() and "anchor" not in plain.to_chroma()  # older stores' keys only
