"""What the answer check's prompt and cut do, measured on the product's own statements in one run.

    python bench/answer_check_variants.py --out bench/out/answer-check        # golden sample of 40 + near-miss 56
    python bench/answer_check_variants.py --held-out --out bench/out/answer-check-held-out  # the other 81 golden

The real loop, the real ``sextant-kb`` process and the configured local model answer each question with the
answer check keeping every statement; for each statement the checker model is asked once per prompt
variant ('cited', the product's: the sentences after the place they come from; 'plain': the sentences
alone) and the probabilities are recorded. Since the writer never sees the check's verdict, any variant
and cut can then be applied to the same statements: the table says, per variant and cut, how many
answerable questions keep a statement standing on their labelled evidence, how many keep only others,
how many abstain, and how many unanswerable questions (golden and near-miss) are still answered.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import anyio

from sextant.agent.answer_check import QUESTION, SYSTEM, AnswerCheck, check_question, evidence_text
from sextant.agent.events import AnswerStatement
from sextant.agent.passages import PassageBook
from sextant.evals.agent_cli import agent_sets
from sextant.evals.agent_eval import AgentRun, ask_all, on_the_evidence
from sextant.evals.golden import load_golden
from sextant.llm.chat import YesNoModel
from sextant.llm.factory import build_model
from sextant.llm.settings import ModelSettings

CUTS = (0.3, 0.4, 0.5, 0.6)


def plain_question(question: str, statement: AnswerStatement, book: PassageBook) -> str:
    """Variant 'plain': the evidence sentences alone, without the place they come from."""
    return QUESTION.format(text=evidence_text(statement, book), question=question)


class Recorder(AnswerCheck):
    """Keeps every statement and records each variant's P(yes) for it, by question and statement text."""

    def __init__(self, model: YesNoModel) -> None:
        super().__init__(model)
        self.scores: dict[str, dict[str, float]] = {}

    async def answers(self, question: str, statement: AnswerStatement, book: PassageBook) -> bool:
        self.scores[key(question, statement.text)] = {
            "plain": await self.model.yes_probability(SYSTEM, plain_question(question, statement, book)),
            "cited": await self.model.yes_probability(SYSTEM, check_question(question, statement, book)),
        }
        return True


def key(question: str, statement: str) -> str:
    return f"{question}\n{statement}"


def outcome(run: AgentRun, scores: dict[str, dict[str, float]], variant: str, cut: float) -> str:
    said = run.answer.statements if run.answer else []
    kept = [s for s in said if scores.get(key(run.question.text, s.text), {}).get(variant, 1.0) >= cut]
    if not kept:
        return "abstained"
    if not run.question.answerable:
        return "answered"
    return "on the evidence" if on_the_evidence(run, kept) else "elsewhere"


def question_parser(doc: str | None) -> argparse.ArgumentParser:
    """The options of the benches over the golden sample (``sextant-eval-agent``'s seeded one) and near misses."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--eval-dir", type=Path, default=Path("eval"))
    parser.add_argument("--store", type=Path, default=Path(".sextant-eval"))
    parser.add_argument("--limit", type=int, default=40)
    parser.add_argument("--seed", type=int, default=13)
    return parser


def main() -> None:
    parser = question_parser(__doc__)
    parser.add_argument("--out", type=Path, default=Path("bench/out/answer-check"))
    parser.add_argument(
        "--held-out", action="store_true", help="ask the golden questions outside the sample instead (no near-miss)"
    )
    args = parser.parse_args()
    sets = agent_sets(args.eval_dir)
    golden = load_golden(sets["small"].golden)
    sample = random.Random(args.seed).sample(golden, args.limit)
    if args.held_out:
        questions = [q for q in golden if q not in sample]
    else:
        questions = sample + load_golden(sets["near-miss"].golden)
    choice = build_model(ModelSettings())
    if choice.model is None or choice.checker is None:
        raise SystemExit(f"needs the local model and its checker: {choice.detail}")
    recorder = Recorder(choice.checker)
    store = args.store / sets["small"].store
    runs = anyio.run(ask_all, questions, choice.model, store, "off", None, "drop", "facts", recorder)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "scores.json").write_text(json.dumps(recorder.scores, indent=1), encoding="utf-8")
    header = "answerable: on the evidence / elsewhere / abstained | answered: golden unanswerable, near-miss"
    print(f"| variant | cut | {header} |")
    print("|---|---|---|---|")
    for variant in ("plain", "cited"):
        for cut in (0.0, *CUTS):
            got = [(run, outcome(run, recorder.scores, variant, cut)) for run in runs]
            answerable = [o for r, o in got if r.question.answerable]
            golden_un = sum(
                o == "answered" for r, o in got if not r.question.answerable and r.question.kind != "near-miss"
            )
            near = sum(o == "answered" for r, o in got if r.question.kind == "near-miss")
            print(
                f"| {variant} | {cut:.1f} | {answerable.count('on the evidence')} / {answerable.count('elsewhere')} / "
                f"{answerable.count('abstained')} | {golden_un}, {near} |"
            )


if __name__ == "__main__":
    main()
