"""Which pair of Chroma collections is the live store: a manifest that one metadata write replaces.

A store began as the fixed pair ``sextant_chunks`` / ``sextant_documents``, and a store without a manifest is
still that pair. ``sextant-kb-migrate`` builds a shadow pair under names of their own and makes it live by
replacing the manifest's metadata: a single write, so every opener sees either the old pair or the new one,
never a mix. Until the old pair is removed the manifest also names it as ``retired``, which is how a re-run
after a kill knows that a swap happened and what is left to clean up.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

CHUNKS = "sextant_chunks"
DOCUMENTS = "sextant_documents"
MANIFEST = "sextant_manifest"
MANIFEST_FORMAT = 1


@dataclass(frozen=True, slots=True)
class Collections:
    """The names of one store's two collections."""

    chunks: str = CHUNKS
    documents: str = DOCUMENTS

    @classmethod
    def shadow_for(cls, embedder: str) -> Collections:
        """The pair a migration to ``embedder`` writes into: named by it, so a re-run finds it again."""
        tag = hashlib.sha256(embedder.encode("utf-8")).hexdigest()[:12]
        return cls(f"{CHUNKS}-{tag}", f"{DOCUMENTS}-{tag}")

    def names(self) -> tuple[str, str]:
        return self.chunks, self.documents


@dataclass(frozen=True, slots=True)
class Manifest:
    """The live pair and, between a swap and its clean-up, the pair it replaced."""

    live: Collections = Collections()
    retired: Collections | None = None


def read_manifest(client: Any) -> Manifest:
    """The store's manifest; a store that was never migrated has none and is the fixed pair."""
    from chromadb.errors import NotFoundError

    try:
        meta = dict(client.get_collection(MANIFEST, embedding_function=None).metadata or {})
    except (NotFoundError, ValueError):  # chromadb raises either for a missing collection, by version
        return Manifest()
    live = Collections(str(meta["chunks"]), str(meta["documents"]))
    retired = Collections(str(meta["retired_chunks"]), str(meta["retired_documents"]))
    return Manifest(live, retired if retired.chunks else None)


def write_manifest(client: Any, manifest: Manifest) -> None:
    """Replace the manifest in one metadata write: the commit point of a swap."""
    retired = manifest.retired or Collections("", "")
    meta = {
        "format": MANIFEST_FORMAT,
        "chunks": manifest.live.chunks,
        "documents": manifest.live.documents,
        "retired_chunks": retired.chunks,
        "retired_documents": retired.documents,
    }
    collection = client.get_or_create_collection(MANIFEST, embedding_function=None, metadata=meta)
    collection.modify(metadata=meta)


def existing(client: Any) -> set[str]:
    """The names of every collection on the client."""
    return {c if isinstance(c, str) else c.name for c in client.list_collections()}
