"""What a crawl remembers between runs: per web address its validators, content hash and links, in one JSON file.

A re-crawl asks each page conditionally (If-None-Match, If-Modified-Since) and skips it on 304 or when the bytes
hash as before. A 304 carries no body, so the page's links come from here, or a re-crawl would stop at its first
unchanged page. The caller remembers a page only once it is stored: a page fetched but lost to a store error is
asked for in full next time. The file is plain JSON, versioned, swapped in whole (temporary file + ``os.replace``);
a missing or damaged one is an empty cache, as losing it only costs a full fetch of each page.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from sextant.kb.durable import replace_atomically
from sextant.kb.web.fetch import Fetched

log = logging.getLogger(__name__)
VERSION = 1


@dataclass(frozen=True, slots=True)
class CacheEntry:
    """One address as last stored: its validators, the SHA-256 of its bytes, the loader's name, its links."""

    etag: str | None
    last_modified: str | None
    sha256: str
    name: str
    links: tuple[str, ...] = ()


class FetchCache:
    """Per-address validators of earlier fetches, kept in the JSON file at ``path``."""

    def __init__(self, path: Path, entries: dict[str, CacheEntry] | None = None) -> None:
        self.path = path
        self._entries = dict(entries or {})

    @classmethod
    def load(cls, path: Path) -> FetchCache:
        """The cache in ``path``; empty (said in the log) when the file is missing or not a cache of this version."""
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            if raw.get("version") != VERSION:
                raise ValueError(f"version {raw.get('version')!r}, not {VERSION}")
            entries = {url: _entry(value) for url, value in raw["pages"].items()}
        except FileNotFoundError:
            return cls(path)
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            log.warning(
                "%s is not a readable crawl cache (%s): every page is fetched in full and it is rewritten", path, exc
            )
            return cls(path)
        return cls(path, entries)

    def get(self, url: str) -> CacheEntry | None:
        return self._entries.get(url)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, url: object) -> bool:
        return url in self._entries

    def remember(self, url: str, fetched: Fetched, links: Sequence[str] = ()) -> None:
        """Record ``fetched`` under ``url`` (the address asked for, not the one redirected to): call it once the
        page is stored. An ``unchanged`` answer only refreshes the validators of the entry there is."""
        if fetched.status == "unchanged":
            known = self._entries.get(url)
            if known is not None:
                self._entries[url] = replace(known, etag=fetched.etag, last_modified=fetched.last_modified)
            return
        self._entries[url] = CacheEntry(fetched.etag, fetched.last_modified, fetched.sha256, fetched.name, tuple(links))

    def forget(self, url: str) -> None:
        self._entries.pop(url, None)

    def save(self) -> None:
        """Write the cache: a reader sees the old file or the new one, never half of one.

        Raises:
            OSError: the folder cannot be created or written.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        body = {"version": VERSION, "pages": {url: _plain(e) for url, e in sorted(self._entries.items())}}
        data = json.dumps(body, indent=1, ensure_ascii=False).encode("utf-8")
        replace_atomically(self.path, data, prefix=f".{self.path.name}.")


def _plain(entry: CacheEntry) -> dict[str, object]:
    return {**asdict(entry), "links": list(entry.links)}


def _entry(value: dict[str, object]) -> CacheEntry:
    etag, modified, sha, name, links = (value.get(k) for k in ("etag", "last_modified", "sha256", "name", "links"))
    if not isinstance(sha, str) or not isinstance(name, str) or not isinstance(links, list | None):
        raise ValueError("an entry lacks its sha256 or name")
    return CacheEntry(
        etag if isinstance(etag, str) else None,
        modified if isinstance(modified, str) else None,
        sha,
        name,
        tuple(str(link) for link in links or ()),
    )
