"""``sextant-eval beir``: a BEIR folder graded per mode through the product, and bad input refused by name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sextant.evals.beir_cli import main as beir_main
from tests.evals.test_beir import _write_beir


def test_the_command_grades_each_mode_and_says_why_rerank_is_unavailable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("SEXTANT_RERANKER", raising=False)
    _write_beir(tmp_path / "mini")
    out = tmp_path / "out.json"
    beir_main(["--data", str(tmp_path / "mini"), "--store", str(tmp_path / "store"), "--mode", "rrf", "rerank",
               "--json", str(out)])  # fmt: skip
    rrf, rerank = json.loads(out.read_text())
    assert rrf["mode"] == "rrf" and rrf["ndcg@10"] == 1.0 and rrf["split"] == "test"
    assert rerank["mode"] == "rerank" and "SEXTANT_RERANKER unset" in rerank["unavailable"]
    assert "ndcg@10" not in rerank
    assert [json.loads(line)["mode"] for line in capsys.readouterr().out.splitlines()] == ["rrf", "rerank"]


def test_a_missing_qrels_file_exits_2_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write_beir(tmp_path / "mini")
    missing = tmp_path / "held-out.tsv"
    with pytest.raises(SystemExit) as exc:
        beir_main(["--data", str(tmp_path / "mini"), "--qrels", str(missing), "--store", str(tmp_path / "store")])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("sextant-eval beir: ") and "no qrels file" in err and "held-out.tsv" in err
    assert not (tmp_path / "store").exists()  # refused before a store is opened


def test_an_unknown_mode_is_refused_by_argparse(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exc:
        beir_main(["--data", str(tmp_path), "--mode", "bm42"])
    assert exc.value.code == 2
