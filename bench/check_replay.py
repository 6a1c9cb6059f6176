"""The checks of today's code replayed on answers ``sextant-eval-agent`` recorded: whose fate changes.

    python bench/check_replay.py bench/out/r21        # folders holding answers-*.jsonl

Every statement of every row (``rule_effects.recorded_statements``: kept ones with their evidence and trail,
removed ones with the quotes the model wrote) goes through today's checks again (``statement_checks.replay``),
the answer check giving its recorded outcome, since only the model can say otherwise. Printed: each statement whose
fate differs from the recorded one, with whether its question is answerable, then the counts. A change to a rule
is measured here in seconds before a model run; a change that alters the writer's prompt is not (its answers
would differ). ``sextant-eval-agent rules`` tells which rule decided each statement.

Passages are replayed by their text alone (rows do not record titles and sections), so a rule that reads them
cannot be replayed here.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from sextant.evals.agent_cli import agent_sets
from sextant.evals.golden import Question, load_golden
from sextant.evals.rule_effects import recorded_statements

EVAL = Path(__file__).resolve().parents[1] / "eval"


def questions() -> dict[str, Question]:
    """Every question of the sets ``sextant-eval-agent`` answers, by id."""
    return {q.id: q for s in agent_sets(EVAL).values() for q in load_golden(s.golden)}


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
                question = asked.get(row["id"])
                if row.get("mode") != "model" or question is None:
                    continue
                passages = {int(k): v for k, v in row["passages"].items()}
                for recorded in recorded_statements(row):
                    now = recorded.replayed(question.text, passages).kept
                    if now == recorded.kept:
                        continue
                    kind = "answerable" if question.answerable else "unanswerable"
                    was, change = ("kept", "now removed") if recorded.kept else ("removed", "now kept")
                    counts[f"{was}, {change}, {kind}"] += 1
                    print(
                        f"{run.name}/{path.name} {row['id']} ({kind}) {was}, {change}: {recorded.statement.text[:110]}"
                    )
    print()
    for change, n in sorted(counts.items()):
        print(f"{n:4d}  {change}")
    if not counts:
        print("no statement's fate changes")


if __name__ == "__main__":
    main()
