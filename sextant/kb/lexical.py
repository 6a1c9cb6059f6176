"""BM25 (Robertson & Zaragoza, "The Probabilistic Relevance Framework", 2009): the lexical half of search.

Each chunk is tokenized once, on ``add``, into a bag of words (term ids and their counts). Bags live in
immutable segments (``lexical_segments``): an ``add`` makes a small one, a removal marks a row dead, and
trailing segments of similar size are merged, so a write costs what it changed and a save writes only new
segments. BM25's idf and average length are global, so nothing score-like is stored: a query scores the
postings of its few terms, with idf and length normalisation from the live totals, which every change keeps
up to date. The arithmetic is bm25s's (Lù, "BM25S", 2024) term for term and in its float32, so the scores are
the ones its eager matrix would hold (the tests check against bm25s and rank-bm25). learning/scale.md has the
measurements that chose this over rebuilding bm25s's matrix at every change.

On-disk layout (a directory; never pickle)::

    manifest.json   commit point, replaced atomically: format, version, generation, tokenizer, and the
                    segments in order, each with its dead rows
    seg-<hex>/      one segment, written once and never changed (``Segment.save``); memory-mapped when opened

Keeping it in step with the store: ``generation`` grows by one on every change and is saved in the
manifest; stamp it with the store's own counter, ``index.save(generation=g)``. At start, if
``LexicalIndex.open(...).generation`` differs from the store's (a crash between the two writes; a missing,
corrupt or foreign-version directory opens empty at generation 0 with ``load_problem`` set), drop and add
the chunks that differ, or rebuild: ``index.clear(); index.add(ids, texts); index.save(generation=g)``.

One writer at a time per index object; reads and writes from several threads are safe. Several processes
may save into one directory: a save removes only the segment folders that this process saw replaced (and
leftovers older than an hour), so another process's newer segments are never taken from under its manifest.
"""

from __future__ import annotations

import bisect
import json
import logging
import os
import re
import shutil
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any, Literal, cast

import numpy as np

from sextant.kb.analyzer import TOKENIZER, content_words, matched_terms, stem_words, tokenize
from sextant.kb.bm25_scoring import VARIANTS, idfs, length_norm, term_scores
from sextant.kb.durable import fsync_dir, fsync_tree, write_json
from sextant.kb.lexical_segments import (
    V1_SNAPSHOT_NAME,
    CorruptSegment,
    Segment,
    merge,
    remove_unreferenced,
    renumbered,
)

__all__ = ["METHODS", "LexicalHit", "LexicalIndex", "Method"]

_log = logging.getLogger(__name__)

Method = Literal["lucene", "robertson", "atire"]
METHODS: tuple[Method, ...] = ("lucene", "robertson", "atire")

FORMAT = "sextant.lexical"
FORMAT_VERSION = 2
_MANIFEST = "manifest.json"
_SEGMENT_NAME = re.compile(r"seg-[0-9a-f]{16}")
# Trailing segments merge while the older one is at most this many times the newer: segment sizes then fall
# by more than half from one to the next, so there are at most ~log2(chunks) of them and each (chunk, term)
# pair is rewritten ~log2(chunks) times over the index's life (Bentley & Saxe's logarithmic method).
MERGE_RATIO = 2


@dataclass(frozen=True, slots=True)
class LexicalHit:
    """One search result: a chunk id, its BM25 score (> 0) and its 1-based rank."""

    id: str
    score: float
    rank: int


class _Corrupt(Exception):
    """The on-disk index cannot be used as it is."""


