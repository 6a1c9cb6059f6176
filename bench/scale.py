"""The knowledge base at 10k, 100k and 1M chunks (issue 54, item 1): a profile of what each size costs.

For each size a store is built once under ``--root`` (reused by later runs) through the product's own write
paths inside ``kb.batch()``: ``KnowledgeBase.ingest`` per document for the real abstracts (as ``sextant-ingest``
runs), ``KnowledgeBase.ingest_many`` (documents written in groups, the bulk path) for the synthetic ones beyond;
then measured:

- ``build``: chunks/s of that ingest with the vector source's time taken out (the store's own cost);
- ``ingest``: 1,000 held-out chunks ingested inside ``kb.batch()`` into an empty store and into the store of
  this size, alternated (empty, sized, sized, empty), then forgotten again; the sized / empty ratio, for one
  write per document (as ``sextant-ingest``) and for ``ingest_many``'s groups;
- ``search``: warm hybrid ``kb.search`` (k = 5, no reranker), p50/p95 per ``SearchResult.timings_ms`` stage;
- ``follow``: what a running reader pays in its next search when another process wrote a 3-chunk document
  (the ``refresh`` stage: reopening Chroma's segments and the BM25 catch-up from the writer's journal entry),
  beside it the catch-up by listing every record (``refresh(full=True)``, the fallback and the way before the
  journal), and what a new replica pays to rebuild BM25 from the store (``iter_chunks`` + ``LexicalIndex.add``);
- ``processes``: two real stdio ``sextant-kb`` processes started as Claude Desktop starts them, each timed
  from spawn to its first ``kb_search`` answer (cold start), their RSS and PSS after 20 searches, the
  seconds from a ``kb.ingest`` of a new document in this process until the first server ranks it first, and
  the second server's memory after it writes a document itself (``kb_ingest``);
- ``disk``: Chroma's files and the BM25 folder.

Text. The BEIR corpora (SciFact then NFCorpus abstracts, ~2.5 chunks each, 22,535 chunks in all) come
first; beyond them the documents are synthetic, said plainly: each is ~20 chunks of sentences drawn at
random (seeded) from those corpora, with about one sentence in three carrying a made-up rare term drawn from
a Zipf law over 2 million ids, so the vocabulary keeps growing with the corpus as real text's does (Heaps's
law) instead of stopping at the two corpora's ~60k words.

Vectors. Not MiniLM's: a stand-in at the model boundary (``StandInEmbedder``) returns a hashed bag-of-words
random projection to 384 dimensions, unit length, so chunks that share words get near vectors (clustered by
topic, as embeddings are) at ~1,000x the model's speed. The real model still tokenizes for chunking, and in
``search`` it embeds every query (so the embed stage costs what it costs) while the query's dense search uses
the stand-in vector (so the query lies in the stored vectors' space). HNSW's cost depends on the vectors'
distribution, so the dense stage is this distribution's, not MiniLM's. The ``sextant-kb`` processes run the
real model on their queries (cold start and memory are the product's; their dense lists are not meaningful).

    nice -n 10 python bench/scale.py --data ../shared/data --root /tmp/scale --sizes 10000 100000 \
        --json learning/scale-profile.json --plot learning/scale-profile.png
    python bench/scale.py --root /tmp/scale --sizes 1000000 --ann ivfpq_rerank --ingest-only   # the ingest alone
"""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import argparse
import hashlib
import json
import math
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Generator, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import psutil
import scipy.sparse as sp

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from sextant.evals.beir import BeirDoc, read_corpus, read_queries  # noqa: E402
from sextant.kb.derived_indexes import lexical_dir  # noqa: E402
from sextant.kb.embeddings import Embedder, load_embedder, quiet_model_loading  # noqa: E402
from sextant.kb.knowledge_base import KnowledgeBase, ToIngest  # noqa: E402
from sextant.kb.lexical import LexicalIndex  # noqa: E402
from sextant.settings import KbSettings  # noqa: E402
from tests.kb.store_fleet import Fleet  # noqa: E402

sys.path.insert(0, str(REPO / "bench"))
from chroma_server import start_server, stop_server  # noqa: E402

STAGES = ("refresh", "embed", "dense", "lexical", "fuse", "fetch", "cosine", "rerank", "finish", "total")
VECTOR_SOURCE = "stand-in: hashed bag-of-words random projection, 384-d unit (not MiniLM)"
HASH_BUCKETS = 1 << 18
SYNTH_CHUNKS_PER_DOC = 20  # a paper or a wiki page rather than an abstract
WORDS_PER_CHUNK = 90  # ~200 MiniLM tokens of this (scientific) text
RARE_TERMS = 2_000_000
K = 5


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values, dtype=np.float64), q))


# --- the vector source -------------------------------------------------------------------------------------------


