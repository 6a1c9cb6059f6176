"""The Index Lab's MCP measurements on a small real store: exact search measures as exact; nothing is written."""

from __future__ import annotations

import numpy as np
import pytest

from sextant.kb.ann import probe
from sextant.kb.ann.live import build_params
from sextant.kb.documents import LoadedDocument
from sextant.kb.knowledge_base import KnowledgeBase, KnowledgeBaseError

# The real embedder: the measurements are of the store's own vectors.
pytestmark = pytest.mark.slow

DOCS = {
    "espresso": "Descale the espresso machine every eight weeks with a citric acid solution.",
    "bees": "In early spring the beekeeper checks that the queen is laying and that honey stores last.",
    "tea": "Oolong tea is partially oxidised and steeped at about ninety degrees for three minutes.",
    "bikes": "Oil the bicycle chain after riding in the rain and wipe off what is left.",
    "bread": "A sourdough starter is fed with equal weights of flour and water every day.",
    "roofs": "Clear the gutters of leaves each autumn so that rain runs off the roof.",
}


@pytest.fixture
def filled(kb: KnowledgeBase) -> KnowledgeBase:
    for doc_id, text in DOCS.items():
        kb.ingest(doc_id, LoadedDocument(text=text, title=doc_id))
    return kb


def test_too_few_chunks_to_measure_is_a_refusal_that_says_what_to_do(kb: KnowledgeBase) -> None:
    with pytest.raises(KnowledgeBaseError, match="ingest documents first"):
        probe.benchmark(kb, "hnsw")
    kb.ingest("one", LoadedDocument(text=DOCS["tea"], title="one"))
    with pytest.raises(KnowledgeBaseError, match="holds 1 chunks"):
        probe.compare(kb, "tea")


def test_the_exact_index_benchmarks_at_recall_one_and_the_report_describes_the_run(filled: KnowledgeBase) -> None:
    n = filled.store.chunk_count()
    report = probe.benchmark(filled, "flat", k=3, queries=100, seed=2)
    assert report.recall_at_k == 1.0
    assert (report.index, report.vectors, report.queries, report.k) == ("flat", n, n, 3)  # queries capped at n
    assert report.dimension == filled.embedder.dim and report.memory_bytes > 0
    assert report.latency_ms_p50 <= report.latency_ms_p95


@pytest.mark.parametrize("kind", ["hnsw", "ivfpq_rerank"])
def test_each_approximate_index_is_built_with_the_settings_knobs(filled: KnowledgeBase, kind: str) -> None:
    n = filled.store.chunk_count()
    report = probe.benchmark(filled, kind, k=2, queries=4)
    assert report.params == build_params(kind, n, filled.settings.ann_params())
    assert report.queries == 4 and 0.0 <= report.recall_at_k <= 1.0
    # On a handful of well-separated vectors each query's own vector is found: recall is high.
    assert report.recall_at_k >= 0.5


def test_compare_puts_every_index_beside_chromas_with_exact_cosines_and_writes_nothing(
    filled: KnowledgeBase,
) -> None:
    generation = filled.store.generation
    with pytest.raises(KnowledgeBaseError, match="the query is empty"):
        probe.compare(filled, "   ")
    result = probe.compare(filled, "how often should I descale the espresso machine", k=3)
    answers = {a.index: a for a in result.answers}
    assert list(answers) == ["chroma", "flat", "hnsw", "ivfpq", "ivfpq_rerank"]
    assert result.vectors == filled.store.chunk_count() and result.k == 3
    flat = answers["flat"]
    assert flat.overlap_with_exact == 1.0 and flat.hits[0].document_id == "espresso"
    assert [h.rank for h in flat.hits] == [1, 2, 3]
    cosines = [h.cosine for h in flat.hits]
    assert cosines == sorted(cosines, reverse=True)
    # The cosine shown is the exact one, whatever index found the chunk.
    ids, xb = filled.chunk_vectors()
    q = filled.embedder.embed(["how often should I descale the espresso machine"])[0]
    exact = {c: float(v @ q) for c, v in zip(ids, xb, strict=True)}
    for answer in answers.values():
        assert len(answer.hits) <= 3 and 0.0 <= answer.overlap_with_exact <= 1.0
        for hit in answer.hits:
            assert hit.cosine == pytest.approx(exact[hit.chunk_id], abs=1e-5)
    assert answers["chroma"].overlap_with_exact == 1.0  # six documents: Chroma's HNSW finds the exact three
    assert filled.store.generation == generation
    np.testing.assert_array_equal(filled.chunk_vectors()[1], xb)
