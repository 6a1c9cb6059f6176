from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import pytest

from sextant.contract.results import SkippedPageInfo
from sextant.kb.derived_indexes import lock_folder
from sextant.kb.document_ids import document_id_for
from sextant.kb.documents import LoadedDocument, PageSpan, SectionSpan, SkippedPage, join_pages
from sextant.kb.embeddings import Embedder
from sextant.kb.fusion import RRF_K
from sextant.kb.knowledge_base import KnowledgeBase, KnowledgeBaseError, ToIngest
from sextant.kb.lexical import LexicalIndex
from sextant.kb.search import feedback_vector
from sextant.kb.store_journal import JournalEntry, StoreJournal
from sextant.kb.store_lock import StoreLock
from sextant.settings import KbSettings

ESPRESSO = (
    "Descale the espresso machine every eight weeks with a citric acid solution. "
    "Backflush the group head weekly using a blind basket and detergent. "
    "Replace the group gasket when shots start to leak around the portafilter."
)
BEES = (
    "In early spring the beekeeper checks that the queen is laying and that stores of honey last until "
    "the first nectar flow. Swarm control starts in May by adding supers and splitting strong colonies."
)
# One single-chunk document each, about the kitchen, the hive and the garden.
HOUSEHOLD = {
    "espresso": ESPRESSO,
    "bees": BEES,
    "kettle": "The kettle boils water for tea in three minutes and switches itself off.",
    "grinder": "Clean the burr grinder monthly: brush out old grounds so that the beans taste fresh.",
    "garden": "Water the tomato plants every morning and tie them to stakes as they grow.",
}


def _doc(text: str, title: str, pages: int = 0) -> LoadedDocument:
    if not pages:
        return LoadedDocument(text=text, title=title)
    size = len(text) // pages
    spans = tuple(
        PageSpan(start=i * size, end=len(text) if i == pages - 1 else (i + 1) * size, number=i + 1, label=str(i + 1))
        for i in range(pages)
    )
    return LoadedDocument(text=text, title=title, pages=spans)


def test_ingest_then_search_cites_document_page_and_terms(kb: KnowledgeBase) -> None:
    assert kb.ingest("espresso", _doc(ESPRESSO, "Espresso care"), source="espresso.md").status == "added"
    kb.ingest("bees", _doc(BEES, "Beekeeping calendar"))
    result = kb.search("how often should I descale my espresso machine?", k=3)
    assert not result.abstained
    top = result.hits[0]
    assert (top.document_id, top.title, top.source) == ("espresso", "Espresso care", "espresso.md")
    assert "descale" in top.matched_terms
    assert top.scores.dense is not None and top.scores.fused is not None and top.scores.bm25_rank == 1
    assert top.scored_by == "rrf"  # the default fusion
    stored = kb.chunk(top.chunk_id)
    assert kb.document("espresso").text[top.start : top.end] == stored.text


def test_without_a_query_encoder_questions_are_embedded_by_the_embedder(kb: KnowledgeBase) -> None:
    assert kb.searcher.embedder is kb.embedder and kb.stats().query_encoder is None


def test_reingest_of_unchanged_content_is_skipped_and_changed_content_replaced(kb: KnowledgeBase) -> None:
    long_text = " ".join([ESPRESSO] * 36)
    first = kb.ingest("espresso", _doc(long_text, "Espresso care"))
    assert first.status == "added" and first.chunks >= 11
    assert kb.ingest("espresso", _doc(long_text, "Espresso care")).status == "unchanged"
    shrunk = kb.ingest("espresso", _doc(ESPRESSO, "Espresso care"))
    assert (shrunk.status, shrunk.chunks) == ("replaced", 1)
    assert kb.stats().chunks == 1 and kb.stats().lexical_chunks == 1
    # No stale chunk of the long version can come back from either retriever.
    for mode in ("dense", "lexical"):
        hits = kb.search("backflush the group head", k=10, mode=mode, abstain=False).hits
        assert len(hits) == 1


def test_forget_removes_document_from_store_and_bm25(kb: KnowledgeBase) -> None:
    kb.ingest("espresso", _doc(ESPRESSO, "Espresso care"))
    kb.ingest("bees", _doc(BEES, "Beekeeping calendar"))
    assert kb.forget("espresso") == 1
    assert [d.id for d in kb.documents()] == ["bees"]
    lexical = kb.search("descale espresso citric acid", mode="lexical", abstain=False)
    assert all(h.document_id != "espresso" for h in lexical.hits)
    with pytest.raises(KnowledgeBaseError, match="no document"):
        kb.forget("espresso")


