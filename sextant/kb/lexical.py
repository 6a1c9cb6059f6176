"""BM25 (Robertson & Zaragoza, "The Probabilistic Relevance Framework", 2009): the lexical half of search.

Eager scoring as in `bm25s` (Lù, "BM25S: Orders of magnitude faster lexical search via eager sparse
scoring", 2024): every (term, chunk) score is computed ahead of time into a sparse term-major (CSC)
matrix, so a query is a sum of a few columns. The matrix is built vectorised from the variant
functions in ``bm25_scoring`` (the tests check it against bm25s's own ``index()`` and against
rank-bm25); a ``bm25s.BM25`` holds it and scores the queries.

The index is incremental: each chunk is tokenized once, on ``add``, into a bag of words (term ids
and their counts), and the bags are what is persisted. BM25's idf and average length are global,
so any change invalidates every score; the matrix is rebuilt from the stored bags (vectorised, no
re-tokenizing) lazily, on the first search after a change.

On-disk layout (a directory; never pickle)::

    manifest.json            commit point, replaced atomically: format, version, generation, snapshot
    snap-<generation>-<hex>/ one complete snapshot, written before the manifest names it
      ids.json               chunk ids in row order
      vocab.json             stemmed terms in term-id order
      bag_offsets.npy        int64 (n_docs + 1,): chunk i's pairs are [offsets[i], offsets[i + 1])
      bag_terms.npy          int32 (n_pairs,): term ids, ascending within each chunk
      bag_tfs.npy            int32 (n_pairs,): term frequency of each pair
      bm25s/                 bm25s ``BM25.save``: the score matrix as CSC .npy arrays + JSON params

Keeping it in step with the store: ``generation`` grows by one on every change and is saved in the
manifest. Either record ``index.generation`` (read after the change) in the same transaction as the
store's change, or stamp the index with the store's own counter, ``index.save(generation=g)``. At
start, if ``LexicalIndex.open(...).generation`` differs from the store's value (a crash between the
two writes, or a missing, corrupt or foreign-version directory, which opens empty at generation 0
with ``load_problem`` set), rebuild::

    index.clear(); index.add(all_chunk_ids, all_chunk_texts); index.save(generation=g)

One writer at a time (one process); reads and writes from several threads are safe.
"""

from __future__ import annotations

import json
import logging
import os
import re
import secrets
import shutil
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any, Literal

import bm25s
import numpy as np

from sextant.kb.analyzer import TOKENIZER, content_words, matched_terms, stem_words, tokenize
from sextant.kb.bm25_scoring import VARIANTS, score_matrix

__all__ = ["METHODS", "LexicalHit", "LexicalIndex", "Method"]

_log = logging.getLogger(__name__)

Method = Literal["lucene", "robertson", "atire"]
METHODS: tuple[Method, ...] = ("lucene", "robertson", "atire")

FORMAT = "sextant.lexical"
FORMAT_VERSION = 1
_MANIFEST = "manifest.json"
_SNAPSHOT_NAME = re.compile(r"snap-\d+-[0-9a-f]+")


@dataclass(frozen=True, slots=True)
class LexicalHit:
    """One search result: a chunk id, its BM25 score (> 0) and its 1-based rank."""

    id: str
    score: float
    rank: int


@dataclass(frozen=True, slots=True)
class _Built:
    """An immutable view for searching: the bm25s retriever and the ids/vocab it was built from."""

    bm25: Any  # bm25s.BM25, its `scores` set to our matrix
    ids: tuple[str, ...]
    rows: dict[str, int]
    vocab: dict[str, int]


def _scores(built: _Built | None, query: str) -> np.ndarray | None:
    """Every chunk's BM25 score for ``query`` (row order), or None when no query word is indexed."""
    if built is None:
        return None
    query_ids = [built.vocab[t] for t in tokenize(query) if t in built.vocab]
    return built.bm25.get_scores_from_ids(query_ids) if query_ids else None  # (n_docs,) float32


class _Corrupt(Exception):
    """The on-disk index cannot be used as it is."""


