"""What both shell commands need: settings, logging and an opened knowledge base, or a clear exit."""

from __future__ import annotations

import sys

from sextant.kb.embeddings import EmbedderError, quiet_model_loading
from sextant.kb.knowledge_base import KnowledgeBase, KnowledgeBaseError
from sextant.kb.store import StoreError
from sextant.settings import configure_logging, load_settings


def open_knowledge_base(prog: str) -> KnowledgeBase:
    """Open the configured knowledge base, or exit 1 with the reason on stderr."""
    settings = load_settings()
    configure_logging(settings)
    quiet_model_loading()
    try:
        return KnowledgeBase.open(settings)
    except (KnowledgeBaseError, StoreError, EmbedderError) as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        raise SystemExit(1) from exc
