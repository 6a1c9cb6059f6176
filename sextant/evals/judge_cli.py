"""``sextant-judge ANSWERS.jsonl``: grade generated answers with the deterministic citation check.

Each line: ``{"id", "answer", "passages": {"1": "...", ...}, "answerable": true|false}``. Prints one
line per answer and a summary; exits 1 when any answer has an unresolved citation, an uncited
claim, or abstains when it should answer (or answers when it should abstain).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from sextant.evals.judge import check_citations


def judge_file(path: Path) -> tuple[list[str], int]:
    """Report lines and the number of failed answers."""
    lines, failed = [], 0
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
            shown = {int(k): str(v) for k, v in row.get("passages", {}).items()}
            report = check_citations(str(row["answer"]), shown)
            answerable = bool(row.get("answerable", True))
        except (json.JSONDecodeError, KeyError, ValueError, AttributeError) as exc:
            raise SystemExit(f"sextant-judge: {path}:{n}: {exc}") from exc
        problems = [f"[{c}] was not shown" for c in report.unresolved]
        if answerable and report.abstained:
            problems.append("abstained on an answerable question")
        if not answerable and not report.abstained:
            problems.append("answered an unanswerable question")
        if not report.abstained:
            problems += [f"uncited claim: {s[:80]!r}" for s in report.uncited_sentences]
        failed += bool(problems)
        lines.append(f"{row.get('id', n)}: {'ok' if not problems else '; '.join(problems)}")
    return lines, failed


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="sextant-judge", description=__doc__)
    parser.add_argument("answers", type=Path, help="JSONL file of generated answers and the passages shown")
    args = parser.parse_args(argv)
    lines, failed = judge_file(args.answers)
    print("\n".join(lines))
    print(f"{len(lines) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
