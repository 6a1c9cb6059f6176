"""Training groups for a cross-encoder: held-out splits and hard negatives mined by the product.

A group is one query, one relevant passage and a pool of negatives: the passages Sextant's own
hybrid search (dense + BM25, fused by RRF, at the searcher's default depth) ranks highest among
the unjudged ones, which are exactly the candidates the reranker has to put below the answer,
plus a few random passages so that clearly irrelevant text learns a low score (abstention reads it).

Queries are split by a hash of their id, never by position or a seed: the held-out part is the
same on every machine and for every training seed, so no run can train on another's test queries.
"""

from __future__ import annotations

import csv
import hashlib
import json
import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from sextant.evals.beir import BeirDoc
from sextant.kb.knowledge_base import KnowledgeBase

Qrels = dict[str, dict[str, int]]

PAIRS_FORMAT = 1


def is_held_out(query_id: str, fraction: float) -> bool:
    """True for a stable ``fraction`` of query ids (SHA-256 of the id, so independent of any seed)."""
    bucket = int.from_bytes(hashlib.sha256(query_id.encode("utf-8")).digest()[:8], "big") / 2**64
    return bucket < fraction


def split_qrels(qrels: Qrels, fraction: float) -> tuple[Qrels, Qrels]:
    """``(fit, held_out)``: every query's judgements go wholly to one side."""
    fit: Qrels = {}
    held: Qrels = {}
    for qid, judged in qrels.items():
        (held if is_held_out(qid, fraction) else fit)[qid] = dict(judged)
    return fit, held


def write_qrels(path: Path, qrels: Qrels) -> Path:
    """A BEIR qrels TSV (header, then query, document, grade) that ``sextant-eval beir --qrels`` reads."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(["query-id", "corpus-id", "score"])
        for qid in sorted(qrels):
            for doc_id, grade in sorted(qrels[qid].items()):
                writer.writerow([qid, doc_id, grade])
    return path


@dataclass(frozen=True, slots=True)
class Group:
    """One query, one relevant passage, and negatives to draw from (hardest first, random last)."""

    query_id: str
    query: str
    positive: str
    negatives: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class MiningConfig:
    positives_per_query: int = 2
    hard_negatives: int = 15
    random_negatives: int = 2
    depth: int = 30
    seed: int = 0


def mine_groups(
    kb: KnowledgeBase,
    docs: Mapping[str, BeirDoc],
    queries: Mapping[str, str],
    qrels: Qrels,
    config: MiningConfig,
    progress: Callable[[int, int], None] | None = None,
) -> list[Group]:
    """Groups for every judged query in ``qrels``; hard negatives come from ``kb``'s hybrid search.

    Positives the search found come first (the reranker only ever sees retrieved candidates), then
    by grade; a query whose search finds no unjudged document still gets its random negatives.
    """
    rng = random.Random(config.seed)
    doc_ids = sorted(docs)
    judged_queries = sorted(q for q in qrels if q in queries and any(g > 0 for g in qrels[q].values()))
    groups: list[Group] = []
    for n, qid in enumerate(judged_queries, start=1):
        judged = qrels[qid]
        ranked = _ranked_documents(kb, queries[qid], config.depth)
        rank = {doc_id: r for r, doc_id in enumerate(ranked)}
        positives = sorted(
            (d for d, g in judged.items() if g > 0 and d in docs),
            key=lambda d: (d not in rank, -judged[d], rank.get(d, 0), d),
        )[: config.positives_per_query]
        hard = [d for d in ranked if d not in judged][: config.hard_negatives]
        easy = _random_unjudged(rng, doc_ids, judged, set(hard), config.random_negatives)
        negatives = tuple(docs[d].as_document().text for d in hard + easy)
        groups.extend(Group(qid, queries[qid], docs[p].as_document().text, negatives) for p in positives)
        if progress:
            progress(n, len(judged_queries))
    return groups


def _ranked_documents(kb: KnowledgeBase, query: str, depth: int) -> list[str]:
    """Distinct documents of the fused candidates the product would hand its reranker, best chunk first."""
    result = kb.search(query, 2 * depth, mode="rrf", detail="ids", abstain=False, depth=depth)
    return list(dict.fromkeys(hit.document_id for hit in result.hits))


def _random_unjudged(
    rng: random.Random, doc_ids: list[str], judged: Mapping[str, int], skip: set[str], n: int
) -> list[str]:
    picked: list[str] = []
    while len(picked) < min(n, len(doc_ids) - len(judged) - len(skip)):
        doc_id = rng.choice(doc_ids)
        if doc_id not in judged and doc_id not in skip and doc_id not in picked:
            picked.append(doc_id)
    return picked


def save_groups(path: Path, groups: Iterable[Group], fingerprint: str) -> None:
    """JSON lines, headed by the format and a fingerprint of what they were mined from."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        handle.write(json.dumps({"format": PAIRS_FORMAT, "fingerprint": fingerprint}) + "\n")
        for group in groups:
            handle.write(json.dumps(asdict(group)) + "\n")
    tmp.replace(path)


def load_groups(path: Path, fingerprint: str) -> list[Group] | None:
    """The saved groups, or None when there are none or they were mined from something else."""
    if not path.is_file():
        return None
    with path.open(encoding="utf-8") as handle:
        header = json.loads(handle.readline() or "{}")
        if header != {"format": PAIRS_FORMAT, "fingerprint": fingerprint}:
            return None
        rows = [json.loads(line) for line in handle if line.strip()]
    return [Group(r["query_id"], r["query"], r["positive"], tuple(r["negatives"])) for r in rows]
