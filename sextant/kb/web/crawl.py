"""``--crawl``: the pages of one section of a site, breadth first, politely.

- Scope: the start address's origin (scheme, host, port) and directory: from ``https://h/3/library/index.html``
  only ``https://h/3/library/…`` is fetched. A page redirected out of scope is not ingested; its error names the
  address to start from instead.
- Order: the links of an ``llms.txt`` (at the directory, else at the origin's root; the llms.txt convention:
  Markdown that links a site's important pages) in their file's order, then the start address, then each page's
  new links in sorted order, level by level. Same site, same order.
- Addresses: fragments dropped (one page, many anchors); query strings kept, as dropping them would merge
  distinct pages (``?page=2``, ``index.php?title=…``); the copies they do make (Sphinx's ``?highlight=``) are
  caught by their bytes: a page whose SHA-256 equals an earlier one's this crawl is a ``duplicate``.
- Limits: ``max_depth`` links from a seed, ``max_pages`` requests for pages (robots.txt and llms.txt not counted).
- Politeness: robots.txt read once, before anything else (RFC 9309: a 4xx means no rules, a 5xx or no answer
  means nothing may be fetched); ``delay_s`` between any two requests, or the site's Crawl-delay or
  Request-rate when longer.
- Errors: a page that fails (404, timeout, a type no loader reads) is reported with its reason; the crawl goes on.
"""

from __future__ import annotations

import re
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath
from typing import Literal
from urllib.parse import urljoin, urlsplit, urlunsplit
from urllib.robotparser import RobotFileParser

import lxml.html
from lxml import etree

from sextant.kb.web.cache import FetchCache
from sextant.kb.web.fetch import ROBOTS_TOKEN, Fetched, Fetcher, FetchError, check_url

PageStatus = Literal["fetched", "unchanged", "duplicate", "failed"]
DEFAULT_PORTS = {"http": 80, "https": 443}
# Links to these are assets, not documents: not even asked for.
_ASSETS = {
    "style, code, data": ".css .js .mjs .map .json .xml .rss .atom",
    "images, fonts": ".png .jpg .jpeg .gif .svg .webp .ico .bmp .tif .tiff .woff .woff2 .ttf .otf .eot",
    "archives, installers": ".zip .gz .tgz .bz2 .xz .7z .tar .rar .whl .exe .dmg .msi .deb .rpm .iso",
    "media": ".mp3 .mp4 .webm .ogg .wav .avi .mov",
}
ASSET_SUFFIXES = frozenset(suffix for group in _ASSETS.values() for suffix in group.split())
NOTHING_ALLOWED = ["User-agent: *", "Disallow: /"]
# [text](url) or [text](<url> "title") in Markdown.
MARKDOWN_LINK = re.compile(r"\[[^\]]*\]\(\s*(?:<([^>]*)>|([^)\s]+))(?:\s+[\"'][^\"']*[\"'])?\s*\)")


