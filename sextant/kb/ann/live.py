"""The index that serves live dense retrieval when ``SEXTANT_ANN_INDEX`` is not ``chroma``.

It holds the store's chunks, their vectors, texts and metadata, in segments, as the BM25 cache does
(``lexical_segments``): a **base**, one index of the chosen kind built over many chunks, saved once and then
memory-mapped read-only by every process that searches it (they share its pages, and opening it reads nothing);
**deltas**, the chunks each later write added, searched exactly and saved as small files of their own; and the
**dead** rows, removed since. A process searching it reads the candidates' texts here too, never from Chroma:
any read of Chroma's chunk collection loads that collection's whole vector index into the reading process
(learning/scale.md: 2+ GB at 1M chunks). Rows are
numbered in the order they were added, base first, and every process on the store sees the same numbering, so
a write saves only what it changed and another process follows it by reading the new files (``reopen``), never
Chroma's vector segments (learning/scale.md: reopening those cost 4.7 s at 1M chunks). Once the deltas hold
``merge_rows`` vectors they are inserted into a copy of the base; once half the rows are dead, or IVF-PQ's
quantisers were learnt on a quarter of what it holds, the base is built again from the vectors it keeps.

On disk (one folder; what the manifest no longer names is removed after it is replaced)::

    manifest.json      commit point: format, kind, params, the store generation it matches, base, deltas, dead
    base-<hex>/        the kind's index (``write_folder``) over rows 0..n-1, and beside it ``ids.npy`` (chunk
                       ids by row, UTF-8), ``vectors.npy``, ``sorted.npy`` / ``order.npy`` (the ids sorted
                       and their rows: a chunk's row is found by bisection, with no dict of a million strings),
                       ``records.npy`` (each row's ``[text, metadata]`` as UTF-8 JSON, one after another) and
                       ``ends.npy`` (where each row's record ends)
    delta-<hex>.npz    one write's chunk ids, vectors and records
    dead-<hex>.npy     the dead rows

The caller serialises writers, and ``reopen`` against them (the store's lock); searches may run in other threads.
"""

from __future__ import annotations

import io
import json
import math
import secrets
import shutil
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from sextant.kb.ann import create, load
from sextant.kb.ann.base import AnnIndex, FloatArray, IndexFormatError, Metric, grown
from sextant.kb.durable import fsync_tree, replace_atomically, write_json
from sextant.kb.stored import StoredChunk

FORMAT_VERSION = 3  # 3: the chunks' texts and metadata beside their vectors
RETRAIN_GROWTH = 4
MANIFEST = "manifest.json"
# Deltas are searched exactly, and a merge inserts them into a copy of the base: the row count where the one
# cost meets the other (learning/scale.md).
MERGE_ROWS = 20_000
MAX_DELTA_FILES = 32  # beyond it the delta files are rewritten as one, so that a reopen reads few files
EXACT_UNDER = 4096  # a search restricted to at most this many chunks scores them all instead of asking the index

_BASE_ARRAYS = ("ids", "sorted", "order", "vectors", "records", "ends")

IdBytes = npt.NDArray[np.bytes_]
Rows = npt.NDArray[np.int64]


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


