"""What does a remote embedder cost Sextant, and what does batching buy? Chunks/s, local and remote, in one run.

The remote endpoint is the protocol double of the tests (``tests/kb/embedding_server_double.py``): a threaded HTTP
server on 127.0.0.1 speaking OpenAI's ``/v1/embeddings``, whose own work (hashing words into vectors) is near
zero. Against it, chunks/s measures what Sextant itself pays per request (JSON, HTTP, pacing, the tokenizer);
with ``--latency`` ms added to every answer it stands for a GPU server or an API across a network, and shows
what ``SEXTANT_EMBEDDER_BATCH`` does. The local embedder (the packaged all-MiniLM-L6-v2, as
``SEXTANT_EMBEDDER`` resolves it here) embeds the same texts in the same run.

Two paths:

- ``embed``: ``Embedder.embed`` over every chunk at once, as ``sextant-kb-migrate`` does (64 at a time);
- ``ingest``: ``KnowledgeBase.ingest`` document by document inside ``kb.batch()``, as ``sextant-ingest`` does:
  each document's chunks are embedded together, so short documents make one request each whatever the batch;
- ``ingest_many``: ``KnowledgeBase.ingest_many``, the bulk path: a group's chunks embedded together across its
  documents, and written as one store write.

Variants run in rounds, their order reversed every other round, so load on a shared machine falls on all alike;
the median is reported.

    python bench/remote_embedder.py --data ../shared/data/beir/scifact --docs 200 --rounds 2
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from sextant.evals import beir  # noqa: E402
from sextant.kb.chunking import ChunkingConfig, chunk_document  # noqa: E402
from sextant.kb.documents import LoadedDocument  # noqa: E402
from sextant.kb.embed_remote import RemoteOptions, remote_model  # noqa: E402
from sextant.kb.embeddings import Embedder, load_embedder, quiet_model_loading  # noqa: E402
from sextant.kb.knowledge_base import KnowledgeBase, ToIngest  # noqa: E402
from sextant.settings import KbSettings  # noqa: E402
from tests.kb.embedding_server_double import EmbeddingServerDouble, vector_of  # noqa: E402


@dataclass
class Variant:
    label: str
    path: str  # "embed", "ingest" or "ingest_many"
    embedder: Callable[[], Embedder]
    latency_ms: float = 0.0
    seconds: list[float] = field(default_factory=list)
    requests: int = 0
    chunks: int = 0


def _docs(data: Path, n: int) -> list[LoadedDocument]:
    return [
        LoadedDocument(text=f"{d.title}\n\n{d.text}" if d.title else d.text, title=d.title or d.id)
        for d in itertools.islice(beir.read_corpus(data), n)
    ]


def _chunk_texts(docs: list[LoadedDocument], embedder: Embedder) -> list[str]:
    config = ChunkingConfig(target=200)
    return [c.text for doc in docs for c in chunk_document(doc, embedder, config)]


def _run(variant: Variant, double: EmbeddingServerDouble, docs: list[LoadedDocument], texts: list[str]) -> None:
    double.latency_s = variant.latency_ms / 1000
    embedder = variant.embedder()
    before = len(double.requests)
    try:
        if variant.path == "embed":
            started = time.perf_counter()
            embedder.embed(texts, batch_size=64)
            variant.seconds.append(time.perf_counter() - started)
            variant.chunks = len(texts)
        else:
            with tempfile.TemporaryDirectory(prefix="remote-embedder-") as store:
                settings = KbSettings(chroma_dir=Path(store), embedder=embedder.name, _env_file=None)
                with KnowledgeBase.open(settings, embedder=embedder) as kb:
                    started = time.perf_counter()
                    with kb.batch():
                        if variant.path == "ingest_many":
                            for _ in kb.ingest_many(ToIngest(f"d{i}", doc) for i, doc in enumerate(docs)):
                                pass
                        else:
                            for i, doc in enumerate(docs):
                                kb.ingest(f"d{i}", doc)
                    variant.seconds.append(time.perf_counter() - started)
                    variant.chunks = kb.stats().chunks
    finally:
        variant.requests = len(double.requests) - before
        if embedder.runtime == "remote":
            embedder.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="BEIR folder (its corpus.jsonl is read)")
    parser.add_argument("--docs", type=int, default=200, help="documents embedded per variant and round")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2, help="the local embedder's")
    parser.add_argument("--latency", type=float, default=50.0, help="ms the simulated endpoint adds per request")
    args = parser.parse_args()
    quiet_model_loading()
    local = load_embedder("all-MiniLM-L6-v2", args.threads)
    docs = _docs(args.data, args.docs)
    texts = _chunk_texts(docs, local)

    with EmbeddingServerDouble(dim=384, api_key="bench") as double:

        def remote(batch: int) -> Callable[[], Embedder]:
            options = RemoteOptions(url=double.openai_url, api_key="bench", batch=batch)
            return lambda: Embedder("openai:double", model=remote_model("openai:double", options))

        variants = [Variant(f"local {local.name} ({local.runtime} {local.precision})", "embed", lambda: local)]
        variants += [Variant(f"remote, batch {b}", "embed", remote(b)) for b in (32, 1)]
        variants += [
            Variant(f"remote +{args.latency:g} ms, batch {b}", "embed", remote(b), args.latency)
            for b in (128, 32, 8, 1)
        ]
        variants += [
            Variant(f"local {local.name} ({local.runtime} {local.precision})", "ingest", lambda: local),
            Variant("remote, batch 32", "ingest", remote(32)),
            Variant(f"remote +{args.latency:g} ms, batch 32", "ingest", remote(32), args.latency),
            Variant(f"local {local.name} ({local.runtime} {local.precision})", "ingest_many", lambda: local),
            Variant("remote, batch 32", "ingest_many", remote(32)),
            Variant(f"remote +{args.latency:g} ms, batch 32", "ingest_many", remote(32), args.latency),
        ]
        for round_ in range(args.rounds):
            for variant in variants if round_ % 2 == 0 else variants[::-1]:
                _run(variant, double, docs, texts)
                print(
                    f"round {round_ + 1}: {variant.path} {variant.label}: {variant.seconds[-1]:.2f} s", file=sys.stderr
                )

    started = time.perf_counter()
    for text in texts:
        vector_of(text, 384)
    own = time.perf_counter() - started
    print(
        f"{len(docs)} documents of {args.data.name} -> {len(texts)} chunks of <= 200 tokens; {args.rounds} rounds, "
        f"median; local embedder on {args.threads} threads; cpus {os.cpu_count()}; the double's own vectors for "
        f"every chunk take {own * 1000:.0f} ms (words cached, as in the runs)\n"
    )
    print("| path | embedder | requests | chunks/s | ratio to local |")
    print("|---|---|---|---|---|")
    reference: dict[str, float] = {}
    for variant in variants:
        rate = variant.chunks / statistics.median(variant.seconds)
        reference.setdefault(variant.path, rate)
        requests = variant.requests if variant.label.startswith("remote") else "-"  # the dimension probe is not counted
        print(f"| {variant.path} | {variant.label} | {requests} | {rate:.1f} | {rate / reference[variant.path]:.2f} |")


if __name__ == "__main__":
    main()
