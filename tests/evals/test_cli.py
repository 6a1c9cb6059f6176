"""`sextant-eval` end to end on a tiny labelled set: the report, the baseline, and the gate firing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sextant.evals import cli

pytestmark = pytest.mark.slow


def _run(args: list[str]) -> int:
    try:
        cli.main(args)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def test_report_baseline_and_gate(eval_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    common = ["--eval-dir", str(eval_dir), "--set", "small", "--store", str(tmp_path / "stores")]
    assert _run([*common, "--write-baseline", "--json", str(tmp_path / "report.json")]) == 0
    out = capsys.readouterr().out
    assert "primary: ndcg@10" in out and "| rerank | unavailable" in out
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))[0]
    rrf = next(row for row in report["modes"] if row["mode"] == "rrf")
    assert rrf["metrics"]["hit@1"] == 1.0 and rrf["abstain_correct"] == 1.0 and rrf["abstain_wrong"] == 0.0

    assert _run([*common, "--check"]) == 0
    assert "no regression" in capsys.readouterr().out

    # Inject a regression: a baseline better than what the system can do now.
    baseline_path = eval_dir / "baseline.json"
    baseline = json.loads(baseline_path.read_text(encoding="utf-8"))
    for row in baseline["modes"]:
        if row.get("available", True):
            row["metrics"]["mrr@10"] = 1.5
    baseline_path.write_text(json.dumps(baseline), encoding="utf-8")
    assert _run([*common, "--check"]) == 1
    assert "REGRESSION" in capsys.readouterr().err