class _Base:
    """A saved base, mapped: the kind's index over rows ``0..n-1``, their chunk ids and vectors."""

    def __init__(self, folder: Path, kind: str) -> None:
        self.name = folder.name
        self.index: AnnIndex = load(folder / kind, mmap=True)
        arrays = {name: np.load(folder / f"{name}.npy", mmap_mode="r") for name in _BASE_ARRAYS}
        self.ids: IdBytes = arrays["ids"]
        self.sorted: IdBytes = arrays["sorted"]
        self.order: Rows = arrays["order"]
        self.vectors: FloatArray = arrays["vectors"]
        self.records: npt.NDArray[np.uint8] = arrays["records"]
        self.ends: Rows = arrays["ends"]

    @staticmethod
    def write(
        folder: Path, kind: str, index: AnnIndex, ids: Sequence[str], vectors: FloatArray, records: _Records
    ) -> None:
        index.save(folder / kind)
        id_bytes = _as_bytes(ids)
        order = np.argsort(id_bytes, kind="stable")
        arrays = {"ids": id_bytes, "sorted": id_bytes[order], "order": order, "vectors": vectors}
        for name, array in (arrays | {"records": records.blob, "ends": records.ends}).items():
            np.save(folder / f"{name}.npy", np.ascontiguousarray(array), allow_pickle=False)
        fsync_tree(folder)

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def rows_of(self, chunk_id: str) -> Rows:
        """Every row that held ``chunk_id`` (a chunk removed and added again before a merge has two)."""
        key = chunk_id.encode()
        if len(key) > self.sorted.dtype.itemsize:  # bisection would compare it cut to the width of the ids
            return np.zeros(0, np.int64)
        lo, hi = np.searchsorted(self.sorted, key, "left"), np.searchsorted(self.sorted, key, "right")
        return np.asarray(self.order[lo:hi], np.int64)

    def chunk_ids(self, rows: Rows) -> list[str]:
        return [bytes(b).decode() for b in self.ids[rows].tolist()]

    def record(self, row: int) -> bytes:
        return bytes(self.records[int(self.ends[row - 1]) if row else 0 : int(self.ends[row])])

    def all_records(self) -> _Records:
        return _Records(np.asarray(self.records), np.asarray(self.ends))


class _Records:
    """Rows' records (``[text, metadata]`` as UTF-8 JSON) one after another, and where each ends."""

    def __init__(self, blob: npt.NDArray[np.uint8], ends: Rows) -> None:
        self.blob, self.ends = blob, ends

    @classmethod
    def of(cls, records: Sequence[bytes]) -> _Records:
        lengths = np.fromiter(map(len, records), np.int64, len(records))
        return cls(np.frombuffer(b"".join(records), np.uint8), np.cumsum(lengths))

    def split(self) -> list[bytes]:
        data, ends = self.blob.tobytes(), self.ends.tolist()
        starts = [0, *ends[:-1]] if ends else []
        return [data[a:b] for a, b in zip(starts, ends, strict=True)]

    def __add__(self, other: _Records) -> _Records:
        shift = int(self.ends[-1]) if len(self.ends) else 0
        return _Records(np.concatenate([self.blob, other.blob]), np.concatenate([self.ends, shift + other.ends]))