class StandInEmbedder:
    """The real embedder for everything but document vectors, which come from a hashed random projection.

    ``seconds`` is the time spent making vectors for ``embed`` calls, so ingest can report its cost without
    the vector source's. ``time_queries``: ``embed_query`` runs the real model first (its time is the
    product's), then returns the stand-in vector.
    """

    def __init__(self, inner: Embedder, *, time_queries: bool = False) -> None:
        self._inner = inner
        self._time_queries = time_queries
        rng = np.random.default_rng(54)
        self._projection = rng.standard_normal((HASH_BUCKETS, inner.dim)).astype(np.float32)
        self.seconds = 0.0
        self.texts = 0

    def __getattr__(self, name: str) -> Any:  # name, dim, max_tokens, token_spans, count_tokens, runtime …
        return getattr(self._inner, name)

    def vectors(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        rows, cols = [], []
        for i, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                rows.append(i)
                cols.append(int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest()) % HASH_BUCKETS)
        counts = sp.csr_matrix(
            (np.ones(len(rows), np.float32), (rows, cols)), shape=(len(texts), HASH_BUCKETS), dtype=np.float32
        )
        counts.data = np.log1p(counts.data)  # damp repeated words, as a model's pooling does
        v = np.asarray(counts @ self._projection, dtype=np.float32)
        norms = np.linalg.norm(v, axis=1, keepdims=True)
        return (v / np.where(norms > 0, norms, 1.0)).astype(np.float32)

    def embed(self, texts: Sequence[str], *, batch_size: int = 32) -> npt.NDArray[np.float32]:
        started = time.perf_counter()
        out = self.vectors(texts)
        self.seconds += time.perf_counter() - started
        self.texts += len(texts)
        return out

    def embed_query(self, query: str) -> npt.NDArray[np.float32]:
        if self._time_queries:
            self._inner.embed_query(query)
        return self.vectors([query])[0]


# --- the text --------------------------------------------------------------------------------------------------


def real_docs(data: Path) -> list[BeirDoc]:
    docs = []
    for name in ("scifact", "nfcorpus"):
        for doc in read_corpus(data / "beir" / name):
            if f"{doc.title} {doc.text}".strip():
                docs.append(BeirDoc(f"{name}-{doc.id}", doc.title, doc.text))
    return docs


def sentences_of(docs: Sequence[BeirDoc]) -> list[str]:
    out: list[str] = []
    for doc in docs:
        out.extend(s for s in re.split(r"(?<=[.!?])\s+", doc.text) if len(s.split()) >= 4)
    return out


def synthetic_docs(sentences: list[str], seed: str) -> Iterator[BeirDoc]:
    """Endless documents of ~SYNTH_CHUNKS_PER_DOC chunks, recombined from real sentences (see the module doc)."""
    rng = random.Random(seed)
    nprng = np.random.default_rng(int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8]))
    mean_words = statistics.fmean(len(s.split()) for s in sentences[:5000])
    per_doc = round(SYNTH_CHUNKS_PER_DOC * WORDS_PER_CHUNK / mean_words)
    n = 0
    while True:
        picked = [sentences[i] for i in nprng.integers(0, len(sentences), per_doc)]
        rare = nprng.zipf(1.3, per_doc) % RARE_TERMS
        body = " ".join(
            f"{s} ({_rare_term(int(r))})" if rng.random() < 0.33 else s for s, r in zip(picked, rare, strict=True)
        )
        title = " ".join(picked[0].split()[:8]).rstrip(".,;:")
        yield BeirDoc(f"synth-{seed}-{n}", title, body)
        n += 1


def _rare_term(i: int) -> str:
    letters = "bcdfghjklmnpqrstvwxz"
    out = "q"
    while True:
        i, r = divmod(i, len(letters))
        out += letters[r]
        if not i:
            return out + "ex"


def corpus_for(data: Path, real_chunks: int) -> Generator[tuple[BeirDoc, bool], int, None]:
    """``(document, real)``: real documents while the store holds fewer than ``real_chunks`` (the caller says,
    by sending the count back), synthetic ones after."""
    real = real_docs(data)
    held = 0
    for doc in real:
        if held >= real_chunks:
            break
        held = yield doc, True
    yield from ((doc, False) for doc in synthetic_docs(sentences_of(real), "store"))


# --- stores ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Site:
    """Where the measured processes find a store: the embedded store in ``folder``, or (``url``) a Chroma server,
    with ``folder`` the replica's own (its BM25 cache). Always ``.../store``, as ``Fleet`` names it."""

    folder: Path
    url: str | None = None
    database: str | None = None
    ann: str = "chroma"  # SEXTANT_ANN_INDEX: which index serves dense search

    def settings(self, refresh_s: float = 2.0) -> KbSettings:
        return KbSettings(
            chroma_dir=self.folder,
            chroma_url=self.url,
            chroma_database=self.database,
            threads=1,
            lexical_refresh_s=refresh_s,
            ann_index=self.ann,
            _env_file=None,
        )

    def env(self) -> dict[str, str]:
        """What a process started on this site is told, beside ``SEXTANT_CHROMA_DIR``."""
        named = {"SEXTANT_CHROMA_URL": self.url} if self.url else {}
        named |= {"SEXTANT_ANN_INDEX": self.ann}
        return {**named, **({"SEXTANT_CHROMA_DATABASE": self.database} if self.database else {})}


