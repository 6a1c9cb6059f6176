"""Knowledge-base benchmark: ingest throughput, BM25 queries/s and warm search latency by stage.

Each comparison is a ratio against a reference measured in the same process, with the two sides
alternated (A B, B A, ...) over repetitions, because the machine is shared and its speed drifts:
only a ratio of neighbouring measurements means anything here. Reported values are medians.

1. ingest: ``kb.ingest`` (text -> chunks -> vectors -> Chroma -> BM25), per document and inside
   ``kb.batch()``, against ``embedder.embed`` on exactly the texts ingest embeds, at the pipeline's
   batch size, on SciFact abstracts; then a few documents into the big store of 3 (diagnostic).
2. bm25: ``LexicalIndex.search`` against bm25s used directly (``bm25s.tokenize`` + ``retrieve``),
   on the chunks of the search store and the SciFact queries, k = 30 as the searcher asks for.
3. search: warm ``kb.search`` latency per stage (``SearchResult.timings_ms``) on a store of
   >= 10,000 chunks built by the product's own ingest from SciFact + NFCorpus; the store is cached
   under ``--out`` keyed by its parameters, because building it embeds every chunk (~20 minutes).

    python bench/bench_kb.py                 # full run, prints Markdown tables
    python bench/bench_kb.py --quick         # small sizes: a smoke run of the script itself
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import json
import os
import platform
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

# Before any model import: no hub is reachable, and a hub lookup spends ~46 s in retries.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import bm25s
import numpy as np
import Stemmer

from sextant.evals import beir
from sextant.evals.beir import BeirDoc
from sextant.kb import lexical as lexical_module
from sextant.kb import store as store_module
from sextant.kb.chunking import ChunkingConfig, chunk_document
from sextant.kb.content_hash import CHUNKER_VERSION
from sextant.kb.embeddings import Embedder, load_embedder, quiet_model_loading
from sextant.kb.indexing import DEFAULT_POLICY, index_text
from sextant.kb.knowledge_base import EMBED_BATCH, KnowledgeBase
from sextant.kb.lexical import LexicalIndex
from sextant.settings import KbSettings

REPO = Path(__file__).resolve().parent.parent
DEPTH = 30  # the searcher's candidate depth, so BM25 is measured at the k the product asks for
STAGES = ("embed", "dense", "lexical", "fuse", "fetch", "cosine", "rerank", "finish", "total")
THREADS = 1  # torch threads, the product's default; the same on both sides of every ratio


@dataclass(frozen=True, slots=True)
class Sizes:
    ingest_docs: int  # SciFact abstracts (~2.5 chunks each at 200 tokens)
    ingest_reps: int  # subsets; each is timed once per side, in alternating order
    store_min_chunks: int  # the search store (and the BM25 corpus) grows until it has this many
    bm25_reps: int
    warmup_queries: int
    search_queries: int


FULL = Sizes(ingest_docs=240, ingest_reps=6, store_min_chunks=10_000, bm25_reps=8, warmup_queries=5, search_queries=300)
QUICK = Sizes(ingest_docs=16, ingest_reps=2, store_min_chunks=300, bm25_reps=2, warmup_queries=2, search_queries=20)


# --- data ------------------------------------------------------------------------------------------


def read_corpus(path: Path, prefix: str) -> list[BeirDoc]:
    """BEIR documents as the product ingests them (``sextant.evals.beir``), ids prefixed by corpus."""
    docs = []
    for doc in beir.read_corpus(path.parent):
        if doc.as_document().text.strip():  # an empty document is refused by ingest; it says nothing about speed
            docs.append(BeirDoc(f"{prefix}-{doc.id}", doc.title, doc.text))
    return docs


def read_queries(path: Path) -> list[str]:
    return [q for q in (text.strip() for text in beir.read_queries(path.parent).values()) if q]


def interleave(*lists: Sequence[Any]) -> list[Any]:
    """a0 b0 a1 b1 ...: so any prefix mixes the corpora."""
    out: list[Any] = []
    for i in range(max(map(len, lists))):
        out.extend(seq[i] for seq in lists if i < len(seq))
    return out


def index_texts(docs: Iterable[BeirDoc], embedder: Embedder, config: ChunkingConfig, context: bool) -> list[list[str]]:
    """Each document's chunks as a retriever indexes them: cut by the product's chunker, and under
    the title and section when ``context`` (the indexing policy) says so, as ingest does.

    ``index_text`` reads only ``title`` and ``section`` of a chunk's metadata, which ingest fills
    from the document's title and the chunk's section; ``bench_ingest`` checks the result against
    the vectors ingest stores, so a change in the product cannot silently skew the reference.
    """
    out = []
    for d in docs:
        chunks = chunk_document(d.as_document(), embedder, config)
        out.append([index_text(c.text, {"title": d.title, "section": c.section}, context) for c in chunks])
    return out


def until_chunks(
    docs: Sequence[BeirDoc], embedder: Embedder, config: ChunkingConfig, n: int
) -> tuple[list[BeirDoc], list[str]]:
    """The shortest prefix of ``docs`` with at least ``n`` chunks, and the texts BM25 indexes for them."""
    chosen: list[BeirDoc] = []
    texts: list[str] = []
    for doc in docs:
        if len(texts) >= n:
            break
        chosen.append(doc)
        texts.extend(index_texts([doc], embedder, config, DEFAULT_POLICY.lexical_context)[0])
    if len(texts) < n:
        raise SystemExit(f"the corpora give only {len(texts)} chunks; {n} were asked for")
    return chosen, texts


# --- helpers ----------------------------------------------------------------------------------------


def timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def fresh_kb(root: Path, embedder: Embedder) -> KnowledgeBase:
    directory = Path(tempfile.mkdtemp(prefix="store-", dir=root))
    return KnowledgeBase.open(_settings(directory), embedder=embedder)


def _settings(directory: Path) -> KbSettings:
    return KbSettings(chroma_dir=directory, threads=THREADS, _env_file=None)


def ingest_all(kb: KnowledgeBase, docs: Iterable[BeirDoc]) -> int:
    """One ``kb.ingest`` per document, as the MCP tool does: the BM25 index is saved after each."""
    return sum(kb.ingest(d.id, d.as_document()).chunks for d in docs)


def ingest_batch(kb: KnowledgeBase, docs: Iterable[BeirDoc]) -> int:
    """Inside ``kb.batch()``, as ``sextant-ingest`` does: one BM25 save at the end."""
    with kb.batch():
        return ingest_all(kb, docs)


def timed_ingest(
    kb: KnowledgeBase, docs: list[BeirDoc], ingest: Callable[[KnowledgeBase, list[BeirDoc]], int]
) -> float:
    try:
        return timed(lambda: ingest(kb, docs))
    finally:
        kb.close()


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)  # stdout carries the report only


def write_json(path: Path | None, results: dict[str, Any]) -> None:
    """The raw results as JSON at ``path`` (its folder made first), when the run was asked for one."""
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(results, indent=2), encoding="utf-8")


# --- 1. ingest ----------------------------------------------------------------------------------------

# Where a profiled ingest spends its time: (file suffix, function) -> label. "other" is the rest.
PROFILE_STAGES = {
    ("sextant/kb/chunking.py", "chunk_document"): "chunking (chunk_document)",
    ("sextant/kb/embeddings.py", "embed"): "embedding (Embedder.embed)",
    ("sextant/kb/store.py", "get_document"): "Chroma read (ChunkStore.get_document)",
    ("sextant/kb/store.py", "write_documents"): "Chroma write (ChunkStore.write_documents)",
    ("sextant/kb/lexical.py", "add"): "BM25 add (LexicalIndex.add)",
    ("sextant/kb/lexical.py", "save"): "BM25 save (LexicalIndex.save)",
    ("sextant/kb/content_hash.py", "content_hash"): "content hash",
}


def bench_ingest(docs: list[BeirDoc], embedder: Embedder, reps: int, scratch: Path) -> dict[str, Any]:
    """Pipeline vs raw embedder chunks/s on the same chunks, alternating which side goes first.

    Four sides per subset:

    - ``pipeline``: ``kb.ingest`` per document into a fresh store (BM25 saved after each);
    - ``pipeline_batch``: the same inside ``kb.batch()`` (one BM25 save), as ``sextant-ingest`` runs;
    - ``embed``, the reference: one ``embed`` call over the texts ingest embeds, at batch EMBED_BATCH;
    - ``embed_per_doc``, a diagnostic: ``embed`` called per document the way ingest calls it, so the
      gap splits into batching shape and everything that is not embedding.
    """
    config = ChunkingConfig()
    subsets = [docs[i::reps] for i in range(reps)]
    per_doc = [index_texts(s, embedder, config, DEFAULT_POLICY.dense_context) for s in subsets]

    # Warm-up outside the timings (the first Chroma client, torch call and BM25 save), and a check
    # that the reference embeds exactly what ingest embeds.
    with tempfile.TemporaryDirectory(dir=scratch) as warm:
        kb = fresh_kb(Path(warm), embedder)
        ingest_all(kb, docs[:2])
        _check_reference(kb, docs[0], embedder)
        kb.close()

    def run_side(side: str, i: int, root: Path) -> float:
        texts = [t for doc in per_doc[i] for t in doc]
        if side in ("pipeline", "pipeline_batch"):
            # Opening a store is not ingest: outside the timing.
            return timed_ingest(
                fresh_kb(root, embedder), subsets[i], ingest_all if side == "pipeline" else ingest_batch
            )
        if side == "embed":
            return timed(lambda: embedder.embed(texts, batch_size=EMBED_BATCH))

        def calls() -> None:
            for chunks in per_doc[i]:
                for lo in range(0, len(chunks), EMBED_BATCH):
                    embedder.embed(chunks[lo : lo + EMBED_BATCH], batch_size=EMBED_BATCH)

        return timed(calls)

    sides = ("pipeline", "pipeline_batch", "embed", "embed_per_doc")
    seconds: dict[str, list[float]] = {s: [] for s in sides}
    chunks = [sum(map(len, p)) for p in per_doc]
    with tempfile.TemporaryDirectory(dir=scratch) as tmp:
        for i in range(reps):
            order = sides if i % 2 == 0 else sides[::-1]  # A B C D, D C B A, ...: drift cancels
            for side in order:
                seconds[side].append(run_side(side, i, Path(tmp)))
            log(
                f"ingest rep {i + 1}/{reps}: {chunks[i]} chunks, "
                + ", ".join(f"{s} {seconds[s][-1]:.1f}s" for s in sides)
            )
        kb = fresh_kb(Path(tmp), embedder)
        profile = _profile_ingest(kb, subsets[0])
        kb.close()

    rates = {s: [c / t for c, t in zip(chunks, seconds[s], strict=True)] for s in sides}

    def ratio(a: str, b: str) -> float:
        # Ratio of neighbouring measurements (same subset, same minute), then the median.
        return statistics.median(x / y for x, y in zip(rates[a], rates[b], strict=True))

    return {
        "docs": len(docs),
        "chunks": sum(chunks),
        "chunks_per_rep": chunks,
        "seconds": seconds,
        "chunks_per_s": {s: statistics.median(r) for s, r in rates.items()},
        "ratio_vs_embed": {s: ratio(s, "embed") for s in sides},
        "ratio_pipeline_vs_per_doc": ratio("pipeline", "embed_per_doc"),
        "ratio_batch_vs_per_doc": ratio("pipeline_batch", "embed_per_doc"),
        "profile": profile,
    }


def _check_reference(kb: KnowledgeBase, doc: BeirDoc, embedder: Embedder) -> None:
    """Exit unless the reference texts embed to the vectors ingest stored for ``doc``."""
    record = kb.store.get_document(doc.id)
    assert record is not None
    stored = np.stack([c.vector for c in kb.store.get_chunks(record.chunk_ids(), vectors=True) if c.vector is not None])
    ours = embedder.embed(index_texts([doc], embedder, ChunkingConfig(), DEFAULT_POLICY.dense_context)[0])
    if stored.shape != ours.shape or float(np.min(np.sum(stored * ours, axis=1))) < 0.999:
        raise SystemExit("the reference no longer embeds what kb.ingest embeds: update index_texts()")


def _profile_ingest(kb: KnowledgeBase, docs: list[BeirDoc]) -> dict[str, float]:
    """Seconds per pipeline stage in one profiled ingest (cProfile: shares, not speeds)."""
    profiler = cProfile.Profile()
    profiler.runcall(ingest_all, kb, docs)
    table: dict[tuple[str, int, str], tuple[Any, ...]] = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    seconds = {label: 0.0 for label in PROFILE_STAGES.values()}
    total = 0.0
    for (filename, _, func), (_, _, _, cumtime, _) in table.items():
        path = filename.replace(os.sep, "/")
        if path.endswith("sextant/kb/knowledge_base.py") and func == "ingest":
            total = cumtime
        for (suffix, name), label in PROFILE_STAGES.items():
            if path.endswith(suffix) and func == name:
                seconds[label] += cumtime
    seconds["other"] = max(0.0, total - sum(seconds.values()))
    seconds["total"] = total
    return seconds


# --- 2. BM25 ------------------------------------------------------------------------------------------


def bench_bm25(texts: list[str], queries: list[str], reps: int) -> dict[str, Any]:
    """LexicalIndex.search vs bm25s used directly, same chunks, same queries, k = DEPTH."""
    ids = [f"c{i}" for i in range(len(texts))]
    index = LexicalIndex()  # in memory: search speed does not depend on where it is saved
    index.add(ids, texts)
    stemmer = Stemmer.Stemmer("english")
    # The same tokenizer settings the product mirrors (bm25s README: stopwords "en", Snowball).
    retriever = bm25s.BM25(k1=index.k1, b=index.b, method=index.method)
    retriever.index(bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)

    def product() -> None:
        for q in queries:
            index.search(q, DEPTH)

    def direct() -> None:
        for q in queries:
            tokens = bm25s.tokenize(q, stopwords="en", stemmer=stemmer, show_progress=False)
            retriever.retrieve(tokens, k=DEPTH, show_progress=False)

    product()  # warm: the first search builds the score matrix
    direct()
    agree = _bm25_agreement(index, retriever, stemmer, queries)
    seconds: dict[str, list[float]] = {"product": [], "bm25s": []}
    for i in range(reps):
        order = (("product", product), ("bm25s", direct))
        for side, fn in order if i % 2 == 0 else order[::-1]:
            seconds[side].append(timed(fn))
    qps = {s: [len(queries) / t for t in ts] for s, ts in seconds.items()}
    return {
        "chunks": len(texts),
        "queries": len(queries),
        "k": DEPTH,
        "seconds": seconds,
        "qps": {s: statistics.median(v) for s, v in qps.items()},
        "ratio_product_vs_bm25s": statistics.median(a / b for a, b in zip(qps["product"], qps["bm25s"], strict=True)),
        "score_agreement": agree,
    }


def _bm25_agreement(index: LexicalIndex, retriever: Any, stemmer: Any, queries: list[str]) -> float:
    """Share of queries whose top-k scores (> 0) equal bm25s's; scores, not ids, so ties cannot differ."""
    same = 0
    for q in queries:
        ours = [h.score for h in index.search(q, DEPTH)]
        _, scores = retriever.retrieve(
            bm25s.tokenize(q, stopwords="en", stemmer=stemmer, show_progress=False), k=DEPTH, show_progress=False
        )
        theirs = [float(s) for s in scores[0] if s > 0]
        same += len(ours) == len(theirs) and bool(np.allclose(ours, theirs, rtol=1e-5, atol=1e-6))
    return same / len(queries)