def test_the_bm25_index_persists_and_is_rebuilt_when_behind(settings: KbSettings, kb: KnowledgeBase) -> None:
    kb.ingest("espresso", _doc(ESPRESSO, "Espresso care"))
    reopened = KnowledgeBase.open(settings, embedder=kb.embedder)
    assert reopened.lexical.generation == reopened.store.generation
    assert reopened.search("gasket leak", mode="lexical", abstain=False).hits[0].document_id == "espresso"
    # Another writer (or a crash) moved the store on without this index: the next open catches up.
    other = KnowledgeBase.open(settings, embedder=kb.embedder)
    other.store.delete_document("espresso")
    caught_up = KnowledgeBase.open(settings, embedder=kb.embedder)
    assert len(caught_up.lexical) == 0


def test_paged_documents_report_page_labels(kb: KnowledgeBase) -> None:
    bodies = [ESPRESSO, BEES, ESPRESSO, "Harvest\nThe honey harvest happens in late August after the heather bloom."]
    text, pages = "", []
    for number, (body, label) in enumerate(zip(bodies, ["i", "ii", "1", "2"], strict=True), start=1):
        start = len(text)
        text += body + "\n\n"
        pages.append(PageSpan(start=start, end=len(text), number=number, label=label))
    harvest = SectionSpan(start=pages[3].start, end=len(text), title="Harvest")
    kb.ingest("bees", LoadedDocument(text=text, title="Bees", pages=tuple(pages), sections=(harvest,)))
    hit = kb.search("when is the honey harvest?", k=1).hits[0]
    assert (hit.page, hit.page_label, hit.section, hit.pages) == (4, "2", "Harvest", [4])
    assert hit.uri == "kb://documents/bees/pages/4"
    assert "heather" in kb.page_text("bees", 4)
    with pytest.raises(KnowledgeBaseError, match="has no page 9"):
        kb.page_text("bees", 9)


def test_search_within_documents_and_detail_levels(kb: KnowledgeBase) -> None:
    kb.ingest("espresso", _doc(ESPRESSO, "Espresso care"))
    kb.ingest("bees", _doc(BEES, "Beekeeping calendar"))
    only = kb.search("what to check in spring", doc_ids=["espresso"], abstain=False)
    assert {h.document_id for h in only.hits} == {"espresso"}
    assert all(h.text is None for h in kb.search("descale espresso", detail="ids").hits)
    assert kb.search("descale espresso", detail="full").hits[0].text == ESPRESSO


def test_off_corpus_questions_abstain(kb: KnowledgeBase) -> None:
    kb.ingest("espresso", _doc(ESPRESSO, "Espresso care"))
    kb.ingest("bees", _doc(BEES, "Beekeeping calendar"))
    result = kb.search("Who won the 1998 football world cup final?")
    assert result.abstained and result.hits == [] and result.reason.startswith("abstained")


def test_bad_requests_are_refused_with_a_reason(kb: KnowledgeBase) -> None:
    with pytest.raises(KnowledgeBaseError, match="invalid document id"):
        kb.ingest("../etc/passwd", _doc(ESPRESSO, "x"))
    with pytest.raises(KnowledgeBaseError, match="no text"):
        kb.ingest("blank", _doc("   \n", "x"))
    with pytest.raises(KnowledgeBaseError, match="empty"):
        kb.search("   ")
    with pytest.raises(KnowledgeBaseError, match="cross-encoder"):
        kb.search("espresso", mode="rerank")


def test_document_ids_come_from_file_names() -> None:
    from pathlib import Path

    assert document_id_for(Path("/x/R-intro.pdf")) == "R-intro"
    assert document_id_for(Path("Meeting notes (final).docx")) == "Meeting-notes-final"


def test_a_batch_saves_the_bm25_index_once_at_its_end(settings: KbSettings, kb: KnowledgeBase) -> None:
    with kb.batch():
        kb.ingest("espresso", _doc(ESPRESSO, "Espresso care"))
        kb.ingest("bees", _doc(BEES, "Beekeeping calendar"))
        on_disk = LexicalIndex.open(kb.settings.store_dir() / "bm25")
        assert len(on_disk) == 0  # nothing saved mid-batch
    reopened = LexicalIndex.open(kb.settings.store_dir() / "bm25")
    assert len(reopened) == 2 and reopened.generation == kb.store.generation


