"""``sextant-ingest https://… [--crawl]`` against a local web site (never the outside network): pages stored under
their addresses, asked again conditionally, and every page that failed named."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sextant.kb.cli import ingest
from sextant.kb.embeddings import Embedder
from tests.kb.cli.ingest_runs import reopen, run_ingest, use_store
from tests.kb.web.docs_server import DocsServer, Route, python_docs

pytestmark = pytest.mark.slow


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, embedder: Embedder) -> Path:
    return use_store(tmp_path, monkeypatch)


@pytest.fixture
def docs() -> Iterator[DocsServer]:
    with DocsServer(python_docs()) as server:
        yield server


@pytest.fixture
def site(tmp_path: Path) -> Iterator[DocsServer]:
    root = tmp_path / "site"
    (root / "guide").mkdir(parents=True)
    pages = {
        "index.html": '<h1>Guide</h1><p>Start here.</p><a href="tea.html">Tea</a> <a href="gone.html">Gone</a>'
        ' <a href="private.html">Private</a>',
        "tea.html": '<h1 id="tea">Tea</h1><h2 id="brewing">Brewing</h2><p>Oolong is steeped at 90 degrees.</p>'
        '<a href="index.html">Back</a>',
        "private.html": "<h1>Private</h1><p>Not for crawlers.</p>",
    }
    for name, body in pages.items():
        (root / "guide" / name).write_text(f"<html><body><main>{body}</main></body></html>", encoding="utf-8")
    with DocsServer(root) as server:
        server.routes["/robots.txt"] = Route(body=b"User-agent: *\nDisallow: /guide/private.html\n")
        yield server


def test_a_page_is_stored_under_its_address_and_asked_again_conditionally(
    store: Path, docs: DocsServer, embedder: Embedder, capsys: pytest.CaptureFixture[str]
) -> None:
    url = docs.url("/library/tty.html")
    assert run_ingest([url, "--no-summaries"]) == 0
    assert "1 files: 1 added" in capsys.readouterr().out

    kb = reopen(store, embedder)
    (record,) = kb.store.list_documents()
    assert record.source == url and record.id.endswith("-library-tty")
    hits = kb.search("put the terminal into raw mode", k=1).hits
    assert hits and hits[0].document_id == record.id and hits[0].source == url
    kb.close()

    assert run_ingest([url, "--no-summaries"]) == 0
    assert "1 unchanged (skipped)" in capsys.readouterr().out
    assert docs.requests[-1].headers.get("if-none-match")  # the validator kept from the first fetch


def test_a_crawl_stays_in_its_folder_honours_robots_txt_and_names_what_failed(
    store: Path, site: DocsServer, embedder: Embedder, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_ingest([site.url("/guide/index.html"), "--crawl", "--no-summaries"]) == 1  # gone.html is a 404
    out = capsys.readouterr().out
    assert "2 added" in out and "1 disallowed by robots.txt" in out
    assert f"refused {site.url('/guide/gone.html')}: " in out and "404" in out

    kb = reopen(store, embedder)
    sources = sorted(r.source for r in kb.store.list_documents())
    assert sources == [site.url("/guide/index.html"), site.url("/guide/tea.html")]
    hit = kb.search("what temperature is oolong steeped at", k=1).hits[0]
    assert hit.source == site.url("/guide/tea.html") and hit.title == "Tea"
    assert hit.link == site.url("/guide/tea.html#tea")  # the address of the section the passage starts in
    kb.close()


def test_crawl_without_an_address_and_sync_with_one_are_refused(store: Path, tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        ingest.main([str(tmp_path), "--crawl"])
    with pytest.raises(SystemExit):
        ingest.main(["--sync", "https://example.org/docs/"])