# --- 3. search ----------------------------------------------------------------------------------------


def store_key(embedder: Embedder, min_chunks: int) -> dict[str, Any]:
    """Everything that decides the store's contents; a change gives a new cache folder."""
    return {
        "corpora": ["scifact", "nfcorpus"],
        "order": "interleaved",
        "min_chunks": min_chunks,
        "chunk_tokens": _settings(Path(".")).chunk_tokens,
        "embedder": embedder.name,
        "chunker_version": CHUNKER_VERSION,
        "store_format": store_module.FORMAT_VERSION,
        "lexical_format": lexical_module.FORMAT_VERSION,
        "indexing_policy": asdict(DEFAULT_POLICY),
    }


def open_store(
    out: Path, docs: list[BeirDoc], embedder: Embedder, key: dict[str, Any], rebuild: bool
) -> tuple[KnowledgeBase, dict[str, Any]]:
    """The cached search store for ``key``, built with ``kb.ingest`` when missing or ``rebuild``.

    A folder without its completion marker (an interrupted build) is resumed: ingest skips the
    documents already stored as unchanged.
    """
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:12]
    directory = out / f"store-{digest}"
    marker = directory / "bench-store.json"
    if rebuild and directory.exists():
        shutil.rmtree(directory)
    if marker.exists():
        kb = KnowledgeBase.open(_settings(directory / "kb"), embedder=embedder)
        return kb, json.loads(marker.read_text(encoding="utf-8"))
    kb = KnowledgeBase.open(_settings(directory / "kb"), embedder=embedder)
    log(f"building the search store in {directory} ({len(docs)} documents); reused on later runs")
    build = _build(kb, docs)
    info = {"key": key, "chunks": kb.stats().chunks, "documents": kb.stats().documents, "build": build}
    marker.write_text(json.dumps(info, indent=2), encoding="utf-8")
    return kb, info


