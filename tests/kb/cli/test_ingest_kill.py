"""A short run of the kill test (the long one is ``bench/kill_ingest.py``): SIGKILL ``sextant-ingest`` mid-run,
then the store shows no partial document and a re-run converges to a clean ingest."""

from __future__ import annotations

import pytest

from sextant.kb.embeddings import Embedder
from tests.kb.cli.killing import run

pytestmark = pytest.mark.slow  # real sextant-ingest processes, each loading the embedder


def test_killing_ingest_leaves_no_partial_document_and_a_rerun_converges(embedder: Embedder) -> None:
    report = run(2, seed=0, embedder=embedder, files=6)
    assert report["runs"] == 2
    assert report["reference"]["documents"] == 7  # six notes and the one only version 2 has
    assert [r["problems"] for r in report["results"]] == [[], []]


def test_killing_a_sync_leaves_no_partial_document_and_a_rerun_converges(embedder: Embedder) -> None:
    report = run(2, seed=1, embedder=embedder, files=6, sync=True)
    assert report["runs"] == 2
    assert report["reference"]["documents"] == 6  # six notes, one renamed, one deleted, one added
    assert [r["problems"] for r in report["results"]] == [[], []]
