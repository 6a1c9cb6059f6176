"""``sextant-eval-agent rules``: the rule table of recorded answers, per file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sextant.evals import agent_cli

REPO = Path(__file__).resolve().parents[2]


def test_the_table_of_a_recorded_file_names_each_rule_s_removals_and_keeps(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    passage = "Brew espresso with water at 93 degrees Celsius."
    # g001 of the golden set, answered from a passage that is not its labelled one: the removal is elsewhere.
    row = {
        "id": "g001",
        "mode": "model",
        "passages": {"1": passage},
        "statements": [],
        "removed": [{"text": "Use 7 grams.", "quotes": [{"label": 1, "quote": "7 grams of coffee"}], "check": "quote"}],
    }
    answers = tmp_path / "answers-small.jsonl"
    answers.write_text(json.dumps(row) + "\n", encoding="utf-8")
    out = tmp_path / "rules.json"
    agent_cli.main(["rules", str(answers), "--eval-dir", str(REPO / "eval"), "--json", str(out)])
    printed = capsys.readouterr().out
    assert printed.startswith("answers-small.jsonl: 1 statements\n")
    assert "| quote | 0 | 1 | | |" in printed.splitlines()
    assert json.loads(out.read_text())["answers-small.jsonl"]["removed_by"]["quote"] == {
        "on_snippet": 0,
        "elsewhere": 1,
    }