def build(
    root: Path, size: int, data: Path, real_chunks: int, embedder: StandInEmbedder, ann: str = "chroma"
) -> dict[str, Any]:
    """The store of ``size`` chunks (at least), built once: a copy of the largest smaller store already built,
    grown by the same document sequence. Its build record is kept beside it. Built with ``ann``'s index, a new
    store is made for it (its Chroma index minimal: ``ChunkStore.dense_index``)."""
    store = root / f"{size}" / "store"
    record = store.parent / "build.json"
    if record.exists():
        return dict(json.loads(record.read_text()))
    shutil.rmtree(store.parent, ignore_errors=True)
    smaller = sorted(int(p.parent.name) for p in root.glob("*/build.json") if int(p.parent.name) < size)
    done: dict[str, Any] = {"documents": 0, "real_documents": 0, "blocks": [], "chunks": 0}
    if smaller:
        shutil.copytree(root / f"{smaller[-1]}" / "store", store)
        done = json.loads((root / f"{smaller[-1]}" / "build.json").read_text())
    store.mkdir(parents=True, exist_ok=True)
    embedder.seconds = 0.0
    started = time.perf_counter()
    blocks = list(done["blocks"])
    docs, real = done["documents"], done["real_documents"]
    with KnowledgeBase.open(Site(store, ann=ann).settings(), embedder=embedder) as kb:  # type: ignore[arg-type]
        source = corpus_for(data, real_chunks)
        doc, is_real = next(source)
        for skipped in range(1, docs + 1):  # the documents the copied store already holds
            doc, is_real = source.send(done["chunks"] if skipped == done["real_documents"] else 0)
        held = kb.store.chunk_count()
        while held < size:
            t0, e0, c0 = time.perf_counter(), embedder.seconds, held
            with kb.batch():  # one BM25 save per block
                if is_real:  # where the real abstracts end depends on the count after each: one write each
                    while held < size and held - c0 < 5000 and is_real:
                        held += kb.ingest(doc.id, doc.as_document(), source="scale").chunks
                        docs += 1
                        real += 1
                        doc, is_real = source.send(held)
                else:  # synthetic documents: written in groups (``ingest_many``), the bulk path
                    added, written, doc = bulk_block(kb, source, doc, min(size - held, 5000))
                    held += added
                    docs += written
            seconds = time.perf_counter() - t0 - (embedder.seconds - e0)
            blocks.append({"chunks_at_end": held, "chunks_per_s": (held - c0) / seconds, "load": os.getloadavg()[0]})
            log(f"build {size}: {held} chunks, {blocks[-1]['chunks_per_s']:.0f} chunks/s beyond vectors")
        total = time.perf_counter() - started
        out = {
            "chunks": kb.store.chunk_count(),
            "documents": docs,
            "real_documents": real,
            "copied_from": smaller[-1] if smaller else 0,
            "seconds": total,
            "vector_seconds": embedder.seconds,
            "chunks_per_s_beyond_vectors": (kb.store.chunk_count() - done["chunks"]) / (total - embedder.seconds),
            "blocks": blocks,
        }
    record.write_text(json.dumps(out, indent=2))
    return out


def bulk_block(
    kb: KnowledgeBase, source: Generator[tuple[BeirDoc, bool], int, None], first: BeirDoc, chunks: int
) -> tuple[int, int, BeirDoc]:
    """Write synthetic documents from ``source``, ``first`` first, through ``kb.ingest_many`` until about ``chunks``
    chunks are written (a group more at most); returns the chunks and documents written and the next document."""
    state = {"chunks": 0, "documents": 0}
    upcoming = [first]

    def feed() -> Iterator[ToIngest]:
        while state["chunks"] < chunks:
            doc = upcoming.pop()
            yield ToIngest(doc.id, doc.as_document(), source="scale")
            state["documents"] += 1
            upcoming.append(source.send(0)[0])

    for outcome in kb.ingest_many(feed()):
        state["chunks"] += outcome.chunks
    return state["chunks"], state["documents"], upcoming[0]


def disk(store: Path) -> dict[str, float]:
    sizes = {"chroma_mb": 0.0, "bm25_mb": 0.0}
    for f in store.rglob("*"):
        if f.is_file():
            key = "bm25_mb" if "bm25" in f.relative_to(store).parts[0] else "chroma_mb"
            sizes[key] += f.stat().st_size / 2**20
    return sizes


# --- ingest ----------------------------------------------------------------------------------------------------


def held_out(data: Path, chunks: int) -> list[BeirDoc]:
    """Synthetic documents none of the stores holds, ~``chunks`` chunks in all."""
    source = synthetic_docs(sentences_of(real_docs(data)), "held-out")
    return [next(source) for _ in range(max(1, round(chunks / SYNTH_CHUNKS_PER_DOC)))]


def timed_batch(site: Site, docs: list[BeirDoc], embedder: StandInEmbedder, grouped: bool) -> tuple[float, int]:
    """Seconds (vector source taken out) and chunks of one ``kb.batch()`` ingest of ``docs``, one write per
    document or (``grouped``) through ``kb.ingest_many``; then forgotten."""
    with KnowledgeBase.open(site.settings(), embedder=embedder) as kb:  # type: ignore[arg-type]
        e0 = embedder.seconds
        started = time.perf_counter()
        with kb.batch():
            if grouped:
                n = sum(o.chunks for o in kb.ingest_many(ToIngest(d.id, d.as_document(), source="scale") for d in docs))
            else:
                n = sum(kb.ingest(d.id, d.as_document(), source="scale").chunks for d in docs)
        seconds = time.perf_counter() - started - (embedder.seconds - e0)
        with kb.batch():
            for d in docs:
                kb.forget(d.id)
    return seconds, n


