"""BM25 scoring variants, computed as bm25s computes them.

``score(q, d) = Σ_{t in q} idf(t) · tf_part(t, d)``. Each variant is a small function citing its
formula; ``term_scores`` evaluates one over the chunks holding a query term.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

# df: chunks containing the term, n: chunks, tf: count in the chunk, dl: chunk length, avgdl: mean dl.
# The formulas are those of bm25s, written vectorised (Kamphuis et al., "Which BM25 Do You Mean?",
# ECIR 2020). Operation order follows bm25s so the scores agree to float32 rounding.
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


def length_norm(dl: FloatArray, avgdl: float, k1: float, b: float) -> FloatArray:
    """k1 * (1 - b + b * dl / avgdl): a chunk's length normalisation, the same for every term, so it is computed
    once per chunk and average length rather than once per (term, chunk) pair."""
    return k1 * ((1 - b) + b * dl / avgdl)


def tf_lucene(tf: FloatArray, norm: FloatArray, k1: float) -> FloatArray:
    """Lucene (and Robertson, in bm25s): tf / (tf + norm).

    The classic numerator factor (k1 + 1) is dropped, as Lucene 8+ and bm25s do: a constant factor
    leaves every ranking unchanged, so these scores are the textbook ones divided by (k1 + 1).
    """
    return tf / (norm + tf)


def tf_atire(tf: FloatArray, norm: FloatArray, k1: float) -> FloatArray:
    """ATIRE: tf * (k1 + 1) / (tf + norm)."""
    return (tf * (k1 + 1)) / (tf + norm)


_Idf = Callable[[FloatArray, int], FloatArray]
_Tf = Callable[[FloatArray, FloatArray, float], FloatArray]
VARIANTS: dict[str, tuple[_Idf, _Tf]] = {
    "lucene": (idf_lucene, tf_lucene),
    "robertson": (idf_robertson, tf_lucene),
    "atire": (idf_atire, tf_atire),
}


def idfs(df: np.ndarray, n: int, method: str) -> np.ndarray:
    """Each term's idf among ``n`` chunks, in float32 as bm25s stores it, and 0 for a term in no chunk."""
    idf = np.zeros(len(df), dtype=np.float32)
    seen = df > 0
    idf[seen] = VARIANTS[method][0](df[seen].astype(np.float64), n)
    return idf


def term_scores(idf: np.ndarray, tfs: np.ndarray, norm: np.ndarray, method: str, k1: float) -> np.ndarray:
    """Query terms' scores in chunks holding them: per (term, chunk) pair its term's ``idf``, its count and the
    chunk's ``length_norm``, computed in float64 and stored in float32 as bm25s's eager matrix holds them, so
    sums over a query agree with bm25s's."""
    return (idf * VARIANTS[method][1](tfs.astype(np.float64), norm, k1)).astype(np.float32)
