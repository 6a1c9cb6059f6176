"""``sextant-train-reranker pseudo``: a BEIR folder of pseudo-questions made from a folder of documents.

    sextant-train-reranker pseudo --docs pool/python-docs --out pool/python-docs-pseudo
    sextant-train-reranker --data ../shared/data/beir/scifact pool/python-docs-pseudo --out models/reranker-general

Labelled questions exist for few domains; text exists for many. The documents are loaded and chunked as
the knowledge base does (its loaders, its chunk size counted by the embedder's tokenizer), each chunk
becomes a BEIR document, and the pseudo-questions of ``sextant.training.adapt`` (a document's title, a
section heading, a sentence, or a question the local model writes about the chunk) become its queries,
each judged relevant to the chunks it was made from. The trainer then reads the folder like any BEIR set:
it holds out a hashed fifth of the questions and mines hard negatives from the product's own search over
the chunks. Nothing is embedded here.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from sextant.kb.chunking import ChunkingConfig, Tokenizer, chunk_document
from sextant.kb.document_ids import uri_safe_id
from sextant.kb.documents import LoadError
from sextant.kb.loaders import load_file, supported_files
from sextant.training import adapt
from sextant.training.cli import exits_on, parse_offline, say
from sextant.training.model_questions import add_source_arguments, written_if_asked
from sextant.training.pairs import write_qrels

PROG = "sextant-train-reranker pseudo"


def chunk_folder(folder: Path, tokenizer: Tokenizer, config: ChunkingConfig) -> tuple[list[adapt.ChunkText], int]:
    """Every supported file's chunks as the knowledge base would cut them, and how many files failed to load."""
    chunks: list[adapt.ChunkText] = []
    failed = 0
    for path in supported_files(folder):
        relative = path.relative_to(folder).as_posix()
        try:
            doc = load_file(path)
        except LoadError as exc:
            say(f"  skipped {relative}: {exc}")
            failed += 1
            continue
        # The whole relative path, not the name alone: faq/index.md and tutorial/index.md are two documents, and
        # a BEIR id becomes a document id in the trainer's store.
        doc_id = uri_safe_id(relative)
        for chunk in chunk_document(doc, tokenizer, config):
            chunks.append(adapt.ChunkText(f"{doc_id}-{chunk.index}", doc_id, doc.title, chunk.section, chunk.text))
    return chunks, failed


def write_folder(out: Path, chunks: Sequence[adapt.ChunkText], queries: Sequence[adapt.PseudoQuery]) -> Path:
    """``corpus.jsonl``, ``queries.jsonl`` and ``qrels/train.tsv`` under ``out``; ``out`` is returned."""
    out.mkdir(parents=True, exist_ok=True)
    ids = {q.id: _query_id(q) for q in queries}
    # No title: the trainer's store would prepend it, and a chunk cut to the knowledge base's size would then
    # be cut again into a second, tiny chunk that costs an embedding and says nothing.
    _write_jsonl(out / "corpus.jsonl", [{"_id": c.id, "title": "", "text": c.text} for c in chunks])
    _write_jsonl(out / "queries.jsonl", [{"_id": ids[q.id], "text": q.text, "source": q.source} for q in queries])
    write_qrels(out / "qrels" / "train.tsv", {ids[q.id]: dict.fromkeys(q.positives, 1) for q in queries})
    return out


def _query_id(query: adapt.PseudoQuery) -> str:
    """Short and stable: the trainer's held-out split hashes it, so the same question always lands on one side."""
    return f"{query.source}-{hashlib.sha256(query.id.encode()).hexdigest()[:16]}"


def _write_jsonl(path: Path, rows: Sequence[dict[str, str]]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    tmp.replace(path)


def main(argv: list[str] | None = None) -> None:
    ns = parse_offline(_parser(), sys.argv[1:] if argv is None else argv)
    if not ns.docs.is_dir():
        say(f"{PROG}: no folder at {ns.docs}")
        raise SystemExit(2)
    from sextant.kb.embeddings import load_embedder, quiet_model_loading
    from sextant.settings import KbSettings

    quiet_model_loading()
    settings = KbSettings()
    tokenizer = load_embedder(settings.embedder, settings.threads, settings.embed_precision)
    with exits_on(PROG, OSError):
        chunks, failed = chunk_folder(ns.docs, tokenizer, ChunkingConfig(target=settings.chunk_tokens))
    written = written_if_asked(chunks, ns, PROG)
    queries = adapt.pseudo_queries(chunks, ns.sources, ns.max_queries or None, ns.seed, written)
    if not queries:
        say(f"{PROG}: no {'/'.join(ns.sources)} in the documents of {ns.docs} makes a question")
        raise SystemExit(2)
    write_folder(ns.out, chunks, queries)
    skipped = f" ({failed} files could not be loaded)" if failed else ""
    made = adapt.described(adapt.counts(queries))
    say(f"{len(chunks)} chunks{skipped}; pseudo-questions: {made}; train on it with --data {ns.out}")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--docs", type=Path, required=True, help="folder of documents (any type sextant-ingest reads)")
    p.add_argument("--out", type=Path, required=True, help="BEIR folder to write")
    add_source_arguments(p)
    p.add_argument("--threads", type=int, default=2, help="threads for the local model (model)")
    p.add_argument("--log-every", type=int, default=50, help="report every N model questions")
    p.add_argument("--max-queries", type=int, default=0, help="pseudo-questions, drawn evenly across sources (0: all)")
    p.add_argument("--seed", type=int, default=0)
    return p