def bench_ingest(site: Site, scratch: Path, docs: list[BeirDoc], embedder: StandInEmbedder) -> dict[str, Any]:
    """The sized / empty ratio of the held-out ingest, one write per document (as ``sextant-ingest``) and grouped
    (``ingest_many``, the bulk path), each side alternated: empty, sized, sized, empty."""
    empty = Site(scratch / "empty" / "store", site.url, "sextant-scale-empty" if site.url else None, site.ann)
    shutil.rmtree(empty.folder.parent, ignore_errors=True)
    out: dict[str, Any] = {}
    for grouped in (False, True):
        seconds: dict[str, list[float]] = {"empty": [], "sized": []}
        n = 0
        for side in ("empty", "sized", "sized", "empty"):
            s, n = timed_batch(empty if side == "empty" else site, docs, embedder, grouped)
            seconds[side].append(s)
            log(f"ingest {n} chunks into the {side} store{' grouped' if grouped else ''}: {s:.2f} s beyond vectors")
        e, z = statistics.median(seconds["empty"]), statistics.median(seconds["sized"])
        shape = {"chunks": n, "seconds": seconds, "empty_chunks_per_s": n / e, "sized_chunks_per_s": n / z}
        out.update({**shape, "ratio": z / e} if not grouped else {"grouped": {**shape, "ratio": z / e}})
    shutil.rmtree(empty.folder.parent, ignore_errors=True)
    return out


# --- search and following --------------------------------------------------------------------------------------


def queries(data: Path, n: int) -> list[str]:
    a = list(read_queries(data / "beir" / "scifact").values())
    b = list(read_queries(data / "beir" / "nfcorpus").values())
    mixed = [q for pair in zip(a, b, strict=False) for q in pair if q.strip()]
    return mixed[:n]


def bench_search(site: Site, inner: Embedder, qs: list[str], warmup: int) -> dict[str, Any]:
    querying = StandInEmbedder(inner, time_queries=True)
    started = time.perf_counter()
    with KnowledgeBase.open(site.settings(), embedder=querying) as kb:  # type: ignore[arg-type]
        open_s = time.perf_counter() - started
        for q in qs[:warmup]:
            kb.search(q, K, abstain=False)
        timings: dict[str, list[float]] = {s: [] for s in (*STAGES, "wall")}
        for q in qs[warmup:]:
            t0 = time.perf_counter()
            result = kb.search(q, K, abstain=False)
            timings["wall"].append((time.perf_counter() - t0) * 1000)
            for stage in STAGES:
                timings[stage].append(result.timings_ms.get(stage, 0.0))
        recall = dense_recall(kb, querying, qs[warmup:]) if kb.ann is not None else None
    return {
        "queries": len(qs) - warmup,
        "open_s": open_s,
        "dense_recall_at_10": recall,
        "stages_ms": {
            s: {"p50": percentile(v, 50), "p95": percentile(v, 95), "mean": statistics.fmean(v)}
            for s, v in timings.items()
        },
    }


def dense_recall(kb: KnowledgeBase, querying: StandInEmbedder, qs: list[str], k: int = 10) -> float:
    """Recall@k of the ANN index's dense list against exact search over every vector in the store."""
    ids, xb = kb.chunk_vectors()
    found = []
    for q in qs:
        vector = querying.vectors([q])[0]
        exact = {ids[i] for i in np.argpartition(-(xb @ vector), k)[:k]}
        found.append(len(exact & {cid for cid, _ in kb.ann.query(vector, k)}) / k)  # type: ignore[union-attr]
    return statistics.fmean(found)


def bench_follow(site: Site, inner: Embedder, reps: int) -> dict[str, Any]:
    """A reader's next search after another process wrote 3 chunks; and BM25 rebuilt from the store."""
    querying = StandInEmbedder(inner)
    refresh_ms, reopen_ms, listing_ms = [], [], []
    with KnowledgeBase.open(site.settings(refresh_s=3600), embedder=querying) as kb:  # type: ignore[arg-type]
        kb.search("cell growth factor", abstain=False)
        written = []
        for rep in range(reps):
            doc_id = f"follow-{rep}"
            command = [sys.executable, "-m", "tests.kb.random_writes", str(site.folder), doc_id, "3"]
            subprocess.run(command, cwd=REPO, check=True, env={**os.environ, **site.env()})
            written.append(doc_id)
            result = kb.search("cell growth factor", abstain=False)
            refresh_ms.append(result.timings_ms["refresh"])
            started = time.perf_counter()
            kb.refresh(full=True)  # the listing of every record, what the refresh did before the journal
            listing_ms.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            kb.store.reload()  # the reopen alone, nothing having changed
            reopen_ms.append((time.perf_counter() - started) * 1000)
        with kb.batch():
            for doc_id in written:
                kb.forget(doc_id)
        started = time.perf_counter()
        fresh = LexicalIndex()
        for chunks in kb.store.iter_chunks():
            fresh.add([c.id for c in chunks], kb.indexes._lexical_texts(chunks))
        fresh.search("cell growth factor", 5)  # the matrix is built on the first search
        rebuild_s = time.perf_counter() - started
        started = time.perf_counter()
        loaded = LexicalIndex.open(lexical_dir(site.settings()))
        loaded.search("cell growth factor", 5)
        load_s = time.perf_counter() - started
    return {
        "follow_refresh_ms": refresh_ms,
        "follow_refresh_ms_median": statistics.median(refresh_ms),
        "reopen_ms_median": statistics.median(reopen_ms),
        "listing_diff_ms_median": statistics.median(listing_ms),
        "bm25_rebuild_s": rebuild_s,
        "bm25_load_and_first_search_s": load_s,
    }