def test_retrievers_index_chunks_under_their_title_and_section(kb: KnowledgeBase) -> None:
    doc = LoadedDocument(
        text="Harvest\nIt happens in late August.",
        title="Heather honey",
        sections=(SectionSpan(start=0, end=34, title="Harvest"),),
    )
    kb.ingest("honey", doc)
    # "heather" is only in the title: the chunk is found by it, yet shows and cites only its own text.
    hit = kb.search("heather", mode="lexical", abstain=False, detail="full").hits[0]
    assert hit.document_id == "honey" and hit.text == doc.text


def test_a_document_over_a_size_limit_is_refused_before_anything_is_written(
    settings: KbSettings, embedder: Embedder
) -> None:
    limited = settings.model_copy(update={"chunk_tokens": 32, "max_document_chars": 1000, "max_chunks_per_document": 2})
    words = " ".join(f"word{i}" for i in range(120))  # ~800 characters: under 1,000, but more than two chunks
    with KnowledgeBase.open(limited, embedder=embedder) as kb:
        with pytest.raises(KnowledgeBaseError, match="1,001 characters, more than SEXTANT_MAX_DOCUMENT_CHARS=1000"):
            kb.ingest("long", LoadedDocument(text="x" * 1001, title="Long"))
        with pytest.raises(KnowledgeBaseError, match=r"chunks, more than SEXTANT_MAX_CHUNKS_PER_DOCUMENT=2"):
            kb.ingest("many", LoadedDocument(text=words, title="Many"))
        assert (kb.store.document_count(), kb.store.chunk_count(), len(kb.lexical)) == (0, 0, 0)


def test_pages_left_out_by_the_loader_are_named_in_every_outcome(kb: KnowledgeBase) -> None:
    skipped = SkippedPage(number=2, label="ii", reason="damaged, MuPDF got no text from it (zlib error)")
    doc = dataclasses.replace(_doc(ESPRESSO + " " + BEES, "Care", pages=3), skipped_pages=(skipped,))
    expected = [SkippedPageInfo(number=2, label="ii", reason=skipped.reason)]
    added = kb.ingest("care", doc)
    assert (added.status, added.skipped_pages) == ("added", expected)
    # The document is still missing the page when nothing changed, so an unchanged outcome says so too.
    again = kb.ingest("care", doc)
    assert (again.status, again.skipped_pages) == ("unchanged", expected)
    assert kb.ingest("whole", _doc(BEES, "Bees", pages=2)).skipped_pages == []


def test_a_new_version_embeds_only_the_chunks_whose_text_is_new(kb: KnowledgeBase) -> None:
    paragraphs = [f"Section {i}. " + ESPRESSO for i in range(12)]
    first = kb.ingest("care", _doc("\n\n".join(paragraphs), "Espresso care"))
    assert first.embedded == first.chunks >= 3
    edited = kb.ingest("care", _doc("\n\n".join([*paragraphs[:-1], BEES]), "Espresso care"))
    assert edited.status == "replaced" and 0 < edited.embedded < edited.chunks
    # The vectors kept are those a fresh embedding gives: dense search still finds the unchanged text.
    hits = kb.search("Section 0 descale the espresso machine", k=1, mode="dense", abstain=False).hits
    assert hits[0].document_id == "care" and kb.stats().chunks == edited.chunks


def test_a_document_stored_under_a_new_id_reuses_the_old_ids_vectors(kb: KnowledgeBase) -> None:
    doc = _doc(ESPRESSO + "\n\n" + BEES, "Espresso and bees")
    kb.ingest("draft", doc, source="/docs/draft.md", file_hash="f" * 64)
    moved = kb.ingest("final", doc, source="/docs/final.md", file_hash="f" * 64, reuse_vectors_of="draft")
    assert (moved.status, moved.embedded) == ("added", 0) and moved.chunks >= 1
    draft, final = kb.store.get_document("draft"), kb.store.get_document("final")
    assert draft is not None and final is not None and final.file_hash == "f" * 64
    [old] = kb.store.get_chunks(draft.chunk_ids()[:1], vectors=True)
    [new] = kb.store.get_chunks(final.chunk_ids()[:1], vectors=True)
    assert old.vector is not None and new.vector is not None
    assert np.array_equal(old.vector, new.vector)
    # Another title is other indexed text: that vector is embedded afresh, not reused.
    retitled = kb.ingest("other", _doc(ESPRESSO + "\n\n" + BEES, "Other title"), reuse_vectors_of="draft")
    assert retitled.embedded == retitled.chunks