def _build(kb: KnowledgeBase, docs: list[BeirDoc], every: int = 500) -> dict[str, Any]:
    """Ingest ``docs`` as ``sextant-ingest`` does (in one batch), recording chunks/s per block of documents."""
    t0 = time.perf_counter()
    blocks: list[dict[str, float]] = []
    block_start, block_chunks, resumed = t0, 0, 0
    with kb.batch():
        for n, doc in enumerate(docs, 1):
            outcome = kb.ingest(doc.id, doc.as_document())
            resumed += outcome.status == "unchanged"
            block_chunks += outcome.chunks
            if n % every == 0 or n == len(docs):
                now = time.perf_counter()
                rate = block_chunks / (now - block_start)
                blocks.append({"docs": n, "store_chunks": kb.store.chunk_count(), "chunks_per_s": rate})
                log(f"  {n}/{len(docs)} documents, {blocks[-1]['store_chunks']} chunks, {rate:.1f} chunks/s")
                block_start, block_chunks = now, 0
    return {"seconds": time.perf_counter() - t0, "resumed_documents": resumed, "blocks": blocks}


def bench_ingest_at_scale(store_dir: Path, docs: list[BeirDoc], embedder: Embedder, scratch: Path) -> dict[str, Any]:
    """A few more documents ingested into copies of the big store: does per-document cost grow with it?

    Copies, so the cached store stays as built: one per ``kb.ingest`` pass (plain, in a batch, and
    profiled); ``embed`` on the same texts is timed between the two timed passes.
    """
    texts = [t for doc in index_texts(docs, embedder, ChunkingConfig(), DEFAULT_POLICY.dense_context) for t in doc]
    with tempfile.TemporaryDirectory(dir=scratch) as tmp:
        kbs = {}
        for name in ("plain", "batch", "profiled"):
            shutil.copytree(store_dir, Path(tmp) / name)
            kbs[name] = KnowledgeBase.open(_settings(Path(tmp) / name), embedder=embedder)
        store_chunks = kbs["plain"].store.chunk_count()
        seconds = {"pipeline": timed_ingest(kbs["plain"], docs, ingest_all)}
        seconds["embed"] = timed(lambda: embedder.embed(texts, batch_size=EMBED_BATCH))
        seconds["pipeline_batch"] = timed_ingest(kbs["batch"], docs, ingest_batch)
        profile = _profile_ingest(kbs["profiled"], docs)
        kbs["profiled"].close()
    rates = {s: len(texts) / t for s, t in seconds.items()}
    return {
        "docs": len(docs),
        "chunks": len(texts),
        "store_chunks_before": store_chunks,
        "chunks_per_s": rates,
        "ratio_vs_embed": {s: r / rates["embed"] for s, r in rates.items()},
        "profile": profile,
    }


