"""The kernels' binary max-heaps: drained order is sorted order, and a bounded heap keeps the smallest keys."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sextant.kb.ann.heap import drain_ascending, pop, push, push_bounded, replace_top

# float32-exact keys, so the heap's float32 storage changes nothing the test compares.
KEYS = st.lists(st.floats(-1e6, 1e6, width=32, allow_nan=False), min_size=1, max_size=60)


def _empty(cap: int) -> tuple[np.ndarray, np.ndarray]:
    return np.empty(cap, np.float32), np.empty(cap, np.int64)


def _drained(keys: np.ndarray, ids: np.ndarray, size: int) -> tuple[list[float], list[int]]:
    out_k, out_i = _empty(size)
    drain_ascending(keys, ids, size, out_k, out_i)
    return out_k.tolist(), out_i.tolist()


@settings(max_examples=60, deadline=None)
@given(KEYS)
def test_drained_order_is_sorted_order_and_ids_follow_their_keys(values: list[float]) -> None:
    keys, ids = _empty(len(values))
    size = 0
    for item, key in enumerate(values):
        size = push(keys, ids, size, key, item)
        assert keys[0] == max(values[: item + 1])  # the largest key stays on top
    assert size == len(values)
    out_k, out_i = _drained(keys, ids, size)
    assert out_k == sorted(values)
    assert [values[i] for i in out_i] == out_k
    assert sorted(out_i) == list(range(len(values)))


@settings(max_examples=60, deadline=None)
@given(KEYS, st.integers(1, 10))
def test_a_bounded_heap_keeps_the_cap_smallest_keys(values: list[float], cap: int) -> None:
    keys, ids = _empty(cap)
    size = 0
    for item, key in enumerate(values):
        size = push_bounded(keys, ids, size, cap, key, item)
    assert size == min(cap, len(values))
    out_k, out_i = _drained(keys, ids, size)
    assert out_k == sorted(values)[:cap]
    assert [values[i] for i in out_i] == out_k


def test_pop_removes_the_largest_and_replace_top_swaps_it_in_one_step() -> None:
    keys, ids = _empty(8)
    size = 0
    for item, key in enumerate([3.0, 9.0, 1.0, 7.0]):
        size = push(keys, ids, size, key, item)
    size = pop(keys, ids, size)
    assert size == 3 and (keys[0], ids[0]) == (7.0, 3)
    replace_top(keys, ids, size, 2.0, 10)  # drops 7, adds 2
    assert _drained(keys, ids, size) == ([1.0, 2.0, 3.0], [2, 10, 0])


def test_a_min_heap_is_the_same_heap_over_negated_keys() -> None:
    values = [5.0, -2.0, 8.0, 0.5]
    keys, ids = _empty(4)
    size = 0
    for item, key in enumerate(values):
        size = push(keys, ids, size, -key, item)
    assert (-keys[0], ids[0]) == (-2.0, 1)  # the smallest original key on top
