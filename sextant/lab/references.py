"""The reference columns: FAISS (IndexFlat, IndexHNSWFlat, IndexIVFPQ + IndexRefineFlat) and hnswlib.

Dev dependencies only (the ``dev`` extra): the product never imports this module. Every
reference runs on one thread, like ours. Each builder returns a searcher ``(xq, k, knob) -> I``
and the bytes the index occupies (FAISS: its serialised size; hnswlib: its saved file).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from sextant.kb.ann.base import FloatArray, IdArray, Metric

Searcher = Callable[[FloatArray, int, int], IdArray]


def available() -> str | None:
    """None when both references import, else why not."""
    try:
        import faiss  # noqa: F401
        import hnswlib  # noqa: F401
    except ImportError as exc:
        return f"{exc}; install the lab extra: pip install 'sextant-kb[lab]'"
    return None


def single_threaded() -> None:
    import faiss

    faiss.omp_set_num_threads(1)


def _faiss_metric(metric: Metric) -> int:
    import faiss

    return int(faiss.METRIC_INNER_PRODUCT if metric == "ip" else faiss.METRIC_L2)


def _faiss_bytes(index: Any) -> int:
    import faiss

    return int(faiss.serialize_index(index).size)


def faiss_flat(xb: FloatArray, metric: Metric) -> tuple[Searcher, int]:
    import faiss

    index = faiss.IndexFlatIP(xb.shape[1]) if metric == "ip" else faiss.IndexFlatL2(xb.shape[1])
    index.add(xb)
    return (lambda xq, k, _: index.search(xq, k)[1]), _faiss_bytes(index)


def faiss_hnsw(xb: FloatArray, metric: Metric, M: int, ef_construction: int) -> tuple[Searcher, int]:
    import faiss

    index = faiss.IndexHNSWFlat(xb.shape[1], M, _faiss_metric(metric))
    index.hnsw.efConstruction = ef_construction
    index.add(xb)

    def search(xq: FloatArray, k: int, ef: int) -> IdArray:
        index.hnsw.efSearch = ef
        return index.search(xq, k)[1]

    return search, _faiss_bytes(index)


def faiss_ivfpq(
    xb: FloatArray, metric: Metric, nlist: int, m: int, nbits: int, oversample: int | None
) -> tuple[Searcher, int]:
    """IndexIVFPQ (residual encoding, as ours), wrapped in IndexRefineFlat when ``oversample`` is set."""
    import faiss

    d = xb.shape[1]
    quantizer = faiss.IndexFlatIP(d) if metric == "ip" else faiss.IndexFlatL2(d)
    ivf = faiss.IndexIVFPQ(quantizer, d, nlist, m, nbits, _faiss_metric(metric))
    ivf.train(xb)
    index: Any = ivf
    if oversample:
        index = faiss.IndexRefineFlat(ivf)
        index.k_factor = oversample
    index.add(xb)

    def search(xq: FloatArray, k: int, nprobe: int) -> IdArray:
        ivf.nprobe = nprobe
        return index.search(xq, k)[1]

    return search, _faiss_bytes(index)


def hnswlib_hnsw(xb: FloatArray, metric: Metric, M: int, ef_construction: int) -> tuple[Searcher, int]:
    import hnswlib

    index = hnswlib.Index(space="ip" if metric == "ip" else "l2", dim=xb.shape[1])
    index.init_index(max_elements=xb.shape[0], M=M, ef_construction=ef_construction, random_seed=0)
    index.set_num_threads(1)
    index.add_items(xb, np.arange(xb.shape[0]))

    def search(xq: FloatArray, k: int, ef: int) -> IdArray:
        index.set_ef(max(ef, k))
        return index.knn_query(xq, k)[0].astype(np.int64)

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "hnswlib.bin"
        index.save_index(str(path))
        size = path.stat().st_size
    return search, size
