"""What a search stage costs a warm search: the product's search with and without it, side by side.

Opens an existing store (e.g. the one ``sextant-eval beir`` builds), then asks a BEIR set's questions with the
searcher as its settings make it and with one attribute changed, alternated question by question in one
process (the machine is shared: only neighbouring measurements compare), and reports the median of each and
their ratio, with the median time of each stage.

    python bench/search_cost.py --store .sextant-eval/beir-nfcorpus \\
        --queries ../shared/data/beir/nfcorpus/queries.jsonl --limit 300 --with feedback=3
    python bench/search_cost.py ... --with fusion=scores        # against SEXTANT_FUSION's
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from sextant.kb.knowledge_base import KnowledgeBase
from sextant.settings import KbSettings

# The Searcher attributes a run may change, and how their values are written.
CHANGES = {"feedback": int, "fusion": str}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, required=True, help="a store folder (SEXTANT_CHROMA_DIR)")
    parser.add_argument("--queries", type=Path, required=True, help="a BEIR queries.jsonl")
    parser.add_argument("--limit", type=int, default=300)
    parser.add_argument(
        "--with", dest="change", default="feedback=3", help="ATTRIBUTE=VALUE, one of: " + ", ".join(CHANGES)
    )
    args = parser.parse_args()
    name, _, text = args.change.partition("=")
    if name not in CHANGES or not text:
        parser.error(f"--with takes ATTRIBUTE=VALUE with ATTRIBUTE one of {', '.join(CHANGES)}, got {args.change!r}")
    lines = args.queries.read_text(encoding="utf-8").splitlines()[: args.limit]
    questions = [json.loads(line)["text"] for line in lines]
    with KnowledgeBase.open(KbSettings(chroma_dir=args.store)) as kb:
        values = (getattr(kb.searcher, name), CHANGES[name](text))
        if values[0] == values[1]:
            parser.error(f"the store's settings already search with {name}={text}: nothing to compare")
        seconds: dict[object, list[float]] = {v: [] for v in values}
        stages: dict[object, dict[str, list[float]]] = {v: {} for v in values}
        kb.search(questions[0], abstain=False)  # load the model and the caches
        for i, question in enumerate(questions):
            for value in values if i % 2 == 0 else values[::-1]:
                setattr(kb.searcher, name, value)
                started = time.perf_counter()
                result = kb.search(question, abstain=False)
                seconds[value].append(time.perf_counter() - started)
                for stage, ms in result.timings_ms.items():
                    stages[value].setdefault(stage, []).append(ms)
        chunks = kb.stats().chunks
    print(f"{len(questions)} questions, {chunks} chunks, median ms per search")
    names = list(stages[values[1]])
    print(f"| {name} | search | " + " | ".join(names) + " |")
    print("|---|---|" + "---|" * len(names))
    for value in values:
        cells = [f"{statistics.median(stages[value].get(s, [0.0])):.1f}" for s in names]
        print(f"| {value} | {1000 * statistics.median(seconds[value]):.1f} | " + " | ".join(cells) + " |")
    ratio = statistics.median(a / b for a, b in zip(seconds[values[1]], seconds[values[0]], strict=True))
    print(f"{name}={values[1]} / {name}={values[0]}, median per question: {ratio:.2f}x")


if __name__ == "__main__":
    main()
