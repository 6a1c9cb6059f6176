"""The retrieval pipeline: ranked lists fused, optionally reranked, capped, cut.

Stages (each timed): embed the query; each ranked list that takes part in the mode (``sextant.kb.ranked_lists``:
dense top-``depth`` from the store, BM25 top-``depth``, and any a probe adds), each timed under its own stage;
the candidates read from the store with their vectors; cosine for every candidate (so the cap and abstention
judge relevance, not rank); fusion by rank (RRF) or by score (each list's score for every candidate over its
best); with ``feedback``, the dense lists searched again from the question's vector moved toward the best
passages' (``feedback_vector``) and fused again with the others as they were; cross-encoder rescoring of the best
fused candidates when one is loaded, its rank fused with the dense and BM25 ranks or replacing them (the rest
follow in fused order); the per-document cap; abstention; cut to k.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, NamedTuple, Protocol, TypeVar
from urllib.parse import quote

import numpy as np

from sextant.contract.results import DetailLevel, Fusion, Hit, ScoredBy, Scores, SearchMode, SearchResult
from sextant.kb.abstention import AbstentionRule
from sextant.kb.analyzer import matched_terms
from sextant.kb.ann.live import LiveIndex
from sextant.kb.chunk_meta import ChunkMeta
from sextant.kb.chunk_reader import ChunkReader
from sextant.kb.embeddings import Embedder
from sextant.kb.fusion import RRF_K, cap_per_document, reciprocal_rank_fusion, score_fusion
from sextant.kb.lexical import LexicalIndex
from sextant.kb.ranked_lists import Asked, Bm25List, DenseList, Ranked, RankedList, takes_part
from sextant.kb.refusal import KnowledgeBaseError
from sextant.kb.rerank import Reranker
from sextant.kb.store import ChunkStore
from sextant.kb.stored import StoredChunk
from sextant.settings import DENSE_WEIGHT

FRAGMENT_SAFE = "!$&'()*+,;=:@/?-._~"  # RFC 3986: what a URL's fragment may hold unescaped
SNIPPET_CHARS = 320
# How far the question's vector moves toward the mean of the passages fed back (learning/feedback.md).
FEEDBACK_WEIGHT = 0.5


@dataclass(slots=True)
class _Candidate:
    chunk: StoredChunk
    scores: Scores = field(default_factory=lambda: Scores())

    @property
    def doc_id(self) -> str:
        return self.chunk.doc_id

    def relevance(self) -> float:
        value = self.scores.rerank if self.scores.rerank is not None else self.scores.dense
        return float(value or 0.0)


class _Retrieved(NamedTuple):
    """What one ranked list found for a search."""

    source: RankedList
    ranked: Ranked


class Searcher:
    """Runs queries against one store: fuses its ranked lists (dense, BM25 and any ``extra``), then reranks (when a
    cross-encoder is loaded), caps per document and abstains."""

    def __init__(
        self,
        embedder: Embedder,
        store: ChunkStore,
        lexical: LexicalIndex,
        reranker: Reranker,
        *,
        max_per_document: int,
        depth: int = 30,
        rule: AbstentionRule | None = None,
        rrf_k: int = RRF_K,
        fusion: Fusion = "rrf",
        weights: tuple[float, float] | None = None,
        rerank_fusion: Literal["rrf", "replace"] = "rrf",
        rerank_candidates: int = 20,
        competitive: float = 0.5,
        feedback: int = 0,
        ann: LiveIndex | None = None,
        refresh: Callable[[], object] | None = None,
        location: str = "",
        extra: Sequence[RankedList] = (),
    ) -> None:
        self.embedder = embedder
        self.location = location  # the store's folder or URL, named when it turns out to be empty
        self.refresh = refresh  # brings the caches (BM25, ANN) up to other writers' changes, if any
        self.store = store
        self.lexical = lexical
        self.ann = ann  # with it, dense search and the candidates' vectors come from that index, not Chroma's
        self.chunks = ChunkReader(store, ann)
        self.dense: RankedList = DenseList(store, ann)
        self.bm25: RankedList = Bm25List(lexical)
        self.extra = list(extra)  # lists fused beside these two, each with its own weight (probes)
        self.reranker = reranker
        self.max_per_document = max_per_document
        self.depth = depth
        self.rule = rule or AbstentionRule()
        self.rrf_k = rrf_k
        self.fusion = fusion  # by rank (RRF) or by each list's scores over its best (score_fusion)
        self.weights = weights or (DENSE_WEIGHT[fusion], 1.0)
        self.rerank_fusion = rerank_fusion
        self.rerank_candidates = rerank_candidates
        self.competitive = competitive
        self.feedback = feedback  # passages whose vectors the dense lists are searched again with; 0: none

    @property
    def weights(self) -> tuple[float, float]:
        """The dense and the BM25 list's weights in fusion, as ``KbSettings.fusion_weights`` gives them."""
        return self.dense.weight, self.bm25.weight

    @weights.setter
    def weights(self, pair: tuple[float, float]) -> None:
        self.dense.weight, self.bm25.weight = pair

    @property
    def lists(self) -> list[RankedList]:
        """The ranked lists fused, in this order (the order RRF's ties fall in)."""
        return [self.dense, self.bm25, *self.extra]

    def search(
        self,
        query: str,
        k: int = 5,
        *,
        doc_ids: Sequence[str] | None = None,
        detail: DetailLevel = "snippets",
        mode: SearchMode = "hybrid",
        abstain: bool = True,
        depth: int | None = None,
    ) -> SearchResult:
        """Rank passages for ``query``; ``depth`` candidates come from each retriever (default 30).

        Raises:
            KnowledgeBaseError: the query is empty, or ``mode`` is ``rerank`` but no cross-encoder is loaded.
        """
        if not query.strip():
            raise KnowledgeBaseError("the query is empty; ask a question or give keywords")
        if mode == "rerank" and not self.reranker.active:
            raise KnowledgeBaseError(f"mode 'rerank' needs a cross-encoder: {self.reranker.state.detail}")
        timings: dict[str, float] = {}
        clock = _Clock(timings)
        if self.refresh is not None:
            self.refresh()
            clock.lap("refresh")
        q = self.embedder.embed_query(query)
        clock.lap("embed")

        asked = Asked(query, q, depth or self.depth, self._allowed_chunks(doc_ids), doc_ids)
        retrieved: list[_Retrieved] = []
        for source in self.lists:
            if takes_part(source, mode):
                retrieved.append(_Retrieved(source, source.ranked(asked)))
            clock.lap(source.stage)
        candidates = self._fused(asked, q, retrieved, clock)
        if self.feedback and mode != "lexical" and candidates:
            best = self._capped(candidates, self.feedback)
            moved = feedback_vector(q, [c.chunk.vector for c in best if c.chunk.vector is not None])
            fed = replace(asked, vector=moved)
            retrieved = [
                _Retrieved(r.source, r.source.ranked(fed)) if r.source.retriever == "dense" else r for r in retrieved
            ]
            clock.lap("feedback")
            read = {c.chunk.id: c.chunk for c in candidates}
            candidates = self._fused(fed, q, retrieved, clock, read=read)

        scored_by: ScoredBy = "dense" if mode == "dense" else "lexical" if mode == "lexical" else self.fusion
        if mode in ("hybrid", "rerank") and self.reranker.active and candidates:
            top, rest = candidates[: self.rerank_candidates], candidates[self.rerank_candidates :]
            self._rerank(query, top)
            candidates = self._reranked_order(top) + rest
            scored_by = "rerank"
        clock.lap("rerank")

        capped = self._capped(candidates, k)
        best_dense = max((c.scores.dense or 0.0 for c in candidates), default=0.0)
        terms = [matched_terms(query, c.chunk.text) for c in capped]
        matched = len({t.lower() for ts in terms for t in ts})
        abstained, reason = self.rule.decide(best_dense, matched)
        # Counted only when nothing came back, so a search that finds passages pays no extra store call.
        empty = not candidates and self.store.document_count() == 0
        if empty:
            abstained, reason = True, self._empty_reason()
        elif not candidates:
            abstained, reason = True, "abstained: nothing in the knowledge base matches this query"
        hits = (
            []
            if (abstained and abstain)
            else [_hit(rank, c, t, scored_by, detail) for rank, (c, t) in enumerate(zip(capped, terms, strict=True), 1)]
        )
        clock.lap("finish")
        timings["total"] = sum(timings.values())
        return SearchResult(
            query=query,
            hits=hits,
            abstained=abstained,
            reason=reason,
            empty=empty,
            best_dense=round(best_dense, 6),
            matched_terms=matched,
            mode=mode,
            timings_ms=timings,
        )

    def _fused(
        self,
        asked: Asked,
        q: np.ndarray,
        retrieved: list[_Retrieved],
        clock: _Clock,
        read: dict[str, StoredChunk] | None = None,
    ) -> list[_Candidate]:
        """The ``retrieved`` lists fused, each chunk scored against the question ``q``; chunks in ``read`` (live ones
        from a first fusion of this search) are not read from the store again. ``asked.vector``: the vector the dense
        lists were searched with, ``q`` or feedback's, whose cosines score fusion weighs."""
        read = read or {}
        ids = dict.fromkeys(cid for r in retrieved for cid, _ in r.ranked)
        chunks = {c.id: c for c in self.chunks.get([i for i in ids if i not in read], vectors=True)}
        # A document's record is its version's commit point: while a replacement is written, the new chunks are
        # stored before the record and the old ones removed after it. Only the version the record names is read.
        live = self.store.live_chunk_ids(c.doc_id for c in chunks.values())
        chunks = {cid: c for cid, c in chunks.items() if cid in live} | read
        clock.lap("fetch")
        # Removed between the two reads, or with no vector: nothing to cite.
        cosine = {cid: float(chunks[cid].vector @ q) for cid in ids if cid in chunks and chunks[cid].vector is not None}
        clock.lap("cosine")
        ranking = self._fuse(asked, retrieved, {cid: chunks[cid] for cid in cosine})
        clock.lap("fuse")
        return self._score(ranking, chunks, cosine, _found_by(self.dense, retrieved), _found_by(self.bm25, retrieved))

    def _fuse(
        self, asked: Asked, retrieved: list[_Retrieved], candidates: Mapping[str, StoredChunk]
    ) -> list[tuple[str, float]]:
        """By score: each list's score for every candidate, over its best; by rank (RRF): each list's ranks."""
        weights = [r.source.weight for r in retrieved]
        if self.fusion == "scores":
            return score_fusion([r.source.scores(asked, r.ranked, candidates) for r in retrieved], weights)
        return reciprocal_rank_fusion([[cid for cid, _ in r.ranked] for r in retrieved], self.rrf_k, weights)

    def _capped(self, candidates: list[_Candidate], k: int) -> list[_Candidate]:
        return cap_per_document(
            candidates,
            document=lambda c: c.doc_id,
            relevance=_Candidate.relevance,
            limit=self.max_per_document,
            k=k,
            competitive=self.competitive,
        )

    def _empty_reason(self) -> str:
        where = f" at {self.location}" if self.location else ""
        return (
            f"the knowledge base is empty: the store{where} holds no documents, so nothing was searched; "
            "add documents (sextant-ingest, kb_ingest or kb_upload), or point SEXTANT_CHROMA_DIR or "
            "SEXTANT_CHROMA_URL at the store that holds them"
        )

    def _allowed_chunks(self, doc_ids: Sequence[str] | None) -> set[str] | None:
        if not doc_ids:
            return None
        allowed: set[str] = set()
        for doc_id in doc_ids:
            record = self.store.get_document(doc_id)
            if record is not None:
                allowed.update(record.chunk_ids())
        return allowed

    @staticmethod
    def _score(
        ranking: list[tuple[str, float]],
        chunks: dict[str, StoredChunk],
        cosine: dict[str, float],
        dense: Ranked,
        bm25: Ranked,
    ) -> list[_Candidate]:
        dense_rank = {cid: r for r, (cid, _) in enumerate(dense, 1)}
        lexical = {cid: (r, score) for r, (cid, score) in enumerate(bm25, 1)}
        out: list[_Candidate] = []
        for cid, fused in ranking:
            if cid not in cosine:
                continue
            hit = lexical.get(cid)
            out.append(
                _Candidate(
                    chunks[cid],
                    Scores(
                        dense=round(cosine[cid], 6),
                        dense_rank=dense_rank.get(cid),
                        bm25=round(float(hit[1]), 6) if hit else None,
                        bm25_rank=hit[0] if hit else None,
                        fused=round(fused, 6),
                    ),
                )
            )
        return out

    def _rerank(self, query: str, candidates: list[_Candidate]) -> None:
        probs = self.reranker.score(query, [c.chunk.text for c in candidates])
        for cand, p in zip(candidates, probs, strict=True):
            cand.scores.rerank = round(float(p), 6)

    def _reranked_order(self, candidates: list[_Candidate]) -> list[_Candidate]:
        if self.rerank_fusion == "replace":
            return sorted(candidates, key=lambda c: -(c.scores.rerank or 0.0))
        # The reranker's rank fusion was measured with rank-fusion weights; score fusion's are on another scale.
        weights = self.weights if self.fusion == "rrf" else (DENSE_WEIGHT["rrf"], 1.0)
        return fused_rerank_order(candidates, lambda c: c.chunk.id, self.rrf_k, weights)


