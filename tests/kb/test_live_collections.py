"""The manifest naming the live pair of collections: absent on a store never migrated, replaced in one write."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sextant.kb.chroma_client import close_client, open_client
from sextant.kb.live_collections import CHUNKS, DOCUMENTS, Collections, Manifest, read_manifest, write_manifest


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Any]:
    opened = open_client(path=tmp_path / "store", url=None)
    yield opened
    close_client(opened)


def test_a_store_without_a_manifest_is_the_fixed_pair(client: Any) -> None:
    assert read_manifest(client) == Manifest(Collections(CHUNKS, DOCUMENTS), None)


def test_a_swap_and_its_clean_up_round_trip(client: Any) -> None:
    new = Collections.shadow_for("models/embedder-nfcorpus")
    write_manifest(client, Manifest(live=new, retired=Collections()))
    assert read_manifest(client) == Manifest(live=new, retired=Collections())
    write_manifest(client, Manifest(live=new))
    assert read_manifest(client) == Manifest(live=new)


def test_a_shadow_is_named_by_its_embedder_alone() -> None:
    one = Collections.shadow_for("all-MiniLM-L6-v2")
    assert one == Collections.shadow_for("all-MiniLM-L6-v2") != Collections.shadow_for("other")
    assert one.chunks.startswith(f"{CHUNKS}-") and one.documents.startswith(f"{DOCUMENTS}-")
