"""What following other writers costs a search: the refresh trigger and the refresh, side by side.

Several clients share one store (replicas on a ``chroma run`` server; ``sextant-ingest`` beside
``sextant-kb`` on the embedded store), so before a search a knowledge base checks at most every
``SEXTANT_LEXICAL_REFRESH_S`` whether the store moved, and if it did, diffs its BM25 (and ANN) cache
against the live chunk ids. On each store kind this script opens a writer and two readers on one store:
``check`` (refresh interval 0: it checks before every search, the worst case) and ``plain`` (interval one
hour: after its first search it never checks), and measures

1. the trigger on an unchanged store: the same queries on ``check`` and ``plain`` back to back, the first
   alternating, and the paired ratio of their totals (the ``refresh`` stage of ``timings_ms`` is the check);
2. the refresh after a change: the writer ingests one new document, then ``check`` searches; its
   ``refresh`` stage is the whole catch-up (listing the records, fetching the new chunks, BM25 add, save);
3. the periodic full diff on an unchanged store (``refresh(full=True)``), and the two reads of the trigger
   (``store.generation``, ``store.chunk_count()``) alone.

Vectors of the ingested texts are computed once up front and served from memory (as in
``chroma_server.py``), so the script spends its time on what is measured.

    python bench/replica_refresh.py --data ../shared/data --json bench/out/replica_refresh.json
"""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import argparse
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from bench_kb import THREADS, index_texts, ingest_batch, log, read_corpus, read_queries, write_json
from chroma_server import SIDES, PrimedEmbedder, load, start_server, stop_server

from sextant.kb.chunking import ChunkingConfig
from sextant.kb.embeddings import load_embedder, quiet_model_loading
from sextant.kb.indexing import DEFAULT_POLICY
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.settings import KbSettings

REPO = Path(__file__).resolve().parent.parent
K = 5
ROLES = ("check", "plain")


def settings(side: str, directory: Path, url: str, refresh_s: float) -> KbSettings:
    return KbSettings(
        chroma_dir=directory,
        chroma_url=url if side == "server" else None,
        threads=THREADS,
        lexical_refresh_s=refresh_s,
        _env_file=None,  # type: ignore[call-arg]
    )


def pct(values: Sequence[float]) -> dict[str, float]:
    return {"p50": float(np.percentile(values, 50)), "p95": float(np.percentile(values, 95)), "n": len(values)}


def per_call_ms(fn: Callable[[], object], n: int) -> dict[str, float]:
    fn()
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000.0)
    return pct(samples)


def bench_trigger(readers: dict[str, dict[str, KnowledgeBase]], queries: list[str]) -> dict[str, Any]:
    """Unchanged store: ``check`` pays the trigger before every search, ``plain`` never does."""
    for side in SIDES:
        for role in ROLES:
            readers[side][role].search(queries[0], K)  # plain's one check, and a warm-up
    out: dict[str, Any] = {}
    for side in SIDES:
        total: dict[str, list[float]] = {r: [] for r in ROLES}
        check_ms: list[float] = []
        for j, q in enumerate(queries):
            for role in ROLES if j % 2 == 0 else ROLES[::-1]:
                result = readers[side][role].search(q, K)
                total[role].append(result.timings_ms["total"])
                if role == "check":
                    check_ms.append(result.timings_ms["refresh"])
        ratios = [c / p for c, p in zip(total["check"], total["plain"], strict=True)]
        out[side] = {
            "refresh_stage_ms": pct(check_ms),
            "total_ms": {r: pct(total[r]) for r in ROLES},
            "check_over_plain_paired_median": statistics.median(ratios),
        }
        log(f"trigger {side}: check {pct(check_ms)['p50']:.2f} ms p50, paired ratio {statistics.median(ratios):.3f}")
    return out


def bench_changes(
    writers: dict[str, KnowledgeBase],
    readers: dict[str, dict[str, KnowledgeBase]],
    docs: list[Any],
    query: str,
    primed: PrimedEmbedder,
) -> dict[str, Any]:
    """One new document per step from the writer; the reader's next search catches up."""
    refresh: dict[str, list[float]] = {s: [] for s in SIDES}
    total: dict[str, list[float]] = {s: [] for s in SIDES}
    for i, doc in enumerate(docs):
        for side in SIDES if i % 2 == 0 else SIDES[::-1]:
            misses = primed.misses
            writers[side].ingest(doc.id, doc.as_document())
            if primed.misses != misses:
                raise SystemExit(f"{doc.id}: ingest texts were not primed")
            result = readers[side]["check"].search(query, K)
            refresh[side].append(result.timings_ms["refresh"])
            total[side].append(result.timings_ms["total"])
            if doc.id not in {d.id for d in readers[side]["check"].documents()} or len(
                readers[side]["check"].lexical
            ) != len(writers[side].lexical):
                raise SystemExit(f"{side}: the reader did not catch up with {doc.id}")
    return {s: {"refresh_ms": pct(refresh[s]), "total_ms": pct(total[s])} for s in SIDES}


