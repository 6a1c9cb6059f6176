"""The golden questions through a real ``sextant-kb`` stdio process: the grades an MCP client would get."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sextant.evals import cli

pytestmark = pytest.mark.slow  # a sextant-kb subprocess and the real embedder


def _run(args: list[str]) -> int:
    try:
        cli.main(args)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def test_via_mcp_grades_what_a_client_gets(eval_dir: Path, tmp_path: Path) -> None:
    args = ["--eval-dir", str(eval_dir), "--set", "small", "--store", str(tmp_path / "s"), "--modes", "rrf"]
    assert _run([*args, "--via-mcp", "--json", str(tmp_path / "r.json")]) == 0
    rows = {r["mode"]: r for r in json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))[0]["modes"]}
    assert rows["hybrid via MCP"]["metrics"]["hit@1"] == 1.0
    assert rows["hybrid via MCP"]["abstain_correct"] == 1.0
