"""What dense feedback costs a warm search: the product's search with and without it, side by side.

Opens an existing store (e.g. the one ``sextant-eval beir`` builds), then asks a BEIR set's questions with
``SEXTANT_DENSE_FEEDBACK``'s passages fed back and with none, alternated question by question in one process
(the machine is shared: only neighbouring measurements compare), and reports the median of each and their
ratio, with the median time of each stage.

    python bench/search_feedback.py --store .sextant-eval/beir-nfcorpus \\
        --queries ../shared/data/beir/nfcorpus/queries.jsonl --limit 300
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from sextant.kb.knowledge_base import KnowledgeBase
from sextant.settings import KbSettings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, required=True, help="a store folder (SEXTANT_CHROMA_DIR)")
    parser.add_argument("--queries", type=Path, required=True, help="a BEIR queries.jsonl")
    parser.add_argument("--limit", type=int, default=300)
    parser.add_argument("--feedback", type=int, default=3, help="passages fed back, against none (default 3)")
    args = parser.parse_args()
    if args.feedback < 1:
        parser.error("--feedback must be 1 or more: it is compared with no feedback")
    lines = args.queries.read_text(encoding="utf-8").splitlines()[: args.limit]
    questions = [json.loads(line)["text"] for line in lines]
    seconds: dict[int, list[float]] = {0: [], args.feedback: []}
    stages: dict[int, dict[str, list[float]]] = {0: {}, args.feedback: {}}
    with KnowledgeBase.open(KbSettings(chroma_dir=args.store)) as kb:
        kb.search(questions[0], abstain=False)  # load the model and the caches
        for i, question in enumerate(questions):
            for feedback in (0, args.feedback) if i % 2 == 0 else (args.feedback, 0):
                kb.searcher.feedback = feedback
                started = time.perf_counter()
                result = kb.search(question, abstain=False)
                seconds[feedback].append(time.perf_counter() - started)
                for stage, ms in result.timings_ms.items():
                    stages[feedback].setdefault(stage, []).append(ms)
        chunks = kb.stats().chunks
    print(f"{len(questions)} questions, {chunks} chunks, median ms per search")
    print("| feedback | search | " + " | ".join(stages[args.feedback]) + " |")
    print("|---|---|" + "---|" * len(stages[args.feedback]))
    for feedback in (0, args.feedback):
        cells = [f"{statistics.median(stages[feedback].get(s, [0.0])):.1f}" for s in stages[args.feedback]]
        print(f"| {feedback} | {1000 * statistics.median(seconds[feedback]):.1f} | " + " | ".join(cells) + " |")
    ratio = statistics.median(a / b for a, b in zip(seconds[args.feedback], seconds[0], strict=True))
    print(f"with feedback / without, median per question: {ratio:.2f}x")


if __name__ == "__main__":
    main()
