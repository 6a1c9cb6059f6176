from __future__ import annotations

import re
from pathlib import Path

import pymupdf
import pytest

from sextant.kb.embeddings import Embedder
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.settings import KbSettings
from tests.kb.cli.ingest_runs import reopen, run_ingest, use_store
from tests.kb.loaders.pdf_factory import FILLER, damage_page, new_page, paragraph, to_bytes
from tests.kb.loaders.scans import needs_tesseract, scanned_pdf

pytestmark = pytest.mark.slow


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, embedder: Embedder) -> Path:
    return use_store(tmp_path, monkeypatch)


def test_ingest_a_folder_summarises_and_refuses_bad_files(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], embedder: Embedder
) -> None:
    docs = tmp_path / "docs"
    (docs / "nested").mkdir(parents=True)
    (docs / "tea.md").write_text("# Tea\n\nOolong is partially oxidised.\n", encoding="utf-8")
    (docs / "nested" / "notes.txt").write_text("Meeting notes: the budget was approved.\n", encoding="utf-8")
    (docs / "broken.pdf").write_bytes(b"%PDF-1.7 this is not really a pdf")
    (docs / "ignored.xyz").write_text("not a supported type", encoding="utf-8")

    assert run_ingest([str(docs), "-r", "--category", "notes"]) == 1
    out = capsys.readouterr().out
    assert "3 files: 2 added, 0 replaced, 0 unchanged (skipped), 1 refused" in out
    assert "refused " + str(docs / "broken.pdf") in out
    assert "1 file Sextant cannot read was left out: .xyz 1" in out

    kb = reopen(store, embedder)
    docs_in_store = {d.id: d for d in kb.documents()}
    assert set(docs_in_store) == {"tea", "notes"} and docs_in_store["tea"].category == "notes"

    # Again: nothing changed, so nothing is re-embedded, and a clean run exits 0.
    assert run_ingest([str(docs / "tea.md"), str(docs / "nested" / "notes.txt"), "--category", "notes"]) == 0
    assert "2 unchanged (skipped)" in capsys.readouterr().out