def normalize(url: str) -> str | None:
    """The address a crawl compares and asks for: scheme and host lowercased, default port and fragment dropped,
    an empty path made ``/``, the query kept; None for anything but http(s)."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = parts.hostname
    if scheme not in DEFAULT_PORTS or not host:
        return None
    netloc = f"[{host}]" if ":" in host else host
    if port is not None and port != DEFAULT_PORTS[scheme]:
        netloc += f":{port}"
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))


@dataclass(frozen=True, slots=True)
class Scope:
    """An origin and a path prefix: what a crawl may fetch."""

    origin: str
    prefix: str

    @classmethod
    def of(cls, url: str) -> Scope:
        """The origin and directory of ``url`` (``…/library/index.html`` and ``…/library/`` give ``…/library/``)."""
        normal = normalize(url)
        if normal is None:
            raise ValueError(f"not an http(s) address: {url}")
        parts = urlsplit(normal)
        return cls(f"{parts.scheme}://{parts.netloc}", parts.path[: parts.path.rfind("/") + 1])

    @property
    def root(self) -> str:
        return self.origin + self.prefix

    def contains(self, url: str) -> bool:
        return url.startswith(self.origin + "/") and urlsplit(url).path.startswith(self.prefix)


@dataclass(frozen=True, slots=True)
class CrawledPage:
    """One address asked for, as ``on_page`` sees it.

    ``status``: ``fetched`` (new or changed: store it), ``unchanged`` (304, or the same bytes as the cache says),
    ``duplicate`` (the same bytes as ``reason``'s address this crawl) or ``failed`` (``reason`` says why).
    ``url`` is the address asked for (the cache's key); ``fetched.url`` the one answered after redirects.
    ``links``: the same-origin addresses linked from it, for ``FetchCache.remember``. ``number`` counts pages so far
    and ``queued`` those waiting, for a progress bar.
    """

    url: str
    depth: int
    status: PageStatus
    fetched: Fetched | None
    links: tuple[str, ...] = ()
    reason: str = ""
    number: int = 0
    queued: int = 0


@dataclass(slots=True)
class CrawlReport:
    """What a crawl did, address by address (no page bytes: those went to ``on_page``)."""

    scope: Scope
    llms_txt: str | None = None
    fetched: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    duplicates: list[tuple[str, str]] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    disallowed: list[str] = field(default_factory=list)
    left: int = 0
    beyond_depth: int = 0
    delay_s: float = 0.0

    def add(self, page: CrawledPage) -> None:
        if page.status == "fetched":
            self.fetched.append(page.url)
        elif page.status == "unchanged":
            self.unchanged.append(page.url)
        elif page.status == "duplicate":
            self.duplicates.append((page.url, page.reason))
        else:
            self.failed.append((page.url, page.reason))

    def lines(self) -> list[str]:
        pages = len(self.fetched) + len(self.unchanged) + len(self.duplicates) + len(self.failed)
        out = [
            f"crawl of {self.scope.root}: {pages} pages: {len(self.fetched)} fetched, {len(self.unchanged)} "
            f"unchanged, {len(self.duplicates)} duplicates, {len(self.failed)} failed; "
            f"{len(self.disallowed)} disallowed by robots.txt"
            + (f"; llms.txt read from {self.llms_txt}" if self.llms_txt else "")
        ]
        if self.left:
            out.append(f"page limit reached: {self.left} addresses in scope not fetched")
        if self.beyond_depth:
            out.append(f"depth limit reached: {self.beyond_depth} addresses in scope not followed")
        return out  # each failed page is named by the caller, which hears of it through on_page


def page_links(data: bytes, url: str) -> list[str]:
    """The distinct ``<a href>`` targets of an HTML page, absolute (``<base href>`` honoured), normalized, sorted."""
    try:
        root = lxml.html.document_fromstring(data)
    except (etree.ParserError, ValueError):
        return []
    base = url
    for element in root.iter("base"):
        if element.get("href"):
            base = urljoin(url, element.get("href", "").strip())
            break
    links = (normalize(urljoin(base, a.get("href", "").strip())) for a in root.iter("a") if a.get("href"))
    return sorted({link for link in links if link is not None})


def llms_links(text: str, url: str) -> list[str]:
    """The Markdown links of an llms.txt, absolute and normalized, in the file's order, each once."""
    targets = (match[1] or match[2] for match in MARKDOWN_LINK.finditer(text))
    links = (normalize(urljoin(url, target.strip())) for target in targets)
    return list(dict.fromkeys(link for link in links if link is not None))


def crawl(
    start_url: str,
    fetcher: Fetcher,
    *,
    max_depth: int = 3,
    max_pages: int = 500,
    delay_s: float = 0.5,
    cache: FetchCache | None = None,
    on_page: Callable[[CrawledPage], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> CrawlReport:
    """Crawl the section of a site under ``start_url`` (see the module's docstring), calling ``on_page`` for
    each address asked for, in order. ``cache`` is read, never written: remember a page once it is stored.

    Raises:
        FetchError: ``start_url`` is not an http(s) address.
        ValueError: ``max_pages`` below 1 or ``max_depth`` below 0.
    """
    check_url(start_url)
    if max_pages < 1 or max_depth < 0:
        raise ValueError(f"max_pages must be at least 1 and max_depth at least 0, not {max_pages} and {max_depth}")
    scope = Scope.of(start_url)
    report = CrawlReport(scope)
    pace = _Pacer(delay_s, sleep)

    robots = _read_robots(fetcher, scope, pace, report)
    report.delay_s = pace.delay = max(delay_s, _robots_delay(robots))
    llms_url, seeds = _read_llms(fetcher, scope, robots, pace)
    report.llms_txt = llms_url

    queue: deque[tuple[str, int]] = deque()
    seen: set[str] = set()
    too_deep: set[str] = set()
    hashes: dict[str, str] = {}

    def enqueue(links: Iterable[str], depth: int) -> None:
        for link in links:
            if link in seen or not scope.contains(link) or _is_asset(link):
                continue
            if depth > max_depth:
                too_deep.add(link)
                continue
            seen.add(link)
            queue.append((link, depth))

    enqueue([*seeds, normalize(start_url) or start_url], 0)
    number = 0
    while queue:
        if number >= max_pages:
            report.left = len(queue)
            break
        url, depth = queue.popleft()
        if not robots.can_fetch(ROBOTS_TOKEN, url):
            report.disallowed.append(url)
            continue
        number += 1
        page = _visit(fetcher, url, depth, scope, cache, hashes, pace)
        if page.fetched is not None:
            seen.add(normalize(page.fetched.url) or page.fetched.url)  # a redirect's target is not asked for again
        enqueue(page.links, depth + 1)
        page = replace(page, number=number, queued=len(queue))
        report.add(page)
        if on_page is not None:
            on_page(page)
    report.beyond_depth = len(too_deep - seen)
    return report


def _visit(
    fetcher: Fetcher,
    url: str,
    depth: int,
    scope: Scope,
    cache: FetchCache | None,
    hashes: dict[str, str],
    pace: _Pacer,
) -> CrawledPage:
    known = cache.get(url) if cache is not None else None
    pace.wait()
    try:
        fetched = fetcher.fetch(
            url, etag=known.etag if known else None, last_modified=known.last_modified if known else None
        )
    except FetchError as exc:
        return CrawledPage(url, depth, "failed", None, reason=exc.reason)
    final = normalize(fetched.url) or fetched.url
    if not scope.contains(final):
        reason = f"redirected to {fetched.url}, outside {scope.root}; crawl from there to follow it"
        return CrawledPage(url, depth, "failed", fetched, reason=reason)
    if fetched.status == "unchanged" and known is not None:
        hashes.setdefault(known.sha256, url)
        return CrawledPage(url, depth, "unchanged", fetched, known.links)
    if fetched.status == "unchanged":
        # A 304 to a request that was not conditional: nothing to store and nothing to follow.
        return CrawledPage(url, depth, "failed", fetched, reason="HTTP 304 to an unconditional request")
    digest = fetched.sha256
    links = tuple(page_links(fetched.data, fetched.url)) if fetched.name.endswith(".html") else ()
    # The origin's, not only the scope's: a later crawl from a wider start reads them from the cache on a 304.
    links = tuple(link for link in links if link.startswith(scope.origin + "/"))
    if known is not None and known.sha256 == digest:
        hashes.setdefault(digest, url)
        return CrawledPage(url, depth, "unchanged", fetched, links)
    if digest in hashes:
        return CrawledPage(url, depth, "duplicate", fetched, links, reason=hashes[digest])
    hashes[digest] = url
    return CrawledPage(url, depth, "fetched", fetched, links)


class _Pacer:
    """Sleeps ``delay`` before every request but the first; a whole delay, not the rest of one, for simplicity."""

    def __init__(self, delay: float, sleep: Callable[[float], None]) -> None:
        self.delay = delay
        self._sleep = sleep
        self._first = True

    def wait(self) -> None:
        if not self._first and self.delay > 0:
            self._sleep(self.delay)
        self._first = False


def _read_robots(fetcher: Fetcher, scope: Scope, pace: _Pacer, report: CrawlReport) -> RobotFileParser:
    url = scope.origin + "/robots.txt"
    robots = RobotFileParser(url)
    pace.wait()
    try:
        answer = fetcher.get(url, accept="text/plain")
    except FetchError as exc:
        robots.parse(NOTHING_ALLOWED)
        report.failed.append((url, f"{exc.reason}; RFC 9309: nothing is crawled until robots.txt answers"))
        return robots
    if answer.status >= 500:
        robots.parse(NOTHING_ALLOWED)
        report.failed.append((url, f"HTTP {answer.status}; RFC 9309: nothing is crawled until robots.txt answers"))
    elif answer.status >= 400 or answer.status < 200:
        robots.parse([])
    else:
        robots.parse(answer.data.decode("utf-8", "replace").splitlines())
    return robots


def _robots_delay(robots: RobotFileParser) -> float:
    delay = float(robots.crawl_delay(ROBOTS_TOKEN) or 0)
    rate = robots.request_rate(ROBOTS_TOKEN)
    if rate is not None and rate.requests > 0:
        delay = max(delay, rate.seconds / rate.requests)
    return delay


def _read_llms(fetcher: Fetcher, scope: Scope, robots: RobotFileParser, pace: _Pacer) -> tuple[str | None, list[str]]:
    candidates = [scope.root + "llms.txt"]
    if scope.prefix != "/":
        candidates.append(scope.origin + "/llms.txt")
    for url in candidates:
        if not robots.can_fetch(ROBOTS_TOKEN, url):
            continue
        pace.wait()
        try:
            answer = fetcher.get(url, accept="text/markdown, text/plain")
        except FetchError:
            continue  # llms.txt is optional: without it the crawl starts from the start address
        # A site that answers every address with its HTML shell has no llms.txt.
        if answer.status == 200 and answer.data and answer.content_type != "text/html":
            return url, llms_links(answer.data.decode("utf-8", "replace"), answer.url)
    return None, []


def _is_asset(url: str) -> bool:
    return PurePosixPath(urlsplit(url).path).suffix.lower() in ASSET_SUFFIXES
