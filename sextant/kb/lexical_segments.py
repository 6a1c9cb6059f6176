"""Immutable segments of the BM25 index: one batch of chunks' bags of words and the postings made from them.

A segment is written once and never changed, as in Lucene: an index is a list of segments plus, per segment,
which of its rows were removed since. Adding chunks makes a new small segment; removing one marks its row dead;
trailing segments of similar size are merged (dropping dead rows) so there are never more than about
log2(chunks) of them. A write therefore costs what it changed, not the corpus, and a saved segment is never
written again, so a save writes only what is new (learning/scale.md).

Each segment keeps its bags twice: row-major (the terms of a row, to take a removed row out of the document
frequencies, and to merge) and term-major (the postings of a term, to score a query). Term ids are global:
a segment introduces the terms ``vocab = [lo, hi)`` that the index first saw in it, and its postings are
keyed by the term ids it holds (any below ``hi``), so a small segment costs what it holds, not the vocabulary.

On disk a segment is a folder ``seg-<hex>/`` of ``.npy`` arrays (memory-mapped when opened) and two JSON
lists, ``ids.json`` and ``terms.json`` (the strings of the terms it introduced).
"""

from __future__ import annotations

import json
import re
import secrets
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from sextant.kb.durable import write_json

IntArray = np.ndarray[Any, np.dtype[np.int64]]
_ARRAYS = ("offsets", "terms", "tfs", "dl", "post_terms", "indptr", "post_rows", "post_tfs")
_DTYPES = {"offsets": np.int64, "terms": np.int32, "tfs": np.int32, "dl": np.int64, "indptr": np.int64}
V1_SNAPSHOT_NAME = re.compile(r"snap-\d+-[0-9a-f]+")  # the first format's one folder
# A folder of another process's save that no manifest names after this long is a crashed save's leftover.
_ORPHAN_AGE_S = 3600.0
_DTYPES |= {"post_terms": np.int32, "post_rows": np.int32, "post_tfs": np.int32}


class CorruptSegment(Exception):
    """A segment folder that cannot be used as it is."""


