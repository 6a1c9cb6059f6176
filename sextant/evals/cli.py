"""``sextant-eval``: grade retrieval on the labelled question sets, and gate CI on regressions.

sextant-eval [--set small|large|all] [--modes ...] [--json OUT] [--check] [--write-baseline] [--via-mcp]
             [--ann-index KIND ...]
sextant-eval beir --data DIR [--qrels FILE] [--split S] [--mode M] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sextant.contract.results import SearchMode
from sextant.evals import gate
from sextant.evals.golden import load_golden
from sextant.evals.harness import PRIMARY, K, evaluate, ingest_corpus, table

MODES: tuple[SearchMode, ...] = ("dense", "lexical", "rrf", "rerank", "hybrid")


@dataclass(frozen=True, slots=True)
class GoldenSet:
    name: str
    corpus: Path
    golden: Path
    baseline: Path


def golden_sets(eval_dir: Path) -> dict[str, GoldenSet]:
    """The sets ``sextant-eval`` grades and gates, each with its baseline (agent-only sets: agent_cli)."""
    return {
        "small": GoldenSet(
            "small", eval_dir / "corpus" / "documents", eval_dir / "golden.jsonl", eval_dir / "baseline.json"
        ),
        "large": GoldenSet(
            "large", eval_dir / "corpus-large", eval_dir / "golden-large.jsonl", eval_dir / "baseline-large.json"
        ),
    }


def run_set(
    gs: GoldenSet, store: Path, modes: tuple[SearchMode, ...], via_mcp: bool, ann_index: str = "chroma"
) -> dict[str, Any]:
    """Ingest the set's corpus into its own store, grade every mode, and return the report."""
    from sextant.kb.knowledge_base import KnowledgeBase
    from sextant.settings import KbSettings

    settings = KbSettings(chroma_dir=store / gs.name, ann_index=ann_index)
    kb = KnowledgeBase.open(settings)
    refused = ingest_corpus(kb, gs.corpus)
    questions = load_golden(gs.golden)
    rows = evaluate(kb, questions, modes)
    if ann_index != "chroma":  # one table row per (mode, index): the index's quality cost shows against Chroma's
        for row in rows:
            row.mode = f"{row.mode}@{ann_index}"
    if via_mcp:
        from sextant.evals.via_mcp import grade_via_mcp

        rows.append(grade_via_mcp(questions, settings))
    print(table(rows, f"{gs.name}: {len(questions)} questions over {gs.corpus}"))
    if refused:
        print("refused while ingesting: " + "; ".join(refused), file=sys.stderr)
    return {
        "set": gs.name,
        "questions": len(questions),
        "k": K,
        "primary": PRIMARY,
        "settings": {"chunk_tokens": settings.chunk_tokens, "embedder": settings.embedder, "ann_index": ann_index},
        "modes": [row.as_json() for row in rows],
    }


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] == "beir":
        from sextant.evals.beir_cli import main as beir_main

        beir_main(args[1:])
        return
    parser = argparse.ArgumentParser(
        prog="sextant-eval", description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument(
        "--eval-dir", type=Path, default=Path("eval"), help="folder with the golden sets (default: ./eval)"
    )
    parser.add_argument("--set", choices=["small", "large", "all"], default="all", dest="which")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES[:4]), help="retrieval modes to grade")
    parser.add_argument("--store", type=Path, default=Path(".sextant-eval"), help="where the evaluation stores live")
    parser.add_argument("--json", type=Path, help="write the report as JSON")
    parser.add_argument("--check", action="store_true", help="exit 1 on any drop over 0.02 against the baseline")
    parser.add_argument("--write-baseline", action="store_true", help="record this run as the new baseline")
    parser.add_argument(
        "--via-mcp", action="store_true", help="also run the questions through a real sextant-kb process"
    )
    parser.add_argument(
        "--ann-index",
        nargs="+",
        default=[],
        choices=["flat", "hnsw", "ivfpq", "ivfpq_rerank"],
        help="also grade with dense retrieval through these Index Lab indexes (rows named mode@index)",
    )
    ns = parser.parse_args(args)

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from sextant.kb.embeddings import quiet_model_loading

    quiet_model_loading()
    sets = golden_sets(ns.eval_dir)
    chosen = list(sets.values()) if ns.which == "all" else [sets[ns.which]]
    reports, failures = [], []
    for gs in chosen:
        report = run_set(gs, ns.store, tuple(ns.modes), ns.via_mcp)
        for ann in ns.ann_index:
            extra = run_set(gs, ns.store, tuple(m for m in ns.modes if m != "lexical"), False, ann)
            report["modes"] += extra["modes"]
        reports.append(report)
        if ns.write_baseline:
            gate.write(gs.baseline, report)
        if ns.check:
            if not gs.baseline.exists():
                failures.append(f"{gs.name}: no baseline at {gs.baseline}; run with --write-baseline")
                continue
            failures += [f"{gs.name}: {r}" for r in gate.regressions(report, gate.read(gs.baseline))]
    if ns.json:
        ns.json.write_text(json.dumps(reports, indent=2) + "\n", encoding="utf-8")
    if failures:
        print("REGRESSION (more than 0.02 below eval baseline):\n  " + "\n  ".join(failures), file=sys.stderr)
        sys.exit(1)
    if ns.check:
        print("eval gate: no regression against the baseline")