def test_new_bytes_of_the_same_content_are_a_new_version_without_embedding(kb: KnowledgeBase) -> None:
    doc = _doc(ESPRESSO, "Espresso care")
    kb.ingest("care", doc, file_hash="a" * 64)
    assert kb.ingest("care", doc, file_hash="a" * 64).status == "unchanged"
    resaved = kb.ingest("care", doc, file_hash="b" * 64)
    assert (resaved.status, resaved.embedded) == ("replaced", 0)
    record = kb.store.get_document("care")
    assert record is not None and record.file_hash == "b" * 64


def test_the_dense_weight_setting_weighs_the_dense_list_in_rank_fusion(
    settings: KbSettings, embedder: Embedder
) -> None:
    heavy = settings.model_copy(update={"fusion": "rrf", "dense_weight": 5.0})
    with KnowledgeBase.open(heavy, embedder=embedder) as kb:
        kb.ingest("espresso", _doc(ESPRESSO, "Espresso care"))
        kb.ingest("bees", _doc(BEES, "Beekeeping calendar"))
        hits = kb.search("descale the espresso machine", k=2, abstain=False).hits
        assert kb.stats().dense_weight == 5.0  # kb_stats names the weight a search runs with
    assert hits and all(h.scores.dense_rank is not None and h.scored_by == "rrf" for h in hits)
    for hit in hits:
        lexical = 1.0 / (RRF_K + hit.scores.bm25_rank) if hit.scores.bm25_rank is not None else 0.0
        assert hit.scores.fused == pytest.approx(5.0 / (RRF_K + hit.scores.dense_rank) + lexical, abs=1e-6)


def test_score_fusion_weighs_every_candidate_by_its_cosine_and_its_bm25_over_the_best(
    settings: KbSettings, embedder: Embedder
) -> None:
    docs = HOUSEHOLD
    question = "weekly tea and water"
    with KnowledgeBase.open(settings.model_copy(update={"fusion": "scores"}), embedder=embedder) as kb:
        for doc_id, text in docs.items():
            kb.ingest(doc_id, _doc(text, doc_id.title()))
        assert (kb.stats().fusion, kb.stats().dense_weight) == ("scores", 1.5)  # score fusion's own weight
        # Two from each list: every candidate comes back (one chunk per document), some from one list only.
        result = kb.search(question, k=5, abstain=False, depth=2)
        bm25 = kb.lexical.scores(question, [h.chunk_id for h in result.hits])
        # One list alone is that list's order.
        lexical = kb.search(question, k=5, abstain=False, mode="lexical").hits
        dense = kb.search(question, k=5, abstain=False, mode="dense").hits

    assert [h.scores.bm25_rank for h in lexical] == [1, 2, 3]
    assert [h.scores.dense_rank for h in dense] == [1, 2, 3, 4, 5]
    hits = result.hits
    assert len(hits) == 3 and all(s > 0 for s in bm25.values())
    # The garden's "water" is third in BM25, below the cut; its score still counts.
    assert [h.document_id for h in hits if h.scores.bm25_rank is None] == ["garden"]
    cosine = {h.chunk_id: max(h.scores.dense or 0.0, 0.0) for h in hits}
    for hit in hits:
        expected = 1.5 * cosine[hit.chunk_id] / max(cosine.values()) + bm25[hit.chunk_id] / max(bm25.values())
        assert hit.scores.fused == pytest.approx(expected, abs=1e-5)
    assert [h.scores.fused for h in hits] == sorted((h.scores.fused or 0.0 for h in hits), reverse=True)


