"""One web address -> the bytes a loader reads and a file name whose suffix picks that loader.

http and https only, each limit a setting: a total deadline over the whole exchange (httpx's timeouts are per
read, so a server that drips a byte a second would never time out), the body counted after decompression (a
gzip bomb is refused like any large body) and before it is all held, redirects followed one hop at a time so
that every hop's scheme is checked. With the ETag or Last-Modified of an earlier fetch the request is
conditional, and a 304 answer is ``unchanged``.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import PurePosixPath
from types import TracebackType
from typing import TYPE_CHECKING, Literal
from urllib.parse import unquote, urljoin, urlsplit

import httpx

if TYPE_CHECKING:
    from sextant.settings import KbSettings

SCHEMES = ("http", "https")
# The name robots.txt rules address us by (``User-agent: Sextant``).
ROBOTS_TOKEN = "Sextant"


def _version() -> str:
    try:
        return metadata.version("sextant-kb")
    except metadata.PackageNotFoundError:
        return "dev"


USER_AGENT = f"{ROBOTS_TOKEN}/{_version()} (knowledge-base ingest; honours robots.txt)"
ACCEPT = (
    "text/html, application/xhtml+xml, text/markdown;q=0.9, text/plain;q=0.8, application/pdf;q=0.8, "
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document;q=0.8, */*;q=0.1"
)

# A content type that names a format -> the suffix of the loader that reads it.
TYPE_SUFFIX = {
    "text/html": ".html",
    "application/xhtml+xml": ".html",
    "text/markdown": ".md",
    "text/x-markdown": ".md",
    "application/pdf": ".pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": ".docx",
}
# Types that do not name a format: the address's own suffix decides (raw.githubusercontent.com serves README.md
# as text/plain; many servers send PDFs as octet-stream).
GENERIC_TYPES = ("", "text/plain", "application/octet-stream", "binary/octet-stream")
# An address's suffix -> the loader suffix it stands for.
PATH_SUFFIX = {
    ".html": ".html",
    ".htm": ".html",
    ".xhtml": ".html",
    ".md": ".md",
    ".markdown": ".md",
    ".txt": ".txt",
    ".text": ".txt",
    ".pdf": ".pdf",
    ".docx": ".docx",
}
READABLE = "HTML, XHTML, Markdown, plain text, PDF or DOCX"


class FetchError(Exception):
    """A web address that was not fetched; ``reason`` says why and, where it can, what to do."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"{url}: {reason}")
        self.url = url
        self.reason = reason


@dataclass(frozen=True, slots=True)
class FetchLimits:
    """Bounds of one fetch; ``from_settings`` reads them from ``SEXTANT_FETCH_*`` and ``SEXTANT_MAX_FETCH_BYTES``."""

    timeout_s: float = 30.0
    max_bytes: int = 10 * 1024 * 1024
    max_redirects: int = 5

    @classmethod
    def from_settings(cls, settings: KbSettings) -> FetchLimits:
        return cls(
            timeout_s=settings.fetch_timeout_s,
            max_bytes=settings.max_fetch_bytes,
            max_redirects=settings.fetch_max_redirects,
        )


@dataclass(frozen=True, slots=True)
class Fetched:
    """A fetched page: ``url`` after redirects, ``name`` for ``load_bytes``, its bytes and its validators.

    ``status`` is ``unchanged`` when the server answered 304 to a conditional request: ``data`` is empty and
    ``name`` is guessed from the address alone.
    """

    url: str
    name: str
    data: bytes
    status: Literal["fetched", "unchanged"]
    etag: str | None
    last_modified: str | None
    content_type: str
    http_status: int

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


@dataclass(frozen=True, slots=True)
class Answer:
    """Any answer, of any status and type (robots.txt, llms.txt): only the limits are applied."""

    url: str
    status: int
    content_type: str
    data: bytes


