"""What does a stronger embedder cost at ingest? Seconds per 1,000 stored chunks, side by side in one run.

Each variant ingests the same first documents of a BEIR corpus through the product
(``KnowledgeBase.ingest``: chunking in the embedder's own tokens, embedding, the Chroma write, BM25) into
its own fresh store. The variants run in rounds, their order reversed every other round, so that load
on a shared machine falls on all of them alike; the table reports each variant's median and its ratio
to the packaged MiniLM's, plus the chunks it made (a chunk is 200 tokens of *its* tokenizer). Memory is
not reported: safetensors weights are memory-mapped, so resident size depends on what was read so far.

    python bench/embedder_cost.py --data ../shared/data/beir/nfcorpus \\
        --variant all-MiniLM-L6-v2:fp32 --variant models/embeddinggemma-300m:fp32 \\
        --variant models/embeddinggemma-300m:bf16
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from sextant.evals import beir
from sextant.kb.embeddings import load_embedder, quiet_model_loading
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.settings import EmbedPrecision as Precision
from sextant.settings import KbSettings


@dataclass
class Variant:
    embedder: str
    precision: Precision
    seconds: list[float] = field(default_factory=list)
    chunks: int = 0

    @property
    def label(self) -> str:
        return f"{Path(self.embedder).name} {self.precision}"


def _parse(spec: str) -> Variant:
    name, _, precision = spec.rpartition(":")
    if precision not in ("fp32", "bf16") or not name:
        raise SystemExit(f"--variant {spec!r}: expected EMBEDDER:fp32 or EMBEDDER:bf16")
    return Variant(name, cast(Precision, precision))


def _ingest_once(variant: Variant, docs: list[beir.BeirDoc], threads: int) -> None:
    with tempfile.TemporaryDirectory(prefix="embedder-cost-") as store:
        settings = KbSettings(
            chroma_dir=Path(store), embedder=variant.embedder, embed_precision=variant.precision, threads=threads
        )
        with KnowledgeBase.open(settings) as kb:
            started = time.perf_counter()
            beir.ingest(kb, iter(docs))
            variant.seconds.append(time.perf_counter() - started)
            variant.chunks = kb.stats().chunks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="BEIR folder (its corpus.jsonl is read)")
    parser.add_argument("--docs", type=int, default=200, help="documents ingested per variant and round")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--variant", action="append", required=True, help="EMBEDDER:fp32|bf16; the first is the reference"
    )
    args = parser.parse_args()
    quiet_model_loading()
    docs = list(itertools.islice(beir.read_corpus(args.data), args.docs))
    variants = [_parse(spec) for spec in args.variant]
    for variant in variants:  # loaded once each, before any timing
        load_embedder(variant.embedder, args.threads, variant.precision)
    for round_ in range(args.rounds):
        for variant in variants if round_ % 2 == 0 else variants[::-1]:
            _ingest_once(variant, docs, args.threads)
    reference = statistics.median(variants[0].seconds) / variants[0].chunks
    print(f"{len(docs)} documents of {args.data.name}, {args.threads} threads, {args.rounds} rounds\n")
    print("| embedder | chunks | s per 1,000 chunks (median) | ratio to the first |")
    print("|---|---|---|---|")
    for variant in variants:
        per_chunk = statistics.median(variant.seconds) / variant.chunks
        print(f"| {variant.label} | {variant.chunks} | {1000 * per_chunk:.0f} | {per_chunk / reference:.2f} |")


if __name__ == "__main__":
    main()
