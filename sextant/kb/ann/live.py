"""The index that serves live dense retrieval when ``SEXTANT_ANN_INDEX`` is not ``chroma``.

It holds the store's chunk vectors under int ids (chunk ids are strings), follows every ingest
and forget, and is saved beside the store as ``<kind>/`` plus ``chunks.json`` (the id map and the
store generation it matches). When that generation is not the store's at start-up (another
writer, a crash, other build parameters) the knowledge base rebuilds it from the store, as it does
the BM25 cache; while running, it follows other writers' changes by the same chunk-id diff as the
BM25 cache. IVF-PQ learns its quantisers from the vectors present when it is built, so it is rebuilt
once the store has grown to four times that size.
"""

from __future__ import annotations

import json
import math
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sextant.kb.ann import create, load
from sextant.kb.ann.base import AnnIndex, FloatArray, IndexFormatError, Metric

FORMAT_VERSION = 1
RETRAIN_GROWTH = 4


def metric_for(kind: str) -> Metric:
    """IVF-PQ ranks unit vectors by squared L2 (same order as cosine, more accurate residual tables)."""
    return "l2" if kind.startswith("ivfpq") else "ip"


def build_params(kind: str, n: int, params: dict[str, Any]) -> dict[str, Any]:
    """The constructor knobs of ``kind`` for ``n`` vectors, from the settings' ``params``."""
    if kind == "hnsw":
        return {"M": params["M"], "ef_search": params["ef_search"]}
    if kind.startswith("ivfpq"):
        nlist = params["nlist"] or int(min(1024, 2 ** round(math.log2(max(4.0 * math.sqrt(max(n, 1)), 1.0)))))
        knobs = {"nlist": nlist, "nprobe": params["nprobe"], "m": params["pq_m"], "nbits": 8}
        return {**knobs, "oversample": params["oversample"]} if kind == "ivfpq_rerank" else knobs
    return {}


class LiveIndex:
    """One ANN index over the store's chunks, safe to search from several threads while one writes."""

    def __init__(self, kind: str, folder: Path, dim: int, params: dict[str, Any]) -> None:
        self.kind, self.folder, self.dim, self.params = kind, folder, dim, params
        self.generation = -1
        self._lock = threading.Lock()
        self._index: AnnIndex = create(kind, dim, metric_for(kind), **build_params(kind, 0, params))
        self._chunk_of: list[str | None] = []  # int id -> chunk id (None once removed)
        self._id_of: dict[str, int] = {}
        self._trained_on = 0

    @classmethod
    def open(cls, kind: str, folder: Path, dim: int, params: dict[str, Any]) -> LiveIndex:
        """The saved index when it is readable and was built with ``params``, else an empty one (generation -1)."""
        live = cls(kind, folder, dim, params)
        try:
            meta = json.loads((folder / "chunks.json").read_text(encoding="utf-8"))
            if meta.get("format") != FORMAT_VERSION or meta.get("params") != params:
                return live
            live._index = load(folder / kind)
            live._chunk_of = meta["chunks"]
            live._trained_on = int(meta["trained_on"])
            live.generation = int(meta["generation"])
        except (OSError, ValueError, KeyError, IndexFormatError):
            return cls(kind, folder, dim, params)
        live._id_of = {c: i for i, c in enumerate(live._chunk_of) if c is not None}
        return live

    def __len__(self) -> int:
        return len(self._id_of)

    def ids(self) -> set[str]:
        """The chunk ids indexed now."""
        with self._lock:
            return set(self._id_of)

    def nbytes(self) -> int:
        return self._index.nbytes()

    def needs_rebuild(self, store_chunks: int) -> bool:
        """True when IVF-PQ's quantisers were learnt on far fewer vectors than the store now holds."""
        return self.kind.startswith("ivfpq") and store_chunks > RETRAIN_GROWTH * max(self._trained_on, 1)

    def rebuild(self, chunk_ids: Sequence[str], vectors: FloatArray) -> None:
        """Replace the index with one built from these chunks."""
        index = create(
            self.kind, self.dim, metric_for(self.kind), **build_params(self.kind, len(chunk_ids), self.params)
        )
        if len(chunk_ids):
            index.add(vectors, np.arange(len(chunk_ids)))
        with self._lock:
            self._index, self._chunk_of = index, list(chunk_ids)
            self._id_of = {c: i for i, c in enumerate(chunk_ids)}
            self._trained_on = len(chunk_ids)

    def add(self, chunk_ids: Sequence[str], vectors: FloatArray) -> None:
        if not len(chunk_ids):
            return
        with self._lock:
            start = len(self._chunk_of)
            self._index.add(vectors, np.arange(start, start + len(chunk_ids)))
            self._chunk_of.extend(chunk_ids)
            self._id_of.update((c, start + i) for i, c in enumerate(chunk_ids))
            self._trained_on = self._trained_on or len(chunk_ids)

    def remove(self, chunk_ids: Sequence[str]) -> None:
        with self._lock:
            ids = [self._id_of.pop(c) for c in chunk_ids if c in self._id_of]
            for i in ids:
                self._chunk_of[i] = None
            self._index.remove(np.array(ids, np.int64))

    def query(self, vector: FloatArray, n: int, allowed: set[str] | None = None) -> list[tuple[str, float]]:
        """The ``n`` nearest chunks as ``(chunk_id, cosine)``, best first, only among ``allowed`` when given."""
        want = n
        while True:
            with self._lock:
                D, I = self._index.search(vector.reshape(1, -1), min(want, max(len(self), 1)))
                found = [(self._chunk_of[int(i)], float(d)) for d, i in zip(D[0], I[0], strict=True) if i >= 0]
            hits = [(c, self._cosine(d)) for c, d in found if c is not None and (allowed is None or c in allowed)]
            if len(hits) >= n or want >= len(self):
                return hits[:n]
            want *= 4  # a document filter removed too many: ask for more

    def _cosine(self, score: float) -> float:
        # Unit vectors: ||q - x||^2 = 2 - 2 cos.
        return 1.0 - score / 2.0 if metric_for(self.kind) == "l2" else score

    def save(self, generation: int) -> None:
        """Write the index and its id map, stamped with the store generation they match."""
        with self._lock:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._index.save(self.folder / self.kind)
            meta = {
                "format": FORMAT_VERSION, "generation": generation, "params": self.params,
                "trained_on": self._trained_on, "chunks": self._chunk_of,
            }  # fmt: skip
            tmp = self.folder / "chunks.json.tmp"
            tmp.write_text(json.dumps(meta), encoding="utf-8")
            os.replace(tmp, self.folder / "chunks.json")
            self.generation = generation