# --- real processes --------------------------------------------------------------------------------------------


def chroma_read_cost(site: Site, data: Path) -> dict[str, Any]:
    """What a process searching Sextant's index would pay on its first read of Chroma's chunk collection (any read
    loads that collection's whole vector index; the product's search path no longer makes one): a child opens the
    store as a server does, runs 20 searches, then counts Chroma's chunks; its memory before and after."""
    command = [sys.executable, __file__, "--data", str(data), "--chroma-read-probe", str(site.folder), site.ann]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    return dict(json.loads(done.stdout.splitlines()[-1]))


def chroma_read_probe(folder: Path, ann: str, data: Path) -> None:
    quiet_model_loading()
    inner = load_embedder("all-MiniLM-L6-v2", 1)
    with KnowledgeBase.open(Site(folder, ann=ann).settings(), embedder=inner) as kb:
        for q in queries(data, 20):
            kb.search(q, K, abstain=False)
        searched = memory(os.getpid())
        kb.store.chunk_count()
        print(json.dumps({"after_20_searches": searched, "after_one_read_of_chroma_s_chunks": memory(os.getpid())}))


def memory(pid: int) -> dict[str, float]:
    full = psutil.Process(pid).memory_full_info()
    return {"rss_mb": full.rss / 2**20, "pss_mb": full.pss / 2**20, "uss_mb": full.uss / 2**20}


def bench_processes(site: Site, qs: list[str], embedder: StandInEmbedder, trials: int, searches: int) -> dict[str, Any]:
    """Two stdio servers on the store: cold start, memory, and how soon server 0 sees this process's writes."""
    fleet = Fleet(site.folder.parent, {"SEXTANT_LOG_LEVEL": "WARNING", **site.env()})
    cold, mem = [], []
    visible, write_s, refresh_ms = [], [], []
    try:
        for n in range(2):
            started = time.perf_counter()
            fleet.start(n)
            result = fleet.call(n, "kb_search", {"query": qs[n], "k": K})
            assert not result.is_error, result.content
            cold.append(time.perf_counter() - started)
            log(f"server {n}: first answer {cold[-1]:.1f} s after spawn")
        for q in qs[2 : 2 + searches]:
            for n in range(2):
                fleet.call(n, "kb_search", {"query": q, "k": K})
        for n in range(2):
            server = fleet.servers[n]
            assert server is not None
            mem.append(memory(server.pid))
        with KnowledgeBase.open(site.settings(), embedder=embedder) as kb:  # type: ignore[arg-type]
            for trial in range(trials):
                doc_id = f"visible-{trial}"
                word = f"zyx{trial}quorble"
                text = f"{word} calibration of the {word} assay. " * 3
                started = time.perf_counter()
                kb.ingest(doc_id, BeirDoc(doc_id, doc_id, text).as_document(), source="scale")
                returned = time.perf_counter()
                write_s.append(returned - started)
                while True:
                    result = fleet.call(0, "kb_search", {"query": word, "k": K})
                    found = result.structured_content or {}
                    # Only the new document holds the word. Its hit may be withheld by abstention (the real
                    # model's query vector is far from every stand-in vector), so the matched word is the sign.
                    if found.get("matched_terms", 0) >= 1:
                        refresh_ms.append(found["timings_ms"].get("refresh", 0.0))
                        break
                    if time.perf_counter() - returned > 120:
                        raise SystemExit(f"server 0 did not find {doc_id} within 120 s")
                visible.append(time.perf_counter() - returned)
                log(f"visibility {trial}: written in {write_s[-1]:.2f} s, found after {visible[-1]:.2f} s")
            # A server that writes: an embedded Chroma loads its vector index of the chunks for the first write.
            text = "A document one of the servers writes itself, to measure what its first write holds. " * 3
            started = time.perf_counter()
            written = fleet.call(1, "kb_ingest", {"documents": [{"id": "written", "title": "W", "content": text}]})
            assert not written.is_error, written.content
            server_write_s = time.perf_counter() - started
            server = fleet.servers[1]
            assert server is not None
            after_write = memory(server.pid)
            log(f"server 1 wrote a document in {server_write_s:.1f} s; then {after_write}")
            with kb.batch():
                for doc_id in [f"visible-{trial}" for trial in range(trials)] + ["written"]:
                    kb.forget(doc_id)
    finally:
        fleet.close()
    return {
        "cold_start_s": cold,
        "memory": mem,
        "server_first_write_s": server_write_s,
        "memory_after_a_write": after_write,
        "ingest_one_document_s": write_s,
        "visible_after_s": visible,
        "refresh_ms_of_finding_search": refresh_ms,
    }


