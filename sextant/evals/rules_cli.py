"""``sextant-eval-agent rules ANSWERS.jsonl…``: each check's effect on recorded answers, a table per file.

For each file ``sextant-eval-agent`` wrote (``answers-SET.jsonl``), the statements each rule removed and those each
tolerance kept, on the labelled snippet of an answerable question and elsewhere (``sextant.evals.rule_effects``).
Rows recorded before statements carried a trail are checked again with today's rules. ``--json`` writes the
tables too.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from sextant.evals.agent_cli import agent_sets
from sextant.evals.golden import load_golden
from sextant.evals.rule_effects import REMOVERS, TOLERANCES, Effects, effects


def table(name: str, result: Effects) -> str:
    """Markdown: one row per rule, removed and kept statements, on the snippet and elsewhere."""
    data = result.as_json()
    lines = [
        f"{name}: {data['statements']} statements",
        "",
        "| rule | removed on the snippet | removed elsewhere | kept on the snippet | kept elsewhere |",
    ]
    lines.append("|---|---:|---:|---:|---:|")
    for rule in REMOVERS:
        counts = data["removed_by"][rule]
        lines.append(f"| {rule} | {counts['on_snippet']} | {counts['elsewhere']} | | |")
    for rule in ("exact", *TOLERANCES):
        counts = data["kept_by"][rule]
        lines.append(f"| {rule} | | | {counts['on_snippet']} | {counts['elsewhere']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="sextant-eval-agent rules", description=__doc__)
    parser.add_argument("answers", nargs="+", type=Path, help="answers-*.jsonl files from sextant-eval-agent")
    parser.add_argument("--eval-dir", type=Path, default=Path("eval"), help="folder holding the golden sets")
    parser.add_argument("--json", type=Path, help="also write the tables here")
    args = parser.parse_args(argv)
    questions = {q.id: q for s in agent_sets(args.eval_dir).values() for q in load_golden(s.golden)}
    tables = {}
    for path in args.answers:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        result = effects(rows, questions)
        tables[path.name] = result.as_json()
        print(table(path.name, result), end="\n\n")
    if args.json is not None:
        args.json.write_text(json.dumps(tables, indent=2), encoding="utf-8")
