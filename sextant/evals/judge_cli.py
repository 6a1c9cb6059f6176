"""``sextant-judge ANSWERS.jsonl``: grade generated answers with the evaluation's own reading (``oracle``).

Each line: ``{"id", "answer", "passages": {"1": "...", ...}, "answerable": true|false}``, and where the answer came
from Sextant (``sextant-eval-agent`` writes them), its typed ``abstained`` and ``statements`` with their evidence.
Prints one line per answer and a summary; exits 1 when any answer has an unresolved citation, an uncited claim, an
evidence quote not in the passage it names, an ``abstained`` its text contradicts, or abstains when it should
answer (or answers when it should abstain).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from sextant.evals.oracle import Reading, read


def judge_file(path: Path) -> tuple[list[str], int]:
    """Report lines and the number of failed answers."""
    lines, failed = [], 0
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
            reading = _read(row)
            answerable = bool(row.get("answerable", True))
        except (json.JSONDecodeError, KeyError, ValueError, AttributeError, TypeError) as exc:
            raise SystemExit(f"sextant-judge: {path}:{n}: {exc}") from exc
        problems = _problems(reading, answerable)
        failed += bool(problems)
        lines.append(f"{row.get('id', n)}: {'ok' if not problems else '; '.join(problems)}")
    return lines, failed


def _read(row: dict[str, Any]) -> Reading:
    shown = {int(k): str(v) for k, v in row.get("passages", {}).items()}
    typed = row.get("abstained")
    evidence = [(int(e["label"]), str(e["quote"])) for s in row.get("statements", []) for e in s["evidence"]]
    return read(str(row["answer"]), shown, abstained=None if typed is None else bool(typed), evidence=evidence)


def _problems(reading: Reading, answerable: bool) -> list[str]:
    problems = [f"[{c}] was not shown" for c in reading.unresolved]
    if reading.disagrees:
        says = "abstained" if reading.abstained else "answered"
        problems.append(f"the answer says it {says}, its text cites {reading.cited or 'nothing'}")
    problems += [f"quote not in passage [{label}]: {quote[:60]!r}" for label, quote in reading.unfound]
    if answerable and reading.abstained:
        problems.append("abstained on an answerable question")
    if not answerable and not reading.abstained:
        problems.append("answered an unanswerable question")
    if not reading.abstained:
        problems += [f"uncited claim: {s[:80]!r}" for s in reading.uncited]
    return problems


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="sextant-judge", description=__doc__)
    parser.add_argument("answers", type=Path, help="JSONL file of generated answers and the passages shown")
    args = parser.parse_args(argv)
    lines, failed = judge_file(args.answers)
    print("\n".join(lines))
    print(f"{len(lines) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
