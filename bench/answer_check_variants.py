"""What the answer check's prompt and cut do, measured on the product's own statements in one run.

    python bench/answer_check_variants.py --out bench/out/answer-check        # golden sample of 40 + near-miss 56
    python bench/answer_check_variants.py --held-out --out bench/out/answer-check-held-out  # the other 81 golden
    python bench/answer_check_variants.py --replay bench/out/answer-check/statements.json  # checks only

The real loop, the real ``sextant-kb`` process and the configured local model answer each question with the
answer check keeping every statement; each statement is then asked once per prompt variant ('cited', the
product's: the sentences after the place they come from; 'plain': the sentences alone; 'examples': the
product's question after a system turn of four worked examples, two near misses among them, about a made-up
choir handbook that no evaluation set mentions) and the probabilities are recorded. Since the writer never
sees the check's verdict, any variant and cut can then be applied to the same statements: the table says,
per variant and cut, how many answerable questions keep a statement standing on their labelled evidence, how
many keep only others, how many abstain, and how many unanswerable questions (golden and near-miss) are
still answered.

Every statement is written to ``statements.json`` with what the check reads (the question, the place, the
evidence sentences) and whether it stands on the labelled evidence, so ``--replay`` scores the variants again
with the checker alone, without the writer or the knowledge base: minutes instead of half an hour.
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import anyio

from sextant.agent.answer_check import QUESTION, SYSTEM, AnswerCheck, evidence_text, places, question_from
from sextant.agent.events import AnswerStatement
from sextant.agent.passages import PassageBook
from sextant.agent.settings import load_agent_settings
from sextant.evals.agent_cli import agent_sets
from sextant.evals.agent_eval import AgentRun, ask_all, on_the_evidence
from sextant.evals.golden import load_golden
from sextant.evals.harness import ingest_corpus
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.llm.chat import YesNoModel
from sextant.llm.factory import build_model
from sextant.llm.settings import ModelSettings
from sextant.settings import KbSettings

CUTS = (0.3, 0.4, 0.5, 0.6)

# (page, sentence, question, does the sentence answer it): two answers and two near misses.
_WORKED = (
    (2, "Rehearsals are held every Tuesday at 7 pm in the church hall.", "When are rehearsals held?", "yes"),
    (2, "Rehearsals are held every Tuesday at 7 pm in the church hall.", "How long does a rehearsal last?", "no"),
    (
        4,
        "New members pay a yearly subscription of 40 pounds, due in September.",
        "Is there a discount on the subscription for students?",
        "no",
    ),
    (
        4,
        "New members pay a yearly subscription of 40 pounds, due in September.",
        "When is the subscription due?",
        "yes",
    ),
)
EXAMPLES_SYSTEM = "\n\n".join(
    [
        SYSTEM + " A text gives the answer only when it states what the question asks for: the number, name, date,"
        " reason or yes or no. A text on the same subject that does not state it does not give the answer.",
        "Examples:",
        *(
            f"Text: From Riverside Choir Handbook, p. {page}, Membership: {sentence}\n\nQuestion: {question}\n\n"
            f"Answer: {answer}"
            for page, sentence, question, answer in _WORKED
        ),
    ]
)

# The served loop with the answer check off, quotes matched as facts, unsupported statements dropped: what these
# recordings were made with.
OFF = load_agent_settings().model_copy(update={"verify": "off", "unsupported": "drop", "quotes": "facts"})


@dataclass
class Checked:
    """One statement as the check reads it, and whether it stands on its question's labelled evidence."""

    question: str
    place: str
    evidence: str
    on_evidence: bool = False
    scores: dict[str, float] = field(default_factory=dict)


@dataclass
class Asked:
    """One question's outcome-relevant facts and its statements."""

    id: str
    answerable: bool
    near_miss: bool
    statements: list[Checked]


def cited(item: Checked) -> tuple[str, str]:
    """The product's prompt: the evidence after the place it comes from."""
    return SYSTEM, question_from(item.question, item.place, item.evidence)


def plain(item: Checked) -> tuple[str, str]:
    """The evidence sentences alone."""
    return SYSTEM, QUESTION.format(text=item.evidence, question=item.question)


def examples(item: Checked) -> tuple[str, str]:
    """The product's question after worked examples in the system turn."""
    return EXAMPLES_SYSTEM, cited(item)[1]