# --- output ----------------------------------------------------------------------------------------------------


def row_of(result: dict[str, Any], on_server: bool, ann: str) -> dict[str, Any]:
    b, s, p = result["build"], result["search"]["stages_ms"], result["processes"]
    return {
        "chunks": b["chunks"],
        "documents": b["documents"],
        "real_documents": b["real_documents"],
        "store": ("chroma-server" if on_server else "embedded") + ("" if ann == "chroma" else f", {ann} index"),
        "dense_index": ann,
        "chroma_server_memory": p.get("server_memory"),
        "vector_source": VECTOR_SOURCE,
        "text": "BEIR SciFact + NFCorpus, then synthetic (sentences of both recombined, rare terms added)",
        "build_chunks_per_s_beyond_vectors": b["chunks_per_s_beyond_vectors"],
        "ingest_1000_empty_chunks_per_s": result["ingest"]["empty_chunks_per_s"],
        "ingest_1000_sized_chunks_per_s": result["ingest"]["sized_chunks_per_s"],
        "ingest_1000_ratio": result["ingest"]["ratio"],
        "ingest_1000_grouped_ratio": result["ingest"]["grouped"]["ratio"],
        "ingest_1000_grouped_sized_chunks_per_s": result["ingest"]["grouped"]["sized_chunks_per_s"],
        "dense_recall_at_10": result["search"].get("dense_recall_at_10"),
        "warm_search_p50_ms": s["total"]["p50"],
        "warm_search_p95_ms": s["total"]["p95"],
        "warm_search_stages_ms": {k: {"p50": v["p50"], "p95": v["p95"]} for k, v in s.items()},
        "cold_start_s": p["cold_start_s"][0],
        "cold_start_second_s": p["cold_start_s"][1],
        "rss_mb": p["memory"][0]["rss_mb"],
        "pss_mb": p["memory"][0]["pss_mb"],
        "memory_two_servers": p["memory"],
        "memory_before_and_after_a_read_of_chroma_s_chunks": p.get("chroma_read"),
        "rss_mb_after_a_write": p["memory_after_a_write"]["rss_mb"] if "memory_after_a_write" in p else None,
        "ingest_one_document_s_median": statistics.median(p["ingest_one_document_s"]),
        "visible_in_second_process_s_median": statistics.median(p["visible_after_s"]),
        "visible_in_second_process_s_max": max(p["visible_after_s"]),
        "follow_refresh_ms_median": result["follow"]["follow_refresh_ms_median"],
        "reopen_ms_median": result["follow"]["reopen_ms_median"],
        "listing_diff_ms_median": result["follow"].get("listing_diff_ms_median"),
        "bm25_rebuild_s": result["follow"]["bm25_rebuild_s"],
        "bm25_load_and_first_search_s": result["follow"]["bm25_load_and_first_search_s"],
        "disk_mb": result["disk"],
        "load_1min": result["load"],
    }


