"""HNSW (Malkov & Yashunin, TPAMI 2018): a layered proximity graph, searched greedily from the top layer.

``M`` links per node on the upper layers and ``M0 = 2 M`` on layer 0 (the paper's and hnswlib's
choice); a node's top layer is ``floor(-ln U * mL)`` with ``mL = 1 / ln M``; ``ef_construction``
candidates are searched when a node is inserted and ``ef_search`` when querying. Removal marks a
node deleted (it still routes walks but is never returned, as in hnswlib); once more than half
the nodes are deleted the graph is rebuilt from the live ones. The walks are in ``hnsw_graph``.

One addition to the paper: the heuristic can prune the last link into a node, leaving it
unreachable (hnswlib and FAISS leave such nodes be; about 3 in 10,000 on clustered data). After
each ``add`` every such node is linked from its nearest reachable node, taking the slot of a
link whose target has another way in, so every node can be found.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, ClassVar, Self

import numpy as np
import numpy.typing as npt

from sextant.kb.ann import hnsw_graph
from sextant.kb.ann.base import (
    METRIC_CODES,
    FloatArray,
    IdArray,
    Metric,
    as_ids,
    as_vectors,
    grown,
    read_folder,
    scores_from_distances,
    worst,
    write_folder,
)


class HNSWIndex:
    """Hierarchical navigable small-world graph over the stored vectors."""

    kind: ClassVar[str] = "hnsw"

    def __init__(
        self, dim: int, metric: Metric = "ip", *, M: int = 16, ef_construction: int = 200, ef_search: int = 64,
        seed: int = 0,
    ) -> None:  # fmt: skip
        if M < 2:
            raise ValueError("M must be at least 2")
        self.dim = dim
        self.metric: Metric = metric
        self.M, self.M0 = M, 2 * M
        self.ef_construction = ef_construction
        self.ef_search = ef_search
        self.seed = seed
        self._n = 0
        self._inserted = 0  # nodes ever inserted: seeds the level draws of the next add
        self._xb = np.zeros((0, dim), np.float32)
        self._labels = np.zeros(0, np.int64)
        self._levels = np.zeros(0, np.int32)
        self._deleted = np.zeros(0, np.bool_)
        self._links0 = np.zeros((0, self.M0), np.int32)
        self._count0 = np.zeros(0, np.int32)
        self._up_row = np.zeros(0, np.int64)
        self._links_up = np.zeros((0, M), np.int32)
        self._count_up = np.zeros(0, np.int32)
        self._up_used = 0
        self._state = np.array([-1, -1], np.int64)  # entry point, top layer
        self._removed = 0
        self._node_of: dict[int, int] | None = {}  # label -> node; None: not built yet (a mapped index)

    @classmethod
    def build(cls, xb: FloatArray, ids: IdArray, metric: Metric = "ip", **params: Any) -> Self:
        index = cls(xb.shape[1], metric, **params)
        index.add(xb, ids)
        return index

    def params(self) -> dict[str, Any]:
        return {"M": self.M, "ef_construction": self.ef_construction, "ef_search": self.ef_search, "seed": self.seed}

    def __len__(self) -> int:
        return self._n - self._removed

    @property
    def deleted_count(self) -> int:
        return self._removed

    @property
    def _node(self) -> dict[int, int]:
        """Label -> node of the live nodes, built on first need: an index mapped for search never needs it."""
        if self._node_of is None:
            live = np.flatnonzero(~self._deleted[: self._n])
            self._node_of = dict(zip(self._labels[live].tolist(), live.tolist(), strict=True))
        return self._node_of

    def add(self, xb: FloatArray, ids: IdArray) -> None:
        """Insert vectors one by one (Algorithm 1).

        Raises:
            ValueError: bad shapes, or an id already present.
        """
        xb = as_vectors(xb, self.dim)
        ids = as_ids(ids, xb.shape[0])
        if any(int(i) in self._node for i in ids):
            raise ValueError("an id is already in the index; remove it first")
        n0, n1 = self._n, self._n + xb.shape[0]
        rng = np.random.default_rng([self.seed, self._inserted])
        levels = np.floor(-np.log(1.0 - rng.random(xb.shape[0])) / math.log(self.M)).astype(np.int32)
        self._xb = grown(self._xb, n1)
        self._labels = grown(self._labels, n1)
        self._levels = grown(self._levels, n1)
        self._deleted = grown(self._deleted, n1)
        self._links0 = grown(self._links0, n1, -1)
        self._count0 = grown(self._count0, n1)
        self._up_row = grown(self._up_row, n1, -1)
        rows = np.cumsum(levels) - levels + self._up_used  # first upper row of each new node
        need_up = self._up_used + int(levels.sum())
        self._links_up = grown(self._links_up, need_up, -1)
        self._count_up = grown(self._count_up, need_up)
        self._xb[n0:n1], self._labels[n0:n1], self._levels[n0:n1] = xb, ids, levels
        self._up_row[n0:n1] = np.where(levels > 0, rows, -1)
        self._up_used = need_up
        self._n = n1
        self._inserted += xb.shape[0]
        self._node.update((int(i), n0 + r) for r, i in enumerate(ids))
        hnsw_graph.insert_range(
            n0, n1, self._levels, self._xb, self._links0, self._count0, self._up_row, self._links_up,
            self._count_up, self._state, self.M, self.M0, self.ef_construction, METRIC_CODES[self.metric],
        )  # fmt: skip
        self._reconnect()

    def search(self, xq: FloatArray, k: int, ef_search: int | None = None) -> tuple[FloatArray, IdArray]:
        xq = as_vectors(xq, self.dim)
        dist, nodes = self._walk(xq, k, ef_search or self.ef_search, skip_deleted=self.deleted_count > 0)
        found = nodes >= 0
        D = np.where(found, scores_from_distances(dist, self.metric), worst(self.metric)).astype(np.float32)
        I = np.where(found, self._labels[np.maximum(nodes, 0)], -1) if self._n else nodes
        return D, I

    def _walk(self, xq: FloatArray, k: int, ef: int, *, skip_deleted: bool) -> tuple[FloatArray, IdArray]:
        """Kernel distances and node numbers of the ``k`` nearest nodes found."""
        return hnsw_graph.search_batch(
            xq, k, ef, self._xb, self._links0, self._count0, self._up_row, self._links_up, self._count_up,
            self._deleted, skip_deleted, self._state, METRIC_CODES[self.metric],
        )  # fmt: skip

    def _reconnect(self) -> None:
        """Link every node unreachable on layer 0 from its nearest reachable node (see the module note)."""
        seen = self._seen()
        for _ in range(4):  # only a last-resort replaced link can strand a node; the next pass fixes that
            orphans = np.flatnonzero(~seen)
            if not orphans.size:
                return
            for u in orphans:
                if not seen[u]:  # else reached through an orphan linked earlier in this pass
                    self._link_orphan(int(u), seen)
                    hnsw_graph.mark_reachable(u, seen, self._links0, self._count0)
            seen = self._seen()

    def _link_orphan(self, u: int, seen: npt.NDArray[np.bool_]) -> None:
        """Add a link to ``u`` from the nearest reachable node with a free slot; failing any, replace the
        farthest link of ``u``'s nearest reachable node."""
        _, near = self._walk(self._xb[u : u + 1], self.M0, self.M0, skip_deleted=False)
        near = near[0][near[0] >= 0]
        near = near[seen[near]]  # a walk can land on u itself through an upper layer
        free = near[self._count0[near] < self.M0]
        if not free.size:
            anywhere = np.flatnonzero(seen & (self._count0[: self._n] < self.M0))
            free = anywhere[np.argsort(self._distances(self._xb[u], anywhere))[:1]]
        if free.size:
            v = int(free[0])
            self._links0[v, self._count0[v]] = u
            self._count0[v] += 1
        elif near.size:
            v = int(near[0])
            far = int(np.argmax(self._distances(self._xb[v], self._links0[v, : self._count0[v]])))
            self._links0[v, far] = u

    def _distances(self, q: FloatArray, nodes: npt.NDArray[np.integer[Any]]) -> FloatArray:
        x = self._xb[nodes]
        if self.metric == "ip":
            return -(x @ q)
        return np.einsum("ij,ij->i", x - q, x - q)

    def _seen(self) -> npt.NDArray[np.bool_]:
        seen = np.zeros(self._n, np.bool_)
        if self._n:
            hnsw_graph.mark_reachable(self._state[0], seen, self._links0, self._count0)
        return seen

    def remove(self, ids: IdArray) -> int:
        nodes = [self._node.pop(int(i)) for i in np.asarray(ids).reshape(-1) if int(i) in self._node]
        self._deleted[nodes] = True
        self._removed += len(nodes)
        if self.deleted_count * 2 > self._n:
            self._rebuild()
        return len(nodes)

    def _rebuild(self) -> None:
        live = np.flatnonzero(~self._deleted[: self._n])
        xb, labels = self._xb[live].copy(), self._labels[live].copy()
        inserted = self._inserted
        self.__init__(self.dim, self.metric, **self.params())  # type: ignore[misc]
        self._inserted = inserted
        self.add(xb, labels)

    def save(self, folder: Path) -> None:
        n, up = self._n, self._up_used
        meta = {
            "metric": self.metric, "dim": self.dim, "params": self.params(), "inserted": self._inserted,
            "entry": int(self._state[0]), "top_layer": int(self._state[1]),
        }  # fmt: skip
        arrays: dict[str, npt.NDArray[Any]] = {
            "xb": self._xb[:n], "labels": self._labels[:n], "levels": self._levels[:n], "deleted": self._deleted[:n],
            "links0": self._links0[:n], "count0": self._count0[:n], "up_row": self._up_row[:n],
            "links_up": self._links_up[:up], "count_up": self._count_up[:up],
        }  # fmt: skip
        write_folder(folder, self.kind, meta, arrays)

    @classmethod
    def load(cls, folder: Path, *, mmap: bool = False) -> Self:
        meta, a = read_folder(folder, cls.kind, mmap=mmap)
        index = cls(int(meta["dim"]), meta["metric"], **meta["params"])
        index._xb, index._labels, index._levels, index._deleted = a["xb"], a["labels"], a["levels"], a["deleted"]
        index._links0, index._count0, index._up_row = a["links0"], a["count0"], a["up_row"]
        index._links_up, index._count_up = a["links_up"], a["count_up"]
        index._n, index._up_used, index._inserted = a["xb"].shape[0], a["links_up"].shape[0], int(meta["inserted"])
        index._state = np.array([meta["entry"], meta["top_layer"]], np.int64)
        index._removed, index._node_of = int(np.count_nonzero(a["deleted"])), None
        return index

    def nbytes(self) -> int:
        n, up = self._n, self._up_used
        parts = (self._xb[:n], self._labels[:n], self._levels[:n], self._links0[:n], self._count0[:n])
        return int(sum(p.nbytes for p in parts) + up * (self.M + 1) * 4 + n * 9)

    def check(self) -> list[str]:
        """Integrity problems of the graph (empty when sound): self loops, duplicate or dangling links,
        degrees over ``M_max``, links to nodes absent from a layer, nodes unreachable from the entry point."""
        problems: list[str] = []
        n = self._n
        for layer in range(max(int(self._state[1]), -1) + 1):
            on_layer = np.flatnonzero(self._levels[:n] >= layer)
            m_max = self.M0 if layer == 0 else self.M
            for node in on_layer:
                links = self._links_of(int(node), layer)
                if links.size > m_max:
                    problems.append(f"layer {layer}: node {node} has {links.size} links > M_max {m_max}")
                if (links == node).any():
                    problems.append(f"layer {layer}: node {node} links to itself")
                if np.unique(links).size != links.size:
                    problems.append(f"layer {layer}: node {node} has duplicate links")
                if links.size and ((links < 0) | (links >= n)).any():
                    problems.append(f"layer {layer}: node {node} has a dangling link")
                elif links.size and (self._levels[links] < layer).any():
                    problems.append(f"layer {layer}: node {node} links to a node below this layer")
        if n:
            unreachable = n - int(self._seen().sum())
            if unreachable:
                problems.append(f"layer 0: {unreachable} of {n} nodes unreachable from the entry point")
        return problems

    def _links_of(self, node: int, layer: int) -> IdArray:
        if layer == 0:
            return self._links0[node, : self._count0[node]].astype(np.int64)
        row = int(self._up_row[node]) + layer - 1
        return self._links_up[row, : self._count_up[row]].astype(np.int64)
