"""``sextant-train-embedder``: fine-tune Sextant's embedder on BEIR-format labelled questions, offline.

    sextant-train-embedder --data ../shared/data/beir/nfcorpus --out models/embedder-nfcorpus

Queries are split as ``sextant-train-reranker`` splits them (dev held out where the set has one,
else a hashed share of train, written under ``--splits``), so the two models never train on each
other's evaluation questions. The output folder is a sentence-transformers model: point
``SEXTANT_EMBEDDER`` at it and ingest into a new store (a store keeps the embedder it was built
with). Rerunning the same command resumes from the last checkpoint.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from sextant.evals import beir
from sextant.training.bi_encoder import EmbedderTrainConfig
from sextant.training.cli import exits_on, held_out_split, parse_offline, progress_reporter, say, training_parser
from sextant.training.pairs import Qrels
from sextant.training.trainer import write_training_record


def main(argv: list[str] | None = None) -> None:
    ns = parse_offline(_parser(), sys.argv[1:] if argv is None else argv)
    config = EmbedderTrainConfig(
        base=ns.base,
        max_length=ns.max_length,
        batch_size=ns.batch_size,
        steps=ns.steps,
        learning_rate=ns.lr,
        checkpoint_every=ns.checkpoint_every,
        seed=ns.seed,
    )
    qrels: Qrels = {}
    queries: dict[str, str] = {}
    documents: dict[str, str] = {}
    sources = []
    with exits_on("sextant-train-embedder", beir.BeirError):
        for data in ns.data:
            # Ids carry their dataset's name: two sets may both have a document "1".
            name = data.resolve().name
            fit, held_out = held_out_split(data, ns.held_out, ns.splits)
            qrels.update({f"{name}/{q}": {f"{name}/{d}": g for d, g in j.items()} for q, j in fit.items()})
            queries.update({f"{name}/{q}": text for q, text in beir.read_queries(data).items()})
            documents.update({f"{name}/{d.id}": d.as_document().text for d in beir.read_corpus(data)})
            sources.append({"dataset": name, "questions": len(fit), "held_out_qrels": str(held_out)})
            say(f"{name}: {len(fit)} training questions; held out: {held_out}")

    import torch

    from sextant.kb.embeddings import quiet_model_loading
    from sextant.training.bi_encoder import train_embedder

    quiet_model_loading()
    torch.set_num_threads(ns.threads)
    fingerprint = hashlib.sha256(json.dumps([sources, sorted(qrels.items())]).encode()).hexdigest()
    with exits_on("sextant-train-embedder", ValueError):
        record = train_embedder(
            qrels, queries, documents, config, ns.out, fingerprint=fingerprint, report=progress_reporter(ns.log_every)
        )
    record["sources"] = sources
    write_training_record(ns.out, record)
    say(
        f"trained in {record['train_seconds']:.0f} s ({record['steps']} steps); ingest into a new store with "
        f"SEXTANT_EMBEDDER={ns.out}"
    )


def _parser() -> argparse.ArgumentParser:
    defaults = EmbedderTrainConfig()
    p = training_parser("sextant-train-embedder", __doc__, "output sentence-transformers folder", defaults)
    p.add_argument("--data", type=Path, nargs="+", required=True, help="BEIR folders to train on")
    p.add_argument("--base", default=defaults.base, help="sentence-transformers model to start from")
    p.add_argument("--max-length", type=int, default=defaults.max_length, help="tokens of a document in training")
    p.add_argument(
        "--batch-size", type=int, default=defaults.batch_size, help="questions per step (in-batch negatives)"
    )
    p.add_argument("--steps", type=int, default=defaults.steps)
    return p
