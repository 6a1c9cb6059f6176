"""The BM25 variants, each against its formula computed by hand, and the score matrix they fill."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sextant.kb.bm25_scoring import (
    VARIANTS,
    idf_atire,
    idf_lucene,
    idf_robertson,
    score_matrix,
    tf_atire,
    tf_lucene,
)

# Three chunks over a vocabulary of five terms; term 3 is in none (a term whose chunks were all removed).
# Within a chunk the terms are not sorted: the matrix must come out term-major regardless.
TERMS = np.array([1, 0, 0, 2, 4, 1, 2], dtype=np.int32)
TFS = np.array([1, 1, 2, 1, 1, 1, 1], dtype=np.int32)
OFFSETS = np.array([0, 2, 4, 7], dtype=np.int64)  # chunk 0: terms 1, 0; chunk 1: 0 (x2), 2; chunk 2: 4, 1, 2
DF = np.array([2, 2, 2, 0, 1], dtype=np.int64)
DL = [2, 3, 3]
AVGDL = 8 / 3
K1, B = 1.5, 0.75


def textbook(method: str, tf: int, df: int, dl: int, n: int = 3) -> float:
    """One (chunk, term) score, written out from the formulas of Kamphuis et al. (ECIR 2020)."""
    norm = K1 * (1 - B + B * dl / AVGDL)
    if method == "lucene":
        return math.log(1 + (n - df + 0.5) / (df + 0.5)) * tf / (tf + norm)
    if method == "robertson":
        return math.log(max((n - df + 0.5) / (df + 0.5), 1.0)) * tf / (tf + norm)
    return math.log(n / df) * tf * (K1 + 1) / (tf + norm)


def dense(matrix: dict[str, np.ndarray]) -> np.ndarray:
    """The CSC matrix (chunks x terms) as a dense array."""
    indptr = matrix["indptr"]
    out = np.zeros((int(matrix["num_docs"]), len(indptr) - 1))
    for term in range(len(indptr) - 1):
        rows = matrix["indices"][indptr[term] : indptr[term + 1]]
        out[rows, term] = matrix["data"][indptr[term] : indptr[term + 1]]
    return out


def test_each_idf_is_its_formula() -> None:
    df = np.array([1.0, 2.0, 3.0])
    assert idf_lucene(df, 4) == pytest.approx(
        [math.log(1 + 3.5 / 1.5), math.log(1 + 2.5 / 2.5), math.log(1 + 1.5 / 3.5)]
    )
    assert idf_robertson(df, 4) == pytest.approx([math.log(3.5 / 1.5), 0.0, 0.0])
    assert idf_atire(df, 4) == pytest.approx([math.log(4), math.log(2), math.log(4 / 3)])


def test_lucene_idf_stays_positive_where_robertson_s_is_floored_at_zero() -> None:
    everywhere = np.array([10.0])
    assert idf_lucene(everywhere, 10)[0] > 0
    assert idf_robertson(everywhere, 10)[0] == 0.0


def test_each_tf_part_is_its_formula_and_atire_is_lucene_times_k1_plus_1() -> None:
    tf, dl = np.array([1.0, 2.0, 5.0]), np.array([2.0, 3.0, 10.0])
    lucene = tf_lucene(tf, dl, AVGDL, K1, B)
    norm = K1 * (1 - B + B * dl / AVGDL)
    assert lucene == pytest.approx(tf / (tf + norm))
    assert tf_atire(tf, dl, AVGDL, K1, B) == pytest.approx(lucene * (K1 + 1))


def test_with_b_zero_the_chunk_length_does_not_matter() -> None:
    tf = np.array([2.0, 2.0])
    assert np.ptp(tf_lucene(tf, np.array([1.0, 100.0]), 10.0, K1, 0.0)) == 0.0


@pytest.mark.parametrize("method", sorted(VARIANTS))
def test_the_matrix_holds_every_chunk_term_score_by_hand(method: str) -> None:
    matrix = score_matrix(TERMS, TFS, OFFSETS, DF, method, K1, B)
    expected = np.zeros((3, 5))
    for chunk in range(3):
        for i in range(OFFSETS[chunk], OFFSETS[chunk + 1]):
            term = TERMS[i]
            expected[chunk, term] = textbook(method, int(TFS[i]), int(DF[term]), DL[chunk])
    assert dense(matrix) == pytest.approx(expected, rel=1e-6)


def test_the_matrix_is_term_major_with_rows_ascending_in_bm25s_dtypes() -> None:
    matrix = score_matrix(TERMS, TFS, OFFSETS, DF, "lucene", K1, B)
    assert matrix["num_docs"] == 3
    assert matrix["indptr"].tolist() == [0, 2, 4, 6, 6, 7]  # the dead term 3 holds no entry
    assert matrix["indices"].tolist() == [0, 1, 0, 2, 1, 2, 2]
    assert (matrix["data"].dtype, matrix["indices"].dtype, matrix["indptr"].dtype) == (
        np.float32,
        np.int32,
        np.int64,
    )
