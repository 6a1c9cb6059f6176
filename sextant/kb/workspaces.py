"""Private workspaces: one knowledge base per workspace id, opened on demand and dropped whole.

The trusted host (the agent, which starts ``sextant-kb`` over stdio) names each call's workspace in the
request's ``_meta``; no tool takes a workspace argument, so a model can never choose one. A workspace is
its own store folder (``<store>/workspaces/<id>/``) with its own BM25 index and kept originals; with a
Chroma server (``SEXTANT_CHROMA_URL``) its chunks live in a database of its own on the server
(``sextant-ws-<id>``) and the folder holds only what this machine derives from it, as the default store's
folder does. Only the embedder and the reranker, which hold no documents, are shared. A call that names
no workspace uses the default store: the single-user mode, as before workspaces existed.
"""

from __future__ import annotations

import logging
import re
import shutil
import threading
from pathlib import Path

from sextant.kb.chroma_client import drop_database
from sextant.kb.knowledge_base import KnowledgeBase, KnowledgeBaseError

log = logging.getLogger(__name__)

# The agent mints 32 hex digits; anything else is a caller's mistake, never a path to follow.
WORKSPACE_ID = re.compile(r"^[a-f0-9]{16,64}$")
FOLDER = "workspaces"
DATABASE_PREFIX = "sextant-ws-"


class Workspaces:
    """The default knowledge base plus every workspace opened since start, by id."""

    def __init__(self, default: KnowledgeBase) -> None:
        self._root = default.settings.store_dir() / FOLDER
        self._url = default.settings.chroma_url
        self.default = default
        self._open: dict[str, KnowledgeBase] = {}
        self._lock = threading.Lock()

    def get(self, workspace: str | None) -> KnowledgeBase:
        """The workspace's knowledge base (created empty on first use), or the default one for ``None``.

        Raises:
            KnowledgeBaseError: the id is malformed.
            StoreError: the Chroma server cannot be reached or refused to create the workspace's database.
        """
        if workspace is None:
            return self.default
        folder = self._folder(workspace)
        with self._lock:
            kb = self._open.get(workspace)
            if kb is None:
                settings = self.default.settings.model_copy(
                    update={"chroma_dir": folder, "chroma_database": database_of(workspace) if self._url else None}
                )
                kb = KnowledgeBase.open(
                    settings, embedder=self.default.embedder, reranker=self.default.reranker, policy=self.default.policy
                )
                self._open[workspace] = kb
            return kb

    def drop(self, workspace: str) -> bool:
        """Delete a workspace's store and index once its current write (if any) has finished; whether it existed.

        Works for a workspace this process never opened (one created before a restart, or by another replica).

        Raises:
            StoreError: the Chroma server cannot be reached; the local folder is kept, so a retry finds it.
        """
        folder = self._folder(workspace)
        with self._lock:
            kb = self._open.pop(workspace, None)
        if kb is not None:
            kb.close()
        # The server's database first: if that fails, the folder left behind keeps saying the workspace exists.
        on_server = drop_database(self._url, database_of(workspace)) if self._url else False
        existed = on_server or folder.is_dir()
        shutil.rmtree(folder, ignore_errors=True)
        log.info("workspace %s dropped (%s)", workspace[:8], "removed" if existed else "was empty")
        return existed

    def close(self) -> None:
        with self._lock:
            opened, self._open = list(self._open.values()), {}
        for kb in opened:
            kb.close()

    def _folder(self, workspace: str) -> Path:
        if not WORKSPACE_ID.match(workspace):
            raise KnowledgeBaseError("malformed workspace id: expected 16-64 lowercase hex digits")
        return self._root / workspace


def database_of(workspace: str) -> str:
    """The workspace's database on a Chroma server."""
    return DATABASE_PREFIX + workspace
