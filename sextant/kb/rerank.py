"""Cross-encoder reranking, optional and never fatal.

A configured cross-encoder that cannot be loaded (no trained one is available offline) is reported
once on stderr and in ``kb_stats``; search then keeps the fusion order.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RerankerState:
    """What ``kb_stats`` reports: which model, and whether it is in use."""

    name: str | None
    active: bool
    detail: str


class Reranker:
    """A sentence-transformers CrossEncoder scoring (query, passage) pairs as probabilities."""

    def __init__(self, name: str | None, *, threads: int = 1) -> None:
        self.name = name
        self._model: Any = None
        if not name:
            self.state = RerankerState(None, False, "not configured (SEXTANT_RERANKER unset): ordered by fusion")
            return
        try:
            import torch
            from sentence_transformers import CrossEncoder

            torch.set_num_threads(threads)
            local = Path(name).expanduser()
            self._model = CrossEncoder(str(local) if local.is_dir() else name, device="cpu")
        except Exception as exc:  # any load failure must leave search working, by fusion
            detail = f"could not be loaded ({type(exc).__name__}: {exc}); ordered by fusion instead"
            log.warning("reranker %r %s", name, detail)
            self.state = RerankerState(name, False, detail)
            return
        self.state = RerankerState(name, True, "in use: top fused candidates are re-scored")

    @property
    def active(self) -> bool:
        return self._model is not None

    def score(self, query: str, passages: Sequence[str]) -> npt.NDArray[np.float32]:
        """Relevance probabilities in [0, 1], one per passage (a sigmoid over the model's logit)."""
        if self._model is None:
            raise RuntimeError("no reranker is loaded; check .active first")
        if not passages:
            return np.zeros(0, np.float32)
        import torch

        scores = self._model.predict(
            [(query, p) for p in passages], activation_fn=torch.nn.Sigmoid(), show_progress_bar=False
        )
        return np.asarray(scores, dtype=np.float32).reshape(-1)
