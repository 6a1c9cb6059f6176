"""``sextant-judge``: a JSONL file of answers graded line by line, with the exit status CI reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sextant.evals import judge_cli
from sextant.evals.judge_cli import judge_file


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


def test_blank_lines_are_skipped_and_an_id_less_row_is_named_by_its_line(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    rows = [{"answer": "Descale every eight weeks [1]. Replace the gasket yearly.", "passages": {"1": "x"}}]
    path.write_text("\n\n" + json.dumps(rows[0]) + "\n", encoding="utf-8")
    lines, failed = judge_file(path)
    assert failed == 1 and lines == ["3: uncited claim: 'Replace the gasket yearly.'"]


def test_sextant_s_typed_answers_are_judged_by_their_fields_checked_against_their_text(tmp_path: Path) -> None:
    passages = {"1": "Descale every eight weeks."}
    statement = {
        "text": "Descale every eight weeks.",
        "evidence": [{"label": 1, "quote": "Descale every eight weeks."}],
    }
    rows = [
        {"id": "kept", "answer": "Descale every eight weeks [1].", "abstained": False, "statements": [statement]},
        {"id": "said-none", "answer": "The documents do not answer this question.", "abstained": True},
        {"id": "contradicts", "answer": "Descale every eight weeks [1].", "abstained": True},
        {
            "id": "misquoted",
            "answer": "Descale every eight weeks [1].",
            "abstained": False,
            "statements": [{"text": "x", "evidence": [{"label": 1, "quote": "every nine weeks"}]}],
        },
    ]
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps({**r, "passages": passages}) + "\n" for r in rows), encoding="utf-8")
    lines, failed = judge_file(path)
    assert lines == [
        "kept: ok",
        "said-none: abstained on an answerable question",
        "contradicts: the answer says it abstained, its text cites [1]; abstained on an answerable question",
        "misquoted: quote not in passage [1]: 'every nine weeks'",
    ]
    assert failed == 3


def test_every_answer_passing_exits_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "answers.jsonl"
    row = {"id": "a", "answer": "Every eight weeks [1].", "passages": {"1": "x"}}
    path.write_text(json.dumps(row), encoding="utf-8")
    with pytest.raises(SystemExit) as exc:
        judge_cli.main([str(path)])
    assert exc.value.code == 0 and capsys.readouterr().out.endswith("1 passed, 0 failed\n")


@pytest.mark.parametrize("line", ["{not json", '{"passages": {}}', '{"answer": "x", "passages": {"one": "y"}}'])
def test_a_malformed_line_stops_the_run_naming_the_file_and_line(tmp_path: Path, line: str) -> None:
    path = tmp_path / "answers.jsonl"
    good = json.dumps({"id": "a", "answer": "ok [1].", "passages": {"1": "x"}})
    path.write_text(f"{good}\n{line}\n", encoding="utf-8")
    with pytest.raises(SystemExit, match=r"sextant-judge: .*answers\.jsonl:2: "):
        judge_file(path)
