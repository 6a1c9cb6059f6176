from __future__ import annotations

from pathlib import Path

import pytest

from sextant.evals.golden import GoldenError, Question, Target, judge, load_golden
from sextant.kb.results import Hit, Scores

REPO = Path(__file__).resolve().parents[2]


def _hit(chunk: str, doc: str, pages: list[int], section: str | None, text: str) -> Hit:
    return Hit(
        rank=1,
        chunk_id=chunk,
        document_id=doc,
        title=doc,
        source="",
        page=pages[0] if pages else None,
        pages=pages,
        section=section,
        start=0,
        end=len(text),
        text=text,
        scored_by="rrf",
        scores=Scores(),
        uri=f"kb://documents/{doc}",
    )


def test_judge_maps_hits_to_targets_once_each() -> None:
    question = Question(
        "q",
        "?",
        True,
        (Target("manual", 4, None, "three grams"), Target("notes", None, "Budget", "approved")),
        "multi",
    )
    hits = [
        _hit("c1", "manual", [3], None, "three grams"),  # right text, wrong page
        _hit("c2", "manual", [4], None, "anything"),  # right page
        _hit("c3", "manual", [4], None, "again"),  # same target again: not counted twice
        _hit("c4", "notes", [], "Other", "The budget was approved."),  # evidence found outside the section
    ]
    ranked, qrels = judge(question, hits)
    assert ranked == ["c1", "target-0", "c3", "target-1"]
    assert qrels == {"target-0": 1, "target-1": 1}


def test_the_committed_golden_sets_load() -> None:
    small = load_golden(REPO / "eval" / "golden.jsonl")
    large = load_golden(REPO / "eval" / "golden-large.jsonl")
    assert len(small) >= 60 and sum(not q.answerable for q in small) >= 10
    assert len(large) >= 30 and all(t.page for q in large for t in q.targets)


def test_a_malformed_line_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "g.jsonl"
    bad.write_text('{"id": "x", "question": "?", "answerable": true}\n{"id": "y"}\n', encoding="utf-8")
    with pytest.raises(GoldenError, match=r"g\.jsonl:2"):
        load_golden(bad)