@dataclass(frozen=True, slots=True)
class Segment:
    """One batch of chunks: ``ids`` in row order and their bags, row-major and term-major."""

    name: str  # the folder it is (or will be) saved as
    ids: tuple[str, ...]
    vocab: tuple[int, int]  # [lo, hi): the term ids this segment introduced
    offsets: np.ndarray  # int64 (n + 1,): row i's pairs are [offsets[i], offsets[i + 1])
    terms: np.ndarray  # int32 (pairs,): term ids, ascending within a row
    tfs: np.ndarray  # int32 (pairs,): each pair's count in its row
    dl: np.ndarray  # int64 (n,): each row's length, the sum of its counts
    post_terms: np.ndarray  # int32 (u,): the distinct term ids of the segment, ascending
    indptr: np.ndarray  # int64 (u + 1,): post_terms[j]'s postings are [indptr[j], indptr[j + 1])
    post_rows: np.ndarray  # int32 (pairs,): rows, ascending within a term
    post_tfs: np.ndarray  # int32 (pairs,)

    @classmethod
    def build(
        cls, ids: Sequence[str], offsets: np.ndarray, terms: np.ndarray, tfs: np.ndarray, vocab: tuple[int, int]
    ) -> Segment:
        """A segment from row-major bags (terms ascending within each row)."""
        pairs_per_row = np.diff(offsets)
        row = np.repeat(np.arange(len(ids), dtype=np.int32), pairs_per_row)
        order = np.argsort(terms, kind="stable")  # term-major; within a term rows stay ascending
        post_terms, df = np.unique(terms, return_counts=True)  # sized by the segment, not the vocabulary
        indptr = np.zeros(len(post_terms) + 1, dtype=np.int64)
        np.cumsum(df, out=indptr[1:])
        return cls(
            name=f"seg-{secrets.token_hex(8)}",
            ids=tuple(ids),
            vocab=vocab,
            offsets=offsets.astype(np.int64, copy=False),
            terms=terms.astype(np.int32, copy=False),
            tfs=tfs.astype(np.int32, copy=False),
            dl=np.bincount(row, weights=tfs, minlength=len(ids)).astype(np.int64),
            post_terms=post_terms.astype(np.int32, copy=False),
            indptr=indptr,
            post_rows=row[order],
            post_tfs=tfs[order].astype(np.int32, copy=False),
        )

    @classmethod
    def from_terms(cls, ids: Sequence[str], terms: Sequence[Sequence[int]], vocab: tuple[int, int]) -> Segment:
        """A segment of chunks given as their words' term ids (``terms[i]``: chunk ``ids[i]``'s, in text order)."""
        lengths = np.fromiter(map(len, terms), dtype=np.int64, count=len(terms))
        flat = np.fromiter(chain.from_iterable(terms), np.int64, int(lengths.sum()))
        # One sort turns token lists into (chunk, term, count) bags: key = chunk * V + term.
        n_terms = max(vocab[1], 1)
        key = np.repeat(np.arange(len(terms), dtype=np.int64), lengths) * n_terms + flat
        pairs, tfs = np.unique(key, return_counts=True)
        offsets = np.zeros(len(terms) + 1, dtype=np.int64)
        np.cumsum(np.bincount(pairs // n_terms, minlength=len(terms)), out=offsets[1:])
        return cls.build(ids, offsets, (pairs % n_terms).astype(np.int32), tfs.astype(np.int32), vocab)

    def __len__(self) -> int:
        return len(self.ids)

    def df(self) -> tuple[np.ndarray, IntArray]:
        """The segment's terms and how many of its rows hold each, dead rows included."""
        return self.post_terms, np.diff(self.indptr)

    def postings(self, term: int) -> tuple[np.ndarray, np.ndarray]:
        """The rows holding ``term`` (ascending) and its count in each."""
        j = int(np.searchsorted(self.post_terms, term))
        if j == len(self.post_terms) or self.post_terms[j] != term:
            return self.post_rows[:0], self.post_tfs[:0]
        lo, hi = self.indptr[j], self.indptr[j + 1]
        return self.post_rows[lo:hi], self.post_tfs[lo:hi]

    def terms_of(self, rows: Sequence[int]) -> np.ndarray:
        """The term ids of ``rows``, one per (row, term) pair."""
        if not rows:
            return self.terms[:0]
        return np.concatenate([self.terms[self.offsets[r] : self.offsets[r + 1]] for r in rows])

    def merge_cost(self, dead: np.ndarray) -> int:
        """What merging this segment costs, its rows not marked ``dead`` and their (row, term) pairs."""
        live_pairs = int(self.offsets[-1]) - int(np.diff(self.offsets)[dead].sum())
        return live_pairs + len(self) - int(dead.sum())

    # --- persistence --------------------------------------------------------------------------------------

    def save(self, directory: Path, terms: Sequence[str]) -> None:
        """Write this segment as ``directory / self.name`` (``terms``: the strings of its vocab range)."""
        folder = directory / self.name
        folder.mkdir()
        write_json(folder / "ids.json", list(self.ids))
        write_json(folder / "terms.json", list(terms))
        write_json(folder / "segment.json", {"vocab": list(self.vocab), "rows": len(self.ids)})
        for field in _ARRAYS:
            np.save(folder / f"{field}.npy", getattr(self, field), allow_pickle=False)

    def mapped(self, directory: Path) -> Segment:
        """This segment with its arrays read from its saved folder, memory-mapped: the pages are the file's, shared
        with every process that opens it and given back under memory pressure, not this process's heap."""
        folder = directory / self.name
        arrays: dict[str, Any] = {f: _mapped(folder / f"{f}.npy") for f in _ARRAYS}
        return replace(self, **arrays)

    @classmethod
    def from_snapshot(cls, folder: Path) -> tuple[Segment | None, list[str]]:
        """The index saved in the first format (one folder of row-major bags) as one segment (None: no chunks),
        and its vocabulary.

        Raises:
            CorruptSegment: missing, malformed or inconsistent files.
        """
        try:
            ids = json.loads((folder / "ids.json").read_text(encoding="utf-8"))
            terms = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
            offsets = np.load(folder / "bag_offsets.npy", allow_pickle=False)
            term_ids = np.load(folder / "bag_terms.npy", allow_pickle=False)
            tfs = np.load(folder / "bag_tfs.npy", allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise CorruptSegment(f"{folder.name}: {exc}") from exc
        _check_bags(ids, terms, offsets, term_ids, tfs)
        return (cls.build(ids, offsets, term_ids, tfs, (0, len(terms))) if ids else None), terms

    @classmethod
    def load(cls, directory: Path, name: str) -> tuple[Segment, list[str]]:
        """The segment saved as ``directory / name``, its arrays memory-mapped, and its terms' strings.

        Raises:
            CorruptSegment: missing, malformed or inconsistent files.
        """
        folder = directory / name
        try:
            ids = json.loads((folder / "ids.json").read_text(encoding="utf-8"))
            terms = json.loads((folder / "terms.json").read_text(encoding="utf-8"))
            meta = json.loads((folder / "segment.json").read_text(encoding="utf-8"))
            arrays: dict[str, Any] = {f: _mapped(folder / f"{f}.npy") for f in _ARRAYS}
        except (OSError, ValueError) as exc:
            raise CorruptSegment(f"{name}: {exc}") from exc
        if not (isinstance(ids, list) and all(isinstance(i, str) for i in ids) and len(set(ids)) == len(ids)):
            raise CorruptSegment(f"{name}: ids.json is not a list of distinct strings")
        if not (isinstance(terms, list) and all(isinstance(t, str) for t in terms)):
            raise CorruptSegment(f"{name}: terms.json is not a list of strings")
        vocab = meta.get("vocab") if isinstance(meta, dict) else None
        if not (isinstance(vocab, list) and len(vocab) == 2 and all(isinstance(v, int) for v in vocab)):
            raise CorruptSegment(f"{name}: segment.json has no vocab range")
        segment = cls(name=name, ids=tuple(ids), vocab=(vocab[0], vocab[1]), **arrays)
        segment.check(len(terms))
        return segment, terms

    def check(self, n_terms: int) -> None:
        """Raise ``CorruptSegment`` unless the arrays are consistent with each other and ``n_terms`` strings."""
        lo, hi = self.vocab
        n, pairs = len(self.ids), len(self.terms)
        for field, dtype in _DTYPES.items():
            if getattr(self, field).dtype != dtype or getattr(self, field).ndim != 1:
                raise CorruptSegment(f"{self.name}: {field} is not a 1-d {np.dtype(dtype).name} array")
        if not 0 <= lo <= hi or hi - lo != n_terms:
            raise CorruptSegment(f"{self.name}: vocab range {lo}..{hi} does not match its {n_terms} terms")
        if self.offsets.shape != (n + 1,) or self.dl.shape != (n,) or self.indptr.shape != (len(self.post_terms) + 1,):
            raise CorruptSegment(f"{self.name}: row or term arrays have the wrong length")
        if any(len(getattr(self, f)) != pairs for f in ("tfs", "post_rows", "post_tfs")):
            raise CorruptSegment(f"{self.name}: pair arrays differ in length")
        if self.offsets[0] != 0 or self.offsets[-1] != pairs or self.indptr[0] != 0 or self.indptr[-1] != pairs:
            raise CorruptSegment(f"{self.name}: offsets do not partition the pairs")
        if pairs and (
            not 0 <= self.terms.min() <= self.terms.max() < hi
            or not 0 <= self.post_rows.min() <= self.post_rows.max() < n
            or not 0 <= self.post_terms.min() <= self.post_terms.max() < hi
            or self.tfs.min() < 1
        ):
            raise CorruptSegment(f"{self.name}: term ids, rows or counts out of range")
        if np.any(np.diff(self.offsets) < 0) or np.any(np.diff(self.indptr) <= 0):
            raise CorruptSegment(f"{self.name}: offsets are not ascending")
        if np.any(np.diff(self.post_terms) <= 0):
            raise CorruptSegment(f"{self.name}: posting terms are not distinct and ascending")


def _mapped(path: Path) -> np.ndarray:
    """The array in ``path``, memory-mapped read-only, as a plain ndarray: slicing an ``np.memmap`` makes a new
    memmap object each time, which cost a quarter of a query's time at 1M chunks."""
    return np.load(path, mmap_mode="r", allow_pickle=False).view(np.ndarray)


def merge(segments: Sequence[Segment], dead: Sequence[np.ndarray]) -> Segment:
    """One segment holding the live rows of ``segments`` (consecutive, oldest first) in their order."""
    ids: list[str] = []
    offsets, terms, tfs = [], [], []
    for segment, gone in zip(segments, dead, strict=True):
        keep = ~gone
        pairs_per_row = np.diff(segment.offsets)
        pair_keep = np.repeat(keep, pairs_per_row)
        ids.extend(i for i, k in zip(segment.ids, keep.tolist(), strict=True) if k)
        offsets.append(pairs_per_row[keep])
        terms.append(segment.terms[pair_keep])
        tfs.append(segment.tfs[pair_keep])
    row_offsets = np.zeros(len(ids) + 1, dtype=np.int64)
    np.cumsum(np.concatenate(offsets), out=row_offsets[1:])
    vocab = (segments[0].vocab[0], segments[-1].vocab[1])
    return Segment.build(ids, row_offsets, np.concatenate(terms), np.concatenate(tfs), vocab)


def renumbered(segment: Segment, new_id: np.ndarray, n_terms: int) -> Segment:
    """``segment``, the index's only one, with term ids mapped through ``new_id`` (ascending, so each row's terms
    stay sorted) into ``n_terms``: the vocabulary compacted once most of it occurs nowhere."""
    terms = new_id[segment.terms].astype(np.int32)
    return Segment.build(segment.ids, segment.offsets, terms, segment.tfs, (0, n_terms))


def remove_unreferenced(directory: Path, replaced: set[str], referenced: set[str]) -> None:
    """Remove the segments this process ``replaced``, first-format snapshots and crashed saves' leftovers; never a
    folder the manifest names (``referenced``) nor another process's segment younger than ``_ORPHAN_AGE_S``."""
    stale = time.time() - _ORPHAN_AGE_S
    for entry in directory.iterdir():
        name = entry.name
        if name == "manifest.json" or name in referenced:
            continue
        leftover = name.startswith(("seg-", ".")) and entry.stat().st_mtime < stale
        if name in replaced or V1_SNAPSHOT_NAME.fullmatch(name) or leftover:
            if entry.is_dir():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)


def _check_bags(ids: Any, terms: Any, offsets: Any, term_ids: Any, tfs: Any) -> None:
    if not (isinstance(ids, list) and all(isinstance(i, str) for i in ids) and len(set(ids)) == len(ids)):
        raise CorruptSegment("ids.json is not a list of distinct strings")
    if not (isinstance(terms, list) and all(isinstance(t, str) for t in terms) and len(set(terms)) == len(terms)):
        raise CorruptSegment("vocab.json is not a list of distinct strings")
    if offsets.dtype != np.int64 or term_ids.dtype != np.int32 or tfs.dtype != np.int32:
        raise CorruptSegment("bag arrays have unexpected dtypes")
    if offsets.shape != (len(ids) + 1,) or term_ids.ndim != 1 or tfs.shape != term_ids.shape:
        raise CorruptSegment("bag arrays have inconsistent shapes")
    if offsets[0] != 0 or offsets[-1] != len(term_ids) or np.any(np.diff(offsets) < 0):
        raise CorruptSegment("bag offsets are not a partition of the pairs")
    if len(term_ids) and (term_ids.min() < 0 or term_ids.max() >= len(terms) or tfs.min() < 1):
        raise CorruptSegment("bag term ids or counts out of range")
