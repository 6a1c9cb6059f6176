"""Memoise a searcher's retrieval calls, so a sweep re-runs only what follows retrieval."""

from __future__ import annotations

import functools

import numpy as np

from sextant.kb.search import Searcher


def memoise(searcher: Searcher) -> None:
    """Cache embedding and both retrievers per query, so variants differ only after retrieval."""
    searcher.embedder.embed_query = functools.lru_cache(maxsize=None)(searcher.embedder.embed_query)  # type: ignore[method-assign]
    query = searcher.store.query
    dense = functools.lru_cache(maxsize=None)(lambda key, n: query(np.frombuffer(key, np.float32), n))
    searcher.store.query = lambda v, n, doc_ids=None: dense(v.astype(np.float32).tobytes(), n)  # type: ignore[method-assign]
    lexical_search = searcher.lexical.search
    searcher.lexical.search = functools.lru_cache(maxsize=None)(  # type: ignore[method-assign]
        lambda q, k, allowed_ids=None: lexical_search(q, k, allowed_ids)
    )
