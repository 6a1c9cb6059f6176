"""When does HNSW beat exact search for one live query? Per-query latency of flat and HNSW by store size.

Live search asks one query at a time, so this times single-query calls (not batches), on clustered
384-d vectors like the product's, with recall@10 of HNSW beside it. Medians over the queries.

    python bench/ann_crossover.py [--sizes 1000 3000 10000 30000] [--queries 200]
"""

from __future__ import annotations

import os

# One BLAS thread, as the lab runs: with the default (all cores) a busy machine made one 30k-row
# matrix-vector product take 20 ms instead of ~1.5 ms, threads waiting on each other.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import json
import statistics
import time

import numpy as np

from sextant.kb.ann.flat import FlatIndex
from sextant.kb.ann.hnsw import HNSWIndex
from sextant.lab.datasets import clustered, ground_truth, recall_at


def per_query_ms(index: FlatIndex | HNSWIndex, xq: np.ndarray) -> tuple[float, np.ndarray]:
    found, times = [], []
    for q in xq:
        started = time.perf_counter()
        found.append(index.search(q[None], 10)[1][0])
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), np.stack(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 3000, 10000, 30000])
    parser.add_argument("--queries", type=int, default=200)
    ns = parser.parse_args()
    rows = []
    for n in ns.sizes:
        xb, xq = clustered(n, 384, nq=ns.queries, seed=2)
        gt = ground_truth(xb, xq, "ip", 10)
        flat = FlatIndex.build(xb, np.arange(n))
        started = time.perf_counter()
        hnsw = HNSWIndex.build(xb, np.arange(n), M=16, ef_construction=200, ef_search=64)
        build_s = time.perf_counter() - started
        per_query_ms(hnsw, xq[:5])  # load the compiled kernels
        flat_ms, _ = per_query_ms(flat, xq)
        hnsw_ms, found = per_query_ms(hnsw, xq)
        rows.append({
            "n": n, "flat_ms": round(flat_ms, 3), "hnsw_ms": round(hnsw_ms, 3), "hnsw_recall@10": recall_at(found, gt),
            "hnsw_build_s": round(build_s, 2), "flat_over_hnsw": round(flat_ms / hnsw_ms, 2),
        })  # fmt: skip
        print(json.dumps(rows[-1]), flush=True)


if __name__ == "__main__":
    main()
