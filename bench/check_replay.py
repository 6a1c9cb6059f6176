"""The deterministic checks of today's code replayed on answers ``sextant-eval-agent`` recorded: whose fate changes.

    python bench/check_replay.py bench/out/r19f bench/out/r19a        # folders holding answers-*.jsonl

Each answer row holds the passages the writer was shown, the statements kept (with their evidence) and those
removed (with the quotes the model wrote and which check removed them). Every one of them is checked again by
the quote check (``grounding.check_statement``, with ``SEXTANT_QUOTES=facts`` as in the product) and the kind
of answer (``answer_type``); a statement the 1.5B answer check removed stays removed, since only the model can
say otherwise. Printed: each statement whose fate differs from the recorded one, with whether its question is
answerable, then the counts. A change to a check is measured here in seconds before a model run; a change that
alters the writer's prompt is not (its answers would differ).

The rows do not record passages' titles and sections, so a rule that reads them cannot be replayed here.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from sextant.agent.answer_type import answers_kind
from sextant.agent.grounding import check_statement
from sextant.agent.passages import Passage, PassageBook
from sextant.evals.agent_cli import agent_sets
from sextant.evals.golden import load_golden
from sextant.llm.chat import Quote, Statement

EVAL = Path(__file__).resolve().parents[1] / "eval"


def questions() -> dict[str, str]:
    """Every question of the sets ``sextant-eval-agent`` answers, by id."""
    return {q.id: q.text for s in agent_sets(EVAL).values() for q in load_golden(s.golden)}


def kept_now(text: str, quotes: list[tuple[int, str]], book: PassageBook, question: str) -> bool:
    statement = Statement(text, tuple(Quote(label, words) for label, words in quotes))
    checked = check_statement(statement, book, book.labels(), "drop", question=question, quotes="facts")
    return checked.statement is not None and answers_kind(question, text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="folders of answers-*.jsonl from sextant-eval-agent")
    args = parser.parse_args()
    asked = questions()
    counts: Counter[str] = Counter()
    for run in args.runs:
        for path in sorted(run.glob("answers-*.jsonl")):
            for line in path.read_text(encoding="utf-8").splitlines():
                row = json.loads(line)
                if row.get("mode") != "model" or row["id"] not in asked:
                    continue
                question = asked[row["id"]]
                book = PassageBook(Passage(label=int(k), title="", text=v) for k, v in row["passages"].items())
                recorded = [
                    (s["text"], [(e["label"], e["quote"]) for e in s["evidence"]], "kept") for s in row["statements"]
                ]
                recorded += [
                    (r["text"], [(q["label"], q["quote"]) for q in r["quotes"]], f"removed by the {r['check']} check")
                    for r in row["removed"]
                    if r["check"] == "quote"
                ]
                for text, quotes, was in recorded:
                    now = kept_now(text, quotes, book, question)
                    if now == (was == "kept"):
                        continue
                    kind = "answerable" if row["answerable"] else "unanswerable"
                    change = "now kept" if now else "now removed"
                    counts[f"{was}, {change}, {kind}"] += 1
                    print(f"{run.name}/{path.name} {row['id']} ({kind}) {was}, {change}: {text[:110]}")
    print()
    for change, n in sorted(counts.items()):
        print(f"{n:4d}  {change}")
    if not counts:
        print("no statement's fate changes")


if __name__ == "__main__":
    main()
