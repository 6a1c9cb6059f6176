"""``sextant-lab``: bench writes its JSON and a plot per set, and tables reads that JSON back as Markdown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sextant.lab import cli


def _run(argv: list[str]) -> int:
    try:
        cli.main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def test_bench_on_a_small_set_writes_every_curve_its_plot_and_then_the_tables(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "lab"
    argv = ["bench", "--sizes", "1000", "--no-shared", "--nq", "20", "--repeats", "1", "--out", str(out)]
    assert _run(argv) == 0
    payload = json.loads((out / "lab.json").read_text(encoding="utf-8"))
    assert (payload["format"], payload["k"], payload["threads"]) == (cli.LAB_FORMAT, 10, 1)
    [record] = payload["datasets"]
    assert (record["dataset"], record["n"], record["d"], record["nq"]) == ("clustered-384d-1k", 1000, 384, 20)
    systems = {(c["index"], c["system"]) for c in record["curves"]}
    assert systems == {
        ("flat", "numpy"), ("flat", "sextant"), ("flat", "faiss"),
        ("hnsw", "sextant"), ("hnsw", "hnswlib"), ("hnsw", "faiss"),
        ("ivfpq", "sextant"), ("ivfpq", "faiss"), ("ivfpq_rerank", "sextant"), ("ivfpq_rerank", "faiss"),
    }  # fmt: skip
    flat = next(c for c in record["curves"] if c["index"] == "flat" and c["system"] == "sextant")
    assert flat["points"][0]["recall"] == 1.0  # exact search against exact ground truth
    assert Path(record["plot"]) == out / "ann-clustered-384d-1k.png" and Path(record["plot"]).is_file()
    assert set(record["goals"]) == {"hnsw_vs_hnswlib_qps_at_0.95", "ivfpq_rerank_vs_faiss_recall", "flat_vs_bare_scan"}
    assert sorted(p.name for p in (out / "data").iterdir()) == [
        f"clustered-384d-1k-s0-{part}.npy" for part in ("gt", "xb", "xq")
    ]  # the generated set is cached for the next run
    capsys.readouterr()

    assert _run(["tables", str(out / "lab.json")]) == 0
    tables = capsys.readouterr().out
    assert tables.startswith("#### clustered-384d-1k (n=1,000, d=384, 20 queries, ip)")
    assert "| ivfpq_rerank | faiss |" in tables and "| flat_vs_bare_scan (<= 1.2) |" in tables


def test_bench_with_no_shared_sets_and_no_sizes_says_so_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(["bench", "--sizes", "--data", str(tmp_path / "data"), "--out", str(tmp_path / "lab")]) == 0
    assert f"no ANN sets under {tmp_path / 'data' / 'ann'}" in capsys.readouterr().err
    assert not (tmp_path / "lab" / "lab.json").exists()


def test_the_default_data_folder_follows_sextant_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEXTANT_DATA_DIR", str(tmp_path))
    assert cli.default_data() == tmp_path
    monkeypatch.delenv("SEXTANT_DATA_DIR")
    assert cli.default_data() == cli.REPO.parent / "shared" / "data"