def _found_by(source: RankedList, retrieved: list[_Retrieved]) -> Ranked:
    """What ``source`` ranked in this search; nothing when it took no part."""
    return next((r.ranked for r in retrieved if r.source is source), [])


class _Scored(Protocol):
    @property
    def scores(self) -> Scores: ...


S = TypeVar("S", bound=_Scored)


def fused_rerank_order(
    items: Sequence[S], key: Callable[[S], str], rrf_k: int = RRF_K, weights: tuple[float, float] = (1.0, 1.0)
) -> list[S]:
    """``items`` ordered by RRF over their dense, BM25 and cross-encoder ranks (the cross-encoder weighs 1)."""
    dense = sorted((i for i in items if i.scores.dense_rank), key=lambda i: i.scores.dense_rank or 0)
    bm25 = sorted((i for i in items if i.scores.bm25_rank), key=lambda i: i.scores.bm25_rank or 0)
    rerank = sorted(items, key=lambda i: -(i.scores.rerank or 0.0))
    by_key = {key(i): i for i in items}
    lists = [[key(i) for i in ranked] for ranked in (dense, bm25, rerank)]
    return [by_key[k] for k, _ in reciprocal_rank_fusion(lists, rrf_k, (*weights, 1.0))]


def feedback_vector(question: np.ndarray, passages: Sequence[np.ndarray]) -> np.ndarray:
    """The question's unit vector moved toward the mean of the ``passages``' vectors (Rocchio), unit length.

    Pseudo-relevance feedback without labels: the best passages found carry the words and the subject the
    question left out, and the dense list searched from between them finds their neighbours too.
    """
    if not passages:
        return question
    moved = question + FEEDBACK_WEIGHT * np.mean(passages, axis=0)
    return (moved / np.linalg.norm(moved)).astype(np.float32)


