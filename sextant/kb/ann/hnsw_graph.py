"""The HNSW graph walks, compiled with numba: layer search, neighbour selection, insertion, batch search.

Malkov & Yashunin, "Efficient and robust approximate nearest neighbor search using Hierarchical
Navigable Small World graphs" (TPAMI 2018): Algorithm 2 (SEARCH-LAYER), Algorithm 4 (the
neighbour-selection heuristic, without the optional extensions, as hnswlib does it) and
Algorithm 1 (INSERT). A walk follows one pointer at a time, which NumPy cannot vectorise: run as
plain Python the same code is ~900x slower (``learning/ann-comparison.md``), hence numba.

The graph is plain arrays (see ``HNSWIndex``): layer 0 links in ``links0`` (n, M0) with their
counts in ``count0``; the links of node ``i`` at layer ``l >= 1`` in row ``up_row[i] + l - 1`` of
``links_up`` (rows, M) with counts in ``count_up``; ``state = [entry point, top layer]``.
Distances are ``distance.distance``: lower is better.
"""

from __future__ import annotations

import numba
import numpy as np

from sextant.kb.ann.distance import distance
from sextant.kb.ann.heap import drain_ascending, pop, push, push_bounded


@numba.njit(cache=True, nogil=True)
def links_of(node, layer, links0, count0, up_row, links_up, count_up):  # type: ignore[no-untyped-def]
    if layer == 0:
        return links0[node, : count0[node]]
    row = up_row[node] + layer - 1
    return links_up[row, : count_up[row]]


@numba.njit(cache=True, nogil=True)
def greedy(q, cur, layer, xb, links0, count0, up_row, links_up, count_up, metric):  # type: ignore[no-untyped-def]
    """Walk to the nearest neighbour of ``q`` on one layer (SEARCH-LAYER with ef = 1)."""
    cur_d = distance(q, xb, cur, metric)
    changed = True
    while changed:
        changed = False
        nb = links_of(cur, layer, links0, count0, up_row, links_up, count_up)
        for t in range(nb.shape[0]):
            d = distance(q, xb, nb[t], metric)
            if d < cur_d:
                cur_d, cur, changed = d, nb[t], True
    return cur


@numba.njit(cache=True, nogil=True)
def search_layer(  # type: ignore[no-untyped-def]
    q, ep, also, ef, layer, xb, links0, count0, up_row, links_up, count_up, deleted, skip_deleted, metric,
    visit, tag, res_k, res_i, cand_k, cand_i,
):  # fmt: skip
    """SEARCH-LAYER from entry point ``ep`` (and ``also``, when not -1): the ``ef`` nearest found, as a max-heap
    in ``res_*``; returns its size.

    Deleted nodes are walked through but not returned when ``skip_deleted`` (as hnswlib does).
    """
    n_cand = n_res = 0
    for start in (ep, also):
        if start < 0 or visit[start] == tag:
            continue
        d = distance(q, xb, start, metric)
        visit[start] = tag
        n_cand = push(cand_k, cand_i, n_cand, -d, start)  # min-heap by distance, as a max-heap of -d
        if not (skip_deleted and deleted[start]):
            n_res = push(res_k, res_i, n_res, d, start)
    lower = res_k[0] if n_res > 0 else np.inf
    while n_cand > 0:
        c_d, c = -cand_k[0], cand_i[0]
        if c_d > lower and n_res >= ef:
            break
        n_cand = pop(cand_k, cand_i, n_cand)
        nb = links_of(c, layer, links0, count0, up_row, links_up, count_up)
        for t in range(nb.shape[0]):
            e = nb[t]
            if visit[e] == tag:
                continue
            visit[e] = tag
            d = distance(q, xb, e, metric)
            if n_res < ef or d < lower:
                n_cand = push(cand_k, cand_i, n_cand, -d, e)
                if not (skip_deleted and deleted[e]):
                    n_res = push_bounded(res_k, res_i, n_res, ef, d, e)
                if n_res > 0:
                    lower = res_k[0]
    return n_res


@numba.njit(cache=True, nogil=True)
def select_heuristic(cand_k, cand_i, n, m, xb, metric, out):  # type: ignore[no-untyped-def]
    """Algorithm 4: from candidates sorted nearest first, keep one only if it is nearer the base than
    to every one already kept, so links spread over directions instead of piling into one cluster."""
    if n <= m:
        out[:n] = cand_i[:n]
        return n
    kept = 0
    for a in range(n):
        if kept >= m:
            break
        c = cand_i[a]
        good = True
        for b in range(kept):
            if distance(xb[c], xb, out[b], metric) < cand_k[a]:
                good = False
                break
        if good:
            out[kept] = c
            kept += 1
    return kept


@numba.njit(cache=True, nogil=True)
def _connect(s, new, layer, mmax, xb, links0, count0, up_row, links_up, count_up, metric, tmp_k, tmp_i, kept_buf):  # type: ignore[no-untyped-def]
    """Add the link ``s -> new``; a full list is re-selected by the heuristic among its links and ``new``."""
    if layer == 0:
        links, counts, row = links0, count0, s
    else:
        links, counts, row = links_up, count_up, up_row[s] + layer - 1
    c = counts[row]
    if c < mmax:
        links[row, c] = new
        counts[row] = c + 1
        return
    for t in range(c):
        tmp_i[t] = links[row, t]
        tmp_k[t] = distance(xb[s], xb, links[row, t], metric)
    tmp_i[c] = new
    tmp_k[c] = distance(xb[s], xb, new, metric)
    order = np.argsort(tmp_k[: c + 1], kind="mergesort")
    sorted_k = tmp_k[: c + 1][order]
    sorted_i = tmp_i[: c + 1][order]
    kept = select_heuristic(sorted_k, sorted_i, c + 1, mmax, xb, metric, kept_buf)
    links[row, :kept] = kept_buf[:kept]
    counts[row] = kept


