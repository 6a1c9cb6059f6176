"""BM25's analyzer: the same words as ``bm25s.tokenize`` (stopwords, Snowball), and the query's words a passage
holds, as the query spells them."""

from __future__ import annotations

import bm25s
import pytest
import Stemmer
from hypothesis import given, settings
from hypothesis import strategies as st

from sextant.kb.analyzer import matched_terms, tokenize


def bm25s_tokens(text: str) -> list[str]:
    out = bm25s.tokenize(
        [text], stopwords="en", stemmer=Stemmer.Stemmer("english"), return_ids=False, show_progress=False
    )
    return list(out[0])


@pytest.mark.parametrize(
    "text",
    [
        "The Running dogs, and THE cats!",
        "a I x y_z 42 4.2 e-mail café naïve İstanbul ﬁnance",
        "it is not the thing that was",
        "",
        "über-schnell déjà vu — 中文 测试",
    ],
)
def test_tokenize_is_bm25s_tokenize(text: str) -> None:
    assert tokenize(text) == bm25s_tokens(text)


@settings(max_examples=200, derandomize=True, database=None)
@given(st.text(max_size=60))
def test_tokenize_is_bm25s_tokenize_on_any_text(text: str) -> None:
    assert tokenize(text) == bm25s_tokens(text)


def test_tokenize_stems_and_drops_stopwords() -> None:
    assert tokenize("The cats are Running into the garden") == ["cat", "run", "garden"]


def test_matched_terms_reports_surface_words() -> None:
    text = "The dog runs after two cats in the garden."
    assert matched_terms("Running CATS and the Dogs, running!", text) == ["Running", "CATS", "Dogs"]
    assert matched_terms("the of and", text) == []
    assert matched_terms("zebra", text) == []
