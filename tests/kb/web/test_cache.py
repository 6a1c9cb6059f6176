"""``sextant.kb.web.cache``: the JSON file a re-crawl reads its validators from."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from sextant.kb.web.cache import CacheEntry, FetchCache
from sextant.kb.web.fetch import Fetched


def fetched(data: bytes = b"<p>hi</p>", *, status: str = "fetched", etag: str | None = '"1"') -> Fetched:
    return Fetched(
        url="https://h/docs/a.html",
        name="a.html",
        data=data,
        status="unchanged" if status == "unchanged" else "fetched",
        etag=etag,
        last_modified="Tue, 12 May 2026 05:17:27 GMT",
        content_type="text/html",
        http_status=304 if status == "unchanged" else 200,
    )


def test_save_then_load_gives_the_same_entries_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "store" / "web-cache.json"
    cache = FetchCache(path)
    cache.remember("https://h/docs/a.html", fetched(), ["https://h/docs/b.html", "https://h/docs/c.html"])
    cache.remember("https://h/docs/ü.html?q=1", fetched(b"other", etag=None))
    cache.save()
    loaded = FetchCache.load(path)
    assert len(loaded) == 2
    assert loaded.get("https://h/docs/a.html") == CacheEntry(
        '"1"',
        "Tue, 12 May 2026 05:17:27 GMT",
        fetched().sha256,
        "a.html",
        ("https://h/docs/b.html", "https://h/docs/c.html"),
    )
    assert loaded.get("https://h/docs/ü.html?q=1") == cache.get("https://h/docs/ü.html?q=1")
    assert [p.name for p in path.parent.iterdir()] == ["web-cache.json"]
    assert json.loads(path.read_text(encoding="utf-8"))["version"] == 1


def test_an_unchanged_answer_refreshes_only_the_validators(tmp_path: Path) -> None:
    cache = FetchCache(tmp_path / "web-cache.json")
    cache.remember("https://h/docs/a.html", fetched(), ["https://h/docs/b.html"])
    cache.remember("https://h/docs/a.html", fetched(b"", status="unchanged", etag='"2"'))
    cache.remember("https://h/docs/new.html", fetched(b"", status="unchanged"))
    entry = cache.get("https://h/docs/a.html")
    assert entry is not None and (entry.etag, entry.sha256, entry.links) == (
        '"2"',
        fetched().sha256,
        ("https://h/docs/b.html",),
    )
    assert "https://h/docs/new.html" not in cache


@pytest.mark.parametrize(
    "content", ["{not json", '{"version": 99, "pages": {}}', '{"version": 1, "pages": {"u": {"etag": null}}}', "[]"]
)
def test_a_damaged_cache_is_an_empty_one_said_in_the_log(
    tmp_path: Path, content: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "web-cache.json"
    path.write_text(content, encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="sextant.kb.web.cache"):
        cache = FetchCache.load(path)
    assert len(cache) == 0
    assert "is not a readable crawl cache" in caplog.text


def test_a_missing_cache_is_an_empty_one(tmp_path: Path) -> None:
    assert len(FetchCache.load(tmp_path / "nothing-yet.json")) == 0
