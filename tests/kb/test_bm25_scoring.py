"""The BM25 variants, each against its formula computed by hand, and the per-term scores they give."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sextant.kb.bm25_scoring import (
    VARIANTS,
    idf_atire,
    idf_lucene,
    idf_robertson,
    idfs,
    length_norm,
    term_scores,
    tf_atire,
    tf_lucene,
)

# Three chunks over a vocabulary of five terms; term 3 is in none (a term whose chunks were all removed).
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
    lucene = tf_lucene(tf, length_norm(dl, AVGDL, K1, B), K1)
    norm = K1 * (1 - B + B * dl / AVGDL)
    assert lucene == pytest.approx(tf / (tf + norm))
    assert tf_atire(tf, length_norm(dl, AVGDL, K1, B), K1) == pytest.approx(lucene * (K1 + 1))


def test_with_b_zero_the_chunk_length_does_not_matter() -> None:
    tf = np.array([2.0, 2.0])
    assert np.ptp(tf_lucene(tf, length_norm(np.array([1.0, 100.0]), 10.0, K1, 0.0), K1)) == 0.0


@pytest.mark.parametrize("method", sorted(VARIANTS))
def test_each_chunk_term_score_is_the_textbook_one(method: str) -> None:
    idf = idfs(DF, 3, method)
    for chunk in range(3):
        for i in range(OFFSETS[chunk], OFFSETS[chunk + 1]):
            term = TERMS[i]
            norm = length_norm(np.array([float(DL[chunk])]), AVGDL, K1, B)
            got = term_scores(idf[term], TFS[i : i + 1], norm, method, K1)
            assert float(got[0]) == pytest.approx(textbook(method, int(TFS[i]), int(DF[term]), DL[chunk]), rel=1e-6)


def test_scores_are_float32_and_a_term_in_no_chunk_weighs_nothing() -> None:
    idf = idfs(DF, 3, "atire")  # ATIRE's ln(N / df) would be infinite for df = 0
    assert idf.dtype == np.float32 and idf[3] == 0.0 and np.all(idf[DF > 0] > 0)
    norm = length_norm(np.array([2.0, 3.0]), AVGDL, K1, B)
    assert term_scores(idf[0], TFS[:2], norm, "lucene", K1).dtype == np.float32
