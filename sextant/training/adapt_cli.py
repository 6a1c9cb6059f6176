"""``sextant-adapt``: a query encoder for one store, trained on questions made from its own chunks.

    sextant-adapt --out models/adapt-mydocs                       # the store SEXTANT_CHROMA_DIR names
    sextant-adapt --store .sextant-eval/beir-scifact --out models/adapt-scifact
    SEXTANT_QUERY_ENCODER=models/adapt-mydocs sextant-kb          # kb_stats names it as query_encoder

No labelled questions: titles, headings and sentences of the stored chunks stand in for them
(``sextant.training.adapt``), and the query-encoder trainer learns to find each one's chunks among
every chunk vector of the store. The store is read once, up front, and never written: it keeps
serving while this trains, and the encoder fits it and any store built with the same embedder.
Rerunning the same command resumes from the last checkpoint.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from sextant.kb.chroma_client import StoreError
from sextant.settings import KbSettings
from sextant.training import adapt
from sextant.training.cli import exits_on, parse_offline, progress_reporter, say
from sextant.training.model_questions import add_source_arguments, written_if_asked
from sextant.training.query_encoder import QueryEncoderTrainConfig, StoredVectors
from sextant.training.query_encoder_cli import train_config
from sextant.training.trainer import write_training_record

PROG = "sextant-adapt"
FETCH_BATCH = 1000


@dataclass(frozen=True, slots=True)
class StoreSnapshot:
    """Every live chunk of a store: its text for the questions, its vector for the trainer (same order)."""

    chunks: list[adapt.ChunkText]
    vectors: npt.NDArray[np.float32]
    embedder: str
    location: str


def main(argv: list[str] | None = None) -> None:
    ns = parse_offline(_parser(), sys.argv[1:] if argv is None else argv)
    config = train_config(ns)
    from sextant.kb.embeddings import quiet_model_loading

    quiet_model_loading()
    started = time.perf_counter()
    settings = KbSettings() if ns.store is None else KbSettings(chroma_dir=ns.store, chroma_url=None)
    with exits_on(PROG, StoreError, ValueError):
        snapshot = read_store(settings)
    read_seconds = time.perf_counter() - started
    say(f"{len(snapshot.chunks)} chunks of {snapshot.location} ({snapshot.embedder}), read in {read_seconds:.0f} s")
    written = written_if_asked(snapshot.chunks, ns, PROG)
    queries = adapt.pseudo_queries(snapshot.chunks, ns.sources, ns.max_queries or None, ns.seed, written)
    made = dict(adapt.counts(queries))
    say(f"pseudo-questions: {adapt.described(made)}")
    if not queries:
        say(f"{PROG}: no {'/'.join(ns.sources)} in the stored chunks makes a question; try --sources sentence")
        raise SystemExit(2)

    import torch

    from sextant.training.query_encoder import train_query_encoder

    torch.set_num_threads(ns.threads)
    qrels, questions = adapt.as_training_data(queries)
    chunk_ids = [c.id for c in snapshot.chunks]
    # The trainer ranks documents by their chunks' rows; here every chunk stands for itself.
    stored = StoredVectors(vectors=snapshot.vectors, documents=chunk_ids, embedder=snapshot.embedder)
    with exits_on(PROG, ValueError):
        record = train_query_encoder(
            qrels,
            questions,
            stored,
            config,
            ns.out,
            fingerprint=adapt.fingerprint(chunk_ids, queries, snapshot.embedder),
            report=progress_reporter(ns.log_every),
        )
    record["adapted_to"] = {
        "store": snapshot.location,
        "pseudo_questions": made,
        "read_seconds": round(read_seconds, 1),
    }
    write_training_record(ns.out, record)
    say(
        f"trained in {record['train_seconds']:.0f} s ({record['steps']} steps); search with "
        f"SEXTANT_QUERY_ENCODER={ns.out} (this store, or any built with {snapshot.embedder})"
    )


def read_store(settings: KbSettings) -> StoreSnapshot:
    """Every live chunk and vector of the store ``settings`` names, read without writing to it.

    Raises:
        StoreError: there is no store there, it holds no chunks, or it was built with another
            embedder than ``settings`` names (a knowledge base with these settings would not open it).
    """
    from sextant.kb.ann.live import LiveIndex
    from sextant.kb.chroma_client import close_client, open_client
    from sextant.kb.chunk_reader import ChunkReader
    from sextant.kb.derived_indexes import ann_dir
    from sextant.kb.live_collections import read_manifest
    from sextant.kb.store import ChunkStore

    where = settings.chroma_url or str(settings.store_dir())
    if settings.chroma_url is None and not settings.store_dir().is_dir():
        raise StoreError(f"no store at {where}: ingest documents first (sextant-ingest), or name one with --store")
    client = open_client(path=settings.store_dir(), url=settings.chroma_url, database=settings.chroma_database)
    try:
        store = ChunkStore.open_as_built(client, read_manifest(client).live)
        if store.embedder != settings.embedder:
            raise StoreError(
                f"the store at {where} was built with embedder {store.embedder!r}, but SEXTANT_EMBEDDER is "
                f"{settings.embedder!r}: set SEXTANT_EMBEDDER={store.embedder} (the encoder is trained for "
                "the store's own vectors)"
            )
        records = store.list_documents()
        ids = [cid for record in records for cid in record.chunk_ids()]
        if not ids:
            raise StoreError(f"the store at {where} holds no chunks: ingest documents first (sextant-ingest)")
        chunks: list[adapt.ChunkText] = []
        vectors = np.zeros((len(ids), store.dim), np.float32)
        # A store that keeps its vectors in Sextant's index alone is read through that index's saved files.
        saved = None
        if store.vectors_in_index:
            saved = LiveIndex.as_saved(ann_dir(settings), store.dim, embedder=store.embedder)
        reader = ChunkReader(store, saved)
        for lo in range(0, len(ids), FETCH_BATCH):
            for stored in reader.get(ids[lo : lo + FETCH_BATCH], vectors=True):
                if stored.vector is None:
                    raise StoreError(
                        f"the store at {where} keeps its vectors in Sextant's index, which lacks {stored.id!r}: "
                        "search the store once (sextant-kb or sextant-ingest bring the index up to date), then "
                        "run this again"
                    )
                vectors[len(chunks)] = stored.vector
                meta = stored.meta
                chunks.append(
                    adapt.ChunkText(
                        id=stored.id,
                        doc_id=stored.doc_id,
                        title=str(meta.get("title") or ""),
                        section=str(meta.get("section") or ""),
                        text=stored.text,
                    )
                )
            say(f"  read {len(chunks)}/{len(ids)} chunks")
        return StoreSnapshot(chunks, vectors[: len(chunks)], store.embedder, where)
    finally:
        close_client(client)


def _parser() -> argparse.ArgumentParser:
    # Pseudo-questions are cut at 32 tokens, half of what labelled ones get: a step's cost grows with the
    # longest question in it, and a sentence of 25 words is about that long.
    defaults = QueryEncoderTrainConfig(max_length=32, epochs=1)
    p = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, required=True, help="output sentence-transformers folder (and its checkpoint)")
    p.add_argument("--store", type=Path, help="store folder (default: SEXTANT_CHROMA_DIR or SEXTANT_CHROMA_URL)")
    add_source_arguments(p)
    p.add_argument("--max-queries", type=int, default=4800, help="pseudo-questions to train on (0: all)")
    p.add_argument("--max-length", type=int, default=defaults.max_length, help="tokens of a question in training")
    p.add_argument("--batch-size", type=int, default=defaults.batch_size, help="questions per step")
    p.add_argument("--epochs", type=int, default=defaults.epochs, help="passes over the pseudo-questions")
    p.add_argument("--max-steps", type=int, default=defaults.max_steps, help="stop after this many steps")
    p.add_argument("--lr", type=float, default=defaults.learning_rate)
    p.add_argument("--checkpoint-every", type=int, default=defaults.checkpoint_every)
    p.add_argument("--seed", type=int, default=defaults.seed)
    p.add_argument("--threads", type=int, default=2, help="torch threads for training")
    p.add_argument("--log-every", type=int, default=10, help="report every N steps")
    return p
