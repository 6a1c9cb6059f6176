"""The HNSW walks on small hand-built graphs, where the right answer can be read off the picture.

Arrays have ``HNSWIndex``'s dtypes (int32 links and counts, int64 rows and state), so the kernels
run as the index runs them. Points lie on a line, metric L2 (code 1): distance is the squared gap.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sextant.kb.ann import hnsw_graph
from sextant.kb.ann.base import METRIC_CODES
from sextant.kb.ann.flat import FlatIndex

L2 = METRIC_CODES["l2"]


@dataclass
class Graph:
    xb: np.ndarray
    links0: np.ndarray
    count0: np.ndarray
    up_row: np.ndarray
    links_up: np.ndarray
    count_up: np.ndarray
    state: np.ndarray


def chain(n: int, m0: int = 2) -> Graph:
    """Layer 0 only: points 0, 1, ..., n-1 on a line, each linked to its neighbours on it."""
    links0 = np.full((n, m0), -1, np.int32)
    count0 = np.zeros(n, np.int32)
    for i in range(n):
        nb = [j for j in (i - 1, i + 1) if 0 <= j < n]
        links0[i, : len(nb)] = nb
        count0[i] = len(nb)
    xb = np.arange(n, dtype=np.float32).reshape(n, 1)
    empty_up = np.zeros((0, m0), np.int32)
    return Graph(xb, links0, count0, np.full(n, -1, np.int64), empty_up, np.zeros(0, np.int32), np.array([0, 0]))


def search(g: Graph, xq: np.ndarray, k: int, ef: int, deleted: np.ndarray | None = None) -> tuple:
    deleted = np.zeros(g.xb.shape[0], np.bool_) if deleted is None else deleted
    return hnsw_graph.search_batch(
        xq.astype(np.float32), k, ef, g.xb, g.links0, g.count0, g.up_row, g.links_up, g.count_up, deleted,
        bool(deleted.any()), g.state, L2,
    )  # fmt: skip


def test_greedy_walks_to_the_nearest_node_along_the_links() -> None:
    g = chain(6)
    q = np.array([3.8], np.float32)
    assert hnsw_graph.greedy(q, 0, 0, g.xb, g.links0, g.count0, g.up_row, g.links_up, g.count_up, L2) == 4


def test_links_of_reads_layer_zero_and_the_upper_rows() -> None:
    g = chain(4)
    assert hnsw_graph.links_of(1, 0, g.links0, g.count0, g.up_row, g.links_up, g.count_up).tolist() == [0, 2]
    up_row = np.array([-1, 0, -1, -1], np.int64)  # node 1 has layers 1 and 2, in rows 0 and 1
    links_up = np.array([[3, -1], [2, 0]], np.int32)
    count_up = np.array([1, 2], np.int32)
    assert hnsw_graph.links_of(1, 1, g.links0, g.count0, up_row, links_up, count_up).tolist() == [3]
    assert hnsw_graph.links_of(1, 2, g.links0, g.count0, up_row, links_up, count_up).tolist() == [2, 0]


def test_search_with_ef_at_least_n_is_exact_and_best_first() -> None:
    g = chain(12)
    xq = np.array([[2.2], [9.6], [-3.0]], np.float32)
    dist, nodes = search(g, xq, 4, 12)
    D0, I0 = FlatIndex.build(g.xb, np.arange(12), "l2").search(xq, 4)
    np.testing.assert_array_equal(nodes, I0)
    np.testing.assert_allclose(dist, D0, rtol=1e-4, atol=1e-4)  # flat expands |q - x|^2: last bits differ


def test_deleted_nodes_are_walked_through_but_not_returned() -> None:
    g = chain(6)
    deleted = np.zeros(6, np.bool_)
    deleted[[1, 2]] = True  # the only path from the entry point 0 to 3..5 runs through them
    _, nodes = search(g, np.array([[1.6]], np.float32), 3, 6, deleted)
    assert nodes.tolist() == [[3, 0, 4]]  # squared gaps 1.96, 2.56, 5.76


def test_an_empty_graph_and_a_short_answer_are_padded() -> None:
    g = chain(3)
    dist, nodes = search(g, np.array([[0.0]], np.float32), 5, 5)
    assert nodes.tolist() == [[0, 1, 2, -1, -1]] and np.isinf(dist[0, 3:]).all()
    g.state[:] = -1  # nothing inserted yet
    _, nodes = search(g, np.array([[0.0]], np.float32), 2, 5)
    assert nodes.tolist() == [[-1, -1]]


def test_the_heuristic_keeps_a_candidate_only_if_it_is_nearer_the_base_than_every_one_kept() -> None:
    # Base at 0; candidates at 1, 2 and -1 (squared distances 1, 4, 1), nearest first.
    xb = np.array([[0.0], [1.0], [2.0], [-1.0]], np.float32)
    cand_k = np.array([1.0, 1.0, 4.0], np.float32)
    cand_i = np.array([1, 3, 2], np.int64)
    out = np.empty(4, np.int64)
    # 2 lies behind 1 (nearer 1 than the base): dropped; -1 is another direction: kept.
    assert hnsw_graph.select_heuristic(cand_k, cand_i, 3, 2, xb, L2, out) == 2
    assert out[:2].tolist() == [1, 3]
    assert hnsw_graph.select_heuristic(cand_k, cand_i, 3, 3, xb, L2, out) == 3  # room for all: all kept
    assert out[:3].tolist() == [1, 3, 2]


def test_mark_reachable_counts_what_layer_zero_links_reach() -> None:
    g = chain(6)
    g.count0[2] = 1  # 2 -> 1 only, and 3 -> 2 still: 3, 4, 5 unreachable from 0
    seen = np.zeros(6, np.bool_)
    assert hnsw_graph.mark_reachable(0, seen, g.links0, g.count0) == 3
    assert seen.tolist() == [True, True, True, False, False, False]
    assert hnsw_graph.mark_reachable(1, seen, g.links0, g.count0) == 0  # already seen
    assert hnsw_graph.mark_reachable(4, seen, g.links0, g.count0) == 3  # 4 -> 3, 5 are new
    assert seen.all()


def test_insert_range_on_layer_zero_links_every_node_and_search_is_then_exact() -> None:
    n, m = 40, 4
    xb = np.random.default_rng(8).standard_normal((n, 3)).astype(np.float32)
    g = Graph(
        xb, np.full((n, 2 * m), -1, np.int32), np.zeros(n, np.int32), np.full(n, -1, np.int64),
        np.zeros((0, m), np.int32), np.zeros(0, np.int32), np.array([-1, -1]),
    )  # fmt: skip
    levels = np.zeros(n, np.int32)
    hnsw_graph.insert_range(
        0, n, levels, g.xb, g.links0, g.count0, g.up_row, g.links_up, g.count_up, g.state, m, 2 * m, 16, L2
    )
    assert g.state.tolist() == [0, 0]  # the first node is the entry point
    assert (g.count0 >= 1).all() and (g.count0 <= 2 * m).all()
    for i in range(n):
        links = g.links0[i, : g.count0[i]]
        assert i not in links and np.unique(links).size == links.size
    seen = np.zeros(n, np.bool_)
    assert hnsw_graph.mark_reachable(0, seen, g.links0, g.count0) == n
    _, nodes = search(g, xb[:10] + 0.05, 5, n)
    _, I0 = FlatIndex.build(xb, np.arange(n), "l2").search(xb[:10] + 0.05, 5)
    np.testing.assert_array_equal(nodes, I0)
