"""BEIR-format benchmarks through the product's own ingestion and search.

A BEIR document becomes one Sextant document (id = the BEIR id, text = ``title + " " + text`` as
MTEB embeds it); it is chunked, embedded and indexed exactly as a user's file would be. A query is
answered by ``KnowledgeBase.search`` and its chunks are reduced to documents by their best chunk
(first occurrence in the ranked list). Scored the trec_eval way over every query with qrels.
"""

from __future__ import annotations

import csv
import json
import re
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from sextant.contract.results import SearchMode
from sextant.evals.metrics import ndcg_at_k, recall_at_k
from sextant.kb.documents import LoadedDocument
from sextant.kb.embeddings import PACKAGED_NAMES
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.settings import KbSettings

DEPTH = 200  # chunks per retriever: enough to fill 100 distinct documents for recall@100


class BeirError(Exception):
    """A BEIR folder or qrels file is missing or malformed; the message names it."""


@dataclass(frozen=True, slots=True)
class BeirDoc:
    id: str
    title: str
    text: str

    def as_document(self) -> LoadedDocument:
        body = f"{self.title} {self.text}".strip() if self.title else self.text
        return LoadedDocument(text=body, title=self.title or self.id)


def store_settings(dataset: str, root: Path, store: Path | None = None) -> KbSettings:
    """Settings for the store a BEIR set is ingested into (``store``, else one under ``root``).

    One store per dataset and embedder, because a store keeps the embedder it was built with: a
    configured ``SEXTANT_EMBEDDER`` gets ``beir-<dataset>-<its folder name>`` beside the default's
    ``beir-<dataset>``. Documents, not passages, are judged, so no per-document cap.
    """
    settings = KbSettings(max_per_document=20)
    if store is None:
        suffix = (
            "" if settings.embedder in PACKAGED_NAMES else "-" + re.sub(r"[^\w.-]+", "-", Path(settings.embedder).name)
        )
        store = root / f"beir-{dataset}{suffix}"
    return settings.model_copy(update={"chroma_dir": store})


def read_corpus(folder: Path) -> Iterator[BeirDoc]:
    for row in _jsonl(folder / "corpus.jsonl"):
        yield BeirDoc(str(row["_id"]), str(row.get("title") or ""), str(row.get("text") or ""))


def read_queries(folder: Path) -> dict[str, str]:
    return {str(row["_id"]): str(row["text"]) for row in _jsonl(folder / "queries.jsonl")}


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """``{query id: {doc id: grade}}`` from a BEIR qrels TSV (header line, then query, doc, score)."""
    if not path.is_file():
        raise BeirError(f"no qrels file at {path}")
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle, delimiter="\t")
        header = next(reader, None)
        if header is None or len(header) < 3:
            raise BeirError(f"{path}: expected a header line 'query-id corpus-id score'")
        for n, row in enumerate(reader, start=2):
            if not row:
                continue
            try:
                qrels.setdefault(row[0], {})[row[1]] = int(float(row[2]))
            except (IndexError, ValueError) as exc:
                raise BeirError(f"{path}:{n}: {exc}") from exc
    return qrels


def _jsonl(path: Path) -> Iterator[dict[str, object]]:
    if not path.is_file():
        raise BeirError(f"no {path.name} in {path.parent}: is this a BEIR-format folder?")
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def ingest(kb: KnowledgeBase, docs: Iterator[BeirDoc], progress: Callable[[int], None] | None = None) -> int:
    """Ingest every document (unchanged ones are skipped, so a rerun reuses the store)."""
    count = 0
    with kb.batch():
        for count, doc in enumerate(docs, start=1):
            kb.ingest(doc.id, doc.as_document(), source="beir")
            if progress and count % 500 == 0:
                progress(count)
    return count


def rank_documents(kb: KnowledgeBase, query: str, mode: SearchMode, k: int = 100) -> list[str]:
    """The top ``k`` distinct document ids for ``query``, each placed by its best chunk."""
    result = kb.search(query, DEPTH, mode=mode, detail="ids", abstain=False, depth=DEPTH)
    ranked: list[str] = []
    for hit in result.hits:
        if hit.document_id not in ranked:
            ranked.append(hit.document_id)
    return ranked[:k]


def run(
    kb: KnowledgeBase, queries: dict[str, str], qrels: dict[str, dict[str, int]], mode: SearchMode
) -> dict[str, float | int]:
    """nDCG@10 and Recall@100 averaged over the queries that have qrels."""
    started = time.perf_counter()
    judged = [q for q in qrels if q in queries and any(g > 0 for g in qrels[q].values())]
    if not judged:
        raise BeirError("no query in the qrels file is in queries.jsonl")
    ndcg, recall = [], []
    for qid in judged:
        ranked = rank_documents(kb, queries[qid], mode)
        ndcg.append(ndcg_at_k(ranked, qrels[qid], 10))
        recall.append(recall_at_k(ranked, qrels[qid], 100))
    return {
        "queries": len(judged),
        "ndcg@10": round(statistics.fmean(ndcg), 4),
        "recall@100": round(statistics.fmean(recall), 4),
        "seconds": round(time.perf_counter() - started, 1),
    }
