"""``sextant-ingest https://… [--crawl]``: web pages into the knowledge base, each cited by its address.

A page is fetched (``sextant.kb.web``), parsed in the bounded worker by the loader its content type picks, and
stored under an id made from its address, with the address as its source, so that a citation carries the URL
and, with a section's anchor, its ``#fragment``. The validators of each page stored are kept in the store's
``web-cache.json``: asked again, a page that has not changed answers 304 and is not read. A page is remembered
only once it is stored, so a page that failed is asked for in full next time.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from rich.progress import Progress

from sextant.contract.results import IngestOutcome
from sextant.kb.document_ids import url_document_id
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.loader_sandbox import BoundedParser
from sextant.kb.refusal import REFUSALS, refusal_reason
from sextant.kb.web.cache import FetchCache
from sextant.kb.web.crawl import CrawledPage, crawl
from sextant.kb.web.fetch import Fetched, Fetcher, FetchError, FetchLimits

CACHE_FILE = "web-cache.json"

Record = Callable[[str, IngestOutcome | str], None]
"""``record(url, outcome)``: what became of one address: its outcome, or the reason it was refused."""


def is_address(argument: str) -> bool:
    """Whether a command-line argument names a web address rather than a path."""
    return argument.lower().startswith(("http://", "https://"))


def ingest_addresses(
    kb: KnowledgeBase,
    parser: BoundedParser,
    urls: list[str],
    *,
    category: str,
    record: Record,
    bar: Progress,
    crawl_pages: bool = False,
    max_depth: int = 3,
    max_pages: int = 500,
) -> list[str]:
    """Fetch and store each address (with ``crawl_pages``, each one's section of its site); returns the crawl
    reports' lines. Nothing raises for one page: each address's outcome or refusal goes to ``record``."""
    cache = FetchCache.load(kb.settings.store_dir() / CACHE_FILE)
    lines: list[str] = []
    task = bar.add_task("fetching", total=None)

    def on_page(page: CrawledPage) -> None:
        bar.update(task, description=page.url, completed=page.number, total=page.number + page.queued)
        if page.status == "fetched" and page.fetched is not None:
            if _store(kb, parser, page.url, page.fetched, category, record):
                cache.remember(page.url, page.fetched, page.links)
        elif page.status == "unchanged" and page.fetched is not None:
            record(page.url, IngestOutcome(id=url_document_id(page.url), status="unchanged"))
            cache.remember(page.url, page.fetched, page.links)
        elif page.status == "failed":
            record(page.url, page.reason)

    # Saved once, also when a run is interrupted: what was stored by then is remembered.
    try:
        with Fetcher(FetchLimits.from_settings(kb.settings)) as fetcher:
            for url in urls:
                if not crawl_pages:
                    bar.update(task, description=url)
                    _one(kb, parser, fetcher, cache, url, category, record)
                    continue
                try:
                    report = crawl(
                        url,
                        fetcher,
                        max_depth=max_depth,
                        max_pages=max_pages,
                        delay_s=kb.settings.crawl_delay_s,
                        cache=cache,
                        on_page=on_page,
                    )
                except (FetchError, ValueError) as exc:
                    record(url, str(exc))
                    continue
                lines.extend(report.lines())
    finally:
        _save(cache, lines)
    return lines


def _one(
    kb: KnowledgeBase,
    parser: BoundedParser,
    fetcher: Fetcher,
    cache: FetchCache,
    url: str,
    category: str,
    record: Record,
) -> None:
    known = cache.get(url)
    try:
        fetched = fetcher.fetch(
            url,
            etag=known.etag if known else None,
            last_modified=known.last_modified if known else None,
        )
    except FetchError as exc:
        record(url, exc.reason)
        return
    if fetched.status == "unchanged" or (known is not None and known.sha256 == fetched.sha256):
        record(url, IngestOutcome(id=url_document_id(url), status="unchanged"))
        cache.remember(url, fetched)
        return
    if _store(kb, parser, url, fetched, category, record):
        cache.remember(url, fetched)


def _store(kb: KnowledgeBase, parser: BoundedParser, url: str, fetched: Fetched, category: str, record: Record) -> bool:
    """Parse and store one fetched page under its address's id; whether it was stored."""
    try:
        loaded = parser.parse(fetched.data, fetched.name)
        original = parser.original(fetched.data, fetched.name)
        outcome = kb.ingest(
            url_document_id(url),
            loaded,
            source=url,
            category=category,
            original=original,
            file_hash=hashlib.sha256(fetched.data).hexdigest(),
        )
    except REFUSALS as exc:
        record(url, refusal_reason(exc))
        return False
    record(url, outcome)
    return True


def _save(cache: FetchCache, lines: list[str]) -> None:
    try:
        cache.save()
    except OSError as exc:
        lines.append(f"the crawl cache {cache.path} could not be written ({exc}): next time every page is fetched")
