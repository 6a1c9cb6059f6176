"""Binary max-heaps on parallel (key, id) arrays, for the numba kernels of HNSW and IVF-PQ.

A min-heap is the same heap over negated keys. Each function takes the heap's current size and
returns the new one; the caller owns the arrays, so a search allocates nothing per step.
"""

from __future__ import annotations

import numba

from sextant.kb.ann.base import FloatArray, IdArray


@numba.njit(cache=True, nogil=True)
def push(keys: FloatArray, ids: IdArray, size: int, key: float, item: int) -> int:
    """Add ``(key, item)``; the largest key stays at position 0."""
    pos = size
    while pos > 0:
        parent = (pos - 1) >> 1
        if keys[parent] >= key:
            break
        keys[pos] = keys[parent]
        ids[pos] = ids[parent]
        pos = parent
    keys[pos] = key
    ids[pos] = item
    return size + 1


@numba.njit(cache=True, nogil=True)
def replace_top(keys: FloatArray, ids: IdArray, size: int, key: float, item: int) -> None:
    """Drop the largest key and add ``(key, item)`` in one sift-down."""
    pos = 0
    while True:
        child = 2 * pos + 1
        if child >= size:
            break
        if child + 1 < size and keys[child + 1] > keys[child]:
            child += 1
        if keys[child] <= key:
            break
        keys[pos] = keys[child]
        ids[pos] = ids[child]
        pos = child
    keys[pos] = key
    ids[pos] = item


@numba.njit(cache=True, nogil=True)
def pop(keys: FloatArray, ids: IdArray, size: int) -> int:
    """Drop the largest key."""
    size -= 1
    if size > 0:
        replace_top(keys, ids, size, keys[size], ids[size])
    return size


@numba.njit(cache=True, nogil=True)
def push_bounded(keys: FloatArray, ids: IdArray, size: int, cap: int, key: float, item: int) -> int:
    """Keep the ``cap`` smallest keys seen: add when there is room or ``key`` beats the largest."""
    if size < cap:
        return push(keys, ids, size, key, item)
    if key < keys[0]:
        replace_top(keys, ids, size, key, item)
    return size


@numba.njit(cache=True, nogil=True)
def drain_ascending(keys: FloatArray, ids: IdArray, size: int, out_keys: FloatArray, out_ids: IdArray) -> None:
    """Empty the heap into ``out_*`` smallest key first (``out_*`` hold at least ``size``)."""
    for pos in range(size - 1, -1, -1):
        out_keys[pos] = keys[0]
        out_ids[pos] = ids[0]
        size = pop(keys, ids, size)