def bench_search(kb: KnowledgeBase, queries: list[str], warmup: int, n: int) -> dict[str, Any]:
    """Warm hybrid ``kb.search`` (k = 5, the tool's default) latency per stage, in ms."""
    if len(queries) < warmup + n:
        raise SystemExit(f"need {warmup + n} queries, have {len(queries)}")
    for q in queries[:warmup]:
        kb.search(q, 5)
    per_stage: dict[str, list[float]] = {s: [] for s in (*STAGES, "wall")}
    abstained = 0
    for q in queries[warmup : warmup + n]:
        t0 = time.perf_counter()
        result = kb.search(q, 5)
        per_stage["wall"].append((time.perf_counter() - t0) * 1000.0)
        abstained += result.abstained
        for stage in STAGES:
            per_stage[stage].append(result.timings_ms.get(stage, 0.0))
    summary = {
        stage: {
            "p50": float(np.percentile(v, 50)),
            "p95": float(np.percentile(v, 95)),
            "mean": float(np.mean(v)),
        }
        for stage, v in per_stage.items()
    }
    return {"queries": n, "warmup": warmup, "abstained": abstained, "stages_ms": summary}


# --- report -------------------------------------------------------------------------------------------


def markdown(results: dict[str, Any]) -> str:
    lines: list[str] = []
    if ing := results.get("ingest"):
        c, r = ing["chunks_per_s"], ing["ratio_vs_embed"]
        lines += [
            f"### Ingest into a fresh store: {ing['docs']} SciFact docs, {ing['chunks']} chunks, "
            f"{len(ing['chunks_per_rep'])} alternating reps",
            "",
            "| side | chunks/s (median) | ratio to embed (median of per-rep ratios) | goal |",
            "|---|---:|---:|---|",
            f"| `kb.ingest` per document | {c['pipeline']:.2f} | {r['pipeline']:.2f}x | >= 0.80x |",
            f"| `kb.ingest` inside `kb.batch()` | {c['pipeline_batch']:.2f} | {r['pipeline_batch']:.2f}x | >= 0.80x |",
            f"| `embedder.embed`, all chunks, batch {EMBED_BATCH} (reference) | {c['embed']:.2f} | 1.00x | |",
            f"| `embedder.embed` per document, as ingest calls it | {c['embed_per_doc']:.2f} "
            f"| {r['embed_per_doc']:.2f}x | (diagnostic) |",
            "",
            f"Against its own embedding calls: per document {ing['ratio_pipeline_vs_per_doc']:.2f}x, "
            f"batch {ing['ratio_batch_vs_per_doc']:.2f}x.",
            "",
            "| profiled `kb.ingest` stage (per document) | s | share |",
            "|---|---:|---:|",
        ]
        lines += _profile_rows(ing["profile"])
    if sc := results.get("ingest_at_scale"):
        c, r = sc["chunks_per_s"], sc["ratio_vs_embed"]
        lines += [
            f"### Ingest into the {sc['store_chunks_before']}-chunk store (diagnostic, one pass each): "
            f"{sc['docs']} docs, {sc['chunks']} chunks",
            "",
            "| side | chunks/s | ratio to embed |",
            "|---|---:|---:|",
            f"| `kb.ingest` per document | {c['pipeline']:.2f} | {r['pipeline']:.2f}x |",
            f"| `kb.ingest` inside `kb.batch()` | {c['pipeline_batch']:.2f} | {r['pipeline_batch']:.2f}x |",
            f"| `embedder.embed` (reference) | {c['embed']:.2f} | 1.00x |",
            "",
            "| profiled `kb.ingest` stage (per document) | s | share |",
            "|---|---:|---:|",
        ]
        lines += _profile_rows(sc["profile"])
    if bm := results.get("bm25"):
        q = bm["qps"]
        lines += [
            f"### BM25: {bm['chunks']} chunks, {bm['queries']} SciFact queries, k={bm['k']}, "
            f"{len(bm['seconds']['product'])} alternating reps",
            "",
            "| side | queries/s (median) | ms/query | ratio | goal |",
            "|---|---:|---:|---:|---|",
            f"| `LexicalIndex.search` | {q['product']:.0f} | {1000 / q['product']:.3f} "
            f"| {bm['ratio_product_vs_bm25s']:.2f}x | >= 1.0x |",
            f"| bm25s direct (`tokenize` + `retrieve`) — reference | {q['bm25s']:.0f} "
            f"| {1000 / q['bm25s']:.3f} | 1.00x | |",
            "",
            f"Top-{bm['k']} scores identical to bm25s on {bm['score_agreement']:.1%} of queries.",
            "",
        ]
    if se := results.get("search"):
        st = se["stages_ms"]
        total = st["total"]["mean"] or 1.0
        lines += [
            f"### Warm `kb.search` (hybrid, k=5, no reranker): {se['store_chunks']} chunks, {se['queries']} queries",
            "",
            "| stage | p50 ms | p95 ms | mean ms | share of mean total |",
            "|---|---:|---:|---:|---:|",
        ]
        for stage, v in st.items():
            share = "" if stage in ("total", "wall") else f"{v['mean'] / total:.0%}"
            lines.append(f"| {stage} | {v['p50']:.2f} | {v['p95']:.2f} | {v['mean']:.2f} | {share} |")
        lines.append("")
    return "\n".join(lines)