def test_a_folder_without_r_and_a_missing_file_are_refused(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_ingest([str(tmp_path), str(tmp_path / "nope.md")]) == 1
    out = capsys.readouterr().out
    assert "is a folder; pass -r" in out and "no such file" in out


def test_two_files_with_one_id_in_a_run_are_not_merged(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "guide.md").write_text("# Guide A\n\nFirst guide.\n", encoding="utf-8")
    (tmp_path / "b" / "guide.txt").write_text("Guide B, second guide.\n", encoding="utf-8")
    assert run_ingest([str(tmp_path / "a" / "guide.md"), str(tmp_path / "b" / "guide.txt")]) == 1
    assert "id 'guide' is already taken" in capsys.readouterr().out


def test_a_file_over_the_size_limit_is_refused_naming_the_limit(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SEXTANT_MAX_FILE_BYTES", "64")
    (tmp_path / "short.md").write_text("# Short\n\nFits.\n", encoding="utf-8")
    (tmp_path / "long.md").write_text("# Long\n\n" + "Too long to parse. " * 10, encoding="utf-8")
    assert run_ingest([str(tmp_path / "short.md"), str(tmp_path / "long.md")]) == 1
    out = capsys.readouterr().out
    assert "1 added" in out and "more than SEXTANT_MAX_FILE_BYTES=64" in out


def test_an_ingested_pdf_keeps_its_original_for_page_images(store: Path, tmp_path: Path, embedder: Embedder) -> None:
    import pymupdf

    pdf = pymupdf.open()
    pdf.new_page().insert_text((72, 72), "Descale the espresso machine every two months.")
    path = tmp_path / "manual.pdf"
    pdf.save(path)
    (tmp_path / "notes.md").write_text("# Notes\n\nNothing to keep here.\n", encoding="utf-8")

    assert run_ingest([str(path), str(tmp_path / "notes.md")]) == 0
    kb = reopen(store, embedder)
    kept = kb.originals.get("manual")
    assert kept is not None and kept.read_bytes() == path.read_bytes()
    assert kb.originals.get("notes") is None


def test_a_pdf_with_an_unreadable_page_is_stored_without_it_and_the_summary_names_it(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], embedder: Embedder
) -> None:
    doc = pymupdf.open()
    for number in (1, 2, 3):
        paragraph(new_page(doc), (72, 72, 540, 200), f"Page {number} of the field guide. {FILLER}")
    damage_page(doc, 1)
    (tmp_path / "guide.pdf").write_bytes(to_bytes(doc))

    assert run_ingest([str(tmp_path / "guide.pdf")]) == 0  # stored: a partial success is a success
    out = capsys.readouterr().out
    assert "1 files: 1 added" in out and "; 1 unreadable pages left out" in out
    assert f"left out page 2 of {tmp_path / 'guide.pdf'}: damaged, MuPDF got no text from it (zlib error" in out

    with KnowledgeBase.open(KbSettings(chroma_dir=store, _env_file=None), embedder=embedder) as kb:  # type: ignore[call-arg]
        text = kb.document("guide").text
    assert "Page 1 of the field guide" in text and "Page 3 of the field guide" in text and "Page 2" not in text


def test_sync_prints_its_plan_mirrors_the_folder_and_then_has_nothing_to_do(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "tea.md").write_text("# Tea\n\nOolong is partially oxidised.\n", encoding="utf-8")
    (docs / "sub" / "coffee.txt").write_text("Coffee: arabica grows at altitude.\n", encoding="utf-8")
    for name in ("deck.key", "sub/old.KEY", "Makefile"):  # types no loader reads: named, not an error
        (docs / name).write_bytes(b"\x00")

    assert run_ingest(["--sync", str(docs), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "sync of 1 folders: 2 to add, 0 to update, 0 to move, 0 to forget, 0 unchanged, 0 refused" in out
    assert "3 files Sextant cannot read were left out: .key 2, (no suffix) 1" in out
    assert "add    docs/tea.md (as tea)" in out and "dry run: nothing was changed" in out

    assert run_ingest(["--sync", str(docs), "--no-summaries"]) == 0
    assert "synced: 2 added" in capsys.readouterr().out

    (docs / "tea.md").rename(docs / "sub" / "oolong.md")
    (docs / "sub" / "coffee.txt").unlink()
    assert run_ingest(["--sync", str(docs), "--no-summaries"]) == 0
    out = capsys.readouterr().out
    assert "move   docs/tea.md -> docs/sub/oolong.md (as oolong): 1 chunks, 0 embedded" in out
    assert "forget coffee (docs/sub/coffee.txt is gone): 1 chunks removed" in out
    assert "synced: 0 added, 0 updated, 1 moved, 2 forgotten, 0 unchanged, 0 refused" in out

    assert run_ingest(["--sync", str(docs), "--dry-run"]) == 0
    assert "0 to add, 0 to update, 0 to move, 0 to forget, 1 unchanged" in capsys.readouterr().out


def test_sync_stores_a_folder_of_files_with_one_name_each_under_its_own_id(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    projects = tmp_path / "projects"
    for name in ["README.md", "kettle/README.md", "grinder/README.md"]:
        (projects / name).parent.mkdir(parents=True, exist_ok=True)
        (projects / name).write_text(f"# {name}\n\nHow to use the {Path(name).parent.name or 'shop'}.\n", "utf-8")

    assert run_ingest(["--sync", str(projects), "--no-summaries"]) == 0
    out = capsys.readouterr().out
    assert "add    projects/README.md (as README)" in out
    assert "add    projects/grinder/README.md (as projects-grinder-README.md)" in out
    assert "add    projects/kettle/README.md (as projects-kettle-README.md)" in out
    assert "synced: 3 added" in out

    (projects / "README.md").unlink()  # the plain id is free again; the others keep theirs
    assert run_ingest(["--sync", str(projects), "--no-summaries"]) == 0
    assert "synced: 0 added, 0 updated, 0 moved, 1 forgotten, 2 unchanged, 0 refused" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--sync", "{tmp}/missing"], "missing: no such folder"),
        (["--sync", "{tmp}/notes.md"], "notes.md: is a file, not a folder"),
        (["{tmp}", "--dry-run"], "--dry-run goes with --sync"),
    ],
)
def test_sync_refuses_what_is_not_a_folder_before_opening_the_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    (tmp_path / "notes.md").write_text("# Notes\n", encoding="utf-8")
    assert run_ingest([arg.format(tmp=tmp_path) for arg in argv]) == 2
    assert message in capsys.readouterr().err


@needs_tesseract
def test_a_scan_is_read_by_ocr_and_the_summary_says_how_sure_it_was(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scan = tmp_path / "scan.pdf"
    scan.write_bytes(scanned_pdf())
    assert run_ingest([str(scan), "--no-summaries"]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("read by OCR"))
    assert re.fullmatch(
        rf"read by OCR: 3 pages of {re.escape(str(scan))}, mean word confidence [\d.]+ \(lowest [\d.]+, page \d\)", line
    )
