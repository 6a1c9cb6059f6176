"""Product quantisation's exact properties: codes round-trip, encoding picks the nearest centroid per sub-space."""

from __future__ import annotations

import numpy as np
import pytest

from sextant.kb.ann.pq import ProductQuantizer
from tests.kb.ann.conftest import Data


@pytest.fixture(scope="module")
def pq(data: Data) -> ProductQuantizer:
    trained = ProductQuantizer(32, 8, 6)
    trained.train(data.xb)
    return trained


def test_pq_round_trips_codes_built_from_centroids(data: Data) -> None:
    pq = ProductQuantizer(32, 8, 6)
    pq.train(data.xb)
    codes = np.random.default_rng(0).integers(0, 64, (500, 8)).astype(np.uint8)
    np.testing.assert_array_equal(pq.encode(pq.decode(codes)), codes)


def test_pq_refuses_a_dimension_it_cannot_split() -> None:
    with pytest.raises(ValueError, match="multiple"):
        ProductQuantizer(30, 8)


def test_nbits_must_fit_one_byte_per_sub_vector() -> None:
    for nbits in (0, 9):
        with pytest.raises(ValueError, match="nbits must be 1-8"):
            ProductQuantizer(16, 4, nbits)
    pq = ProductQuantizer(16, 4, 3)
    assert (pq.dsub, pq.ksub) == (4, 8) and pq.codebooks.shape == (4, 8, 4)


def test_each_sub_vector_error_is_the_least_any_centroid_of_its_codebook_gives(
    pq: ProductQuantizer, data: Data
) -> None:
    x = data.xq  # held out: not the training vectors
    codes = pq.encode(x)
    assert codes.shape == (x.shape[0], pq.m) and codes.dtype == np.uint8
    err = (x - pq.decode(codes)) ** 2  # (nq, d)
    for j in range(pq.m):
        sub = x[:, j * pq.dsub : (j + 1) * pq.dsub]
        to_every = ((sub[:, None, :] - pq.codebooks[j][None, :, :]) ** 2).sum(-1)  # (nq, ksub)
        chosen = err[:, j * pq.dsub : (j + 1) * pq.dsub].sum(1)
        np.testing.assert_allclose(chosen, to_every.min(axis=1), rtol=1e-5, atol=1e-6)
    # So the whole error is bounded by that of any other code, e.g. a random one.
    random_codes = np.random.default_rng(1).integers(0, pq.ksub, codes.shape).astype(np.uint8)
    assert (err.sum(1) <= ((x - pq.decode(random_codes)) ** 2).sum(1) + 1e-6).all()


def test_training_is_seeded_and_lowers_the_error_below_an_untrained_codebook(data: Data) -> None:
    a, b = ProductQuantizer(32, 8, 6), ProductQuantizer(32, 8, 6)
    a.train(data.xb[:800], seed=3)
    b.train(data.xb[:800], seed=3)
    np.testing.assert_array_equal(a.codebooks, b.codebooks)
    untrained = ProductQuantizer(32, 8, 6)  # every centroid at the origin
    trained_err = ((data.xq - a.decode(a.encode(data.xq))) ** 2).sum()
    assert trained_err < 0.5 * ((data.xq - untrained.decode(untrained.encode(data.xq))) ** 2).sum()


def test_fewer_training_vectors_than_centroids_are_reconstructed_exactly() -> None:
    x = np.random.default_rng(5).standard_normal((5, 8)).astype(np.float32)
    pq = ProductQuantizer(8, 2, 4)  # 16 centroids per sub-space, 5 points: each point is a centroid
    pq.train(x)
    np.testing.assert_array_equal(pq.decode(pq.encode(x)), x)
