"""Training Sextant's own cross-encoder reranker (``sextant-train-reranker``)."""
