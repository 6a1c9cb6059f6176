"""The kernels' one distance against NumPy's: ``-ip`` for metric 0, squared L2 for metric 1."""

from __future__ import annotations

import numpy as np
import pytest

from sextant.kb.ann.base import METRIC_CODES
from sextant.kb.ann.distance import distance


@pytest.fixture(scope="module")
def vectors() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(11)
    return rng.standard_normal(24).astype(np.float32), rng.standard_normal((9, 24)).astype(np.float32)


def test_metric_ip_is_the_negated_inner_product(vectors: tuple[np.ndarray, np.ndarray]) -> None:
    q, xb = vectors
    got = [distance(q, xb, j, METRIC_CODES["ip"]) for j in range(xb.shape[0])]
    # fastmath may reorder the float32 sum: equal up to the last bits, not bit for bit.
    np.testing.assert_allclose(got, -(xb @ q), rtol=1e-5, atol=1e-5)


def test_metric_l2_is_the_squared_euclidean_distance(vectors: tuple[np.ndarray, np.ndarray]) -> None:
    q, xb = vectors
    got = [distance(q, xb, j, METRIC_CODES["l2"]) for j in range(xb.shape[0])]
    np.testing.assert_allclose(got, ((xb - q) ** 2).sum(axis=1), rtol=1e-5, atol=1e-5)


def test_lower_is_better_for_both_metrics() -> None:
    xb = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]], np.float32)
    q = np.array([1.0, 0.0], np.float32)
    for metric in METRIC_CODES.values():
        d = [distance(q, xb, j, metric) for j in range(3)]
        assert d[0] < d[1] < d[2]  # the same vector first, the opposite one last
    assert distance(q, xb, 0, METRIC_CODES["l2"]) == 0.0