def test_feedback_searches_the_dense_list_again_from_the_best_passages(
    settings: KbSettings, embedder: Embedder
) -> None:
    docs = HOUSEHOLD
    fed_scores = settings.model_copy(update={"dense_feedback": 2, "fusion": "scores"})
    with KnowledgeBase.open(fed_scores, embedder=embedder) as kb:
        for doc_id, text in docs.items():
            kb.ingest(doc_id, _doc(text, doc_id.title()))
        assert kb.stats().dense_feedback == 2
        question = "weekly cleaning routine"
        kb.searcher.feedback = 0
        plain = kb.search(question, k=5, abstain=False)
        kb.searcher.feedback = 2
        fed = kb.search(question, k=5, abstain=False)
        best = [c.vector for c in kb.store.get_chunks([h.chunk_id for h in plain.hits[:2]], vectors=True)]
        moved = feedback_vector(kb.embedder.embed_query(question), [v for v in best if v is not None])
        expected = [chunk_id for chunk_id, _ in kb.store.query(moved, 30, None)]
        vectors = {c.id: c.vector for c in kb.store.get_chunks([h.chunk_id for h in fed.hits], vectors=True)}
        bm25 = kb.lexical.scores(question, vectors)

    assert [h.document_id for h in plain.hits[:2]] == ["grinder", "espresso"]
    assert "feedback" in fed.timings_ms and "feedback" not in plain.timings_ms
    assert [h.scores.dense_rank for h in fed.hits] == [expected.index(h.chunk_id) + 1 for h in fed.hits]
    # From between the two coffee passages, the kitchen's kettle is nearer than the garden; from the question
    # alone it was not.
    rank = {when: {h.document_id: h.scores.dense_rank for h in r.hits} for when, r in [("plain", plain), ("fed", fed)]}
    assert rank["plain"]["garden"] < rank["plain"]["kettle"] and rank["fed"]["kettle"] < rank["fed"]["garden"]
    # What a hit reports, and what abstention reads, is still its cosine with the question itself ...
    assert {h.chunk_id: h.scores.dense for h in fed.hits} == {h.chunk_id: h.scores.dense for h in plain.hits}
    # ... while score fusion weighs the dense list by its cosines with the vector that searched it.
    assert len(fed.hits) == len(docs)  # every chunk a candidate: the maxima are the hits'
    moved_cosine = {cid: max(float(v @ moved), 0.0) for cid, v in vectors.items() if v is not None}
    for hit in fed.hits:
        dense = 1.5 * moved_cosine[hit.chunk_id] / max(moved_cosine.values())
        assert hit.scores.fused == pytest.approx(dense + bm25[hit.chunk_id] / max(bm25.values()), abs=1e-5)


def test_a_passage_on_a_slide_is_cited_as_a_slide(kb: KnowledgeBase) -> None:
    slides = [(LoadedDocument(text=text, title=""), n) for n, text in enumerate(["Roadmap", ESPRESSO], start=1)]
    kb.ingest("deck", join_pages(slides, "Quarterly deck", unit="slide"), source="deck.pptx")
    hit = kb.search("how often to descale the espresso machine", k=1).hits[0]
    assert (hit.document_id, hit.page, hit.page_label, hit.page_unit) == ("deck", 2, "2", "slide")


def test_an_open_checks_for_orphans_only_after_a_write_that_died_half_way(
    settings: KbSettings, embedder: Embedder
) -> None:
    lock = StoreLock.for_folder(lock_folder(settings))
    with KnowledgeBase.open(settings, embedder=embedder) as kb:
        kb.ingest("espresso", _doc(ESPRESSO, "Espresso care"))
    clean = lock.changes()
    with KnowledgeBase.open(settings, embedder=embedder) as kb:
        assert lock.changes() == clean  # every write since the last check finished: nothing to repair or say
        # What a writer killed between its chunks and its record leaves: the counter taken, a chunk, no entry.
        (stored,) = kb.store.get_chunks(kb.document("espresso").chunk_ids(), vectors=True)
        with lock.exclusive():
            lock.bump()
        orphan = ("espresso~deadbeef0000~0",)
        kb.store._chunks.upsert(
            ids=list(orphan), embeddings=[stored.vector], documents=[stored.text], metadatas=[stored.meta]
        )
    with KnowledgeBase.open(settings, embedder=embedder) as kb:
        assert kb.store.chunk_count() == 1
        assert lock.changes() == clean + 2
        check = JournalEntry(clean + 2, kb.store.generation, orphan, (), clean=True)  # the others drop it too
        assert StoreJournal(lock.folder).since(clean + 1, clean + 2) == [check]


def test_a_version_written_by_another_process_meanwhile_is_replaced_in_the_indexes_too(
    settings: KbSettings, kb: KnowledgeBase
) -> None:
    kb.ingest("espresso", _doc(ESPRESSO, "Espresso care"))
    other = KnowledgeBase.open(settings, embedder=kb.embedder)

    def meanwhile(done: int, total: int, what: str) -> None:
        # After this process read the version it replaces, before it writes: another writes a second version.
        if not other.documents()[0].title.startswith("Second"):
            other.ingest("espresso", _doc(ESPRESSO + " Prime the boiler with filtered water.", "Second version"))

    kb.ingest("espresso", _doc(ESPRESSO + " Wipe the steam wand after each use.", "Third version"), progress=meanwhile)
    live = set(kb.document("espresso").chunk_ids())
    assert set(kb.lexical.ids()) == live == set(kb.store.chunk_ids())
    assert not kb.search("prime boiler filtered water", mode="lexical", abstain=False).hits
    other.close()


