"""What both shell commands need: settings, logging and an opened knowledge base, or a clear exit."""

from __future__ import annotations

import sys

from sextant.kb.embeddings import EmbedderError, quiet_model_loading
from sextant.kb.knowledge_base import KnowledgeBase, KnowledgeBaseError
from sextant.kb.store import StoreError
from sextant.logs import configure_logging
from sextant.settings import load_settings


def open_knowledge_base(prog: str) -> KnowledgeBase:
    """Open the configured knowledge base, or exit 1 with the reason on stderr."""
    settings = load_settings()
    configure_logging(settings.log_level, settings.log_format)
    quiet_model_loading()
    try:
        return KnowledgeBase.open(settings)
    except (KnowledgeBaseError, StoreError, EmbedderError) as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        raise SystemExit(1) from exc
