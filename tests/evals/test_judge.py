from __future__ import annotations

import json
from pathlib import Path

import pytest

from sextant.evals import judge_cli
from sextant.evals.judge import check_citations

SHOWN = {1: "Descale every eight weeks.", 2: "Backflush weekly."}


def test_resolved_citations_on_every_claim_pass() -> None:
    report = check_citations("Descale the machine every eight weeks [1]. Backflush it once a week [2].", SHOWN)
    assert report.ok and report.cited == [1, 2]


def test_a_citation_to_a_passage_never_shown_is_unresolved() -> None:
    report = check_citations("Descale the machine every eight weeks [3].", SHOWN)
    assert report.unresolved == [3] and not report.ok


def test_an_uncited_claim_is_reported() -> None:
    report = check_citations("Descale every eight weeks [1]. Replace the gasket every year.", SHOWN)
    assert report.uncited_sentences == ["Replace the gasket every year."] and not report.ok


def test_an_abstention_needs_no_citation() -> None:
    report = check_citations("The documents do not mention which descaler brand to use.", SHOWN)
    assert report.abstained and report.ok


def test_the_command_grades_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [
        {"id": "a", "answer": "Descale every eight weeks [1].", "passages": {"1": "x"}, "answerable": True},
        {"id": "b", "answer": "It costs 40 euros [4].", "passages": {"1": "x"}, "answerable": True},
        {"id": "c", "answer": "The documents do not say.", "passages": {}, "answerable": False},
        {"id": "d", "answer": "The capital is Ulaanbaatar and it is cold.", "passages": {}, "answerable": False},
    ]
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    with pytest.raises(SystemExit) as exc:
        judge_cli.main([str(path)])
    out = capsys.readouterr().out
    assert exc.value.code == 1
    assert "a: ok" in out and "b: [4] was not shown" in out and "c: ok" in out
    assert "d: answered an unanswerable question" in out and "2 passed, 2 failed" in out