class _Clock:
    def __init__(self, into: dict[str, float]) -> None:
        self._into = into
        self._last = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()  # a stage run twice (the fusion after feedback) counts both runs
        self._into[stage] = round(self._into.get(stage, 0.0) + (now - self._last) * 1000.0, 3)
        self._last = now


def _hit(rank: int, cand: _Candidate, terms: list[str], scored_by: ScoredBy, detail: DetailLevel) -> Hit:
    meta = ChunkMeta.from_chroma(cand.chunk.meta)
    doc_id = meta.doc_id
    return Hit(
        rank=rank,
        chunk_id=cand.chunk.id,
        document_id=doc_id,
        title=meta.title,
        source=meta.source,
        page=meta.page,
        page_label=meta.page_label,
        page_unit=meta.page_unit,
        pages=list(meta.pages),
        section=meta.section or None,
        kind=meta.kind,
        table_rows=list(meta.rows),
        start=meta.start,
        end=meta.end,
        text=_text_for(cand.chunk.text, terms, detail),
        scored_by=scored_by,
        scores=cand.scores,
        matched_terms=terms,
        uri=f"kb://documents/{doc_id}/pages/{meta.page}" if meta.page is not None else f"kb://documents/{doc_id}",
        link=_link(meta),
    )


def _link(meta: ChunkMeta) -> str | None:
    """The address of a web page's passage: its URL, with its section's fragment when the section has one."""
    if not meta.source.lower().startswith(("http://", "https://")):
        return None
    base = meta.source.split("#", 1)[0]
    return f"{base}#{quote(meta.anchor, safe=FRAGMENT_SAFE)}" if meta.anchor else base


def _text_for(text: str, terms: list[str], detail: DetailLevel) -> str | None:
    if detail == "ids":
        return None
    if detail == "full" or len(text) <= SNIPPET_CHARS:
        return text
    return snippet(text, terms)


def snippet(text: str, terms: Sequence[str], width: int = SNIPPET_CHARS) -> str:
    """About ``width`` characters of ``text`` around the first matched term, cut at word boundaries."""
    hit = None
    for term in terms:
        m = re.search(rf"\b{re.escape(term)}", text, flags=re.IGNORECASE)
        if m and (hit is None or m.start() < hit):
            hit = m.start()
    centre = hit if hit is not None else 0
    lo = max(0, centre - width // 3)
    hi = min(len(text), lo + width)
    lo = max(0, hi - width)
    if lo > 0:
        space = text.find(" ", lo)
        lo = space + 1 if 0 <= space < centre else lo
    if hi < len(text):
        space = text.rfind(" ", lo, hi)
        hi = space if space > lo else hi
    return ("…" if lo > 0 else "") + text[lo:hi].strip() + ("…" if hi < len(text) else "")
