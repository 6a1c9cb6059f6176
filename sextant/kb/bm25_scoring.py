"""BM25 scoring variants and the bm25s score matrix they fill.

``score(q, d) = Σ_{t in q} idf(t) · tf_part(t, d)``. Each variant is a small function citing its
formula; ``score_matrix`` evaluates one over every (chunk, term) pair of a bag-of-words index.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

# df: chunks containing the term, n: chunks, tf: count in the chunk, dl: chunk length, avgdl: mean dl.
# The formulas are those of bm25s, written vectorised (Kamphuis et al., "Which BM25 Do You Mean?",
# ECIR 2020). Operation order follows bm25s so the matrices agree to float32 rounding.
FloatArray = np.ndarray[Any, np.dtype[np.float64]]


def idf_lucene(df: FloatArray, n: int) -> FloatArray:
    """Lucene: idf = ln(1 + (N - df + 0.5) / (df + 0.5)); always > 0."""
    return np.log(1.0 + (n - df + 0.5) / (df + 0.5))


def idf_robertson(df: FloatArray, n: int) -> FloatArray:
    """Robertson: idf = ln((N - df + 0.5) / (df + 0.5)), the ratio floored at 1 (idf 0 when df > N/2)."""
    return np.log(np.maximum((n - df + 0.5) / (df + 0.5), 1.0))


def idf_atire(df: FloatArray, n: int) -> FloatArray:
    """ATIRE: idf = ln(N / df)."""
    return np.log(n / df)


def tf_lucene(tf: FloatArray, dl: FloatArray, avgdl: float, k1: float, b: float) -> FloatArray:
    """Lucene (and Robertson, in bm25s): tf / (tf + k1 * (1 - b + b * dl / avgdl)).

    The classic numerator factor (k1 + 1) is dropped, as Lucene 8+ and bm25s do: a constant factor
    leaves every ranking unchanged, so these scores are the textbook ones divided by (k1 + 1).
    """
    return tf / (k1 * ((1 - b) + b * dl / avgdl) + tf)


def tf_atire(tf: FloatArray, dl: FloatArray, avgdl: float, k1: float, b: float) -> FloatArray:
    """ATIRE: tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))."""
    return (tf * (k1 + 1)) / (tf + k1 * (1 - b + b * dl / avgdl))


_Idf = Callable[[FloatArray, int], FloatArray]
_Tf = Callable[[FloatArray, FloatArray, float, float, float], FloatArray]
VARIANTS: dict[str, tuple[_Idf, _Tf]] = {
    "lucene": (idf_lucene, tf_lucene),
    "robertson": (idf_robertson, tf_lucene),
    "atire": (idf_atire, tf_atire),
}


def score_matrix(
    terms: np.ndarray, tfs: np.ndarray, offsets: np.ndarray, df: np.ndarray, method: str, k1: float, b: float
) -> dict[str, Any]:
    """The bm25s score matrix (CSC, chunks x terms) of the bags, in the dtypes bm25s builds."""
    n_docs, n_terms = len(offsets) - 1, len(df)
    pairs_per_doc = np.diff(offsets)
    doc = np.repeat(np.arange(n_docs, dtype=np.int32), pairs_per_doc)  # (n_pairs,) row of each pair
    dl = np.bincount(doc, weights=tfs, minlength=n_docs).astype(np.float64, copy=False)  # (n_docs,) lengths
    avgdl = float(dl.mean())
    idf_fn, tf_fn = VARIANTS[method]
    idf = np.zeros(n_terms, dtype=np.float32)  # float32 like bm25s, and 0 for dead terms
    seen = df > 0
    idf[seen] = idf_fn(df[seen].astype(np.float64), n_docs)
    score = idf[terms] * tf_fn(tfs.astype(np.float64), dl[doc], avgdl, k1, b)  # (n_pairs,) float64
    order = np.argsort(terms, kind="stable")  # term-major; within a term rows stay ascending
    indptr = np.zeros(n_terms + 1, dtype=np.int64)
    np.cumsum(df, out=indptr[1:])
    return {"data": score[order].astype(np.float32), "indices": doc[order], "indptr": indptr, "num_docs": n_docs}
