"""``sextant-eval-agent``: run the agent (real loop, configured model, real sextant-kb process) over a
golden set; grade what it retrieved and how it cited, and write the answers for ``sextant-judge``.

``--set near-miss`` asks the unanswerable near-miss questions (eval/golden-near-miss.jsonl) over the
small set's corpus and store. What matters there is abstention (``abstained_on_unanswerable``) and the
judge: with no answerable question the ranking columns of the retrieval table read 0 and mean nothing.

``--set python-docs`` and ``--set python-docs-near-miss`` ask questions about Python's own documentation,
which no golden set was written from: ``--corpus DIR`` names the pool ``scripts/python_docs_pool.py --out
DIR`` made (from Debian's python3.11-doc), and both sets share its store."""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from sextant.evals.agent_eval import AgentRun, answer_summary, ask_all, grade_runs, judge_rows, write_jsonl
from sextant.evals.cli import golden_sets
from sextant.evals.golden import load_golden
from sextant.evals.harness import evaluate, ingest_corpus, table
from sextant.evals.judge_cli import judge_file
from sextant.evals.rule_effects import effects


@dataclass(frozen=True, slots=True)
class AgentSet:
    """A question set the agent is run over: its questions, the corpus they are about, and the store."""

    name: str
    golden: Path
    corpus: Path | None  # None: not in the repository, given with --corpus
    store: str  # folder under --store; a set over another set's corpus shares that set's store


def agent_sets(eval_dir: Path) -> dict[str, AgentSet]:
    """The sets ``sextant-eval`` grades, ``near-miss`` over the small set's corpus and store, and the two
    sets about the Python docs pool, whose documents are built outside the repository.

    None of the agent-only sets is in ``golden_sets``, so ``sextant-eval``, its gate and the bench sweeps
    never grade them and they need no baseline.
    """
    sets = {name: AgentSet(gs.name, gs.golden, gs.corpus, gs.name) for name, gs in golden_sets(eval_dir).items()}
    small = sets["small"]
    sets["near-miss"] = AgentSet("near-miss", eval_dir / "golden-near-miss.jsonl", small.corpus, small.store)
    for name in ("python-docs", "python-docs-near-miss"):
        sets[name] = AgentSet(name, eval_dir / f"{name}.jsonl", None, "python-docs")
    return sets


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["injection"]:
        from sextant.evals import injection_cli

        injection_cli.main(argv[1:])
        return
    if argv[:1] == ["rules"]:
        from sextant.evals import rules_cli

        rules_cli.main(argv[1:])
        return
    parser = argparse.ArgumentParser(
        prog="sextant-eval-agent",
        description=__doc__,
        epilog="sextant-eval-agent injection: documents that carry instructions; sextant-eval-agent rules "
        "ANSWERS.jsonl: each check's effect on recorded answers (see their --help).",
    )
    parser.add_argument("--set", choices=tuple(agent_sets(Path("eval"))), default="small")
    parser.add_argument("--eval-dir", type=Path, default=Path("eval"), help="folder holding the golden sets")
    parser.add_argument("--store", type=Path, default=Path(".sextant-eval"), help="folder of evaluation stores")
    parser.add_argument("--limit", type=int, default=0, help="a seeded sample of this many questions (0: all)")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--out", type=Path, default=Path(".sextant-eval/agent"), help="where answers and the report go")
    parser.add_argument(
        "--corpus",
        type=Path,
        help="the documents of a set kept outside the repository (python-docs: the pool's folder)",
    )
    args = parser.parse_args(argv)
    gs = agent_sets(args.eval_dir)[args.set]
    corpus = gs.corpus or args.corpus
    if corpus is None or not corpus.is_dir():
        parser.error(
            f"--set {args.set} needs --corpus DIR, a folder made by scripts/python_docs_pool.py --out DIR"
            + (f" ({corpus} is not a folder)" if corpus else "")
        )

    from sextant.agent.answer_check import answer_check_for
    from sextant.agent.settings import load_agent_settings
    from sextant.kb.knowledge_base import KnowledgeBase
    from sextant.llm.factory import build_model
    from sextant.settings import KbSettings

    store = args.store / gs.store
    # Ingest in this process first (unchanged documents are skipped), then let the subprocess own the store.
    questions = load_golden(gs.golden)
    if args.limit and args.limit < len(questions):
        questions = random.Random(args.seed).sample(questions, args.limit)
    with KnowledgeBase.open(KbSettings(chroma_dir=store)) as kb:
        refused = ingest_corpus(kb, corpus)
        # The reference row: the product's search with each question verbatim, on the same sample.
        direct = evaluate(kb, questions, ("hybrid",))[0]
    if refused:
        print("refused while ingesting: " + "; ".join(refused), file=sys.stderr)

    settings = load_agent_settings()
    choice = build_model(settings)
    print(f"model: {choice.detail}", file=sys.stderr)
    started = time.perf_counter()

    def progress(done: int, run: AgentRun) -> None:
        answer = run.answer
        outcome = f"{answer.mode}, {answer.citations.labels_valid} valid labels" if answer else "no answer"
        print(
            f"[{done}/{len(questions)}] {run.question.id}: {outcome} ({time.perf_counter() - started:.0f} s)",
            file=sys.stderr,
            flush=True,
        )

    runs = anyio.run(ask_all, questions, choice.model, store, settings, progress, answer_check_for(choice))
    elapsed = time.perf_counter() - started

    name = f"agent ({choice.model.name if choice.model else 'excerpts'})"
    report = grade_runs(name, runs)
    answers_path = args.out / f"answers-{gs.name}.jsonl"
    rows = judge_rows(runs)
    write_jsonl(answers_path, rows)
    judge_lines, judge_failed = judge_file(answers_path)
    summary: dict[str, Any] = {
        "set": gs.name,
        "questions": len(questions),
        "model": choice.detail,
        "seconds": round(elapsed, 1),
        "retrieval": report.as_json(),
        "retrieval_question_as_query": direct.as_json(),
        "answers": answer_summary(runs),
        "rule_effects": effects(rows, {q.id: q for q in questions}).as_json(),
        "judge": {"passed": len(judge_lines) - judge_failed, "failed": judge_failed},
    }
    print(table([direct, report], f"{gs.name}: {len(questions)} questions, searched directly and through the agent"))
    print(json.dumps(summary["answers"], indent=2))
    print(f"sextant-judge: {summary['judge']['passed']} passed, {judge_failed} failed ({answers_path})")
    (args.out / f"report-{gs.name}.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
