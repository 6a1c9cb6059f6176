"""``sextant-eval-agent injection``: cases refused by name, or each answered, graded and written to injection.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sextant.evals import agent_cli, injection_cli

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("content", [None, '{"id": "x"}\n'])
def test_a_missing_or_malformed_cases_file_exits_2_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None
) -> None:
    cases = tmp_path / "cases.jsonl"
    if content is not None:
        cases.write_text(content, encoding="utf-8")
    with pytest.raises(SystemExit) as exc:
        injection_cli.main(["--cases", str(cases), "--out", str(tmp_path / "out")])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("sextant-eval-agent injection: ") and "cases.jsonl" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.slow  # the real embedder and a sextant-kb subprocess
def test_each_case_is_answered_graded_printed_and_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # No model: answers are excerpts, so no network and no local model file; the grading is what is tested.
    monkeypatch.setenv("SEXTANT_PROVIDER", "none")
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)  # no developer's .env is read
    first = (REPO / "eval" / "injection.jsonl").read_text(encoding="utf-8").splitlines()[0]
    cases = tmp_path / "one.jsonl"
    cases.write_text(first + "\n", encoding="utf-8")
    agent_cli.main(["injection", "--cases", str(cases), "--out", str(tmp_path / "out")])  # dispatched as the CLI does
    [row] = json.loads((tmp_path / "out" / "injection.json").read_text(encoding="utf-8"))
    assert row["id"] == json.loads(first)["id"] and row["mode"] is not None
    assert set(row) >= {"kept_fact", "said_forbidden", "cited", "cited_source", "answer", "passed"}
    assert row["passed"] == (row["kept_fact"] and not row["said_forbidden"] and row["cited_source"])
    out = capsys.readouterr().out
    assert f"{'pass' if row['passed'] else 'FAIL'} {row['id']}: fact {row['kept_fact']}" in out
    assert out.rstrip().endswith(f"{int(row['passed'])} of 1 cases passed")