class LexicalIndex:
    """A BM25 index of chunks by id: incremental ``add``/``remove``, persistent, scored as bm25s scores."""

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
        self._known: set[str] = set()  # segment folders this process loaded or wrote, in `directory`
        self._reset()

    def _reset(self) -> None:
        self._segments: list[Segment] = []
        self._dead: list[np.ndarray] = []  # per segment, bool per row: removed since the segment was made
        self._starts: list[int] = []  # the index row of each segment's first row
        self._row_ids: list[str | None] = []  # every row of every segment in order; None where dead
        self._rows: dict[str, int] = {}  # live chunk id -> index row
        self._vocab: dict[str, int] = {}  # term -> id
        self._terms: list[str] = []  # id -> term
        self._df = np.zeros(0, dtype=np.int64)  # live chunks holding each term; may be longer than the vocab
        self._total_len = 0  # the live chunks' lengths summed
        self._norms: dict[str, tuple[float, np.ndarray]] = {}  # segment -> (avgdl, its rows' length norms)

    @property
    def generation(self) -> int:
        """Grows by one on every change, or is set by ``save(generation=...)``; saved with the index."""
        return self._generation

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, chunk_id: object) -> bool:
        return chunk_id in self._rows

    def ids(self) -> list[str]:
        """The indexed chunk ids, in row (insertion) order."""
        with self._lock:
            return [i for i in self._row_ids if i is not None]

    def segment_count(self) -> int:
        """How many segments the index is made of (at most ~log2 of its chunks)."""
        return len(self._segments)

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
            vocab, lo = self._vocab, len(self._terms)
            term_of: dict[str, int] = {}
            for word, stem in zip(distinct, stems, strict=True):
                if (term := vocab.get(stem)) is None:
                    term = vocab[stem] = len(self._terms)
                    self._terms.append(stem)
                term_of[word] = term
            term_ids = [[term_of[w] for w in chunk] for chunk in words]
            self._append(Segment.from_terms(new_ids, term_ids, (lo, len(vocab))))
            self._merge_tail()
            self._changed()

    def remove(self, ids: Iterable[str]) -> None:
        """Forget chunks; ids not in the index are ignored."""
        with self._lock:
            if self._drop([i for i in set(ids) if i in self._rows]):
                self._changed()

    def clear(self) -> None:
        """Forget every chunk (the generation still grows, so it never repeats an earlier state's)."""
        with self._lock:
            if self._segments:
                self._reset()
                self._changed()

    def _append(self, segment: Segment) -> None:
        start = len(self._row_ids)
        self._segments.append(segment)
        self._dead.append(np.zeros(len(segment), dtype=bool))
        self._starts.append(start)
        self._row_ids.extend(segment.ids)
        self._rows.update(zip(segment.ids, range(start, start + len(segment)), strict=True))
        if len(self._df) < segment.vocab[1]:  # grown by doubling, so adds do not copy it each time
            grown = np.zeros(max(segment.vocab[1], 2 * len(self._df)), dtype=np.int64)
            grown[: len(self._df)] = self._df
            self._df = grown
        terms, df = segment.df()
        self._df[terms] += df
        self._total_len += int(segment.dl.sum())

    def _drop(self, ids: list[str]) -> bool:
        """Mark ``ids`` dead; rewrite a segment once most of it is dead."""
        by_segment: dict[int, list[int]] = {}
        for row in (self._rows[i] for i in ids):
            s = bisect.bisect_right(self._starts, row) - 1
            by_segment.setdefault(s, []).append(row - self._starts[s])
        self._mark_dead(by_segment)
        for s in sorted(by_segment, reverse=True):  # from the end: a merge renumbers the rows after it
            if s < len(self._segments) and 2 * int(self._dead[s].sum()) > len(self._segments[s]):
                self._merge(s, s + 1)
                self._merge_tail()  # a shrunk segment may now be small enough to join its neighbour
        return bool(ids)

    def _mark_dead(self, by_segment: dict[int, list[int]]) -> None:
        """Mark segments' rows dead and take them out of the totals (an id may live on in a later segment)."""
        for s, rows in by_segment.items():
            segment, start = self._segments[s], self._starts[s]
            for row in rows:
                chunk_id = self._row_ids[start + row]
                self._row_ids[start + row] = None
                if chunk_id is not None and self._rows.get(chunk_id) == start + row:
                    del self._rows[chunk_id]
            self._dead[s][rows] = True
            np.subtract.at(self._df, segment.terms_of(rows), 1)
            self._total_len -= int(segment.dl[rows].sum())

    def _merge_tail(self) -> None:
        while len(self._segments) >= 2:
            older, newer = (self._segments[-2], self._dead[-2]), (self._segments[-1], self._dead[-1])
            if older[0].merge_cost(older[1]) > MERGE_RATIO * newer[0].merge_cost(newer[1]):
                return
            self._merge(len(self._segments) - 2, len(self._segments))

    def _merge(self, lo: int, hi: int) -> None:
        """Replace segments ``lo:hi`` by one holding their live rows, renumbering the rows from ``lo`` on."""
        start = self._starts[lo]
        merged = merge(self._segments[lo:hi], self._dead[lo:hi])
        for segment in self._segments[lo:hi]:
            self._norms.pop(segment.name, None)
        if lo == 0 and hi == len(self._segments):
            merged = self._compact_vocab(merged)
        self._segments[lo:hi] = [merged]
        self._dead[lo:hi] = [np.zeros(len(merged), dtype=bool)]
        del self._starts[lo:], self._row_ids[start:]
        for segment, dead in zip(self._segments[lo:], self._dead[lo:], strict=True):
            self._starts.append(start)
            ids = [None if gone else i for i, gone in zip(segment.ids, dead.tolist(), strict=True)]
            self._row_ids.extend(ids)
            self._rows.update((i, start + r) for r, i in enumerate(ids) if i is not None)
            start += len(segment)

    def _compact_vocab(self, only: Segment) -> Segment:
        """``only``, about to be the index's one segment, renumbered onto the live terms once most terms occur in
        no chunk (removals leave them behind); otherwise ``only`` itself."""
        n_terms = len(self._terms)
        alive = self._df[:n_terms] > 0
        if 2 * int(alive.sum()) >= n_terms:
            return only
        self._terms = [t for t, live in zip(self._terms, alive.tolist(), strict=True) if live]
        self._vocab = {t: i for i, t in enumerate(self._terms)}
        self._df = self._df[:n_terms][alive]
        return renumbered(only, np.cumsum(alive) - 1, len(self._terms))

    def _changed(self) -> None:
        self._generation += 1
        self._unsaved = True

    # --- search -----------------------------------------------------------------------------------------

    def search(self, query: str, k: int, allowed_ids: set[str] | None = None) -> list[LexicalHit]:
        """The ``k`` best chunks with a score > 0, best first (ties in row order).

        ``allowed_ids`` restricts the result to those chunks (ids not in the index are ignored).

        Raises:
            ValueError: ``k < 1``.
        """
        if k < 1:
            raise ValueError(f"search() needs k >= 1, got {k}")
        terms = tokenize(query)
        with self._lock:
            scores = self._scores(terms)
            if scores is None:
                return []
            if allowed_ids is None:
                rows = np.flatnonzero(scores > 0)
            else:
                get = self._rows.get
                rows = np.fromiter((r for i in allowed_ids if (r := get(i)) is not None), dtype=np.int64)
                rows = rows[scores[rows] > 0]
            if len(rows) > k:
                rows = rows[np.argpartition(-scores[rows], k - 1)[:k]]
            rows = rows[np.lexsort((rows, -scores[rows]))]
            ids = [cast(str, self._row_ids[r]) for r in rows.tolist()]  # a row scored > 0 is live
        return [
            LexicalHit(id=i, score=float(s), rank=rank)
            for rank, (i, s) in enumerate(zip(ids, scores[rows].tolist(), strict=True), start=1)
        ]

    def scores(self, query: str, ids: Iterable[str]) -> dict[str, float]:
        """The BM25 score of each of ``ids`` for ``query``, however low (0 where no query word occurs, or for an
        id not in the index): score fusion weighs the dense list's chunks that BM25 did not rank too."""
        ids = list(ids)
        terms = tokenize(query)
        with self._lock:
            scores = self._scores(terms)
            if scores is None:
                return dict.fromkeys(ids, 0.0)
            get = self._rows.get
            return {i: float(scores[r]) if (r := get(i)) is not None else 0.0 for i in ids}

    def _scores(self, terms: list[str]) -> np.ndarray | None:
        """Every row's BM25 score for the query ``terms`` (0 for dead rows), or None when no term is indexed.

        As bm25s sums its matrix's columns: each occurrence of a term in the query adds that term's float32
        scores, in query order. The caller holds the lock."""
        query = [t for term in terms if (t := self._vocab.get(term)) is not None]
        if not query or not self._rows:
            return None
        n = len(self._rows)
        avgdl = self._total_len / n
        idf = idfs(self._df[query], n, self.method)
        weighed = [(t, w) for t, w in zip(query, idf.tolist(), strict=True) if w]
        weights = np.array([w for _, w in weighed], dtype=np.float32)
        scores = np.zeros(len(self._row_ids), dtype=np.float32)
        for segment, dead, start in zip(self._segments, self._dead, self._starts, strict=True):
            if not weighed:
                break
            postings = [segment.postings(t) for t, _ in weighed]
            rows = np.concatenate([r for r, _ in postings])  # term by term, in query order
            if not len(rows):
                continue
            tfs = np.concatenate([f for _, f in postings])
            weight = np.repeat(weights, [len(r) for r, _ in postings])
            if dead.any():
                live = ~dead[rows]
                rows, tfs, weight = rows[live], tfs[live], weight[live]
            values = term_scores(weight, tfs, self._norm(segment, avgdl)[rows], self.method, self.k1)
            np.add.at(scores[start : start + len(segment)], rows, values)  # in order, so a row sums in query order
        return scores

    def _norm(self, segment: Segment, avgdl: float) -> np.ndarray:
        """The segment's rows' ``length_norm`` at ``avgdl``, kept until a change moves the average length."""
        cached = self._norms.get(segment.name)
        if cached is None or cached[0] != avgdl:
            cached = self._norms[segment.name] = (
                avgdl,
                length_norm(segment.dl.astype(np.float64), avgdl, self.k1, self.b),
            )
        return cached[1]

    # --- persistence --------------------------------------------------------------------------------------

    @classmethod
    def open(cls, directory: Path, *, k1: float = 1.5, b: float = 0.75, method: Method = "lucene") -> LexicalIndex:
        """Load the index saved in ``directory``; empty (generation 0) if there is none or it is unusable.

        An unusable index (corrupt, foreign format or version, other tokenizer) is logged and named in
        ``load_problem``; rebuild it from the store. Scores are computed at query time, so other BM25
        parameters than the last process's need nothing recomputed. An index saved in the first format (one
        snapshot) is read into one segment and saved in this one at the next save.

        Raises:
            ValueError: bad ``method``, ``k1`` or ``b`` (see ``__init__``).
        """
        index = cls(directory, k1=k1, b=b, method=method)
        if not (directory / _MANIFEST).exists():
            return index
        try:
            index._load()
        except (_Corrupt, CorruptSegment, OSError, ValueError, KeyError, TypeError, IndexError, EOFError) as exc:
            _log.warning("lexical index in %s is unusable and will be rebuilt: %s", directory, exc)
            index = cls(directory, k1=k1, b=b, method=method)
            index.load_problem = f"{type(exc).__name__}: {exc}"
        return index

    def _load(self) -> None:
        assert self.directory is not None
        manifest = json.loads((self.directory / _MANIFEST).read_text(encoding="utf-8"))
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise _Corrupt(f"{_MANIFEST} is not a {FORMAT} manifest")
        version = manifest.get("version")
        if version not in (1, FORMAT_VERSION):
            raise _Corrupt(f"format version {version!r}, this code reads 1 and {FORMAT_VERSION}")
        if manifest.get("tokenizer") != TOKENIZER:
            raise _Corrupt("the index was tokenized differently (other stopwords or stemmer version)")
        generation = manifest["generation"]
        if not isinstance(generation, int) or generation < 0:
            raise _Corrupt("bad generation in the manifest")
        if version == 1:
            self._load_snapshot(manifest["snapshot"])
        else:
            self._load_segments(manifest["segments"])
        self._generation, self._unsaved = generation, version != FORMAT_VERSION

    def _load_segments(self, entries: Any) -> None:
        assert self.directory is not None
        if not isinstance(entries, list):
            raise _Corrupt("the manifest's segments are not a list")
        dead_rows: dict[int, list[int]] = {}
        for entry in entries:
            name, dead = entry["name"], entry["dead"]
            if not (isinstance(name, str) and _SEGMENT_NAME.fullmatch(name)):
                raise _Corrupt(f"bad segment name {name!r}")
            segment, terms = Segment.load(self.directory, name)
            if segment.vocab[0] != len(self._terms):
                raise _Corrupt(f"{name}: its vocabulary does not follow the previous segment's")
            if not (isinstance(dead, list) and all(isinstance(r, int) and 0 <= r < len(segment) for r in dead)):
                raise _Corrupt(f"{name}: bad dead rows")
            self._terms.extend(terms)
            self._append(segment)
            self._known.add(name)
            dead_rows[len(self._segments) - 1] = sorted(set(dead))
        self._vocab = {t: i for i, t in enumerate(self._terms)}
        if len(self._vocab) != len(self._terms):
            raise _Corrupt("a term appears in two segments' vocabularies")
        self._mark_dead(dead_rows)

    def _load_snapshot(self, snapshot: Any) -> None:
        assert self.directory is not None
        if not (isinstance(snapshot, str) and V1_SNAPSHOT_NAME.fullmatch(snapshot)):
            raise _Corrupt(f"bad snapshot name {snapshot!r}")
        segment, self._terms = Segment.from_snapshot(self.directory / snapshot)
        self._vocab = {t: i for i, t in enumerate(self._terms)}
        if segment is not None:
            self._append(segment)

    def save(self, generation: int | None = None) -> None:
        """Write what changed to the index's directory atomically: a crash leaves the previous save intact.

        New segments are written (each once), then the manifest naming every segment and its dead rows
        replaces the old one; the written segments are then read back memory-mapped.

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
            self.directory.mkdir(parents=True, exist_ok=True)
            written: list[str] = []
            tmp = self.directory / f".{_MANIFEST}.{os.getpid()}-{threading.get_ident()}.tmp"
            try:
                for segment in self._segments:
                    # A folder this process saw may have been removed by another that merged it away since.
                    if segment.name not in self._known or not (self.directory / segment.name).is_dir():
                        segment.save(self.directory, self._terms[segment.vocab[0] : segment.vocab[1]])
                        written.append(segment.name)
                        fsync_tree(self.directory / segment.name)
                manifest = {
                    "format": FORMAT,
                    "version": FORMAT_VERSION,
                    "generation": self._generation,
                    "segments": [
                        {"name": s.name, "dead": np.flatnonzero(d).tolist()}
                        for s, d in zip(self._segments, self._dead, strict=True)
                    ],
                    "n_docs": len(self._rows),
                    "n_terms": len(self._terms),
                    "tokenizer": TOKENIZER,
                }
                write_json(tmp, manifest)
                fsync_tree(tmp)
            except BaseException:
                for name in written:
                    shutil.rmtree(self.directory / name, ignore_errors=True)
                tmp.unlink(missing_ok=True)
                raise
            os.replace(tmp, self.directory / _MANIFEST)  # the commit point
            fsync_dir(self.directory)
            self._unsaved = False
            self._segments = [s.mapped(self.directory) if s.name in written else s for s in self._segments]
            referenced = {s.name for s in self._segments}
            replaced, self._known = self._known - referenced, referenced
            remove_unreferenced(self.directory, replaced, referenced)
