"""A store migrated while a process has it open (``sextant-kb-migrate`` beside a running ``sextant-kb``): the
process goes on with the new embedder and its collections, without a restart.

The migration holds the store's lock while it swaps the collections and moves the change counter, so every
other process on the folder meets the swap at its next call (``StoreMigrated``: its collections are marked or
gone). That call loads the embedder the store now holds, opens the live collections and their indexes under
the lock, and runs again. A question encoder trained for the old embedder is dropped, with a warning.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Concatenate, ParamSpec, TypeVar

from sextant.kb.derived_indexes import lexical_dir
from sextant.kb.embeddings import EmbedderError, load_embedder
from sextant.kb.lexical import LexicalIndex
from sextant.kb.store import ChunkStore, StoreMigrated

if TYPE_CHECKING:
    from sextant.kb.knowledge_base import KnowledgeBase

log = logging.getLogger(__name__)

P = ParamSpec("P")
R = TypeVar("R")


def following_migrations(
    method: Callable[Concatenate[KnowledgeBase, P], R],
) -> Callable[Concatenate[KnowledgeBase, P], R]:
    """Run ``method``; when the store turns out to have been migrated, follow it and run ``method`` again."""

    @functools.wraps(method)
    def call(kb: KnowledgeBase, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(kb, *args, **kwargs)
        except StoreMigrated as moved:
            follow_migration(kb, moved.embedder)
            return method(kb, *args, **kwargs)

    return call


def follow_migration(kb: KnowledgeBase, embedder_name: str) -> None:
    """Rebind ``kb`` to the store ``sextant-kb-migrate`` made live, embedded by ``embedder_name``.

    Raises:
        StoreMigrated: that embedder cannot be used here (not installed, or its window is shorter than the
            chunks); the message asks for a restart with it.
    """
    settings = kb.settings
    with kb.indexes.shared.exclusive():
        if kb.store.embedder == embedder_name:  # another thread of this process followed it first
            return
        try:
            embedder = load_embedder(embedder_name, settings.threads, settings.embed_precision)
        except EmbedderError as exc:
            log.error("the store was migrated to embedder %r, which cannot be loaded here: %s", embedder_name, exc)
            raise StoreMigrated(embedder_name) from exc
        if settings.chunk_tokens > embedder.max_tokens:
            raise StoreMigrated(embedder_name)
        store = ChunkStore.for_settings(settings, embedder.name, embedder.dim)
        old, encoder = kb.store, kb.searcher.embedder
        old.close()
        store.reload()  # the client this process had on the folder is closed now: read the segments afresh
        if encoder is not kb.embedder:
            log.warning(
                "the question encoder %r was trained for the old embedder: questions are embedded by %r now",
                encoder.name,
                embedder.name,
            )
        kb.bind(embedder, store, LexicalIndex.open(lexical_dir(settings)))
    log.warning(
        "the store was migrated from embedder %r to %r by sextant-kb-migrate: following it without a restart",
        old.embedder,
        embedder.name,
    )
