"""``sextant-kb-migrate``: killed with SIGKILL mid-embedding and after the swap, re-run to the end; its errors;
its progress and summary."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from sextant.kb.chroma_client import close_client, open_client
from sextant.kb.cli.migrate import main
from sextant.kb.documents import LoadedDocument
from sextant.kb.embeddings import Embedder, QueryEncoderRecord, resolve_model_path, write_query_encoder_record
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.live_collections import CHUNKS, existing
from sextant.settings import KbSettings
from tests.kb.kb_process import server_environment

NOTES = {
    "lighthouse": "The keeper trims the lamp wick at dusk and winds the clockwork that turns the lens.",
    "harbour": "Pilots bring vessels through the channel at high tide, past the buoys that mark the reef.",
    "fog": "In fog the horn sounds twice a minute; the keeper logs each hour of it in the watch book.",
}
TOKENS = 48


@pytest.fixture
def home(tmp_path: Path, embedder: Embedder) -> Path:
    settings = KbSettings(chroma_dir=tmp_path / "store", chunk_tokens=TOKENS, _env_file=None)
    with KnowledgeBase.open(settings, embedder=embedder) as kb:
        for doc_id, text in NOTES.items():
            kb.ingest(doc_id, LoadedDocument(text=" ".join(f"{text} Entry {i}." for i in range(10)), title=doc_id))
    return tmp_path


def _command(embedder: Embedder, *extra: str) -> list[str]:
    code = "from sextant.kb.cli.migrate import main; main()"
    return [sys.executable, "-c", code, "--embedder", embedder.name, *extra]


def _environment(home: Path, log_level: str = "WARNING") -> dict[str, str]:
    return {**server_environment(home, log_level=log_level), "SEXTANT_CHUNK_TOKENS": str(TOKENS)}


def _kill_at(home: Path, command: list[str], line: str, log_level: str = "WARNING") -> None:
    """Run ``command`` until it writes a stderr line containing ``line``, then SIGKILL it."""
    proc = subprocess.Popen(command, env=_environment(home, log_level), stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    for got in proc.stderr:
        if line in got:
            proc.send_signal(signal.SIGKILL)
            break
    proc.communicate()
    assert proc.returncode == -signal.SIGKILL, f"it ended before writing {line!r}"


def _consistent(home: Path, embedder: Embedder) -> list[str]:
    """Open as a server does (repair, index sync) and list what does not hold."""
    settings = KbSettings(chroma_dir=home / "store", chunk_tokens=TOKENS, embedder=embedder.name, _env_file=None)
    problems = []
    with KnowledgeBase.open(settings, embedder=embedder) as kb:
        records = kb.store.list_documents()
        named = sorted(cid for r in records for cid in r.chunk_ids())
        if sorted(r.id for r in records) != sorted(NOTES):
            problems.append(f"documents {[r.id for r in records]}")
        if sorted(kb.store.chunk_ids()) != named or sorted(kb.lexical.ids()) != named:
            problems.append("chunks, records and BM25 disagree")
        if kb.search("when does the fog horn sound?", k=1).hits[0].document_id != "fog":
            problems.append("a search does not find its document")
    return problems


@pytest.mark.slow  # real sextant-kb-migrate processes, each loading the new embedder
def test_a_migration_killed_mid_embedding_leaves_the_old_store_and_a_rerun_resumes(
    home: Path, embedder: Embedder, other_embedder: Embedder
) -> None:
    _kill_at(home, _command(other_embedder, "--batch", "2"), "embedded 2/")
    assert _consistent(home, embedder) == []  # the old store, untouched and searchable
    done = subprocess.run(
        _command(other_embedder, "--batch", "2"), env=_environment(home), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    migrated, embedded = done.stdout.splitlines()[0], int(done.stdout.split("(")[1].split()[0])
    total = int(migrated.split(", ")[1].split()[0])
    assert migrated.startswith("migrated: 3 documents") and 0 < embedded < total  # the first batches were kept
    assert _consistent(home, other_embedder) == []


@pytest.mark.slow
def test_a_migration_killed_after_its_swap_is_finished_by_the_next_run(
    home: Path, embedder: Embedder, other_embedder: Embedder
) -> None:
    _kill_at(home, _command(other_embedder), "swapped in the collections", log_level="INFO")
    assert _consistent(home, other_embedder) == []  # the swap is the commit point: the new store is live
    subprocess.run(_command(other_embedder), env=_environment(home), capture_output=True, check=False)
    client = open_client(path=home / "store", url=None)
    try:
        assert CHUNKS not in existing(client)  # whichever run removed it, the old pair is gone
    finally:
        close_client(client)
    assert _consistent(home, other_embedder) == []


def test_progress_goes_to_stderr_and_a_stale_query_encoder_is_reported(
    home: Path,
    embedder: Embedder,
    other_embedder: Embedder,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    encoder = home / "query-encoder"
    shutil.copytree(resolve_model_path("all-MiniLM-L6-v2"), encoder, copy_function=os.symlink)
    write_query_encoder_record(encoder, QueryEncoderRecord(document_embedder=embedder.name, dim=embedder.dim))
    for name, value in {**_environment(home), "SEXTANT_QUERY_ENCODER": str(encoder)}.items():
        monkeypatch.setenv(name, value)
    main(["--embedder", other_embedder.name, "--batch", "4"])
    out, err = capsys.readouterr()
    assert "sextant-kb-migrate: embedded 4/" in err and "chunks/s)" in err
    assert f"set SEXTANT_EMBEDDER={other_embedder.name}" in out
    assert "warning: SEXTANT_QUERY_ENCODER=" in out and "trained against embedder 'all-MiniLM-L6-v2'" in out


def test_an_unknown_embedder_and_the_same_embedder_are_refused(
    home: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, value in _environment(home).items():
        monkeypatch.setenv(name, value)
    (home / "not-a-model").mkdir()
    (home / "not-a-model" / "config.json").write_text("{}", encoding="utf-8")
    with pytest.raises(SystemExit, match="1"):
        main(["--embedder", str(home / "not-a-model")])
    assert "cannot load embedder" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="1"):
        main(["--embedder", embedder.name])
    assert "already uses embedder 'all-MiniLM-L6-v2'; there is nothing to migrate" in capsys.readouterr().err
