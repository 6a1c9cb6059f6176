"""What every index shares: input checks, the score convention, top-k, growth and the on-disk folder."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sextant.kb.ann.base import (
    FORMAT_VERSION,
    IndexFormatError,
    as_ids,
    as_vectors,
    grown,
    read_folder,
    scores_from_distances,
    top_k,
    worst,
    write_folder,
)


def test_vectors_become_contiguous_float32_and_a_wrong_shape_is_refused() -> None:
    x = np.arange(12, dtype=np.float64).reshape(3, 4)[:, ::2]  # (3, 2), not contiguous
    arr = as_vectors(x, 2)
    assert arr.dtype == np.float32 and arr.flags.c_contiguous
    np.testing.assert_array_equal(arr, x)
    for bad in (np.zeros(4), np.zeros((2, 3))):
        with pytest.raises(ValueError, match=r"shape \(n, 4\)"):
            as_vectors(bad, 4)


def test_ids_are_int64_distinct_non_negative_and_counted() -> None:
    ids = as_ids([[3, 1], [2, 0]])
    assert ids.dtype == np.int64 and ids.tolist() == [3, 1, 2, 0]
    assert as_ids([], 0).size == 0
    with pytest.raises(ValueError, match="expected 3 ids, got 2"):
        as_ids([1, 2], 3)
    with pytest.raises(ValueError, match="non-negative"):
        as_ids([0, -1])
    with pytest.raises(ValueError, match="distinct"):
        as_ids([4, 5, 4])


def test_scores_are_the_metrics_own_and_padding_is_the_worst_of_each() -> None:
    dist = np.array([[-0.9, -0.2]], np.float32)
    np.testing.assert_array_equal(scores_from_distances(dist, "ip"), -dist)  # higher is better
    np.testing.assert_array_equal(scores_from_distances(dist, "l2"), dist)  # lower is better
    assert worst("ip") == -np.inf and worst("l2") == np.inf


@pytest.mark.parametrize("k", [1, 5, 20])
def test_top_k_is_the_head_of_a_full_descending_sort(k: int) -> None:
    scores = np.random.default_rng(4).standard_normal((7, 20)).astype(np.float32)  # distinct values
    rows, cols = top_k(scores, k)
    np.testing.assert_array_equal(cols, np.argsort(-scores, axis=1)[:, :k])
    np.testing.assert_array_equal(scores[rows, cols], -np.sort(-scores, axis=1)[:, :k])


def test_grown_keeps_the_rows_fills_the_rest_and_doubles() -> None:
    arr = np.arange(6, dtype=np.int32).reshape(3, 2)
    assert grown(arr, 3) is arr  # room already: no copy
    big = grown(arr, 4, fill=-1)
    assert big.shape == (16, 2) and big.dtype == np.int32  # at least 16 rows
    np.testing.assert_array_equal(big[:3], arr)
    assert (big[3:] == -1).all()
    assert grown(np.zeros((20, 2)), 21).shape[0] == 40  # doubling: appends amortised O(1)
    assert grown(np.zeros((20, 2)), 100).shape[0] == 100


def test_a_folder_round_trips_meta_and_arrays_and_replaces_the_old_one(tmp_path: Path) -> None:
    folder = tmp_path / "index"
    write_folder(folder, "flat", {"dim": 2}, {"xb": np.ones((2, 2), np.float32), "stale": np.zeros(1)})
    xb = np.arange(6, dtype=np.float32).reshape(3, 2)
    write_folder(folder, "flat", {"dim": 2, "metric": "l2"}, {"xb": xb, "ids": np.array([7, 8, 9])})
    meta, arrays = read_folder(folder, "flat")
    assert meta == {"kind": "flat", "format": FORMAT_VERSION, "dim": 2, "metric": "l2"}
    assert set(arrays) == {"xb", "ids"}  # nothing of the replaced save is left
    np.testing.assert_array_equal(arrays["xb"], xb)
    assert arrays["ids"].tolist() == [7, 8, 9]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index"]  # no .tmp or .old beside it


def test_reading_a_folder_refuses_what_this_version_cannot_use(tmp_path: Path) -> None:
    with pytest.raises(IndexFormatError, match="no saved index"):
        read_folder(tmp_path / "missing", "flat")
    folder = tmp_path / "index"
    write_folder(folder, "hnsw", {}, {"x": np.zeros(1)})
    with pytest.raises(IndexFormatError, match="holds a 'hnsw' index, not 'flat'"):
        read_folder(folder, "flat")
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    (folder / "meta.json").write_text(json.dumps({**meta, "format": FORMAT_VERSION + 1}), encoding="utf-8")
    with pytest.raises(IndexFormatError, match=f"format {FORMAT_VERSION + 1}"):
        read_folder(folder, "hnsw")
    (folder / "meta.json").unlink()  # an interrupted save: the arrays without the meta written last
    with pytest.raises(IndexFormatError, match="no saved index"):
        read_folder(folder, "hnsw")