def check_url(url: str) -> None:
    """Refuse what is not an http(s) address with a host.

    Raises:
        FetchError: another scheme (file:, ftp:, javascript:) or no host; the reason says which.
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        # file: would read this machine's files on a remote caller's behalf; other schemes have no loader path.
        given = f"{scheme}:" if scheme else "a bare path"
        raise FetchError(url, f"only http:// and https:// addresses are fetched, not {given}")
    if not parts.hostname:
        raise FetchError(url, "has no host name")


def media_type(header: str | None) -> str:
    """``text/html; charset=utf-8`` -> ``text/html``."""
    return (header or "").split(";", 1)[0].strip().lower()


def file_name(url: str, content_type: str) -> str | None:
    """A file name for ``load_bytes``: the address's last segment with the suffix of its format, or None when
    neither the content type nor the address names a format a loader reads."""
    path = PurePosixPath(unquote(urlsplit(url).path))
    suffix = TYPE_SUFFIX.get(content_type)
    if suffix is None and content_type in GENERIC_TYPES:
        suffix = PATH_SUFFIX.get(path.suffix.lower(), ".txt" if content_type == "text/plain" else None)
    if suffix is None:
        return None
    stem = path.stem if path.suffix.lower() in PATH_SUFFIX or path.suffix == "" else path.name
    stem = re.sub(r"[^\w.-]+", "-", stem).strip("-.") or (urlsplit(url).hostname or "index")
    return stem[:120] + suffix


def _html_name(url: str) -> str:
    name = file_name(url, "text/html")
    assert name is not None  # text/html always names a format
    return name


class Fetcher:
    """Fetches web addresses through one HTTP client (connections are reused); close it, or use ``with``."""

    def __init__(
        self,
        limits: FetchLimits | None = None,
        *,
        user_agent: str = USER_AGENT,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.limits = limits or FetchLimits()
        self._client = httpx.Client(
            headers={"User-Agent": user_agent},
            timeout=httpx.Timeout(self.limits.timeout_s),
            follow_redirects=False,
            transport=transport,
        )

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        self._client.close()

    def fetch(self, url: str, *, etag: str | None = None, last_modified: str | None = None) -> Fetched:
        """Fetch one page a loader can read; conditionally when ``etag`` or ``last_modified`` is given.

        Raises:
            FetchError: a scheme other than http(s), an HTTP error status, a content type no loader reads, a body
                over SEXTANT_MAX_FETCH_BYTES, a timeout, too many redirects, or no connection.
        """
        headers = {"Accept": ACCEPT}
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        deadline = time.monotonic() + self.limits.timeout_s
        with self._final_response(url, headers, deadline) as response:
            final = str(response.url)
            if response.status_code == 304:
                return Fetched(
                    url=final,
                    name=file_name(final, "") or _html_name(final),
                    data=b"",
                    status="unchanged",
                    etag=response.headers.get("etag", etag),
                    last_modified=response.headers.get("last-modified", last_modified),
                    content_type="",
                    http_status=304,
                )
            if not response.is_success:
                moved = f" (redirected to {final})" if final != url else ""
                raise FetchError(url, f"HTTP {response.status_code} {response.reason_phrase}{moved}")
            content_type = media_type(response.headers.get("content-type"))
            name = file_name(final, content_type)
            if name is None:
                raise FetchError(
                    url, f"content type {content_type or '(none)'!r} is not one Sextant reads ({READABLE})"
                )
            data = self._read(response, url, deadline)
            return Fetched(
                url=final,
                name=name,
                data=data,
                status="fetched",
                etag=response.headers.get("etag"),
                last_modified=response.headers.get("last-modified"),
                content_type=content_type,
                http_status=response.status_code,
            )

    def get(self, url: str, *, accept: str = "*/*") -> Answer:
        """GET any answer (robots.txt, llms.txt): the body of a 2xx within the limits, else none.

        Raises:
            FetchError: as ``fetch``, except that HTTP status and content type are the caller's to judge.
        """
        deadline = time.monotonic() + self.limits.timeout_s
        with self._final_response(url, {"Accept": accept}, deadline) as response:
            data = self._read(response, url, deadline) if response.is_success else b""
            return Answer(
                str(response.url), response.status_code, media_type(response.headers.get("content-type")), data
            )

    @contextmanager
    def _final_response(self, url: str, headers: dict[str, str], deadline: float) -> Iterator[httpx.Response]:
        """The open, unread answer at the end of the redirects; httpx's errors become ``FetchError``."""
        check_url(url)
        current = url
        try:
            for _hop in range(self.limits.max_redirects + 1):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise FetchError(url, self._timed_out())
                with self._client.stream("GET", current, headers=headers, timeout=remaining) as response:
                    if response.has_redirect_location:
                        current = urljoin(str(response.url), response.headers["location"])
                        try:
                            check_url(current)
                        except FetchError as exc:
                            raise FetchError(url, f"redirected to {current}: {exc.reason}") from None
                        continue
                    yield response
                    return
        except httpx.TimeoutException:
            raise FetchError(url, self._timed_out()) from None
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            raise FetchError(url, f"cannot be fetched: {exc or type(exc).__name__}") from None
        raise FetchError(url, f"more than {self.limits.max_redirects} redirects (SEXTANT_FETCH_MAX_REDIRECTS)")

    def _read(self, response: httpx.Response, url: str, deadline: float) -> bytes:
        limit = self.limits.max_bytes
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise FetchError(url, f"is {int(declared)} bytes, {self._too_large()}")
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > limit:
                raise FetchError(url, f"is larger, {self._too_large()}")
            if time.monotonic() > deadline:
                raise FetchError(url, self._timed_out())
            chunks.append(chunk)
        return b"".join(chunks)

    def _too_large(self) -> str:
        return f"over SEXTANT_MAX_FETCH_BYTES ({self.limits.max_bytes} bytes); raise it to fetch this page"

    def _timed_out(self) -> str:
        return f"took longer than SEXTANT_FETCH_TIMEOUT_S ({self.limits.timeout_s:g} s)"


def fetch(
    url: str, *, etag: str | None = None, last_modified: str | None = None, limits: FetchLimits | None = None
) -> Fetched:
    """Fetch one address with a client of its own (``Fetcher.fetch``).

    Raises:
        FetchError: as ``Fetcher.fetch``.
    """
    with Fetcher(limits) as fetcher:
        return fetcher.fetch(url, etag=etag, last_modified=last_modified)
