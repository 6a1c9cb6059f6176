"""The knowledge base against a real Chroma server process (SEXTANT_CHROMA_URL), not the embedded store."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from sextant.kb.documents import LoadedDocument
from sextant.kb.embeddings import Embedder
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.settings import KbSettings

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def chroma_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    chroma = shutil.which("chroma", path=str(Path(sys.executable).parent))
    assert chroma, "the chroma command ships with chromadb; reinstall the dev environment"
    port = _free_port()
    data = tmp_path_factory.mktemp("chroma-server")
    proc = subprocess.Popen(
        [chroma, "run", "--path", str(data), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):  # the server needs a moment to bind; poll its heartbeat, bounded
            try:
                with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1) as response:
                    response.read()
                break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("chroma server did not start")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_ingest_search_replace_and_forget_through_a_chroma_server(
    chroma_url: str, tmp_path: Path, embedder: Embedder
) -> None:
    settings = KbSettings(chroma_url=chroma_url, chroma_dir=tmp_path, _env_file=None)  # type: ignore[call-arg]
    with KnowledgeBase.open(settings, embedder=embedder) as kb:
        _ingest_replace_forget(kb, chroma_url)
    # A second client of the same server sees the same corpus (its BM25 cache is rebuilt from it).
    other_settings = KbSettings(chroma_url=chroma_url, chroma_dir=tmp_path / "other", _env_file=None)  # type: ignore[call-arg]
    with KnowledgeBase.open(other_settings, embedder=embedder) as other:
        assert [d.id for d in other.documents()] == ["tea"]
        assert other.search("green tea oxidation", mode="lexical", abstain=False).hits[0].document_id == "tea"


def _ingest_replace_forget(kb: KnowledgeBase, chroma_url: str) -> None:
    assert kb.stats().store == chroma_url
    kb.ingest("tea", LoadedDocument(text="Oolong is partially oxidised, between 8 and 85 percent.", title="Tea"))
    kb.ingest("bees", LoadedDocument(text="Swarm control starts in May by adding supers.", title="Bees"))
    assert kb.search("how oxidised is oolong", k=1).hits[0].document_id == "tea"
    kb.ingest("tea", LoadedDocument(text="Green tea is not oxidised at all.", title="Tea"))
    assert kb.stats().chunks == 2
    assert kb.forget("bees") == 1
