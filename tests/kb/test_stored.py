"""What the store holds: a record written as Chroma metadata reads back as itself; chunk ids name their version."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sextant.kb.documents import PageSpan, SectionSpan
from sextant.kb.stored import DocumentRecord, chunk_id, record_from, record_meta

text = st.text(max_size=40)
pages = st.builds(PageSpan, st.integers(0, 10**6), st.integers(0, 10**6), st.integers(1, 10**4), text)
sections = st.builds(SectionSpan, st.integers(0, 10**6), st.integers(0, 10**6), text, st.integers(1, 6))
records = st.builds(
    DocumentRecord,
    id=st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,20}", fullmatch=True),
    title=text,
    source=text,
    category=text,
    content_hash=st.from_regex(r"[0-9a-f]{64}", fullmatch=True),
    chunk_count=st.integers(0, 10**5),
    chars=st.integers(0, 10**8),
    about=text,
    ingested_at=text,
    pages=st.lists(pages, max_size=5).map(tuple),
    sections=st.lists(sections, max_size=5).map(tuple),
    overview=text,
    file_hash=st.from_regex(r"([0-9a-f]{64})?", fullmatch=True),
)


@given(records, text)
def test_a_record_written_as_metadata_reads_back_as_itself(record: DocumentRecord, body: str) -> None:
    stored = dict(record_meta(record))
    assert all(isinstance(v, str | int) for v in stored.values())  # what Chroma metadata can hold
    assert record_from(record.id, stored, body) == DocumentRecord(**{**_fields(record), "text": body})


def test_chunk_ids_carry_the_version_and_the_overview_has_its_own() -> None:
    record = DocumentRecord("tea", "Tea", "", "", "ab" * 32, 2, 10, "", "", overview="About tea.")
    assert record.chunk_ids() == [chunk_id("tea", "ab" * 32, 0), "tea~abababababab~1", "tea~abababababab~overview"]
    assert record.version == "abababababab"


def _fields(record: DocumentRecord) -> dict[str, object]:
    return {name: getattr(record, name) for name in DocumentRecord.__dataclass_fields__}
