"""Does numba pay? The same HNSW and IVF-PQ search code, compiled and interpreted, on one clustered set.

The interpreted side runs in a child process with NUMBA_DISABLE_JIT=1 (so every kernel is plain
Python over NumPy arrays) on the index the parent built and saved. Per-query milliseconds, median.

    python bench/ann_jit.py [--n 20000] [--queries 10]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def per_query_ms(folder: Path, xq: np.ndarray, knob: int) -> float:
    from sextant.kb.ann import load

    index = load(folder)
    index.search(xq[:1], 10)  # load compiled kernels before timing
    times = []
    for q in xq:
        started = time.perf_counter()
        if index.kind == "hnsw":
            index.search(q[None], 10, ef_search=knob)  # type: ignore[call-arg]
        else:
            index.search(q[None], 10, nprobe=knob)  # type: ignore[call-arg]
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=10)
    parser.add_argument("--child", nargs=3, metavar=("FOLDER", "QUERIES", "KNOB"), help=argparse.SUPPRESS)
    ns = parser.parse_args()
    if ns.child:
        folder, queries, knob = ns.child
        print(per_query_ms(Path(folder), np.load(queries), int(knob)))
        return
    from sextant.kb.ann.hnsw import HNSWIndex
    from sextant.kb.ann.ivfpq import IVFPQIndex
    from sextant.lab.datasets import clustered

    xb, xq = clustered(ns.n, 384, nq=ns.queries, seed=1)
    ids = np.arange(ns.n)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        np.save(Path(tmp) / "xq.npy", xq)
        for name, index, knob in (
            ("hnsw ef_search=64", HNSWIndex.build(xb, ids, M=16, ef_construction=100), 64),
            ("ivfpq nprobe=16", IVFPQIndex.build(xb, ids, "l2", nlist=256, m=48), 16),
        ):
            folder = Path(tmp) / name.split()[0]
            index.save(folder)
            jit = per_query_ms(folder, xq, knob)
            env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
            cmd = [sys.executable, __file__, "--child", str(folder), str(Path(tmp) / "xq.npy"), str(knob)]
            interpreted = float(subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout)
            rows.append({"search": name, "numba_ms": round(jit, 3), "python_ms": round(interpreted, 1),
                         "speedup": round(interpreted / jit)})  # fmt: skip
    print(json.dumps({"n": ns.n, "d": 384, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
