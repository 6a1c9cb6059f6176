"""What a model-written overview per document does to retrieval (learning/overviews.md).

Ingests eval/corpus/documents into a fresh store and grades, per retrieval mode, hit@1 on the
"which document…" questions (eval/golden-documents.jsonl) and recall@5 on the passage questions
(eval/golden.jsonl). Then the local model writes an overview of every document, the knowledge base
stores them, and the same questions are graded again on the same store.

    python bench/overview_effect.py                        # Qwen2.5-Coder-0.5B, 1 thread
    python bench/overview_effect.py --overviews FILE       # reuse (or save) the overviews written
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from sextant.agent.settings import AgentSettings
from sextant.contract.results import SearchMode
from sextant.evals.golden import Question, load_golden
from sextant.evals.harness import evaluate, ingest_corpus
from sextant.kb.embeddings import quiet_model_loading
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.llm.llama_local import LlamaModel
from sextant.llm.overviews import write_overview
from sextant.settings import KbSettings

REPO = Path(__file__).resolve().parents[1]
MODES: tuple[SearchMode, ...] = ("dense", "lexical", "rrf")


def grade(kb: KnowledgeBase, documents: list[Question], passages: list[Question]) -> dict[str, dict[str, float]]:
    """Per mode: hit@1 on "which document…", recall@5 and nDCG@10 on the passage questions, and how many of
    the passage questions' top five are overviews (a slot an overview takes is a slot no passage has)."""
    doc_rows = {r.mode: r for r in evaluate(kb, documents, MODES)}
    passage_rows = {r.mode: r for r in evaluate(kb, passages, MODES)}
    out: dict[str, dict[str, float]] = {}
    for mode in MODES:
        taken = [
            sum(h.kind == "overview" for h in kb.search(q.text, 5, mode=mode, abstain=False, detail="ids").hits)
            for q in passages
            if q.answerable
        ]
        out[mode] = {
            "documents hit@1": doc_rows[mode].metrics["hit@1"],
            "passages recall@5": passage_rows[mode].metrics["recall@5"],
            "passages ndcg@10": passage_rows[mode].metrics["ndcg@10"],
            "overviews in passage top 5": statistics.fmean(taken),
        }
    return out


async def write_all(kb: KnowledgeBase, model_name: str, threads: int) -> tuple[dict[str, str], dict[str, float]]:
    """Every document's overview from the local model; returns the overviews and what they cost."""
    model = LlamaModel.from_settings(AgentSettings(local_model=model_name, threads=threads, _env_file=None))  # type: ignore[call-arg]
    overviews: dict[str, str] = {}
    seconds: list[float] = []
    out_tokens: list[int] = []
    try:
        for info in kb.documents():
            record = kb.document(info.id)
            started = time.perf_counter()
            text, usage = await write_overview(model, record.title, record.text, [s.title for s in record.sections])
            seconds.append(time.perf_counter() - started)
            out_tokens.append(usage.output_tokens)
            overviews[info.id] = text
            print(f"{info.id}: {seconds[-1]:.1f} s, {usage.output_tokens} tokens: {text}", file=sys.stderr)
    finally:
        await model.aclose()
    cost = {
        "seconds per document": statistics.fmean(seconds),
        "output tokens per document": statistics.fmean(out_tokens),
    }
    return overviews, cost


def table(before: dict[str, dict[str, float]], after: dict[str, dict[str, float]]) -> str:
    metrics = list(next(iter(before.values())))
    lines = ["| mode | metric | text only | with overviews | change |", "|---|---|---|---|---|"]
    for mode in MODES:
        for m in metrics:
            b, a = before[mode][m], after[mode][m]
            lines.append(f"| {mode} | {m} | {b:.3f} | {a:.3f} | {a - b:+.3f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--model", default="qwen2.5-coder-0.5b-instruct", help="a name sextant-models knows")
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp and embedding threads")
    parser.add_argument("--overviews", type=Path, help="JSON of overviews: read if it exists, else written")
    args = parser.parse_args()
    quiet_model_loading()
    documents = load_golden(REPO / "eval" / "golden-documents.jsonl")
    passages = load_golden(REPO / "eval" / "golden.jsonl")
    with tempfile.TemporaryDirectory() as store:
        settings = KbSettings(chroma_dir=Path(store), threads=args.threads, _env_file=None)  # type: ignore[call-arg]
        with KnowledgeBase.open(settings) as kb:
            refused = ingest_corpus(kb, REPO / "eval" / "corpus" / "documents")
            if refused:
                sys.exit("refused: " + "; ".join(refused))
            before = grade(kb, documents, passages)
            cost: dict[str, float] = {}
            if args.overviews and args.overviews.exists():
                overviews = json.loads(args.overviews.read_text(encoding="utf-8"))
            else:
                overviews, cost = asyncio.run(write_all(kb, args.model, args.threads))
                if args.overviews:
                    args.overviews.write_text(json.dumps(overviews, indent=1, ensure_ascii=False) + "\n", "utf-8")
            for doc_id, text in overviews.items():
                kb.set_overview(doc_id, text)
            after = grade(kb, documents, passages)
    print(
        f"{len(documents)} which-document questions, {sum(q.answerable for q in passages)} answerable passage questions"
    )
    print(table(before, after))
    for name, value in cost.items():
        print(f"{name}: {value:.1f}")


if __name__ == "__main__":
    main()
