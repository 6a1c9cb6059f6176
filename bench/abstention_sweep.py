"""Calibrate the abstention rule on the labelled question sets.

For every question of the golden sets, record the signals the rule sees (best dense cosine among
the candidates, distinct query words matched in the top passages); then sweep the rule's
thresholds and report, for each, the share of unanswerable questions abstained on and of
answerable ones wrongly abstained on. Uses the stores that `sextant-eval` builds.

    python bench/abstention_sweep.py [--store .sextant-eval] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from sextant.evals.cli import golden_sets
from sextant.evals.golden import load_golden
from sextant.evals.harness import ingest_corpus
from sextant.kb.abstention import AbstentionRule
from sextant.kb.embeddings import quiet_model_loading
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.settings import KbSettings


@dataclass(frozen=True)
class Signal:
    set: str
    id: str
    answerable: bool
    dense: float
    terms: int


def signals(store: Path, eval_dir: Path) -> list[Signal]:
    rows: list[Signal] = []
    for gs in golden_sets(eval_dir).values():
        kb = KnowledgeBase.open(KbSettings(chroma_dir=store / gs.name))
        ingest_corpus(kb, gs.corpus)
        for q in load_golden(gs.golden):
            r = kb.search(q.text, 10, abstain=False)
            rows.append(Signal(gs.name, q.id, q.answerable, r.best_dense, r.matched_terms))
    return rows


def sweep(rows: list[Signal]) -> list[tuple[float, float, float]]:
    out = []
    for min_dense in (0.15, 0.20, 0.25, 0.30, 0.35, 0.40, 0.45, 0.50):
        rule = AbstentionRule(min_dense=min_dense)
        decided = [(rule.decide(r.dense, r.terms)[0], r.answerable) for r in rows]
        unans = [a for a, ok in decided if not ok]
        ans = [a for a, ok in decided if ok]
        out.append((min_dense, sum(unans) / len(unans), sum(ans) / len(ans)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", type=Path, default=Path(".sextant-eval"))
    parser.add_argument("--eval-dir", type=Path, default=Path("eval"))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    quiet_model_loading()
    rows = signals(args.store, args.eval_dir)
    answerable = sorted(r.dense for r in rows if r.answerable)
    print(f"{len(rows)} questions ({sum(not r.answerable for r in rows)} unanswerable)")
    print(f"lowest best-dense of an answerable question: {[round(d, 3) for d in answerable[:3]]}")
    print("\nunanswerable questions (set, id, best dense, matched terms):")
    for r in sorted((r for r in rows if not r.answerable), key=lambda r: r.dense):
        print(f"  {r.set:5} {r.id}  {r.dense:.3f}  {r.terms}")
    print("\n| min_dense | unanswerable abstained | answerable wrongly abstained |")
    print("|---|---|---|")
    for min_dense, ok, wrong in sweep(rows):
        print(f"| {min_dense:.2f} | {ok:.0%} | {wrong:.1%} |")
    terms = sorted(r.terms for r in rows)
    print(f"\nmatched query words in the top passages: min {terms[0]}, median {terms[len(terms) // 2]}")
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
