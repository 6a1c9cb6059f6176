"""The Index Lab's indexes, written here: exact ``flat``, ``hnsw``, ``ivfpq`` and ``ivfpq_rerank``.

All follow ``base.AnnIndex``; ``create`` and ``load`` pick the class by name. FAISS and hnswlib
appear only in the benchmarks and tests, as reference columns.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal, get_args

from sextant.kb.ann.base import AnnIndex, IndexFormatError, Metric
from sextant.kb.refusal import KnowledgeBaseError

Kind = Literal["flat", "hnsw", "ivfpq", "ivfpq_rerank"]
KINDS: tuple[Kind, ...] = get_args(Kind)


def index_class(kind: str) -> type[AnnIndex]:
    """The class of an index kind (imported on demand: numba compiles or loads kernels on import).

    Raises:
        ValueError: an unknown kind.
        KnowledgeBaseError: the kind needs numba (the ``lab`` extra), which is not installed.
    """
    try:
        return _index_class(kind)
    except ModuleNotFoundError as exc:
        if exc.name != "numba":
            raise
        raise KnowledgeBaseError(
            f"the {kind} index is compiled with numba, which is not installed: pip install 'sextant-kb[lab]'"
        ) from exc


def _index_class(kind: str) -> type[AnnIndex]:
    if kind == "flat":
        from sextant.kb.ann.flat import FlatIndex

        return FlatIndex
    if kind == "hnsw":
        from sextant.kb.ann.hnsw import HNSWIndex

        return HNSWIndex
    if kind in ("ivfpq", "ivfpq_rerank"):
        from sextant.kb.ann.ivfpq import IVFPQIndex, IVFPQRerankIndex

        return IVFPQIndex if kind == "ivfpq" else IVFPQRerankIndex
    raise ValueError(f"unknown index kind {kind!r}; choose one of {', '.join(KINDS)}")


def create(kind: str, dim: int, metric: Metric = "ip", **params: Any) -> AnnIndex:
    """An empty index of ``kind``."""
    return index_class(kind)(dim, metric, **params)  # type: ignore[call-arg]


def load(folder: Path, *, mmap: bool = False) -> AnnIndex:
    """Whatever index ``folder`` holds (its arrays mapped read-only with ``mmap``).

    Raises:
        IndexFormatError: nothing readable there.
    """
    try:
        kind = json.loads((folder / "meta.json").read_text(encoding="utf-8"))["kind"]
    except (OSError, ValueError, KeyError) as exc:
        raise IndexFormatError(f"no saved index at {folder}: {exc}") from exc
    return index_class(kind).load(folder, mmap=mmap)
