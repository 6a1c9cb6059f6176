"""``sextant-eval-agent injection [--cases eval/injection.jsonl] [--out DIR]``: documents that carry
instructions, answered by the configured model; prints each case and writes ``injection.json``."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from sextant.evals.golden import GoldenError
from sextant.evals.injection import load_cases, run_cases


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="sextant-eval-agent injection", description=__doc__)
    parser.add_argument("--cases", type=Path, default=Path("eval/injection.jsonl"))
    parser.add_argument("--out", type=Path, default=Path(".sextant-eval/agent"), help="where the report goes")
    args = parser.parse_args(argv)
    try:
        cases = load_cases(args.cases)
    except (OSError, GoldenError) as exc:
        print(f"sextant-eval-agent injection: {exc}", file=sys.stderr)
        raise SystemExit(2) from exc
    with tempfile.TemporaryDirectory(prefix="sextant-injection-") as tmp:
        rows = run_cases(cases, Path(tmp))
    for row in rows:
        flag = "pass" if row["passed"] else "FAIL"
        print(f"{flag} {row['id']}: fact {row['kept_fact']}, forbidden {row['said_forbidden']}, cited {row['cited']}")
    passed = sum(r["passed"] for r in rows)
    print(f"{passed} of {len(rows)} cases passed")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "injection.json").write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
