"""Could the answer check's model read instead of the 0.5B writer? Its best sentence, verbatim, as the answer.

    python bench/extractive_reader.py --out bench/out/extractive        # golden sample of 40 + near-miss 56

For each question: the product's search (the real ``sextant-kb`` process over the evaluation store, the
question verbatim, five passages), the sentences the writer would be shown (``policies.SENTENCES_SHOWN``, in
the order ``sentences.candidates`` ranks them), and the checker's P(yes) for each of the first ``--top``,
asked exactly as the answer check asks (``answer_check.check_question``). The answer is the sentence with
the highest P(yes) when it reaches the check's cut, else an abstention. Reported like
``bench/answer_check_variants.py``, with the seconds the checks took per question.
"""

from __future__ import annotations

import random
import statistics
import time
from pathlib import Path

import anyio
from answer_check_variants import question_parser  # bench/ is the script's own folder

from sextant.agent.answer_check import KEEP_AT, SYSTEM, check_question
from sextant.agent.events import AnswerStatement, Evidence
from sextant.agent.kb_client import KbClient, search_result, stdio_server
from sextant.agent.passages import PassageBook
from sextant.agent.policies import SENTENCES_SHOWN
from sextant.agent.sentences import rank, split
from sextant.evals.agent_cli import agent_sets
from sextant.evals.agent_eval import stands_on_the_evidence
from sextant.evals.golden import Question, load_golden
from sextant.llm.factory import build_model
from sextant.llm.settings import ModelSettings


async def read_all(questions: list[Question], store: Path, top: int) -> list[tuple[Question, str, float]]:
    choice = build_model(ModelSettings(answer_check="auto", provider="local"))
    if choice.checker is None:
        raise SystemExit(f"needs the checker model: {choice.detail}")
    params = stdio_server(None)
    params.env = {"SEXTANT_CHROMA_DIR": str(store), "SEXTANT_LOG_LEVEL": "WARNING", **(params.env or {})}
    results = []
    async with KbClient(params) as kb:
        for question in questions:
            outcome = await kb.call("kb_search", {"query": question.text})
            book = PassageBook()
            passages = book.add_hits(search_result(outcome).hits)
            every = [s for p in passages for s in split(p.label, p.text)]
            ranked = [r.sentence for r in rank(question.text, every) if r.score > 0][: min(top, SENTENCES_SHOWN)]
            started = time.perf_counter()
            best: tuple[float, AnswerStatement] | None = None
            for sentence in ranked:
                passage = book.get(sentence.label)
                assert passage is not None
                statement = AnswerStatement(
                    text=sentence.text,
                    evidence=[Evidence.at(sentence.label, passage.text, sentence.start, sentence.end)],
                    supported=True,
                )
                p = await choice.checker.yes_probability(SYSTEM, check_question(question.text, statement, book))
                if best is None or p > best[0]:
                    best = (p, statement)
            seconds = time.perf_counter() - started
            if best is None or best[0] < KEEP_AT:
                results.append((question, "abstained", seconds))
            elif not question.answerable:
                results.append((question, "answered", seconds))
            else:
                right = stands_on_the_evidence(question, [best[1]], passages)
                results.append((question, "on the evidence" if right else "elsewhere", seconds))
    await choice.aclose()
    return results


def main() -> None:
    parser = question_parser(__doc__)
    parser.add_argument("--top", type=int, default=5, help="sentences the checker reads per question")
    args = parser.parse_args()
    sets = agent_sets(args.eval_dir)
    sample = random.Random(args.seed).sample(load_golden(sets["small"].golden), args.limit)
    questions = sample + load_golden(sets["near-miss"].golden)
    results = anyio.run(read_all, questions, args.store / sets["small"].store, args.top)
    answerable = [o for q, o, _ in results if q.answerable]
    golden_un = sum(o == "answered" for q, o, _ in results if not q.answerable and q.kind != "near-miss")
    near = sum(o == "answered" for q, o, _ in results if q.kind == "near-miss")
    header = "answerable: on the evidence / elsewhere / abstained | answered: golden unanswerable, near-miss"
    print(f"| reader | {header} | s |")
    print("|---|---|---|---|")
    print(
        f"| checker, best of {args.top} | {answerable.count('on the evidence')} / {answerable.count('elsewhere')} / "
        f"{answerable.count('abstained')} | {golden_un}, {near} | {statistics.median(s for _, _, s in results):.2f} |"
    )


if __name__ == "__main__":
    main()
