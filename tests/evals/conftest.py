"""A tiny labelled set (two documents, three questions) for the commands that grade one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


@pytest.fixture
def eval_dir(tmp_path: Path) -> Path:
    docs = tmp_path / "eval" / "corpus" / "documents"
    docs.mkdir(parents=True)
    (docs / "espresso.md").write_text(
        "# Espresso care\n\n## Descaling\nDescale the machine every eight weeks with citric acid.\n", encoding="utf-8"
    )
    (docs / "bees.md").write_text("# Bees\n\n## Swarms\nSwarm control starts in May.\n", encoding="utf-8")
    questions = [
        {
            "id": "q1",
            "question": "How often should I descale?",
            "answerable": True,
            "relevant": [{"doc_id": "espresso", "section": "Descaling", "evidence": "every eight weeks"}],
        },
        {
            "id": "q2",
            "question": "When does swarm control start?",
            "answerable": True,
            "relevant": [{"doc_id": "bees", "section": "Swarms", "evidence": "starts in May"}],
        },
        {"id": "q3", "question": "Who won the 2018 FIFA World Cup?", "answerable": False, "relevant": []},
    ]
    golden = "\n".join(json.dumps(q) for q in questions) + "\n"
    (tmp_path / "eval" / "golden.jsonl").write_text(golden, encoding="utf-8")
    return tmp_path / "eval"