class LiveIndex:
    """One ANN index over the store's chunks, safe to search from several threads while one writes."""

    def __init__(
        self,
        kind: str,
        folder: Path,
        dim: int,
        params: dict[str, Any],
        *,
        embedder: str = "",
        merge_rows: int = MERGE_ROWS,
    ) -> None:
        """``embedder``: the store's embedder, whose vectors these are; files saved for another are not read."""
        self.kind, self.folder, self.dim, self.params = kind, folder, dim, params
        self.embedder, self.merge_rows = embedder, merge_rows
        self._lock = threading.Lock()
        self._empty()

    def _empty(self) -> None:
        self.generation = -1  # the store generation the saved state matches; -1: nothing saved
        self._base: _Base | None = None
        self._trained_on = 0
        self._deltas: list[str] = []  # the saved delta files, oldest first
        self._delta_ids: list[str] = []  # the chunk id of every delta row, in row order
        self._delta_records: list[bytes] = []  # and its record
        self._delta_vectors = np.zeros((0, self.dim), np.float32)
        self._dead: set[int] = set()
        self._row_of: dict[str, int] = {}  # chunk id -> its live delta row
        self._saved_rows = 0  # rows already in saved files
        self._dead_file: str | None = None
        self._dead_changed = False
        self._rebuild_due = False
        self._save_id = ""  # the manifest's id when this process last read or wrote it

    @classmethod
    def open(cls, kind: str, folder: Path, dim: int, params: dict[str, Any], *, embedder: str = "") -> LiveIndex:
        """The saved index when it is readable and was built with ``params`` from ``embedder``'s vectors, else an
        empty one (generation -1)."""
        live = cls(kind, folder, dim, params, embedder=embedder)
        live.reopen()
        return live

    @classmethod
    def as_saved(cls, folder: Path, dim: int, *, embedder: str) -> LiveIndex | None:
        """The index saved in ``folder`` with the kind and parameters it was built with, when it holds ``embedder``'s
        vectors: where an index built again for another kind or other parameters finds the vectors to build from."""
        try:
            manifest = _read_manifest(folder / MANIFEST)
        except (OSError, ValueError):
            return None
        if manifest is None or (manifest.get("embedder"), manifest.get("dim")) != (embedder, dim):
            return None
        saved = cls(str(manifest.get("kind")), folder, dim, dict(manifest.get("params") or {}), embedder=embedder)
        return saved if saved.reopen() else None

    # --- reading the saved state ------------------------------------------------------------------

    def reopen(self) -> bool:
        """Take up what the last save (this process's or another's) holds, reading only the files not read yet;
        whether anything changed. A missing, unreadable or foreign folder leaves the index empty (generation -1).
        """
        try:
            manifest = _read_manifest(self.folder / MANIFEST)
            if manifest is not None and manifest["save"] == self._save_id:
                return False
            wanted = (self.kind, self.params, self.embedder, self.dim)
            if (
                manifest is None
                or (manifest["kind"], manifest["params"], manifest["embedder"], manifest["dim"]) != wanted
            ):
                raise IndexFormatError(f"no index of this kind, parameters and embedder at {self.folder}")
            self._take(manifest)
        except (OSError, ValueError, KeyError, IndexFormatError):
            had = self.generation != -1
            with self._lock:
                self._empty()
            return had
        return True

    def _take(self, manifest: dict[str, Any]) -> None:
        name = manifest["base"]
        same_base = (self._base.name if self._base else None) == name
        base = self._base if same_base else _Base(self.folder / name, self.kind) if name else None
        known = len(self._deltas) if same_base and manifest["deltas"][: len(self._deltas)] == self._deltas else 0
        ids, records = (self._delta_ids, self._delta_records) if known else ([], [])
        parts = [self._delta_vectors[: len(ids)]]
        for delta in manifest["deltas"][known:]:
            with np.load(self.folder / delta, allow_pickle=False) as saved:
                ids = [*ids, *(bytes(b).decode() for b in saved["ids"].tolist())]
                records = [*records, *_Records(saved["records"], saved["ends"]).split()]
                parts.append(np.asarray(saved["vectors"], np.float32))
        dead_file = manifest["dead"]
        dead = set(np.load(self.folder / dead_file, allow_pickle=False).tolist()) if dead_file else set()
        offset = len(base) if base is not None else 0
        with self._lock:
            self._base, self._deltas, self._dead = base, list(manifest["deltas"]), dead
            self._delta_ids, self._delta_vectors = list(ids), np.concatenate(parts).reshape(-1, self.dim)
            self._delta_records = list(records)
            self._row_of = {c: offset + i for i, c in enumerate(self._delta_ids) if offset + i not in dead}
            self._saved_rows, self._dead_file, self._dead_changed = offset + len(ids), dead_file, False
            self._trained_on, self.generation = int(manifest["trained_on"]), int(manifest["generation"])
            self._save_id = manifest["save"]

    # --- what it holds ------------------------------------------------------------------------------

    @property
    def _offset(self) -> int:
        """The first delta row: the base's size."""
        return len(self._base) if self._base is not None else 0

    @property
    def _rows(self) -> int:
        return self._offset + len(self._delta_ids)

    def __len__(self) -> int:
        return self._rows - len(self._dead)

    def ids(self) -> set[str]:
        """The chunk ids indexed now (reads every id: for repairs, not for searches)."""
        with self._lock:
            live = set(self._row_of)
            if self._base is not None:
                live.update(self._base.chunk_ids(self._live_base_rows()))
            return live

    def _live_delta_rows(self) -> Rows:
        """The live delta rows, counted from the first delta row."""
        return self._alive(self._offset + np.arange(len(self._delta_ids), dtype=np.int64)) - self._offset

    def _live_base_rows(self) -> Rows:
        return self._alive(np.arange(self._offset, dtype=np.int64))

    def _alive(self, rows: Rows) -> Rows:
        return rows[~np.isin(rows, np.fromiter(self._dead, np.int64, len(self._dead)))]

    def nbytes(self) -> int:
        """Bytes of the index, in memory or mapped (a base's pages are shared between the processes that map it)."""
        base = self._base
        mapped = (
            sum(a.nbytes for a in (base.ids, base.sorted, base.order, base.vectors, base.records, base.ends))
            if base
            else 0
        )
        held = self._delta_vectors.nbytes + sum(map(len, self._delta_records))
        return int(mapped + (base.index.nbytes() if base else 0) + held)

    def vectors(self, chunk_ids: Iterable[str]) -> dict[str, FloatArray]:
        """The vectors of those of ``chunk_ids`` indexed now."""
        with self._lock:
            return {cid: self._vector_at(row) for cid, row in self._live_rows(chunk_ids).items()}

    def chunks(self, chunk_ids: Iterable[str]) -> dict[str, StoredChunk]:
        """Those of ``chunk_ids`` indexed now, with their texts, metadata and vectors."""
        with self._lock:
            rows = self._live_rows(chunk_ids)
            return {cid: _chunk(cid, self._record_at(row), self._vector_at(row)) for cid, row in rows.items()}

    def _live_rows(self, chunk_ids: Iterable[str]) -> dict[str, int]:
        """The live row of each of ``chunk_ids`` indexed now, in the order asked for."""
        return {cid: row for cid in chunk_ids if (row := self._live_row(cid)) is not None}

    def _live_row(self, chunk_id: str) -> int | None:
        row = self._row_of.get(chunk_id)
        if row is not None or self._base is None:
            return row
        return next((int(r) for r in self._base.rows_of(chunk_id) if int(r) not in self._dead), None)

    def _vector_at(self, row: int) -> FloatArray:
        if row >= self._offset:
            return self._delta_vectors[row - self._offset]
        assert self._base is not None
        return np.asarray(self._base.vectors[row], np.float32)

    def _record_at(self, row: int) -> bytes:
        if row >= self._offset:
            return self._delta_records[row - self._offset]
        assert self._base is not None
        return self._base.record(row)

    # --- changes (the caller holds the store's lock) ------------------------------------------------

    def rebuild(self) -> None:
        """Hold nothing, then what ``add`` gives until the next ``save``, which builds the base afresh."""
        with self._lock:
            generation, save_id = self.generation, self._save_id
            self._empty()
            self.generation, self._save_id, self._rebuild_due = generation, save_id, True

    def add(self, chunks: Sequence[StoredChunk], vectors: FloatArray) -> None:
        """Index these chunks under ``vectors`` (rows in the same order); one indexed already is indexed again, its
        old row dead."""
        if not len(chunks):
            return
        chunk_ids = [c.id for c in chunks]
        records = [_record(c) for c in chunks]
        self.remove(chunk_ids)
        with self._lock:
            start, end = len(self._delta_ids), len(self._delta_ids) + len(chunk_ids)
            self._delta_vectors = grown(self._delta_vectors, end)
            self._delta_vectors[start:end] = np.asarray(vectors, np.float32).reshape(-1, self.dim)
            self._delta_ids.extend(chunk_ids)
            self._delta_records.extend(records)
            self._row_of.update((c, self._offset + start + i) for i, c in enumerate(chunk_ids))

    def remove(self, chunk_ids: Iterable[str]) -> None:
        with self._lock:
            for cid in chunk_ids:
                row = self._live_row(cid)
                if row is not None:
                    self._dead.add(row)
                    self._row_of.pop(cid, None)
                    self._dead_changed = True

    def save(self, generation: int) -> None:
        """Write what changed since the last save, merging the deltas into the base or building the base again
        when that is due, then the manifest, stamped with the store's ``generation``."""
        self.folder.mkdir(parents=True, exist_ok=True)
        with self._lock:
            if self._rebuild_due or len(self._dead) * 2 > self._rows or self._retrain_due():
                self._write_base(rebuild=True)
            elif len(self._delta_ids) >= self.merge_rows:
                self._write_base(rebuild=self._base is None)
            else:
                self._write_delta()
            if self._dead_changed:
                self._dead_file = self._write_dead()
            self._save_id = secrets.token_hex(8)
            manifest: dict[str, Any] = {
                "format": FORMAT_VERSION, "save": self._save_id, "kind": self.kind, "params": self.params,
                "embedder": self.embedder, "dim": self.dim,
                "generation": generation, "trained_on": self._trained_on,
                "base": self._base.name if self._base else None, "deltas": self._deltas, "dead": self._dead_file,
            }  # fmt: skip
            write_json(self.folder / MANIFEST, manifest)
            self.generation = generation
            self._remove_unnamed({MANIFEST, manifest["base"], self._dead_file, *self._deltas})

    def _retrain_due(self) -> bool:
        """IVF-PQ's quantisers were learnt on far fewer vectors than it now holds, and it holds enough for a base:
        below ``merge_rows`` the deltas answer exactly, and a new store would otherwise retrain at every few
        writes."""
        grown_past = len(self) > RETRAIN_GROWTH * max(self._trained_on, 1)
        return self.kind.startswith("ivfpq") and len(self) >= self.merge_rows and grown_past

    def _write_delta(self) -> None:
        new = slice(self._saved_rows - self._offset, len(self._delta_ids))
        if new.start < new.stop:
            self._deltas.append(self._delta_file(new))
        if len(self._deltas) > MAX_DELTA_FILES:
            self._deltas = [self._delta_file(slice(0, len(self._delta_ids)))]
        self._saved_rows = self._rows

    def _delta_file(self, rows: slice) -> str:
        """A delta file of the delta rows ``rows``."""
        records = _Records.of(self._delta_records[rows])
        buffer = io.BytesIO()
        vectors = np.asarray(self._delta_vectors[rows], np.float32)
        np.savez(buffer, ids=_as_bytes(self._delta_ids[rows]), vectors=vectors, records=records.blob, ends=records.ends)
        return self._new_file("delta", "npz", buffer.getvalue())

    def _write_dead(self) -> str | None:
        self._dead_changed = False
        if not self._dead:
            return None
        buffer = io.BytesIO()
        np.save(buffer, np.array(sorted(self._dead), np.int64), allow_pickle=False)
        return self._new_file("dead", "npy", buffer.getvalue())

    def _new_file(self, kind: str, suffix: str, data: bytes) -> str:
        """A new file of ``data`` in the folder, written whole or not at all; its name."""
        name = f"{kind}-{secrets.token_hex(8)}.{suffix}"
        replace_atomically(self.folder / name, data, prefix=f".{kind}-")
        return name

    def _write_base(self, *, rebuild: bool) -> None:
        """A new base holding every row, the deltas inserted into a copy of the old base's index; with
        ``rebuild``, only the live rows, renumbered, in an index built afresh."""
        delta_vectors = self._delta_vectors[: len(self._delta_ids)]
        old = self._base
        if rebuild or old is None:
            base_rows = self._live_base_rows() if old is not None else np.zeros(0, np.int64)
            live_delta = self._live_delta_rows()
            ids = (old.chunk_ids(base_rows) if old is not None else []) + [self._delta_ids[i] for i in live_delta]
            kept = np.asarray(old.vectors[base_rows]) if old is not None else delta_vectors[:0]
            vectors = np.concatenate([kept, delta_vectors[live_delta]])
            kept_records = [old.record(int(r)) for r in base_rows] if old is not None else []
            records = _Records.of(kept_records + [self._delta_records[i] for i in live_delta])
            index = create(self.kind, self.dim, metric_for(self.kind), **build_params(self.kind, len(ids), self.params))
            if ids:
                index.add(vectors, np.arange(len(ids)))
            self._trained_on, dead = len(ids), set[int]()
        else:
            index = load(self.folder / old.name / self.kind)  # a writable copy: the mapped one may be in use
            live = self._live_delta_rows()
            if len(live):
                index.add(delta_vectors[live], self._offset + live)
            ids = old.chunk_ids(np.arange(len(old))) + self._delta_ids
            vectors, dead = np.concatenate([np.asarray(old.vectors), delta_vectors]), self._dead
            records = old.all_records() + _Records.of(self._delta_records)
        name = f"base-{secrets.token_hex(8)}"
        _Base.write(self.folder / name, self.kind, index, ids, vectors, records)
        self._base, self._deltas, self._rebuild_due = _Base(self.folder / name, self.kind), [], False
        self._delta_ids, self._delta_vectors = [], np.zeros((0, self.dim), np.float32)
        self._delta_records = []
        self._dead, self._dead_changed, self._row_of = set(dead), True, {}
        self._saved_rows = len(self._base)

    def _remove_unnamed(self, named: set[str | None]) -> None:
        """What the manifest no longer names (a process that mapped an old base keeps its pages until it lets go)."""
        for path in self.folder.iterdir():
            if path.name in named:
                continue
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)

    # --- searching ------------------------------------------------------------------------------

    def query(self, vector: FloatArray, n: int, allowed: set[str] | None = None) -> list[tuple[str, float]]:
        """The ``n`` nearest chunks as ``(chunk_id, cosine)``, best first, only among ``allowed`` when given."""
        q = np.asarray(vector, np.float32).reshape(-1)
        if allowed is not None and len(allowed) <= EXACT_UNDER:
            scored = [(cid, float(v @ q)) for cid, v in self.vectors(allowed).items()]
            return sorted(scored, key=lambda hit: -hit[1])[:n]
        want = n
        while True:
            with self._lock:
                hits, total = self._nearest(q, want), len(self)
            kept = [(c, s) for c, s in hits if allowed is None or c in allowed]
            if len(kept) >= n or want >= total:
                return kept[:n]
            want *= 4  # a document filter removed too many: ask for more

    def _nearest(self, q: FloatArray, want: int) -> list[tuple[str, float]]:
        found: list[tuple[str, float]] = []
        base, extra = self._base, min(len(self._dead), want)  # dead rows may take places in either part
        if base is not None and len(base):
            D, I = base.index.search(q.reshape(1, -1), min(len(base), want + extra))
            kept = [(int(r), float(d)) for d, r in zip(D[0], I[0], strict=True) if r >= 0 and int(r) not in self._dead]
            ids = base.chunk_ids(np.array([r for r, _ in kept], np.int64))
            found = [(cid, self._cosine(d)) for cid, (_, d) in zip(ids, kept, strict=True)]
        if self._delta_ids:
            scores = self._delta_vectors[: len(self._delta_ids)] @ q
            take = min(want + extra, len(scores))
            best = np.argpartition(-scores, take - 1)[:take]
            dead, offset = self._dead, self._offset
            found += [(self._delta_ids[i], float(scores[i])) for i in best.tolist() if offset + i not in dead]
        return sorted(found, key=lambda hit: -hit[1])[:want]

    def _cosine(self, score: float) -> float:
        # Unit vectors: ||q - x||^2 = 2 - 2 cos.
        return 1.0 - score / 2.0 if metric_for(self.kind) == "l2" else score


def _read_manifest(path: Path) -> dict[str, Any] | None:
    """The manifest, or None where there is none or it is of another format (the first one's ``chunks.json``)."""
    if not path.is_file():
        return None
    manifest: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return manifest if manifest.get("format") == FORMAT_VERSION else None


def _record(chunk: StoredChunk) -> bytes:
    return json.dumps([chunk.text, chunk.meta], ensure_ascii=False, separators=(",", ":")).encode()


def _chunk(chunk_id: str, record: bytes, vector: FloatArray) -> StoredChunk:
    text, meta = json.loads(record)
    return StoredChunk(chunk_id, text, meta, vector)


def _as_bytes(chunk_ids: Sequence[str]) -> IdBytes:
    encoded = [c.encode() for c in chunk_ids]
    return np.array(encoded, dtype=f"S{max((len(e) for e in encoded), default=1)}")