def markdown(rows: list[dict[str, Any]]) -> str:
    out = [
        "| store | chunks | warm p50 / p95 ms | dense p95 | lexical p95 | fetch p95 | embed p95 | RSS / PSS MB "
        "| cold start s | 1k ingest sized/empty (grouped) | new doc: write s, visible s | follow ms | BM25 rebuild s "
        "| disk MB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        st = r["warm_search_stages_ms"]
        grouped = f" ({r['ingest_1000_grouped_ratio']:.2f}x)" if "ingest_1000_grouped_ratio" in r else ""
        out.append(
            f"| {r['store']} | {r['chunks']:,} | {r['warm_search_p50_ms']:.1f} / {r['warm_search_p95_ms']:.1f} "
            f"| {st['dense']['p95']:.1f} | {st['lexical']['p95']:.1f} | {st['fetch']['p95']:.1f} "
            f"| {st['embed']['p95']:.1f} | {r['rss_mb']:.0f} / {r['pss_mb']:.0f} | {r['cold_start_s']:.1f} "
            f"| {r['ingest_1000_ratio']:.2f}x{grouped} | {r['ingest_one_document_s_median']:.2f}, "
            f"{r['visible_in_second_process_s_median']:.2f} | {r['follow_refresh_ms_median']:.0f} "
            f"| {r['bm25_rebuild_s']:.1f} | {r['disk_mb']['chroma_mb'] + r['disk_mb']['bm25_mb']:.0f} |"
        )
    return "\n".join(out)


EXTRAPOLATED = (
    "warm_search_p50_ms",
    "warm_search_p95_ms",
    "rss_mb",
    "pss_mb",
    "cold_start_s",
    "ingest_1000_ratio",
    "ingest_one_document_s_median",
    "visible_in_second_process_s_median",
    "follow_refresh_ms_median",
    "reopen_ms_median",
    "bm25_rebuild_s",
)


def extrapolate(rows: list[dict[str, Any]], to: int) -> dict[str, Any] | None:
    """NOT a measurement: each figure continued from the two largest measured sizes, never below the larger.

    Search latencies (per stage) on the log-log line, a power law: HNSW grows sub-linearly and the query's
    embedding not at all, so a straight line would charge them for noise. Everything else on the straight line
    in the chunk count: memory, disk, BM25's arrays, listings, reopening and rebuilding are proportional to the
    corpus, plus a fixed part (the model) that a power law would wrongly scale.
    """
    if len(rows) < 2 or rows[-1]["chunks"] >= to:
        return None
    a, b = rows[-2], rows[-1]
    scale = (to - b["chunks"]) / (b["chunks"] - a["chunks"])
    power = math.log(to / b["chunks"]) / math.log(b["chunks"] / a["chunks"])

    def line(x: float, y: float) -> float:
        return max(y, y + (y - x) * scale)

    def law(x: float, y: float) -> float:
        return max(y, y * (y / x) ** power) if x > 0 else y

    out: dict[str, Any] = {
        "chunks": to,
        "extrapolated": True,
        "method": f"from the measured {a['chunks']:,} and {b['chunks']:,} points, floored at the latter: search "
        "latencies on a power law (log-log line), everything else on a straight line in the chunk count",
    }
    out.update({key: line(a[key], b[key]) for key in EXTRAPOLATED})
    out["warm_search_stages_ms"] = {
        stage: {q: law(a["warm_search_stages_ms"][stage][q], v) for q, v in value.items()}
        for stage, value in b["warm_search_stages_ms"].items()
    }
    out["warm_search_p50_ms"] = out["warm_search_stages_ms"]["total"]["p50"]
    out["warm_search_p95_ms"] = out["warm_search_stages_ms"]["total"]["p95"]
    out["disk_mb"] = {k: line(a["disk_mb"][k], v) for k, v in b["disk_mb"].items()}
    return out


def plot(
    rows: list[dict[str, Any]], path: Path, guess: dict[str, Any] | None = None, others: Sequence[dict[str, Any]] = ()
) -> None:
    """The embedded store's ``rows`` as lines; ``others`` (the same store served by another dense index) as stars."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = [r["chunks"] for r in rows]
    fig, axes = plt.subplots(2, 2, figsize=(10, 7))
    panels = [
        (axes[0][0], "warm hybrid search, ms", 150, [("p95", "warm_search_p95_ms"), ("p50", "warm_search_p50_ms")]),
        (axes[0][1], "serving process memory, MB", 4096, [("RSS", "rss_mb"), ("PSS", "pss_mb")]),
        (axes[1][0], "cold start to first answer, s", 30, [("first server", "cold_start_s")]),
        (axes[1][1], "1,000-chunk ingest, sized / empty", 1.2, [("ratio", "ingest_1000_ratio")]),
    ]
    for ax, title, goal, series in panels:
        for label, key in series:
            (line,) = ax.plot(x, [r[key] for r in rows], marker="o", label=label)
            if guess is not None:
                ax.plot(
                    [x[-1], guess["chunks"]],
                    [rows[-1][key], guess[key]],
                    linestyle=":",
                    marker="o",
                    markerfacecolor="none",
                    color=line.get_color(),
                    label=f"{label}, extrapolated",
                )
            for other in others:
                index = other["store"].removeprefix("embedded, ")
                ax.plot(
                    [other["chunks"]], [other[key]], marker="*", markersize=11, linestyle="", label=f"{label}, {index}"
                )
        ax.axhline(goal, color="red", linestyle="--", label=f"goal at 1M: {goal}")
        ax.set_xscale("log")
        ax.set_xlabel("chunks in the store")
        ax.set_title(title)
        ax.legend(fontsize=7, loc="lower right" if ax is axes[0][0] else "best")
    stages = ("embed", "dense", "lexical", "fetch", "finish")
    inset = axes[0][0].inset_axes((0.1, 0.5, 0.35, 0.35))
    for stage in stages:
        inset.plot(x, [r["warm_search_stages_ms"][stage]["p95"] for r in rows], marker=".", label=stage)
    inset.set_xscale("log")
    inset.set_title("p95 by stage", fontsize=7)
    inset.tick_params(labelsize=6)
    inset.legend(fontsize=5)
    fig.suptitle("Sextant embedded store by size (stand-in vectors; 2 shared cores; stars: dense from our index)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--root", type=Path, default=Path("/tmp/scale"), help="stores are built here once")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--real-chunks", type=int, default=10_000, help="real abstracts up to here, then synthetic")
    parser.add_argument("--queries", type=int, default=200, help="warm searches timed per size")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--ingest-chunks", type=int, default=1000)
    parser.add_argument("--trials", type=int, default=5, help="visibility: new documents timed per size")
    parser.add_argument("--follow", type=int, default=5, help="writes by another process followed per size")
    parser.add_argument("--extrapolate-to", type=int, default=1_000_000, help="labelled as extrapolated")
    parser.add_argument("--report", action="store_true", help="no measuring: the table, extrapolation and plot")
    parser.add_argument("--build-only", action="store_true", help="build (or reuse) the stores, measure nothing")
    parser.add_argument(
        "--ingest-only", action="store_true", help="measure the sized / empty ingest alone, print it, keep no row"
    )
    parser.add_argument(
        "--chroma-server", action="store_true", help="measure replicas of a `chroma run` server serving a copy"
    )
    parser.add_argument(
        "--ann", default="chroma", help="SEXTANT_ANN_INDEX of every process measured (built from the store if absent)"
    )
    parser.add_argument("--json", type=Path)
    parser.add_argument("--plot", type=Path)
    parser.add_argument("--chroma-read-probe", nargs=2, metavar=("STORE", "ANN"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.chroma_read_probe:
        chroma_read_probe(Path(args.chroma_read_probe[0]), args.chroma_read_probe[1], args.data)
        return
    existing = json.loads(args.json.read_text()) if args.json and args.json.exists() else {"rows": []}
    rows = {(r["chunks_asked"], r["store"]): r for r in existing["rows"] if "chunks_asked" in r}
    if args.report:
        report(list(rows.values()), args)
        return
    quiet_model_loading()
    inner = load_embedder("all-MiniLM-L6-v2", 1)
    embedder = StandInEmbedder(inner)
    qs = queries(args.data, args.warmup + args.queries + 40)
    docs = held_out(args.data, args.ingest_chunks)
    for size in args.sizes:
        store = args.root / f"{size}" / "store"
        log(f"size {size}: building (or reusing) {store}")
        built = build(args.root, size, args.data, args.real_chunks, embedder, args.ann)
        if args.build_only:
            log(f"built {size}: {built['chunks_per_s_beyond_vectors']:.0f} chunks/s beyond vectors")
            continue
        with served(args.root / f"{size}", args.chroma_server, args.ann) as (site, server):
            if args.ingest_only:
                print(json.dumps({"chunks_asked": size, "ingest": bench_ingest(site, args.root, docs, embedder)}))
                continue
            result: dict[str, Any] = {"load": os.getloadavg()[0], "build": built}
            if args.ann != "chroma":  # the first open builds the index from the store; later ones map it
                started = time.perf_counter()
                with KnowledgeBase.open(site.settings(), embedder=embedder):  # type: ignore[arg-type]
                    result["dense_index_open_s"] = time.perf_counter() - started
                log(f"{args.ann} index opened (built if absent) in {result['dense_index_open_s']:.0f} s")
            result["search"] = bench_search(site, inner, qs[: args.warmup + args.queries], args.warmup)
            log(f"search at {size}: {result['search']['stages_ms']['total']}")
            result["follow"] = bench_follow(site, inner, args.follow)
            log(f"follow at {size}: {result['follow']}")
            result["ingest"] = bench_ingest(site, args.root, docs, embedder)
            result["processes"] = bench_processes(site, qs[-40:], embedder, args.trials, 20)
            if server is not None:
                result["processes"]["server_memory"] = memory(server.pid)
            if args.ann != "chroma" and server is None:
                result["processes"]["chroma_read"] = chroma_read_cost(site, args.data)
                log(f"a first read of Chroma's chunks: {result['processes']['chroma_read']}")
            result["disk"] = disk(site.folder if server is None else args.root / f"{size}" / "served")
        row = row_of(result, args.chroma_server, args.ann)
        row["chunks_asked"] = size
        row["build"] = result["build"]
        row["dense_index_open_s"] = result.get("dense_index_open_s")
        row["raw"] = {k: result[k] for k in ("search", "follow", "ingest", "processes")}
        rows[(size, row["store"])] = row
        report(list(rows.values()), args)


@contextmanager
def served(size_root: Path, on_server: bool, ann: str) -> Iterator[tuple[Site, subprocess.Popen[bytes] | None]]:
    """The embedded store of this size; or a ``chroma run`` server on a copy of it (made once, kept), with a
    replica folder of this process's own, emptied first so that a replica starts as a new one does."""
    if not on_server:
        yield Site(size_root / "store", ann=ann), None
        return
    data = size_root / "served"
    if not data.exists():
        shutil.copytree(size_root / "store", data, ignore=shutil.ignore_patterns("bm25*", "sextant.*", "originals"))
    shutil.rmtree(size_root / "replica", ignore_errors=True)
    proc, url = start_server(data, size_root / "chroma-server.log")
    try:
        yield Site(size_root / "replica" / "store", url, ann=ann), proc
    finally:
        stop_server(proc)


def report(rows: list[dict[str, Any]], args: argparse.Namespace) -> None:
    ordered = sorted(rows, key=lambda r: (r["store"], r["chunks"]))
    embedded = [r for r in ordered if r["store"] == "embedded"]
    guess = extrapolate(embedded, args.extrapolate_to)
    print(markdown(ordered), flush=True)
    if guess is not None:
        print(f"\nEXTRAPOLATED to {guess['chunks']:,} ({guess['method']}):", json.dumps(guess, indent=1), flush=True)
    if args.json:
        args.json.write_text(json.dumps({"rows": ordered, "extrapolated": guess}, indent=2) + "\n")
    if args.plot and embedded:
        plot(embedded, args.plot, guess, [r for r in ordered if r["store"].startswith("embedded, ")])


if __name__ == "__main__":
    main()
