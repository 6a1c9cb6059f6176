"""``sextant.kb.web.fetch`` against a local server: names for the loaders, validators, limits, refusals."""

from __future__ import annotations

import pytest

from sextant.kb.web.fetch import Fetcher, FetchError, FetchLimits, fetch, file_name
from sextant.settings import KbSettings
from tests.kb.web.docs_server import DocsServer, Route, python_docs

SHORT = FetchLimits(timeout_s=5.0, max_bytes=1 << 20, max_redirects=3)


def test_a_manual_page_comes_with_its_name_bytes_and_validators(docs: DocsServer) -> None:
    page = fetch(docs.url("/library/socket.html"), limits=SHORT)
    assert (page.status, page.http_status, page.name, page.content_type) == ("fetched", 200, "socket.html", "text/html")
    assert page.data == (python_docs() / "library" / "socket.html").read_bytes()
    assert page.etag and page.last_modified
    assert docs.requests[0].headers["user-agent"].startswith("Sextant/")


@pytest.mark.parametrize("validator", ["etag", "last_modified"])
def test_a_conditional_request_for_an_unchanged_page_is_answered_unchanged(docs: DocsServer, validator: str) -> None:
    with Fetcher(SHORT) as fetcher:
        first = fetcher.fetch(docs.url("/library/json.html"))
        kept = {validator: getattr(first, validator)}
        again = fetcher.fetch(docs.url("/library/json.html"), **kept)
    assert (again.status, again.http_status, again.data, again.name) == ("unchanged", 304, b"", "json.html")
    asked = docs.requests[1].headers
    header = {"etag": "if-none-match", "last_modified": "if-modified-since"}[validator]
    assert asked[header] == kept[validator]


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "ftp://example.org/manual.pdf", "javascript:alert(1)", "socket.html"]
)
def test_addresses_other_than_http_and_https_are_refused_with_the_reason(url: str) -> None:
    with pytest.raises(FetchError, match=r"only http:// and https://") as refused:
        fetch(url, limits=SHORT)
    assert refused.value.url == url


def test_a_redirect_to_another_scheme_is_refused(site: DocsServer) -> None:
    site.routes["/away"] = Route(302, headers={"Location": "file:///etc/passwd"})
    with pytest.raises(FetchError, match=r"redirected to file:///etc/passwd: only http"):
        fetch(site.url("/away"), limits=SHORT)


@pytest.mark.parametrize(
    ("path", "content_type", "name"),
    [
        ("/files/manual.pdf", "application/pdf", "manual.pdf"),
        ("/download", "application/pdf", "download.pdf"),
        ("/files/report.pdf", "application/octet-stream", "report.pdf"),
        ("/raw/README.md", "text/plain; charset=utf-8", "README.md"),
        ("/notes/changes", "text/plain", "changes.txt"),
        ("/guide/setup.php", "text/html; charset=utf-8", "setup.php.html"),
        ("/spec.xhtml", "application/xhtml+xml", "spec.html"),
        ("/docs/intro", "text/markdown", "intro.md"),
        ("/letter.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", "letter.docx"),
    ],
)
def test_the_name_has_the_suffix_of_a_loader_for_the_content(
    site: DocsServer, path: str, content_type: str, name: str
) -> None:
    site.routes[path] = Route(body=b"%PDF-1.4 or whatever the type says", headers={"Content-Type": content_type})
    assert fetch(site.url(path + "?id=3"), limits=SHORT).name == name


def test_the_name_of_a_folder_address_is_the_folder_and_of_the_root_the_host() -> None:
    assert file_name("https://docs.python.org/3/library/", "text/html") == "library.html"
    assert file_name("https://docs.python.org/", "text/html") == "docs.python.org.html"
    assert file_name("https://h/%C3%BCber%20uns.html", "text/html") == "über-uns.html"
    assert file_name("https://h/a/..%2F..%2Fetc%2Fpasswd", "text/plain") == "passwd.txt"


@pytest.mark.parametrize("content_type", ["image/png", "application/json", "text/css", ""])
def test_a_type_no_loader_reads_is_refused_naming_it(site: DocsServer, content_type: str) -> None:
    site.routes["/thing"] = Route(body=b"\x89PNG", headers={"Content-Type": content_type} if content_type else {})
    with pytest.raises(FetchError, match="is not one Sextant reads") as refused:
        fetch(site.url("/thing"), limits=SHORT)
    assert repr(content_type or "(none)") in refused.value.reason


def test_redirects_are_followed_and_the_final_address_reported(docs: DocsServer) -> None:
    docs.routes["/old/socket"] = Route(301, headers={"Location": "/library/socket.html"})
    page = fetch(docs.url("/old/socket"), limits=SHORT)
    assert (page.url, page.name) == (docs.url("/library/socket.html"), "socket.html")


def test_a_redirect_loop_is_refused_naming_the_setting(site: DocsServer) -> None:
    site.routes["/loop"] = Route(302, headers={"Location": "/loop"})
    with pytest.raises(FetchError, match=r"more than 3 redirects \(SEXTANT_FETCH_MAX_REDIRECTS\)"):
        fetch(site.url("/loop"), limits=SHORT)
    assert len(site.requests) == 4


def test_a_missing_page_is_refused_with_its_status(docs: DocsServer) -> None:
    with pytest.raises(FetchError, match="HTTP 404 Not Found"):
        fetch(docs.url("/library/no-such-module.html"), limits=SHORT)


def test_a_slow_page_runs_out_of_time_naming_the_setting(site: DocsServer) -> None:
    site.routes["/slow"] = Route(body=b"<p>late</p>", headers={"Content-Type": "text/html"}, slow=True)
    with pytest.raises(FetchError, match=r"SEXTANT_FETCH_TIMEOUT_S \(0.2 s\)"):
        fetch(site.url("/slow"), limits=FetchLimits(timeout_s=0.2))


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "until-close"])
def test_a_body_over_the_limit_is_refused_naming_the_setting(site: DocsServer, declared: bool) -> None:
    site.routes["/huge.txt"] = Route(body=b"x" * 300_000, headers={"Content-Type": "text/plain"}, length=declared)
    with pytest.raises(FetchError, match=r"over SEXTANT_MAX_FETCH_BYTES \(10000 bytes\)"):
        fetch(site.url("/huge.txt"), limits=FetchLimits(max_bytes=10_000))


def test_a_server_that_is_not_there_is_named() -> None:
    with DocsServer() as gone:
        address = gone.url("/page.html")
    with pytest.raises(FetchError, match="cannot be fetched"):
        fetch(address, limits=SHORT)


def test_the_limits_are_read_from_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEXTANT_MAX_FETCH_BYTES", "4096")
    monkeypatch.setenv("SEXTANT_FETCH_TIMEOUT_S", "2.5")
    monkeypatch.setenv("SEXTANT_FETCH_MAX_REDIRECTS", "0")
    settings = KbSettings(_env_file=None)
    assert FetchLimits.from_settings(settings) == FetchLimits(timeout_s=2.5, max_bytes=4096, max_redirects=0)
    assert settings.crawl_delay_s == 0.5