def test_ingest_many_writes_groups_and_yields_each_outcome_in_order(kb: KnowledgeBase) -> None:
    kb.ingest("kettle", _doc(HOUSEHOLD["kettle"], "Kettle"))
    generation = kb.store.generation
    documents = [ToIngest(doc_id, _doc(text, doc_id.title())) for doc_id, text in HOUSEHOLD.items()]
    documents.insert(2, ToIngest("bees", _doc(BEES + " Feed syrup in autumn.", "Bees, second version")))
    outcomes = list(kb.ingest_many(documents, group_chunks=3))
    assert [(o.id, o.status) for o in outcomes] == [
        ("espresso", "added"),
        ("bees", "added"),
        ("bees", "replaced"),  # met again: the group before it is written first
        ("kettle", "unchanged"),
        ("grinder", "added"),
        ("garden", "added"),
    ]
    assert kb.store.generation == generation + 2  # espresso and bees; then bees again, grinder and garden (3 chunks)
    assert kb.document("bees").title == "Bees, second version" and kb.store.chunk_count() == 5
    assert set(kb.lexical.ids()) == set(kb.store.chunk_ids())
    assert kb.search("feed syrup autumn", k=1).hits[0].document_id == "bees"


def test_ingest_many_refuses_a_document_and_goes_on(kb: KnowledgeBase) -> None:
    documents = [
        ToIngest("espresso", _doc(ESPRESSO, "E")),
        ToIngest("empty", _doc("   ", "Empty")),
        ToIngest("bees", _doc(BEES, "B")),
    ]
    outcomes = list(kb.ingest_many(documents))
    assert [(o.id, o.status) for o in outcomes] == [("espresso", "added"), ("empty", "refused"), ("bees", "added")]
    assert "no text" in outcomes[1].reason
    assert [d.id for d in kb.documents()] == ["bees", "espresso"]


def test_ingest_many_refuses_a_group_the_store_refuses_and_goes_on(kb: KnowledgeBase) -> None:
    kb.ingest("espresso", _doc(ESPRESSO, "Espresso care"))
    generation = kb.store.generation
    documents = [ToIngest(doc_id, _doc(text, doc_id.title())) for doc_id, text in HOUSEHOLD.items()]
    upsert = kb.store._docs.upsert
    calls = 0

    def fails_once(**kwargs: object) -> None:  # fault injection at the storage boundary: the first record write
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("disk full (injected)")
        upsert(**kwargs)

    kb.store._docs.upsert = fails_once  # type: ignore[method-assign]
    outcomes = list(kb.ingest_many(documents, group_chunks=2))
    assert [(o.id, o.status) for o in outcomes] == [
        ("espresso", "refused"),  # its new version and the bees: one group, refused, each as it was
        ("bees", "refused"),
        ("kettle", "added"),
        ("grinder", "added"),
        ("garden", "added"),
    ]
    assert "disk full" in outcomes[0].reason
    assert kb.document("espresso").title == "Espresso care"
    assert kb.store.generation == generation + 2  # the two groups after the refused one
    assert set(kb.lexical.ids()) == set(kb.store.chunk_ids())


class _CountingEmbedder:
    """A spy at the model boundary: the real embedder, its ``embed`` calls counted."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.calls = inner, 0

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def embed(self, texts: Sequence[str], **options: object) -> np.ndarray:
        self.calls += 1
        return self.inner.embed(texts)


def test_ingest_many_embeds_a_group_s_chunks_together(settings: KbSettings, embedder: Embedder) -> None:
    counting = _CountingEmbedder(embedder)
    with KnowledgeBase.open(settings, embedder=counting) as kb:  # type: ignore[arg-type]
        heard: list[tuple[int, int, str]] = []
        documents = (ToIngest(doc_id, _doc(text, doc_id)) for doc_id, text in HOUSEHOLD.items())
        outcomes = list(kb.ingest_many(documents, progress=lambda *said: heard.append(said)))
        assert [o.embedded for o in outcomes] == [1] * len(HOUSEHOLD)
        assert counting.calls == 1  # five documents, one request
        assert heard == [(5, 5, "embedding 5 documents")]
        top = kb.search("descale the espresso machine", k=1, mode="dense").hits[0]
        assert top.document_id == "espresso"