VARIANTS: dict[str, Callable[[Checked], tuple[str, str]]] = {"plain": plain, "cited": cited, "examples": examples}


class Recorder(AnswerCheck):
    """Keeps every statement and records what the check reads, by question and statement text."""

    def __init__(self, model: YesNoModel) -> None:
        super().__init__(model)
        self.checked: dict[str, Checked] = {}

    async def answers(self, question: str, statement: AnswerStatement, book: PassageBook) -> bool:
        self.checked[key(question, statement.text)] = Checked(
            question, places(statement, book), evidence_text(statement, book)
        )
        return True


def key(question: str, statement: str) -> str:
    return f"{question}\n{statement}"


def collect(runs: list[AgentRun], checked: dict[str, Checked]) -> list[Asked]:
    """Each question with the statements its answer made, marked on or off the labelled evidence."""
    asked = []
    for run in runs:
        statements = []
        for statement in run.answer.statements if run.answer else []:
            item = checked.get(key(run.question.text, statement.text))
            if item is not None:
                item.on_evidence = run.question.answerable and on_the_evidence(run, [statement])
                statements.append(item)
        asked.append(Asked(run.question.id, run.question.answerable, run.question.kind == "near-miss", statements))
    return asked


async def score(asked: list[Asked], model: YesNoModel, variants: list[str]) -> None:
    for number, question in enumerate(asked, 1):
        for item in question.statements:
            for variant in variants:
                item.scores[variant] = await model.yes_probability(*VARIANTS[variant](item))
        print(f"[{number}/{len(asked)}] scored {question.id}", flush=True)


def outcome(question: Asked, variant: str, cut: float) -> str:
    kept = [s for s in question.statements if s.scores[variant] >= cut]
    if not kept:
        return "abstained"
    if not question.answerable:
        return "answered"
    return "on the evidence" if any(s.on_evidence for s in kept) else "elsewhere"


def report(asked: list[Asked], variants: list[str]) -> None:
    header = "answerable: on the evidence / elsewhere / abstained | answered: golden unanswerable, near-miss"
    print(f"| variant | cut | {header} |")
    print("|---|---|---|---|")
    for variant in variants:
        for cut in (0.0, *CUTS):
            got = [(q, outcome(q, variant, cut)) for q in asked]
            answerable = [o for q, o in got if q.answerable]
            golden_un = sum(o == "answered" for q, o in got if not q.answerable and not q.near_miss)
            near = sum(o == "answered" for q, o in got if q.near_miss)
            print(
                f"| {variant} | {cut:.1f} | {answerable.count('on the evidence')} / {answerable.count('elsewhere')} / "
                f"{answerable.count('abstained')} | {golden_un}, {near} |"
            )


def load(path: Path) -> list[Asked]:
    rows = json.loads(path.read_text(encoding="utf-8"))
    return [Asked(**{**row, "statements": [Checked(**s) for s in row["statements"]]}) for row in rows]


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
    parser.add_argument("--replay", type=Path, help="a statements.json to score again with the checker alone")
    parser.add_argument("--variants", nargs="+", choices=tuple(VARIANTS), default=list(VARIANTS))
    args = parser.parse_args()
    choice = build_model(ModelSettings())
    if choice.checker is None or (choice.model is None and args.replay is None):
        raise SystemExit(f"needs the local model and its checker: {choice.detail}")
    if args.replay is not None:
        asked = load(args.replay)
    else:
        sets = agent_sets(args.eval_dir)
        golden = load_golden(sets["small"].golden)
        sample = random.Random(args.seed).sample(golden, args.limit)
        if args.held_out:
            questions = [q for q in golden if q not in sample]
        else:
            questions = sample + load_golden(sets["near-miss"].golden)
        recorder = Recorder(choice.checker)
        store = args.store / sets["small"].store
        with KnowledgeBase.open(KbSettings(chroma_dir=store)) as kb:
            ingest_corpus(kb, sets["small"].corpus)

        def progress(done: int, run: AgentRun) -> None:
            print(f"[{done}/{len(questions)}] {run.question.id}", flush=True)

        runs = anyio.run(ask_all, questions, choice.model, store, OFF, progress, recorder)
        asked = collect(runs, recorder.checked)
    anyio.run(score, asked, choice.checker, args.variants)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "statements.json").write_text(json.dumps([asdict(q) for q in asked], indent=1), encoding="utf-8")
    report(asked, args.variants)


if __name__ == "__main__":
    main()