@numba.njit(cache=True, nogil=True)
def insert_range(  # type: ignore[no-untyped-def]
    lo, hi, levels, xb, links0, count0, up_row, links_up, count_up, state, m, m0, ef_construction, metric,
):  # fmt: skip
    """Algorithm 1 for nodes ``lo .. hi-1`` in order (their rows of ``xb`` and ``levels`` are filled)."""
    cap = xb.shape[0]
    visit = np.zeros(cap, np.int64)
    width = max(ef_construction, m0 + 1)
    res_k, res_i = np.empty(width, np.float32), np.empty(width, np.int64)
    cand_k, cand_i = np.empty(cap + 1, np.float32), np.empty(cap + 1, np.int64)
    sort_k, sort_i = np.empty(width, np.float32), np.empty(width, np.int64)
    tmp_k, tmp_i = np.empty(m0 + 1, np.float32), np.empty(m0 + 1, np.int64)
    sel, kept_buf = np.empty(m0 + 1, np.int64), np.empty(m0 + 1, np.int64)
    no_deleted = np.zeros(1, np.bool_)
    tag = 0
    for i in range(lo, hi):
        level = levels[i]
        if state[0] < 0:
            state[0], state[1] = i, level
            continue
        q = xb[i]
        cur = state[0]
        for layer in range(state[1], level, -1):
            cur = greedy(q, cur, layer, xb, links0, count0, up_row, links_up, count_up, metric)
        for layer in range(min(level, state[1]), -1, -1):
            tag += 1
            n_res = search_layer(
                q, cur, -1, ef_construction, layer, xb, links0, count0, up_row, links_up, count_up, no_deleted, False,
                metric, visit, tag, res_k, res_i, cand_k, cand_i,
            )  # fmt: skip
            drain_ascending(res_k, res_i, n_res, sort_k, sort_i)
            kept = select_heuristic(sort_k, sort_i, n_res, m, xb, metric, sel)
            if layer == 0:
                links0[i, :kept] = sel[:kept]
                count0[i] = kept
            else:
                row = up_row[i] + layer - 1
                links_up[row, :kept] = sel[:kept]
                count_up[row] = kept
            mmax = m0 if layer == 0 else m
            for t in range(kept):
                _connect(
                    sel[t], i, layer, mmax, xb, links0, count0, up_row, links_up, count_up, metric, tmp_k, tmp_i,
                    kept_buf,
                )  # fmt: skip
            cur = sort_i[0]
        if level > state[1]:
            state[0], state[1] = i, level


@numba.njit(cache=True, nogil=True)
def search_batch(  # type: ignore[no-untyped-def]
    xq, k, ef, xb, links0, count0, up_row, links_up, count_up, deleted, skip_deleted, state, metric,
):  # fmt: skip
    """Greedy descent to layer 0, then SEARCH-LAYER with ``max(ef, k)``; rows of ``(distances, nodes)``.

    Layer 0 is also entered at the global entry point, which reaches every node (``HNSWIndex`` sees to
    that): it costs one distance, as its neighbours are seldom near enough to expand, and makes a
    search with ``ef >= n`` exact, where the greedy end point alone may not reach every node.
    """
    nq = xq.shape[0]
    cap = xb.shape[0]
    width = max(ef, k)
    dist = np.full((nq, k), np.inf, np.float32)
    nodes = np.full((nq, k), -1, np.int64)
    if state[0] < 0:
        return dist, nodes
    visit = np.zeros(cap, np.int64)
    res_k, res_i = np.empty(width, np.float32), np.empty(width, np.int64)
    cand_k, cand_i = np.empty(cap + 1, np.float32), np.empty(cap + 1, np.int64)
    out_k, out_i = np.empty(width, np.float32), np.empty(width, np.int64)
    for qi in range(nq):
        q = xq[qi]
        cur = state[0]
        for layer in range(state[1], 0, -1):
            cur = greedy(q, cur, layer, xb, links0, count0, up_row, links_up, count_up, metric)
        n_res = search_layer(
            q, cur, state[0], width, 0, xb, links0, count0, up_row, links_up, count_up, deleted, skip_deleted, metric,
            visit, qi + 1, res_k, res_i, cand_k, cand_i,
        )  # fmt: skip
        drain_ascending(res_k, res_i, n_res, out_k, out_i)
        got = min(k, n_res)
        dist[qi, :got] = out_k[:got]
        nodes[qi, :got] = out_i[:got]
    return dist, nodes


@numba.njit(cache=True, nogil=True)
def mark_reachable(start, seen, links0, count0):  # type: ignore[no-untyped-def]
    """Set ``seen`` for every node reachable from ``start`` on layer 0 (depth-first); returns how many were new."""
    if seen[start]:
        return 0
    stack = np.empty(seen.shape[0], np.int64)
    stack[0] = start
    seen[start] = True
    top, marked = 1, 1
    while top > 0:
        top -= 1
        node = stack[top]
        for t in range(count0[node]):
            nb = links0[node, t]
            if not seen[nb]:
                seen[nb] = True
                stack[top] = nb
                top += 1
                marked += 1
    return marked
