"""What every index shares: the protocol, the distance convention, input checks and the on-disk format.

Vocabulary as in FAISS: ``xb`` the base vectors (n, d), ``xq`` the queries (nq, d), ``D`` and ``I``
the (nq, k) scores and ids of the answers, best first. ``D`` is the inner product (higher is
better) for ``metric="ip"`` and the squared L2 distance (lower is better) for ``metric="l2"``;
inside the kernels both are a *distance*, lower is better (``-ip`` or ``l2``). A row with fewer
than ``k`` answers is padded with id ``-1`` and the worst possible score.

On disk an index is a folder: ``meta.json`` (kind, format version, metric, dimension, parameters)
and one ``.npy`` per array, loaded with ``allow_pickle=False``. ``meta.json`` is written last, so
a folder without it is an interrupted save.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol, Self

import numpy as np
import numpy.typing as npt

Metric = Literal["ip", "l2"]
FloatArray = npt.NDArray[np.float32]
IdArray = npt.NDArray[np.int64]
FORMAT_VERSION = 1
METRIC_CODES: dict[Metric, int] = {"ip": 0, "l2": 1}  # what the numba kernels branch on


class AnnIndex(Protocol):
    """One protocol for every index, exact or approximate."""

    kind: ClassVar[str]
    metric: Metric
    dim: int

    def add(self, xb: FloatArray, ids: IdArray) -> None:
        """Add vectors under caller-chosen int64 ids (each id at most once)."""

    def search(self, xq: FloatArray, k: int) -> tuple[FloatArray, IdArray]:
        """The ``k`` best answers per query as ``(D, I)``."""
        ...

    def remove(self, ids: IdArray) -> int:
        """Remove these ids (unknown ones are ignored); returns how many were removed."""
        ...

    def save(self, folder: Path) -> None:
        """Write the index to ``folder`` (replaced if present)."""

    @classmethod
    def load(cls, folder: Path, *, mmap: bool = False) -> Self:
        """Read an index written by ``save``; with ``mmap``, its arrays mapped read-only (search only: processes
        that map one file share its pages)."""
        ...

    def __len__(self) -> int: ...

    def nbytes(self) -> int:
        """Bytes held by the index's arrays (what search needs in memory)."""
        ...

    def params(self) -> dict[str, Any]:
        """The knobs it was built with, as keyword arguments of its constructor."""
        ...


class IndexFormatError(ValueError):
    """A saved index that this version cannot read; rebuild it from the vectors."""


def as_vectors(x: npt.ArrayLike, dim: int) -> FloatArray:
    """``x`` as a C-contiguous float32 (n, dim) array.

    Raises:
        ValueError: the shape does not fit.
    """
    arr = np.ascontiguousarray(x, dtype=np.float32)
    if arr.ndim != 2 or arr.shape[1] != dim:
        raise ValueError(f"expected vectors of shape (n, {dim}), got {arr.shape}")
    return arr


def as_ids(ids: npt.ArrayLike, n: int | None = None) -> IdArray:
    """``ids`` as int64, non-negative and distinct (and ``n`` of them when given).

    Raises:
        ValueError: wrong count, negative or repeated ids.
    """
    arr = np.ascontiguousarray(ids, dtype=np.int64).reshape(-1)
    if n is not None and arr.shape[0] != n:
        raise ValueError(f"expected {n} ids, got {arr.shape[0]}")
    if arr.size and arr.min() < 0:
        raise ValueError("ids must be non-negative (-1 marks a missing answer)")
    if np.unique(arr).size != arr.size:
        raise ValueError("ids must be distinct")
    return arr


def worst(metric: Metric) -> float:
    """The score that pads a short answer row."""
    return -np.inf if metric == "ip" else np.inf


def scores_from_distances(dist: FloatArray, metric: Metric) -> FloatArray:
    """Kernel distances (lower is better) as the metric's own scores."""
    return -dist if metric == "ip" else dist


def top_k(scores: FloatArray, k: int) -> tuple[IdArray, IdArray]:
    """Row and column indexes of the ``k`` largest scores of each row, largest first (``k <= columns``)."""
    b, n = scores.shape
    cols = np.argpartition(scores, n - k, axis=1)[:, n - k :] if k < n else np.tile(np.arange(n), (b, 1))
    rows = np.arange(b)[:, None]
    order = np.argsort(-scores[rows, cols], axis=1, kind="stable")
    return rows, np.take_along_axis(cols, order, axis=1)


def grown(arr: npt.NDArray[Any], need: int, fill: float | int = 0) -> npt.NDArray[Any]:
    """``arr`` with room for at least ``need`` rows, doubling so that appends are amortised O(1)."""
    if arr.shape[0] >= need:
        return arr
    out = np.full((max(need, 2 * arr.shape[0], 16), *arr.shape[1:]), fill, dtype=arr.dtype)
    out[: arr.shape[0]] = arr
    return out


def write_folder(folder: Path, kind: str, meta: dict[str, Any], arrays: dict[str, npt.NDArray[Any]]) -> None:
    """Write arrays, then ``meta.json``, into a fresh folder that replaces ``folder``."""
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for name, arr in arrays.items():
        np.save(tmp / f"{name}.npy", np.ascontiguousarray(arr), allow_pickle=False)
    (tmp / "meta.json").write_text(
        json.dumps({"kind": kind, "format": FORMAT_VERSION, **meta}, indent=1, sort_keys=True), encoding="utf-8"
    )
    old = folder.with_name(folder.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if folder.exists():
        os.replace(folder, old)
    os.replace(tmp, folder)
    shutil.rmtree(old, ignore_errors=True)


def read_folder(folder: Path, kind: str, *, mmap: bool = False) -> tuple[dict[str, Any], dict[str, npt.NDArray[Any]]]:
    """``meta.json`` and every array of a folder written by ``write_folder``, mapped read-only with ``mmap``.

    Raises:
        IndexFormatError: missing, of another kind, or written by a newer format.
    """
    meta_path = folder / "meta.json"
    if not meta_path.is_file():
        raise IndexFormatError(f"no saved index at {folder}")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    if meta.get("kind") != kind:
        raise IndexFormatError(f"{folder} holds a {meta.get('kind')!r} index, not {kind!r}")
    if int(meta.get("format", 0)) != FORMAT_VERSION:
        raise IndexFormatError(f"{folder} has format {meta.get('format')}; this version reads {FORMAT_VERSION}")
    mode: Literal["r"] | None = "r" if mmap else None
    arrays = {p.stem: np.load(p, mmap_mode=mode, allow_pickle=False) for p in folder.glob("*.npy")}
    return meta, arrays
