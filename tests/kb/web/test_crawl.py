"""``sextant.kb.web.crawl`` over Debian's Python manual and small sites of canned routes, served on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sextant.kb.web.cache import FetchCache
from sextant.kb.web.crawl import CrawledPage, CrawlReport, Scope, crawl, llms_links, normalize
from sextant.kb.web.fetch import Fetcher, FetchError, FetchLimits
from tests.kb.web.docs_server import DocsServer, Route, python_docs

LIMITS = FetchLimits(timeout_s=5.0, max_bytes=4 << 20)
HTML = {"Content-Type": "text/html; charset=utf-8"}
TEXT = {"Content-Type": "text/plain"}


def run(
    server: DocsServer, path: str, limits: FetchLimits = LIMITS, **options: Any
) -> tuple[CrawlReport, list[CrawledPage]]:
    pages: list[CrawledPage] = []
    with Fetcher(limits) as fetcher:
        report = crawl(server.url(path), fetcher, delay_s=0, on_page=pages.append, **options)
    return report, pages


def page(*links: str) -> Route:
    anchors = "".join(f'<a href="{link}">{link}</a>' for link in links)
    return Route(body=f"<html><body><h1>{links}</h1>{anchors}</body></html>".encode(), headers=HTML)


def test_a_crawl_of_the_library_stays_in_its_folder_and_stops_at_the_page_limit(docs: DocsServer) -> None:
    report, pages = run(docs, "/library/index.html", max_pages=30)
    assert len(pages) == 30 and report.left > 0
    assert [p.number for p in pages] == list(range(1, 31))
    assert all(p.url.startswith(docs.url("/library/")) for p in pages)
    asked = docs.paths()
    assert [p for p in asked if not p.startswith("/library/")] == ["/robots.txt", "/llms.txt"]
    assert len([p for p in asked if p.startswith("/library/") and p != "/library/llms.txt"]) == 30
    assert not [p for p in asked if p.endswith((".css", ".js", ".png", ".svg"))]
    # breadth first, each level's links in sorted order, and the same order every time
    assert pages[0].url == docs.url("/library/index.html") and pages[0].depth == 0
    assert [p.depth for p in pages] == sorted(p.depth for p in pages)
    level = [p.url for p in pages if p.depth == 1]
    assert level == sorted(level) and len(level) == 29
    assert report.fetched[:5] == [p.url for p in pages[:5]]
    _, again = run(docs, "/library/index.html", max_pages=30)
    assert [p.url for p in again] == [p.url for p in pages]


def test_robots_txt_disallow_is_honoured(docs: DocsServer) -> None:
    docs.routes["/robots.txt"] = Route(body=b"User-agent: *\nDisallow: /library/a\n", headers=TEXT)
    report, pages = run(docs, "/library/index.html", max_pages=40)
    assert len(pages) == 40
    assert not [p for p in docs.paths() if p.startswith("/library/a")]
    assert report.disallowed and all(url.startswith(docs.url("/library/a")) for url in report.disallowed)
    assert docs.paths().count("/robots.txt") == 1


def test_robots_txt_that_shuts_sextant_out_stops_the_crawl_before_any_page(docs: DocsServer) -> None:
    rules = b"User-agent: Sextant\nDisallow: /\n\nUser-agent: *\nDisallow:\n"
    docs.routes["/robots.txt"] = Route(body=rules, headers=TEXT)
    report, pages = run(docs, "/library/index.html")
    assert pages == [] and report.disallowed == [docs.url("/library/index.html")]
    assert docs.paths() == ["/robots.txt"]


def test_a_robots_txt_that_fails_means_nothing_is_crawled(docs: DocsServer) -> None:
    docs.routes["/robots.txt"] = Route(503, b"busy", TEXT)
    report, pages = run(docs, "/library/index.html")
    assert pages == []
    assert report.failed == [
        (docs.url("/robots.txt"), "HTTP 503; RFC 9309: nothing is crawled until robots.txt answers")
    ]


def test_the_crawl_delay_of_robots_txt_is_kept_between_all_requests(docs: DocsServer) -> None:
    docs.routes["/robots.txt"] = Route(body=b"User-agent: *\nCrawl-delay: 2\n", headers=TEXT)
    slept: list[float] = []
    report, pages = run(docs, "/library/index.html", max_pages=3, sleep=slept.append)
    assert len(pages) == 3 and report.delay_s == 2.0
    assert slept == [2.0] * (len(docs.requests) - 1)


@pytest.mark.parametrize("where", ["/library/llms.txt", "/llms.txt"])
def test_the_links_of_llms_txt_are_crawled_first_in_its_order(docs: DocsServer, where: str) -> None:
    docs.routes[where] = Route(
        body=b"# The library\n\n> Modules.\n\n## Most used\n\n"
        b"- [socket](/library/socket.html): low-level networking\n"
        b"- [Glossary](/glossary.html)\n"
        b"- [Elsewhere](https://example.org/library/x.html)\n"
        b'- [json](/library/json.html#module-json "JSON"): encoding\n'
        b"- [socket, again](/library/socket.html)\n",
        headers={"Content-Type": "text/markdown"},
    )
    report, pages = run(docs, "/library/index.html", max_pages=4)
    assert report.llms_txt == docs.url(where)
    assert [p.url for p in pages[:3]] == [docs.url(f"/library/{n}") for n in ("socket.html", "json.html", "index.html")]
    assert "/glossary.html" not in docs.paths()


def test_an_html_answer_for_llms_txt_is_no_llms_txt(docs: DocsServer) -> None:
    docs.routes["/library/llms.txt"] = page("socket.html")
    report, pages = run(docs, "/library/index.html", max_pages=1)
    assert report.llms_txt is None and pages[0].url == docs.url("/library/index.html")


def test_a_re_crawl_asks_conditionally_and_reports_unchanged_pages(docs: DocsServer, tmp_path: Path) -> None:
    store = tmp_path / "web-cache.json"
    cache = FetchCache(store)
    visited: list[str] = []

    def stored(page: CrawledPage) -> None:
        visited.append(page.url)
        if page.status == "fetched" and page.fetched is not None:
            cache.remember(page.url, page.fetched, page.links)

    with Fetcher(LIMITS) as fetcher:
        first = crawl(docs.url("/library/index.html"), fetcher, delay_s=0, max_pages=12, on_page=stored)
    cache.save()
    assert len(first.fetched) >= 10 and len(FetchCache.load(store)) == len(first.fetched)
    edited = first.fetched[1]
    path = edited.removeprefix(docs.origin)
    docs.routes[path] = Route(body=(python_docs() / path.lstrip("/")).read_bytes() + b"<!-- edited -->", headers=HTML)
    asked_before = len(docs.requests)

    again: list[CrawledPage] = []
    with Fetcher(LIMITS) as fetcher:
        second = crawl(
            docs.url("/library/index.html"),
            fetcher,
            delay_s=0,
            max_pages=12,
            cache=FetchCache.load(store),
            on_page=again.append,
        )
    # 304s carry no links: the cache's let the re-crawl walk the same pages in the same order
    assert [p.url for p in again] == visited and len(visited) == 12
    assert second.fetched == [edited]
    assert sorted(second.unchanged) == sorted(u for u in first.fetched if u != edited)
    conditional = {docs.origin + s.path: s.headers.get("if-none-match") for s in docs.requests[asked_before:]}
    for url in first.fetched:
        entry = cache.get(url)
        assert entry is not None and conditional[url] == entry.etag


def test_a_page_without_validators_is_unchanged_when_its_bytes_are(site: DocsServer, tmp_path: Path) -> None:
    site.routes["/s/index.html"] = page("a.html")
    site.routes["/s/a.html"] = page()
    cache = FetchCache(tmp_path / "web-cache.json")
    first, pages = run(site, "/s/index.html")
    for p in pages:
        assert p.fetched is not None
        cache.remember(p.url, p.fetched, p.links)
    second, _ = run(site, "/s/index.html", cache=cache)
    assert (len(first.fetched), second.fetched, len(second.unchanged)) == (2, [], 2)
    assert all("if-none-match" not in s.headers for s in site.requests)


def test_one_bad_page_does_not_stop_the_crawl_and_each_outcome_is_named(site: DocsServer) -> None:
    site.routes["/s/index.html"] = page(
        "a.html", "a.html#part", "a.html?x=1", "b.html", "c.pdf", "missing.html", "slow.html", "moved.html",
        "pic.png", "mailto:someone@example.org", "../outside.html", "/s/", "ftp://example.org/s/x.html",
    )  # fmt: skip
    site.routes["/s/"] = Route(301, headers={"Location": "/s/index.html"})
    site.routes["/s/a.html"] = page("b.html")
    site.routes["/s/b.html"] = page()
    site.routes["/s/c.pdf"] = Route(body=b"%PDF-1.4 tiny", headers={"Content-Type": "application/pdf"})
    site.routes["/s/slow.html"] = Route(body=b"<p>late</p>", headers=HTML, slow=True)
    site.routes["/s/moved.html"] = Route(301, headers={"Location": "/elsewhere/moved.html"})
    site.routes["/elsewhere/moved.html"] = page()
    report, pages = run(site, "/s/index.html", limits=FetchLimits(timeout_s=0.3))
    at = site.url
    assert {p.url.removeprefix(site.origin): p.status for p in pages} == {
        "/s/index.html": "fetched",
        "/s/": "duplicate",
        "/s/a.html": "fetched",
        "/s/a.html?x=1": "duplicate",
        "/s/b.html": "fetched",
        "/s/c.pdf": "fetched",
        "/s/missing.html": "failed",
        "/s/moved.html": "failed",
        "/s/slow.html": "failed",
    }
    assert (at("/s/a.html?x=1"), at("/s/a.html")) in report.duplicates
    failed = dict(report.failed)
    assert failed[at("/s/missing.html")] == "HTTP 404 Not Found"
    assert "SEXTANT_FETCH_TIMEOUT_S" in failed[at("/s/slow.html")]
    assert failed[at("/s/moved.html")].startswith(f"redirected to {at('/elsewhere/moved.html')}, outside {at('/s/')}")
    pdf = next(p for p in pages if p.url.endswith(".pdf"))
    assert pdf.fetched is not None and pdf.fetched.name == "c.pdf"
    assert not {"/s/pic.png", "/outside.html"} & set(site.paths())
    assert "/elsewhere/moved.html" in site.paths()  # the redirect is followed, but what it found is not kept


def test_the_depth_limit_is_counted_from_the_start(site: DocsServer) -> None:
    for n in range(4):
        site.routes[f"/d/{n}.html"] = page(f"{n + 1}.html")
    report, pages = run(site, "/d/0.html", max_depth=2)
    assert [p.url for p in pages] == [site.url(f"/d/{n}.html") for n in range(3)]
    assert report.beyond_depth == 1 and "/d/3.html" not in site.paths()


@pytest.mark.parametrize("start", ["file:///usr/share/doc/python3.11/html/library/index.html", "ftp://example.org/"])
def test_a_crawl_from_another_scheme_is_refused(start: str) -> None:
    with Fetcher(LIMITS) as fetcher, pytest.raises(FetchError, match="only http:// and https://"):
        crawl(start, fetcher, delay_s=0)


def test_addresses_are_compared_without_fragment_default_port_or_case() -> None:
    assert normalize("HTTPS://Docs.Python.org:443/3/library/socket.html?q=1#socket") == (
        "https://docs.python.org/3/library/socket.html?q=1"
    )
    assert normalize("http://h") == "http://h/"
    assert normalize("mailto:someone@example.org") is None
    scope = Scope.of("https://docs.python.org/3/library/index.html")
    assert scope.root == "https://docs.python.org/3/library/"
    assert scope.contains("https://docs.python.org/3/library/os.path.html")
    assert not scope.contains("https://docs.python.org/3/glossary.html")
    assert not scope.contains("http://docs.python.org/3/library/os.html")
    assert not scope.contains("https://docs.python.org.evil.example/3/library/os.html")


def test_llms_txt_links_are_read_in_order_each_once() -> None:
    text = '# Site\n- [A](a.md)\n- [B](<b c.md> "title")\n- [A again](./a.md#x)\n- ![img](pic.png)\n'
    assert llms_links(text, "https://h/docs/llms.txt") == [
        "https://h/docs/a.md",
        "https://h/docs/b c.md",
        "https://h/docs/pic.png",
    ]
