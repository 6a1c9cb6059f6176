"""The knowledge base on the embedded store and on a real Chroma server process (SEXTANT_CHROMA_URL), same test."""

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


@pytest.fixture(params=["embedded", "server"])
def store_settings(request: pytest.FixtureRequest, tmp_path: Path) -> KbSettings:
    """The same knowledge base on the embedded store and on a real ``chroma run`` server."""
    url = request.getfixturevalue("chroma_url") if request.param == "server" else None
    return KbSettings(chroma_url=url, chroma_dir=tmp_path / "store", _env_file=None)  # type: ignore[call-arg]


def test_ingest_search_replace_and_forget_on_either_store(store_settings: KbSettings, embedder: Embedder) -> None:
    with KnowledgeBase.open(store_settings, embedder=embedder) as kb:
        _ingest_replace_forget(kb, store_settings.chroma_url or str(store_settings.store_dir()))
    # A second client of the same store, with its own BM25 cache, sees the same corpus (the cache is rebuilt).
    other = store_settings.model_copy(update={"chroma_dir": store_settings.store_dir().parent / "other"})
    if store_settings.chroma_url is None:
        other = store_settings  # an embedded store has one folder: reopen it, from its saved BM25 index
    with KnowledgeBase.open(other, embedder=embedder) as reopened:
        assert [d.id for d in reopened.documents()] == ["tea"]
        assert reopened.search("green tea oxidation", mode="lexical", abstain=False).hits[0].document_id == "tea"
        reopened.forget("tea")  # the module's server is shared by the tests that follow


def _ingest_replace_forget(kb: KnowledgeBase, store: str) -> None:
    assert kb.stats().store == store
    kb.ingest("tea", LoadedDocument(text="Oolong is partially oxidised, between 8 and 85 percent.", title="Tea"))
    kb.ingest("bees", LoadedDocument(text="Swarm control starts in May by adding supers.", title="Bees"))
    assert kb.search("how oxidised is oolong", k=1).hits[0].document_id == "tea"
    kb.ingest("tea", LoadedDocument(text="Green tea is not oxidised at all.", title="Tea"))
    assert kb.stats().chunks == 2
    assert kb.forget("bees") == 1
    assert kb.stats().chunks == kb.stats().lexical_chunks == 1
