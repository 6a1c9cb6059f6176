"""The checks of today's code replayed on answers ``sextant-eval-agent`` recorded: whose fate changes.

    python bench/check_replay.py bench/out/r21        # folders holding answers-*.jsonl

Every statement of every row (``rule_effects.recorded_statements``: kept ones with their evidence and trail,
removed ones with the quotes the model wrote) goes through today's checks again (``statement_checks.replay``),
the answer check giving its recorded outcome, since only the model can say otherwise. Printed: each statement whose
fate differs from the recorded one, with whether its question is answerable, then the counts. A change to a rule
is measured here in seconds before a model run; a change that alters the writer's prompt is not (its answers
would differ). ``sextant-eval-agent rules`` tells which rule decided each statement.

    python bench/check_replay.py bench/out/r21 --fixture tests/agent/recorded_statements.jsonl

writes the regression fixture instead: up to ``--per-rule`` recorded statements (with a trail) for each rule that
decided one, kept and removed, with their question, the passages shown and the trail; ``tests/agent/
test_statement_checks.py`` replays every row and expects the same fate and trail.

Passages are replayed by their text alone (rows do not record titles and sections), so a rule that reads them
cannot be replayed here.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sextant.evals.agent_cli import agent_sets
from sextant.evals.golden import Question, load_golden
from sextant.evals.rule_effects import kept_by, recorded_statements, removed_by

EVAL = Path(__file__).resolve().parents[1] / "eval"


def questions() -> dict[str, Question]:
    """Every question of the sets ``sextant-eval-agent`` answers, by id."""
    return {q.id: q for s in agent_sets(EVAL).values() for q in load_golden(s.golden)}


def answered(runs: list[Path], asked: dict[str, Question]) -> Iterator[tuple[str, dict[str, Any], Question]]:
    """Each row the model answered in the runs' ``answers-*.jsonl``, where it comes from, and its question."""
    for run in runs:
        for path in sorted(run.glob("answers-*.jsonl")):
            for line in path.read_text(encoding="utf-8").splitlines():
                row = json.loads(line)
                question = asked.get(row["id"])
                if row.get("mode") == "model" and question is not None:
                    yield f"{run.name}/{path.name}", row, question


def fixture(runs: list[Path], asked: dict[str, Question], per_rule: int) -> list[dict[str, object]]:
    """Recorded statements with a trail, up to ``per_rule`` for each (fate, deciding rule), in the runs' order."""
    taken: Counter[tuple[bool, str]] = Counter()
    rows: list[dict[str, object]] = []
    for _, row, question in answered(runs, asked):
        for recorded in recorded_statements(row):
            if not recorded.trail:
                continue
            key = (recorded.kept, kept_by(recorded.trail) if recorded.kept else removed_by(recorded.trail))
            if taken[key] >= per_rule:
                continue
            taken[key] += 1
            rows.append(
                {
                    "id": row["id"],
                    "question": question.text,
                    "passages": row["passages"],
                    "text": recorded.statement.text,
                    "quotes": [[q.label, q.text] for q in recorded.statement.quotes],
                    "p_yes": recorded.p_yes,
                    "kept": recorded.kept,
                    "trail": [v.model_dump(exclude_defaults=True) for v in recorded.trail],
                }
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="folders of answers-*.jsonl from sextant-eval-agent")
    parser.add_argument("--fixture", type=Path, help="write the regression fixture here instead")
    parser.add_argument("--per-rule", type=int, default=4, help="statements per (fate, deciding rule) in the fixture")
    args = parser.parse_args()
    asked = questions()
    if args.fixture is not None:
        rows = fixture(args.runs, asked, args.per_rule)
        args.fixture.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        print(f"{len(rows)} recorded statements written to {args.fixture}")
        return
    counts: Counter[str] = Counter()
    for where, row, question in answered(args.runs, asked):
        passages = {int(k): v for k, v in row["passages"].items()}
        for recorded in recorded_statements(row):
            now = recorded.replayed(question.text, passages).kept
            if now == recorded.kept:
                continue
            kind = "answerable" if question.answerable else "unanswerable"
            was, change = ("kept", "now removed") if recorded.kept else ("removed", "now kept")
            counts[f"{was}, {change}, {kind}"] += 1
            print(f"{where} {row['id']} ({kind}) {was}, {change}: {recorded.statement.text[:110]}")
    print()
    for change, n in sorted(counts.items()):
        print(f"{n:4d}  {change}")
    if not counts:
        print("no statement's fate changes")


if __name__ == "__main__":
    main()
