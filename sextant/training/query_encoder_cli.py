"""``sextant-train-query-encoder``: fine-tune how questions are embedded, keeping the stored vectors.

    sextant-train-query-encoder --data ../shared/data/beir/nfcorpus --out models/query-nfcorpus
    SEXTANT_QUERY_ENCODER=models/query-nfcorpus sextant-eval beir --data ../shared/data/beir/nfcorpus --split dev

Trains against every chunk vector of the store ``sextant-eval beir`` builds for the set (built
here first if missing), so the result serves that store and any other built with the same
embedder: nothing is re-embedded. Queries are split as the other trainers split them (dev held
out where the set has one, else a hashed share of train, written under ``--splits``). Rerunning
the same command resumes from the last checkpoint.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from sextant.evals import beir
from sextant.training.cli import (
    beir_store,
    exits_on,
    held_out_split,
    parse_offline,
    progress_reporter,
    say,
    training_parser,
)
from sextant.training.query_encoder import QueryEncoderTrainConfig, StoredVectors
from sextant.training.trainer import write_training_record


def train_config(ns: argparse.Namespace) -> QueryEncoderTrainConfig:
    """The trainer's settings from the options ``training_parser`` and this command's parser share."""
    return QueryEncoderTrainConfig(
        max_length=ns.max_length,
        batch_size=ns.batch_size,
        epochs=ns.epochs,
        max_steps=ns.max_steps,
        learning_rate=ns.lr,
        checkpoint_every=ns.checkpoint_every,
        seed=ns.seed,
    )


def main(argv: list[str] | None = None) -> None:
    ns = parse_offline(_parser(), sys.argv[1:] if argv is None else argv)
    config = train_config(ns)
    from sextant.kb.embeddings import quiet_model_loading

    quiet_model_loading()
    name = ns.data.resolve().name
    with exits_on("sextant-train-query-encoder", beir.BeirError):
        fit, held_out = held_out_split(ns.data, ns.held_out, ns.splits)
        queries = beir.read_queries(ns.data)
        say(f"{name}: {len(fit)} training questions; held out: {held_out}")
        stored = _stored_vectors(ns.data, ns.store_root)

    import torch

    from sextant.training.query_encoder import train_query_encoder

    torch.set_num_threads(ns.threads)
    source = {"dataset": name, "questions": len(fit), "held_out_qrels": str(held_out)}
    fingerprint = hashlib.sha256(
        json.dumps([source, sorted(fit.items()), stored.embedder, len(stored.documents)]).encode()
    ).hexdigest()
    with exits_on("sextant-train-query-encoder", ValueError):
        record = train_query_encoder(
            fit, queries, stored, config, ns.out, fingerprint=fingerprint, report=progress_reporter(ns.log_every)
        )
    record["sources"] = [source]
    write_training_record(ns.out, record)
    say(
        f"trained in {record['train_seconds']:.0f} s ({record['steps']} steps); search with "
        f"SEXTANT_QUERY_ENCODER={ns.out} (any store built with {stored.embedder})"
    )


def _stored_vectors(data: Path, store_root: Path) -> StoredVectors:
    with beir_store(data, store_root, beir.read_corpus(data)) as kb:
        ids, vectors = kb.chunk_vectors()
        doc_of = {cid: record.id for record in kb.store.list_documents() for cid in record.chunk_ids()}
        say(f"  {len(ids)} chunk vectors from {kb.settings.store_dir()}")
        return StoredVectors(vectors=vectors, documents=[doc_of[cid] for cid in ids], embedder=kb.embedder.name)


def _parser() -> argparse.ArgumentParser:
    defaults = QueryEncoderTrainConfig()
    p = training_parser("sextant-train-query-encoder", __doc__, "output sentence-transformers folder", defaults)
    p.add_argument("--data", type=Path, required=True, help="BEIR folder to train on")
    p.add_argument("--store-root", type=Path, default=Path(".sextant-eval"), help="folder of the beir-<name> stores")
    p.add_argument("--max-length", type=int, default=defaults.max_length, help="tokens of a question in training")
    p.add_argument("--batch-size", type=int, default=defaults.batch_size, help="questions per step")
    p.add_argument("--epochs", type=int, default=defaults.epochs, help="passes over the training questions")
    p.add_argument("--max-steps", type=int, default=defaults.max_steps, help="stop after this many steps")
    return p
