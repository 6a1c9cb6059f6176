"""``sextant-kb-migrate --embedder NAME``: re-embed every stored chunk under another embedder, then swap.

The store named by ``SEXTANT_CHROMA_DIR`` / ``SEXTANT_CHROMA_URL`` keeps serving searches from its old vectors
until the swap; a killed run leaves it intact and the next run resumes (``sextant.kb.migrate``).
"""

from __future__ import annotations

import argparse
import sys
import time

from sextant.kb.chroma_client import StoreError, close_client, open_client
from sextant.kb.derived_indexes import DerivedIndexes, lexical_dir, lock_folder
from sextant.kb.embeddings import EmbedderError, load_embedder, load_query_encoder, quiet_model_loading
from sextant.kb.knowledge_base import KnowledgeBaseError
from sextant.kb.lexical import LexicalIndex
from sextant.kb.migrate import BATCH, MigrationError, MigrationReport, exclusive, migrate
from sextant.kb.store import ChunkStore
from sextant.kb.store_lock import StoreLock
from sextant.logs import configure_logging
from sextant.settings import KbSettings, load_settings

PROG = "sextant-kb-migrate"


class _Rate:
    """Prints ``done/total chunks, rate`` to stderr as batches finish."""

    def __init__(self) -> None:
        self.started = time.perf_counter()

    def __call__(self, done: int, total: int) -> None:
        rate = done / max(time.perf_counter() - self.started, 1e-9)
        print(f"{PROG}: embedded {done}/{total} chunks ({rate:.1f} chunks/s)", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Re-embed every chunk of the knowledge base under another embedder, without the original files: "
        "searches go on from the old vectors until the new ones are swapped in, and a stopped run resumes.",
    )
    parser.add_argument("--embedder", required=True, help="the new embedder: a sentence-transformers name or folder")
    parser.add_argument("--batch", type=int, default=BATCH, help=f"chunks embedded per batch (default {BATCH})")
    args = parser.parse_args(argv)
    if args.batch < 1:
        parser.error("--batch must be at least 1")
    settings = load_settings()
    configure_logging(settings.log_level, settings.log_format)
    quiet_model_loading()
    try:
        report = run(settings, args.embedder, batch=args.batch)
    except (MigrationError, StoreError, EmbedderError, KnowledgeBaseError) as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        raise SystemExit(1) from exc
    for line in summary(settings, report):
        print(line)


def run(settings: KbSettings, name: str, *, batch: int = BATCH) -> MigrationReport:
    """Migrate the configured store to embedder ``name``, then rebuild the derived indexes for it.

    Raises:
        EmbedderError: the embedder cannot be loaded.
        KnowledgeBaseError: SEXTANT_CHUNK_TOKENS does not fit the new embedder's window.
        MigrationError: the store already uses it, another migration is running, or one is unfinished.
        StoreError: the store cannot be opened or written; a re-run resumes.
    """
    embedder = load_embedder(name, settings.threads, settings.embed_precision)
    if settings.chunk_tokens > embedder.max_tokens:
        raise KnowledgeBaseError(
            f"the store's chunks are sized for SEXTANT_CHUNK_TOKENS={settings.chunk_tokens}, more than embedder "
            f"{name!r} reads ({embedder.max_tokens} tokens): choose an embedder with a longer window"
        )
    with exclusive(settings.store_dir()):
        client = open_client(path=settings.store_dir(), url=settings.chroma_url, database=settings.chroma_database)
        try:
            report = migrate(
                client, embedder, batch=batch, progress=_Rate(), lock=StoreLock.for_folder(lock_folder(settings))
            )
            # The new generation is past every stamp of the old vectors: opening rebuilds the BM25 and ANN indexes.
            store = ChunkStore(client, embedder.name, embedder.dim)
            store.repair()
            DerivedIndexes.for_settings(settings, store, LexicalIndex.open(lexical_dir(settings)), embedder=embedder)
        finally:
            close_client(client)
    return report


def summary(settings: KbSettings, report: MigrationReport) -> list[str]:
    """What was done, and what the user must change now."""
    done = "finished the interrupted migration" if report.resumed_swap else "migrated"
    lines = [
        f"{done}: {report.documents} documents, {report.chunks} chunks now embedded by {report.new_embedder!r} "
        f"({report.embedded} embedded by this run)",
        f"set SEXTANT_EMBEDDER={report.new_embedder} for sextant-kb, sextant-ingest and every other client of this "
        "store the next time it starts; one running now on this machine follows at its next call, without a restart",
    ]
    if settings.query_encoder:
        embedder = load_embedder(report.new_embedder, settings.threads, settings.embed_precision)
        try:
            load_query_encoder(settings.query_encoder, embedder, settings.threads, settings.embed_precision)
        except EmbedderError as exc:
            lines.append(f"warning: {exc}")
    return lines
