"""The reference columns: each FAISS and hnswlib builder answers exactly where its knob allows it."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from sextant.lab import references
from sextant.lab.datasets import clustered, ground_truth


@pytest.fixture(scope="module")
def vectors() -> tuple[np.ndarray, np.ndarray]:
    references.single_threaded()
    return clustered(600, 16, nq=15, seed=9)


def test_both_references_are_installed_with_the_dev_extra() -> None:
    assert references.available() is None


@pytest.mark.parametrize("metric", ["ip", "l2"])
def test_faiss_flat_is_exact(vectors: tuple[np.ndarray, np.ndarray], metric: str) -> None:
    xb, xq = vectors
    search, nbytes = references.faiss_flat(xb, metric)  # type: ignore[arg-type]
    np.testing.assert_array_equal(search(xq, 10, 0), ground_truth(xb, xq, metric, 10))  # type: ignore[arg-type]
    assert nbytes >= xb.nbytes  # it holds the vectors


@pytest.mark.parametrize("build", [references.faiss_hnsw, references.hnswlib_hnsw])
def test_hnsw_references_with_ef_at_least_n_find_the_exact_neighbours(
    vectors: tuple[np.ndarray, np.ndarray], build: Callable[..., tuple[references.Searcher, int]]
) -> None:
    xb, xq = vectors
    search, nbytes = build(xb, "ip", M=8, ef_construction=64)
    gt = ground_truth(xb, xq, "ip", 10)
    found = search(xq, 10, 600)
    assert found.dtype == np.int64 and found.shape == gt.shape
    assert np.mean([np.intersect1d(a, b).size for a, b in zip(found, gt, strict=True)]) >= 9.9
    assert search(xq, 10, 1).shape == (15, 10)  # ef below k is raised to k, not refused
    assert nbytes > xb.nbytes  # vectors plus links


def test_faiss_ivfpq_refined_with_every_list_probed_is_exact_and_the_plain_one_is_smaller(
    vectors: tuple[np.ndarray, np.ndarray],
) -> None:
    xb, xq = vectors
    gt = ground_truth(xb, xq, "l2", 10)
    refined, refined_bytes = references.faiss_ivfpq(xb, "l2", nlist=16, m=4, nbits=4, oversample=64)
    np.testing.assert_array_equal(refined(xq, 10, 16), gt)
    plain, plain_bytes = references.faiss_ivfpq(xb, "l2", nlist=16, m=4, nbits=4, oversample=None)
    assert plain(xq, 10, 16).shape == (15, 10)
    assert plain_bytes < xb.nbytes < refined_bytes  # codes alone, then codes and the vectors