def bench_reads(readers: dict[str, dict[str, KnowledgeBase]], n: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for side in SIDES:
        kb = readers[side]["check"]
        out[side] = {
            "generation_ms": per_call_ms(lambda kb=kb: kb.store.generation, n),
            "chunk_count_ms": per_call_ms(lambda kb=kb: kb.store.chunk_count(), n),
            "cached_metadata_ms": per_call_ms(lambda kb=kb: kb.store._chunks.metadata, n),
            "full_diff_ms": per_call_ms(lambda kb=kb: kb.refresh(full=True), max(n // 10, 5)),
        }
    return out


def markdown(r: dict[str, Any]) -> str:
    lines = [
        f"### Following other writers: {r['chunks']} chunks ({r['docs']} SciFact docs), load {r['loadavg']}",
        "",
        "| | embedded | server |",
        "|---|---:|---:|",
    ]

    def row(label: str, get: Callable[[str], str]) -> None:
        lines.append(f"| {label} | " + " | ".join(get(s) for s in SIDES) + " |")

    t, c, reads = r["trigger"], r["changes"], r["reads"]
    row("trigger check (refresh stage, unchanged store), ms p50 / p95",
        lambda s: f"{t[s]['refresh_stage_ms']['p50']:.2f} / {t[s]['refresh_stage_ms']['p95']:.2f}")  # fmt: skip
    row("search total, checking before every search, ms p50",
        lambda s: f"{t[s]['total_ms']['check']['p50']:.2f}")  # fmt: skip
    row("search total, not checking, ms p50", lambda s: f"{t[s]['total_ms']['plain']['p50']:.2f}")
    row("**checking / not checking, paired median**", lambda s: f"**{t[s]['check_over_plain_paired_median']:.3f}x**")
    row("store.generation (fresh read), ms p50", lambda s: f"{reads[s]['generation_ms']['p50']:.2f}")
    row("store.chunk_count(), ms p50", lambda s: f"{reads[s]['chunk_count_ms']['p50']:.2f}")
    row("cached Collection.metadata, ms p50", lambda s: f"{reads[s]['cached_metadata_ms']['p50']:.4f}")
    row("full diff, unchanged store, ms p50", lambda s: f"{reads[s]['full_diff_ms']['p50']:.1f}")
    row(f"refresh after one new document ({r['changes_n']} reps), ms p50 / p95",
        lambda s: f"{c[s]['refresh_ms']['p50']:.1f} / {c[s]['refresh_ms']['p95']:.1f}")  # fmt: skip
    return "\n".join([*lines, ""])


def main(argv: Sequence[str] | None = None) -> int:
    default_data = Path(os.environ.get("SEXTANT_DATA_DIR", REPO.parent / "shared" / "data"))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=default_data, help="shared data folder (holds beir/)")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "out", help="scratch folder")
    parser.add_argument("--docs", type=int, default=1000, help="SciFact documents in the store (~2.5 chunks each)")
    parser.add_argument("--queries", type=int, default=200, help="timed queries per side and role")
    parser.add_argument("--changes", type=int, default=20, help="single-document writes the reader follows")
    parser.add_argument("--reads", type=int, default=200, help="timed calls of each trigger read")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)

    corpus = args.data / "beir" / "scifact" / "corpus.jsonl"
    if not corpus.exists():
        parser.error(f"no SciFact corpus at {corpus}: pass --data")
    args.out.mkdir(parents=True, exist_ok=True)
    quiet_model_loading()
    embedder = load_embedder(KbSettings(_env_file=None).embedder, THREADS)  # type: ignore[call-arg]
    docs = read_corpus(corpus, "scifact")[: args.docs + args.changes]
    store_docs, new_docs = docs[: args.docs], docs[args.docs :]
    queries = read_queries(corpus.parent / "queries.jsonl")[: args.queries]
    results: dict[str, Any] = {"docs": len(store_docs), "changes_n": len(new_docs), "loadavg": [load()]}

    primed = PrimedEmbedder(embedder)
    texts = [t for d in index_texts(docs, embedder, ChunkingConfig(), DEFAULT_POLICY.dense_context) for t in d]
    log(f"embedding {len(texts)} chunk texts once ...")
    primed.prime(texts)

    scratch = Path(tempfile.mkdtemp(prefix="replica-refresh-", dir=args.out))
    proc, url = start_server(scratch / "server-data", scratch / "server.log")
    log(f"chroma run: pid {proc.pid} at {url}")
    kbs: list[KnowledgeBase] = []
    try:

        def open_kb(side: str, folder: str, refresh_s: float) -> KnowledgeBase:
            # Embedded: every client on the one store folder. Server: each replica its own BM25 folder.
            directory = scratch / "embedded" if side == "embedded" else scratch / folder
            kbs.append(KnowledgeBase.open(settings(side, directory, url, refresh_s), embedder=primed))  # type: ignore[arg-type]
            return kbs[-1]

        writers = {s: open_kb(s, "writer", 3600.0) for s in SIDES}
        for side in SIDES:
            ingest_batch(writers[side], store_docs)
        if primed.misses:
            raise SystemExit(f"{primed.misses} ingest texts were not primed")
        results["chunks"] = writers["server"].store.chunk_count()
        readers = {s: {"check": open_kb(s, "check", 0.0), "plain": open_kb(s, "plain", 3600.0)} for s in SIDES}
        results["loadavg"].append(load())
        results["trigger"] = bench_trigger(readers, queries)
        results["reads"] = bench_reads(readers, args.reads)
        results["changes"] = bench_changes(writers, readers, new_docs, queries[0], primed)
        results["loadavg"].append(load())
    finally:
        for kb in kbs:
            kb.close()
        stop_server(proc)
        log(f"chroma server pid {proc.pid} stopped (exit {proc.returncode})")
        shutil.rmtree(scratch, ignore_errors=True)
    print(markdown(results))
    write_json(args.json, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