class LexicalIndex:
    """A BM25 index of chunks by id: incremental ``add``/``remove``, persistent, searched with bm25s."""

    def __init__(
        self, directory: Path | None = None, *, k1: float = 1.5, b: float = 0.75, method: Method = "lucene"
    ) -> None:
        """An empty index; ``directory`` is where ``save`` writes (None: in memory only).

        Raises:
            ValueError: ``method`` is not one of METHODS, ``k1 < 0``, or ``b`` is outside [0, 1].
        """
        if method not in VARIANTS:
            raise ValueError(f"BM25 method {method!r} is not one of {', '.join(METHODS)}")
        if k1 < 0 or not 0 <= b <= 1:
            raise ValueError(f"BM25 needs k1 >= 0 and 0 <= b <= 1; got k1={k1}, b={b}")
        self.directory = directory
        self.k1, self.b, self.method = float(k1), float(b), method
        self.load_problem: str | None = None  # why an on-disk index was discarded, if it was
        self._generation = 0
        self._unsaved = True  # changed since the last save or load
        self._lock = threading.RLock()
        self._reset()

    def _reset(self) -> None:
        self._ids: list[str] = []
        self._rows: dict[str, int] = {}
        self._vocab: dict[str, int] = {}  # term -> id; insertion order is id order
        self._offsets = np.zeros(1, dtype=np.int64)
        self._terms = np.zeros(0, dtype=np.int32)
        self._tfs = np.zeros(0, dtype=np.int32)
        self._built: _Built | None = None
        self._stale = False  # the bags changed since `_built` was made

    @property
    def generation(self) -> int:
        """Grows by one on every change, or is set by ``save(generation=...)``; saved with the index."""
        return self._generation

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, chunk_id: object) -> bool:
        return chunk_id in self._rows

    def ids(self) -> list[str]:
        """The indexed chunk ids, in row (insertion) order."""
        return list(self._ids)

    matched_terms = staticmethod(matched_terms)

    # --- changes --------------------------------------------------------------------------------------

    def add(self, ids: Sequence[str], texts: Sequence[str]) -> None:
        """Index chunks; an id already present is replaced, as if the chunks were added one at a time.

        Raises:
            ValueError: ``ids`` and ``texts`` differ in length.
        """
        if len(ids) != len(texts):
            raise ValueError(f"add() got {len(ids)} ids but {len(texts)} texts")
        if not ids:
            return
        latest: dict[str, str] = {}
        for chunk_id, text in zip(ids, texts, strict=True):  # as if added one at a time
            latest.pop(chunk_id, None)
            latest[chunk_id] = text
        new_ids, new_texts = list(latest), list(latest.values())
        # Tokenize before taking the lock, so searches are not held up. Each distinct word of the batch
        # is stemmed once; first-seen order keeps term ids deterministic.
        words = [content_words(text) for text in new_texts]
        distinct = list(dict.fromkeys(chain.from_iterable(words)))
        stems = stem_words(distinct)
        with self._lock:
            self._drop([i for i in new_ids if i in self._rows])
            vocab = self._vocab
            term_of = {w: vocab.setdefault(s, len(vocab)) for w, s in zip(distinct, stems, strict=True)}
            lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
            flat = np.fromiter(map(term_of.__getitem__, chain.from_iterable(words)), np.int64, int(lengths.sum()))
            # One sort turns token lists into (chunk, term, count) bags: key = chunk * V + term.
            n_terms = max(len(vocab), 1)
            key = np.repeat(np.arange(len(words), dtype=np.int64), lengths) * n_terms + flat
            pairs, tfs = np.unique(key, return_counts=True)
            pairs_per_doc = np.bincount(pairs // n_terms, minlength=len(words))
            base = self._offsets[-1]
            self._offsets = np.concatenate([self._offsets, base + np.cumsum(pairs_per_doc)])
            self._terms = np.concatenate([self._terms, (pairs % n_terms).astype(np.int32)])
            self._tfs = np.concatenate([self._tfs, tfs.astype(np.int32)])
            for chunk_id in new_ids:
                self._rows[chunk_id] = len(self._ids)
                self._ids.append(chunk_id)
            self._changed()

    def remove(self, ids: Iterable[str]) -> None:
        """Forget chunks; ids not in the index are ignored."""
        with self._lock:
            if self._drop([i for i in set(ids) if i in self._rows]):
                self._changed()

    def clear(self) -> None:
        """Forget every chunk (the generation still grows, so it never repeats an earlier state's)."""
        with self._lock:
            if self._ids or self._vocab:
                self._reset()
                self._changed()

    def _drop(self, ids: list[str]) -> bool:
        if not ids:
            return False
        keep = np.ones(len(self._ids), dtype=bool)
        keep[[self._rows[i] for i in ids]] = False
        pairs_per_doc = np.diff(self._offsets)
        pair_keep = np.repeat(keep, pairs_per_doc)
        self._terms, self._tfs = self._terms[pair_keep], self._tfs[pair_keep]
        self._offsets = np.concatenate([[0], np.cumsum(pairs_per_doc[keep])]).astype(np.int64)
        self._ids = [i for i, k in zip(self._ids, keep.tolist(), strict=True) if k]
        self._rows = {chunk_id: row for row, chunk_id in enumerate(self._ids)}
        return True

    def _changed(self) -> None:
        self._generation += 1
        self._unsaved = True
        self._stale = True

    # --- search -----------------------------------------------------------------------------------------

    def search(self, query: str, k: int, allowed_ids: set[str] | None = None) -> list[LexicalHit]:
        """The ``k`` best chunks with a score > 0, best first (ties in row order).

        ``allowed_ids`` restricts the result to those chunks (ids not in the index are ignored).

        Raises:
            ValueError: ``k < 1``.
        """
        if k < 1:
            raise ValueError(f"search() needs k >= 1, got {k}")
        built = self._current()
        scores = _scores(built, query)
        if built is None or scores is None:
            return []
        if allowed_ids is None:
            rows = np.flatnonzero(scores > 0)
        else:
            # bm25s scores every chunk anyway (a dense accumulator); restricting is a gather.
            get = built.rows.get
            rows = np.fromiter((r for i in allowed_ids if (r := get(i)) is not None), dtype=np.int64)
            rows = rows[scores[rows] > 0]
        if len(rows) > k:
            rows = rows[np.argpartition(-scores[rows], k - 1)[:k]]
        rows = rows[np.lexsort((rows, -scores[rows]))]
        ids = built.ids
        return [
            LexicalHit(id=ids[r], score=float(s), rank=rank)
            for rank, (r, s) in enumerate(zip(rows.tolist(), scores[rows].tolist(), strict=True), start=1)
        ]

    def scores(self, query: str, ids: Iterable[str]) -> dict[str, float]:
        """The BM25 score of each of ``ids`` for ``query``, however low (0 where no query word occurs, or for an
        id not in the index): score fusion weighs the dense list's chunks that BM25 did not rank too."""
        ids = list(ids)
        built = self._current()
        scores = _scores(built, query)
        if built is None or scores is None:
            return dict.fromkeys(ids, 0.0)
        get = built.rows.get
        return {i: float(scores[r]) if (r := get(i)) is not None else 0.0 for i in ids}

    def _current(self) -> _Built | None:
        with self._lock:
            if self._stale or (self._built is None and self._ids):
                self._rebuild()
            return self._built

    def _rebuild(self) -> None:
        """Recompute the score matrix from the bags (no tokenizing); compact the vocabulary first if
        most of it no longer occurs (removals leave dead terms)."""
        self._stale = False
        if not self._ids:
            self._built, self._vocab = None, {}  # every term is dead
            return
        df = np.bincount(self._terms, minlength=len(self._vocab))
        alive = df > 0
        if 2 * int(alive.sum()) < len(df):
            new_id = np.cumsum(alive) - 1
            self._terms = new_id[self._terms].astype(np.int32)
            self._vocab = {t: int(new_id[i]) for t, i in self._vocab.items() if alive[i]}
            df = df[alive]
        bm25 = bm25s.BM25(k1=self.k1, b=self.b, method=self.method)
        bm25.scores = score_matrix(self._terms, self._tfs, self._offsets, df, self.method, self.k1, self.b)
        self._attach(bm25)

    def _attach(self, bm25: Any) -> None:
        vocab = dict(self._vocab)  # a copy: a later add() must not change what a running search sees
        bm25.vocab_dict = vocab
        bm25.unique_token_ids_set = set(vocab.values())
        bm25.nonoccurrence_array = None  # only BM25L/BM25+ use one
        self._built = _Built(bm25=bm25, ids=tuple(self._ids), rows=dict(self._rows), vocab=vocab)

    # --- persistence --------------------------------------------------------------------------------------

    @classmethod
    def open(cls, directory: Path, *, k1: float = 1.5, b: float = 0.75, method: Method = "lucene") -> LexicalIndex:
        """Load the index saved in ``directory``; empty (generation 0) if there is none or it is unusable.

        An unusable index (corrupt, foreign format or version, other tokenizer) is logged and named in
        ``load_problem``; rebuild it from the store. Other BM25 parameters than those saved only mean
        the matrix is recomputed from the stored bags on the first search.

        Raises:
            ValueError: bad ``method``, ``k1`` or ``b`` (see ``__init__``).
        """
        index = cls(directory, k1=k1, b=b, method=method)
        if not (directory / _MANIFEST).exists():
            return index
        try:
            index._load()
        except (_Corrupt, OSError, ValueError, KeyError, TypeError, IndexError, EOFError) as exc:
            _log.warning("lexical index in %s is unusable and will be rebuilt: %s", directory, exc)
            index = cls(directory, k1=k1, b=b, method=method)
            index.load_problem = f"{type(exc).__name__}: {exc}"
        return index

    def _load(self) -> None:
        assert self.directory is not None
        manifest = json.loads((self.directory / _MANIFEST).read_text(encoding="utf-8"))
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise _Corrupt(f"{_MANIFEST} is not a {FORMAT} manifest")
        if manifest.get("version") != FORMAT_VERSION:
            raise _Corrupt(f"format version {manifest.get('version')!r}, this code reads {FORMAT_VERSION}")
        if manifest.get("tokenizer") != TOKENIZER:
            raise _Corrupt("the index was tokenized differently (other stopwords or stemmer version)")
        generation = manifest["generation"]
        snapshot = manifest["snapshot"]
        if not isinstance(generation, int) or generation < 0 or not isinstance(snapshot, str):
            raise _Corrupt("bad generation or snapshot in the manifest")
        if not _SNAPSHOT_NAME.fullmatch(snapshot):
            raise _Corrupt(f"bad snapshot name {snapshot!r}")
        snap = self.directory / snapshot
        ids = json.loads((snap / "ids.json").read_text(encoding="utf-8"))
        terms = json.loads((snap / "vocab.json").read_text(encoding="utf-8"))
        offsets = np.load(snap / "bag_offsets.npy", allow_pickle=False)
        term_ids = np.load(snap / "bag_terms.npy", allow_pickle=False)
        tfs = np.load(snap / "bag_tfs.npy", allow_pickle=False)
        _check_bags(ids, terms, offsets, term_ids, tfs)
        self._ids, self._vocab = ids, {t: i for i, t in enumerate(terms)}
        self._rows = {chunk_id: row for row, chunk_id in enumerate(ids)}
        self._offsets, self._terms, self._tfs = offsets, term_ids, tfs
        self._generation, self._unsaved = generation, False
        self._stale = False
        scoring = {"method": self.method, "k1": self.k1, "b": self.b}
        if ids and manifest.get("scoring") == scoring and manifest.get("bm25s"):
            try:
                self._attach(_load_matrix(snap / "bm25s", scoring, len(ids), len(terms)))
            except (_Corrupt, OSError, ValueError, KeyError, TypeError, IndexError, EOFError) as exc:
                # The bags are sound, so only the derived matrix is lost: recompute it, no rebuild.
                _log.warning("lexical score matrix in %s is unusable, recomputing it: %s", snap, exc)
                self._stale = True

    def save(self, generation: int | None = None) -> None:
        """Write the index to its directory atomically: a crash leaves the previous save intact.

        ``generation``, if given, first replaces ``self.generation``: a caller that keeps its own
        counter (the store's) stamps the index with it, and compares the two at the next start.

        Raises:
            ValueError: the index has no directory (it was made in memory), or ``generation < 0``.
            OSError: the directory cannot be written; the previous save is still there.
        """
        if self.directory is None:
            raise ValueError("this LexicalIndex has no directory to save to")
        with self._lock:
            if generation is not None and generation != self._generation:
                if generation < 0:
                    raise ValueError(f"generation must be >= 0, got {generation}")
                self._generation, self._unsaved = generation, True
            if not self._unsaved and (self.directory / _MANIFEST).exists():
                return
            built = self._current()  # persisted too, so a start does not recompute the matrix
            self.directory.mkdir(parents=True, exist_ok=True)
            snapshot = f"snap-{self._generation:08d}-{secrets.token_hex(4)}"
            snap = self.directory / snapshot
            tmp = self.directory / f".{_MANIFEST}.{secrets.token_hex(4)}.tmp"
            try:
                snap.mkdir()
                _write_json(snap / "ids.json", self._ids)
                _write_json(snap / "vocab.json", list(self._vocab))
                np.save(snap / "bag_offsets.npy", self._offsets, allow_pickle=False)
                np.save(snap / "bag_terms.npy", self._terms, allow_pickle=False)
                np.save(snap / "bag_tfs.npy", self._tfs, allow_pickle=False)
                if built is not None:
                    built.bm25.save(snap / "bm25s", show_progress=False)  # .npy + JSON, no pickle
                _fsync_tree(snap)
                manifest = {
                    "format": FORMAT,
                    "version": FORMAT_VERSION,
                    "generation": self._generation,
                    "snapshot": snapshot,
                    "n_docs": len(self._ids),
                    "n_terms": len(self._vocab),
                    "scoring": {"method": self.method, "k1": self.k1, "b": self.b},
                    "bm25s": built is not None,
                    "bm25s_version": bm25s.__version__,
                    "tokenizer": TOKENIZER,
                }
                _write_json(tmp, manifest)
                _fsync_tree(tmp)
            except BaseException:
                shutil.rmtree(snap, ignore_errors=True)
                tmp.unlink(missing_ok=True)
                raise
            os.replace(tmp, self.directory / _MANIFEST)  # the commit point
            _fsync_dir(self.directory)
            self._unsaved = False
            for old in self.directory.iterdir():  # earlier snapshots and leftovers of crashed saves
                if old.name != snapshot and (old.name.startswith("snap-") or old.name.endswith(".tmp")):
                    if old.is_dir():
                        shutil.rmtree(old, ignore_errors=True)
                    else:
                        old.unlink(missing_ok=True)


def _check_bags(ids: Any, terms: Any, offsets: Any, term_ids: Any, tfs: Any) -> None:
    if not (isinstance(ids, list) and all(isinstance(i, str) for i in ids) and len(set(ids)) == len(ids)):
        raise _Corrupt("ids.json is not a list of distinct strings")
    if not (isinstance(terms, list) and all(isinstance(t, str) for t in terms) and len(set(terms)) == len(terms)):
        raise _Corrupt("vocab.json is not a list of distinct strings")
    if offsets.dtype != np.int64 or term_ids.dtype != np.int32 or tfs.dtype != np.int32:
        raise _Corrupt("bag arrays have unexpected dtypes")
    if offsets.shape != (len(ids) + 1,) or term_ids.ndim != 1 or tfs.shape != term_ids.shape:
        raise _Corrupt("bag arrays have inconsistent shapes")
    if offsets[0] != 0 or offsets[-1] != len(term_ids) or np.any(np.diff(offsets) < 0):
        raise _Corrupt("bag offsets are not a partition of the pairs")
    if len(term_ids) and (term_ids.min() < 0 or term_ids.max() >= len(terms) or tfs.min() < 1):
        raise _Corrupt("bag term ids or counts out of range")


def _load_matrix(path: Path, scoring: dict[str, Any], n_docs: int, n_terms: int) -> Any:
    bm25 = bm25s.BM25.load(path, load_vocab=False, show_progress=False)
    if {"method": bm25.method, "k1": bm25.k1, "b": bm25.b} != scoring or bm25.idf_method != bm25.method:
        raise _Corrupt("bm25s parameters differ from the manifest's")
    data, indices, indptr = bm25.scores["data"], bm25.scores["indices"], bm25.scores["indptr"]
    if bm25.scores["num_docs"] != n_docs or indptr.shape != (n_terms + 1,) or data.shape != indices.shape:
        raise _Corrupt("bm25s matrix shape does not match the bags")
    if indptr[0] != 0 or indptr[-1] != len(data) or (len(indices) and not 0 <= indices.min() <= indices.max() < n_docs):
        raise _Corrupt("bm25s matrix indices out of range")
    return bm25


def _write_json(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")


def _fsync_tree(root: Path) -> None:
    """fsync a file, or every file and folder under a folder, so a rename after it is durable."""
    if root.is_file():
        fd = os.open(root, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        return
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            fd = os.open(os.path.join(dirpath, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        _fsync_dir(Path(dirpath))


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
