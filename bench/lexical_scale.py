"""The BM25 index alone at 10k, 100k and 1M chunks: what a write, a search and an open cost (issue 54, item 2).

The index is built from the same text as ``bench/scale.py`` (the BEIR abstracts, then synthetic documents
recombined from their sentences with a Zipf tail of made-up rare terms; ~90 words a chunk), in batches of
5,000 chunks, and saved. At each size, side by side in this process:

- ``write``: one 20-chunk document added and the index saved, into the sized index and into an empty one
  (alternated, ``--reps`` each), and 1,000 chunks (50 such documents, one ``add`` each, as ``DerivedIndexes``
  adds per document inside a batch) then one save; the sized / empty ratio of each;
- ``rebuild``: what every write paid before segments: the whole eager score matrix recomputed from the bags
  (built here with the product's own ``idfs``/``term_scores`` over every posting), once;
- ``search``: 200 BEIR queries (SciFact, NFCorpus alternated), p50/p95 of ``LexicalIndex.search`` (k = 100)
  against the eager matrix's column sums (bm25s's ``get_scores_from_ids`` on that matrix), interleaved;
- ``open``: ``LexicalIndex.open`` plus a first search in a new process, and the memory (RSS, USS) they added.

    python bench/lexical_scale.py --data ../shared/data --root /tmp/lexscale --sizes 10000 100000 1000000 \
        --json bench/out/lexical_scale.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import bm25s
import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.scale import WORDS_PER_CHUNK, percentile, real_docs, sentences_of, synthetic_docs  # noqa: E402
from sextant.evals.beir import read_queries  # noqa: E402
from sextant.kb.analyzer import tokenize  # noqa: E402
from sextant.kb.bm25_scoring import idfs, length_norm, term_scores  # noqa: E402
from sextant.kb.lexical import LexicalIndex  # noqa: E402

BATCH = 5000


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def chunks_of(text: str) -> list[str]:
    words = text.split()
    return [" ".join(words[i : i + WORDS_PER_CHUNK]) for i in range(0, len(words), WORDS_PER_CHUNK)]


def chunk_stream(data: Path, seed: str) -> Iterator[str]:
    real = real_docs(data)
    if seed == "store":
        for doc in real:
            yield from chunks_of(f"{doc.title} {doc.text}")
    for doc in synthetic_docs(sentences_of(real), seed):
        yield from chunks_of(f"{doc.title} {doc.text}")


def documents(data: Path, n: int) -> list[list[str]]:
    """``n`` held-out documents of 20 chunks each."""
    stream = chunk_stream(data, "held-out")
    return [[next(stream) for _ in range(20)] for _ in range(n)]


def grow(index: LexicalIndex, stream: Iterator[str], size: int) -> None:
    started, before = time.perf_counter(), len(index)
    while len(index) < size:
        texts = [next(stream) for _ in range(min(BATCH, size - len(index)))]
        index.add([f"c{len(index) + i}" for i in range(len(texts))], texts)
    index.save()
    log(f"grown to {len(index):,} chunks in {time.perf_counter() - started:.0f} s ({len(index) - before:,} added)")


def timed(fn: Any) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def bench_write(sized: LexicalIndex, empty: LexicalIndex, docs: list[list[str]], reps: int) -> dict[str, Any]:
    """Alternated (empty, sized, sized, empty, ...); each write is undone (removed and saved) before the next."""
    out: dict[str, Any] = {}
    for label, batch in (("one_document", docs[:1]), ("thousand_chunks", docs[:50])):
        times: dict[str, list[float]] = {"empty": [], "sized": []}
        for rep in range(reps):
            order = ("empty", "sized") if rep % 2 == 0 else ("sized", "empty")
            for which in order:
                index = empty if which == "empty" else sized
                ids = [[f"w{rep}-{d}-{i}" for i in range(len(doc))] for d, doc in enumerate(batch)]

                def write(
                    index: LexicalIndex = index, ids: list[list[str]] = ids, batch: list[list[str]] = batch
                ) -> None:
                    for doc_ids, doc in zip(ids, batch, strict=True):
                        index.add(doc_ids, doc)
                    index.save()

                times[which].append(timed(write))
                index.remove([i for doc_ids in ids for i in doc_ids])
                index.save()
        empty_s, sized_s = statistics.median(times["empty"]), statistics.median(times["sized"])
        out[label] = {"empty_s": empty_s, "sized_s": sized_s, "ratio": sized_s / empty_s}
        log(f"  write {label}: empty {empty_s * 1000:.1f} ms, sized {sized_s * 1000:.1f} ms ({sized_s / empty_s:.2f}x)")
    return out


def eager_matrix(index: LexicalIndex) -> dict[str, Any]:
    """The score matrix the index before segments kept and rebuilt at every change (bm25s's CSC layout)."""
    live_rows, terms, tfs, dls = [], [], [], []
    row = 0
    for segment, dead in zip(index._segments, index._dead, strict=True):
        keep = ~dead
        pairs_row = np.repeat(np.arange(len(segment)), np.diff(segment.offsets))
        pair_keep = keep[pairs_row]
        new_row = np.cumsum(keep) - 1 + row
        live_rows.append(new_row[pairs_row[pair_keep]])
        terms.append(segment.terms[pair_keep])
        tfs.append(segment.tfs[pair_keep])
        dls.append(segment.dl[pairs_row[pair_keep]])
        row += int(keep.sum())
    doc, term, tf, dl = (np.concatenate(a) for a in (live_rows, terms, tfs, dls))
    n_terms = len(index._terms)
    df = np.bincount(term, minlength=n_terms)
    norm = length_norm(dl.astype(np.float64), index._total_len / row, 1.5, 0.75)
    score = term_scores(idfs(df, row, "lucene")[term], tf, norm, "lucene", 1.5)
    order = np.argsort(term, kind="stable")
    indptr = np.zeros(n_terms + 1, dtype=np.int64)
    np.cumsum(df, out=indptr[1:])
    return {"data": score[order], "indices": doc[order].astype(np.int32), "indptr": indptr, "num_docs": row}


def bench_search(index: LexicalIndex, queries: list[str]) -> dict[str, Any]:
    started = time.perf_counter()
    bm25 = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
    bm25.scores = eager_matrix(index)
    bm25.nonoccurrence_array = None  # only BM25L and BM25+ use one
    rebuild_s = time.perf_counter() - started
    vocab = index._vocab
    lazy: list[float] = []
    eager: list[float] = []
    for query in queries[:10]:  # warm-up
        index.search(query, 100)
    for i, query in enumerate(queries):
        ids = [vocab[t] for t in tokenize(query) if t in vocab]

        def eager_search(ids: list[int] = ids) -> None:
            if ids:
                scores = bm25.get_scores_from_ids(ids)
                top = np.argpartition(-scores, 99)[:100]
                top[np.argsort(-scores[top])]

        def lazy_search(query: str = query) -> None:
            index.search(query, 100)

        for fn in (lazy_search, eager_search) if i % 2 == 0 else (eager_search, lazy_search):
            (lazy if fn is lazy_search else eager).append(timed(fn) * 1000)
    out = {
        "rebuild_s": rebuild_s,
        "segments": index.segment_count(),
        "lazy_p50_ms": percentile(lazy, 50),
        "lazy_p95_ms": percentile(lazy, 95),
        "eager_p50_ms": percentile(eager, 50),
        "eager_p95_ms": percentile(eager, 95),
    }
    log(
        f"  search p50/p95 ms: segments {out['lazy_p50_ms']:.1f}/{out['lazy_p95_ms']:.1f}, eager matrix "
        f"{out['eager_p50_ms']:.1f}/{out['eager_p95_ms']:.1f}; matrix rebuild {rebuild_s:.2f} s"
    )
    return out


_OPEN = """
import json, sys, time, psutil
from pathlib import Path
from sextant.kb.lexical import LexicalIndex
before = psutil.Process().memory_full_info()
started = time.perf_counter()
index = LexicalIndex.open(Path(sys.argv[1]))
index.search(sys.argv[2], 5)
seconds = time.perf_counter() - started
after = psutil.Process().memory_full_info()
print(json.dumps({"open_s": seconds, "rss_added_mb": (after.rss - before.rss) / 2**20,
                  "uss_added_mb": (after.uss - before.uss) / 2**20, "chunks": len(index)}))
"""


def bench_open(directory: Path, query: str) -> dict[str, Any]:
    """In a fresh process, as a server starts: open, first search, and the memory they added."""
    done = subprocess.run(
        [sys.executable, "-c", _OPEN, str(directory), query], capture_output=True, text=True, check=True, cwd=REPO
    )
    out: dict[str, Any] = json.loads(done.stdout)
    log(
        f"  open + first search {out['open_s']:.2f} s in a new process, +{out['rss_added_mb']:.0f} MB RSS, "
        f"+{out['uss_added_mb']:.0f} MB unique ({out['chunks']:,} chunks)"
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    args.root.mkdir(parents=True, exist_ok=True)
    queries = list(read_queries(args.data / "beir" / "scifact").values())
    nf = list(read_queries(args.data / "beir" / "nfcorpus").values())
    queries = [q for pair in zip(queries, nf, strict=False) for q in pair][:200]
    docs = documents(args.data, 50)
    sized = LexicalIndex(args.root / "sized")
    stream = chunk_stream(args.data, "store")
    rows = []
    for size in sorted(args.sizes):
        grow(sized, stream, size)
        empty = LexicalIndex(args.root / f"empty-{size}")
        row: dict[str, Any] = {"chunks": len(sized), "terms": len(sized._terms)}
        row["write"] = bench_write(sized, empty, docs, args.reps)
        row["search"] = bench_search(sized, queries)
        row["open"] = bench_open(args.root / "sized", queries[0])
        rows.append(row)
        if args.json:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(rows, indent=1) + "\n")
    print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
