"""Every index against a plain dict of vectors, through random add / remove / save / load sequences.

Each index runs with knobs that make it exact on these small sets (HNSW with ef above the size,
IVF-PQ-rerank probing every list with every candidate re-scored), so after every step the answers
must equal a brute-force scan of the model; plain IVF-PQ must return only live ids, each once.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import numpy as np
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from sextant.kb.ann import create, load
from sextant.kb.ann.base import AnnIndex
from sextant.kb.ann.hnsw import HNSWIndex

DIM = 8
QUERIES = np.random.default_rng(99).standard_normal((4, DIM)).astype(np.float32)
EXACT_KNOBS = {
    "flat": {},
    "hnsw": {"M": 4, "ef_construction": 16, "ef_search": 256},
    "ivfpq": {"nlist": 4, "m": 2, "nbits": 4, "nprobe": 4},
    "ivfpq_rerank": {"nlist": 4, "m": 2, "nbits": 4, "nprobe": 4, "oversample": 256},
}


class IndexMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.folder = Path(tempfile.mkdtemp())
        self.model: dict[int, np.ndarray] = {}
        self.next_id = 0
        self.index: AnnIndex

    @initialize(kind=st.sampled_from(sorted(EXACT_KNOBS)), metric=st.sampled_from(["ip", "l2"]))
    def start(self, kind: str, metric: str) -> None:
        self.kind = kind
        self.index = create(kind, DIM, metric, **EXACT_KNOBS[kind])  # type: ignore[arg-type]

    @rule(count=st.integers(1, 40), seed=st.integers(0, 2**16))
    def add(self, count: int, seed: int) -> None:
        xb = np.random.default_rng([seed, self.next_id]).standard_normal((count, DIM)).astype(np.float32)  # no ties
        ids = np.arange(self.next_id, self.next_id + count)
        self.next_id += count + 1  # gaps, so ids are not row numbers
        self.index.add(xb, ids)
        self.model.update(zip(ids.tolist(), xb, strict=True))

    @precondition(lambda self: bool(self.model))
    @rule(data=st.data())
    def remove(self, data: st.DataObject) -> None:
        gone = data.draw(st.lists(st.sampled_from(sorted(self.model)), min_size=1, max_size=30, unique=True))
        assert self.index.remove(np.array([*gone, 10**9])) == len(gone)
        for i in gone:
            del self.model[i]

    @rule()
    def save_and_load(self) -> None:
        before = self.index.search(QUERIES, 5)
        self.index.save(self.folder / "index")
        self.index = load(self.folder / "index")
        for got, want in zip(self.index.search(QUERIES, 5), before, strict=True):
            np.testing.assert_array_equal(got, want)

    @invariant()
    def answers_match_the_model(self) -> None:
        assert len(self.index) == len(self.model)
        _, I = self.index.search(QUERIES, 5)
        live = I[I >= 0]
        assert set(live.tolist()) <= set(self.model)
        assert all(len(set(row[row >= 0].tolist())) == (row >= 0).sum() for row in I)
        assert ((I >= 0).sum(axis=1) == min(5, len(self.model))).all()
        if self.kind == "ivfpq" or not self.model:
            return
        ids = np.array(sorted(self.model))
        xb = np.stack([self.model[i] for i in ids])
        if self.index.metric == "ip":
            order = np.argsort(-(QUERIES @ xb.T), axis=1, kind="stable")[:, :5]
        else:
            order = np.argsort(((QUERIES[:, None] - xb[None]) ** 2).sum(-1), axis=1, kind="stable")[:, :5]
        np.testing.assert_array_equal(I[:, : len(ids)], ids[order])
        if isinstance(self.index, HNSWIndex):
            assert self.index.check() == []

    def teardown(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


IndexMachine.TestCase.settings = settings(max_examples=25, stateful_step_count=10, deadline=None)
TestIndexStateMachine = IndexMachine.TestCase