def _profile_rows(prof: dict[str, float]) -> list[str]:
    total = prof["total"] or 1.0
    rows = [f"| {k} | {v:.2f} | {v / total:.0%} |" for k, v in prof.items() if k != "total"]
    return [*rows, f"| total | {prof['total']:.2f} | 100% |", ""]


def _revision() -> str:
    """The commit measured, with "+dirty" when sextant/ has uncommitted changes (the code under test)."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "sextant"], cwd=REPO, capture_output=True, text=True)
    except OSError:
        return "unknown"
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "") if head.returncode == 0 else "unknown"


def main(argv: Sequence[str] | None = None) -> int:
    default_data = Path(os.environ.get("SEXTANT_DATA_DIR", REPO.parent / "shared" / "data"))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=default_data, help="shared data folder (holds beir/)")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "out", help="cache and scratch folder")
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run of the script")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--rebuild", action="store_true", help="rebuild the cached search store")
    parser.add_argument("--only", nargs="+", choices=("ingest", "bm25", "search"), default=["ingest", "bm25", "search"])
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    beir = args.data / "beir"
    if not (beir / "scifact" / "corpus.jsonl").exists():
        parser.error(f"no BEIR data under {beir}: pass --data or set SEXTANT_DATA_DIR")
    args.out.mkdir(parents=True, exist_ok=True)

    quiet_model_loading()
    embedder = load_embedder(_settings(args.out).embedder, THREADS)  # once; torch threads set here
    import torch

    scifact = read_corpus(beir / "scifact" / "corpus.jsonl", "scifact")
    nfcorpus = read_corpus(beir / "nfcorpus" / "corpus.jsonl", "nfcorpus")
    all_docs = interleave(scifact, nfcorpus)
    store_docs, store_texts = until_chunks(all_docs, embedder, ChunkingConfig(), sizes.store_min_chunks)
    results: dict[str, Any] = {
        "machine": {
            "cpus": os.cpu_count(),
            "torch_threads": torch.get_num_threads(),
            "loadavg_start": os.getloadavg(),
            "python": platform.python_version(),
            "bm25s": bm25s.__version__,
            "torch": torch.__version__,
            "sextant_revision": _revision(),
        },
        "sizes": asdict(sizes),
    }
    if "ingest" in args.only:
        results["ingest"] = bench_ingest(scifact[: sizes.ingest_docs], embedder, sizes.ingest_reps, args.out)
    if "bm25" in args.only:
        queries = read_queries(beir / "scifact" / "queries.jsonl")
        results["bm25"] = bench_bm25(store_texts, queries[: 200 if args.quick else None], sizes.bm25_reps)
        log(f"bm25: {results['bm25']['qps']}")
    if "search" in args.only:
        kb, info = open_store(args.out, store_docs, embedder, store_key(embedder, sizes.store_min_chunks), args.rebuild)
        queries = interleave(
            read_queries(beir / "scifact" / "queries.jsonl"), read_queries(beir / "nfcorpus" / "queries.jsonl")
        )
        results["search"] = bench_search(kb, queries, sizes.warmup_queries, sizes.search_queries)
        results["search"]["store_chunks"] = info["chunks"]
        results["search"]["store"] = info
        extra = all_docs[len(store_docs) : len(store_docs) + (8 if args.quick else 30)]
        kb.close()  # the diagnostic below works on copies of the store
        results["ingest_at_scale"] = bench_ingest_at_scale(kb.settings.store_dir(), extra, embedder, args.out)
    results["machine"]["loadavg_end"] = os.getloadavg()
    print(markdown(results))
    write_json(args.json, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
