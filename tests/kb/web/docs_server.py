"""A local web site for the fetch and crawl tests: a threaded ``http.server`` on 127.0.0.1.

It serves a folder (Debian's Python manual, or a test's own) with an ETag and a Last-Modified for each file,
answering 304 to a matching conditional request, and lets a test add routes by path: robots.txt, an llms.txt,
a redirect, a 404, a slow answer (held until the server closes), a huge body. Every request is recorded with
its headers, so a test can say what was asked and how.
"""

from __future__ import annotations

import mimetypes
import posixpath
import threading
from dataclasses import dataclass, field
from email.utils import formatdate, parsedate_to_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from urllib.parse import unquote, urlsplit

import pytest

PYTHON_DOCS = Path("/usr/share/doc/python3.11/html")


def python_docs() -> Path:
    """Debian's Python 3.11 manual, or skip the test saying how to install it."""
    if not (PYTHON_DOCS / "library" / "index.html").is_file():
        pytest.skip(f"Debian's Python manual is not installed at {PYTHON_DOCS} (apt-get install python3.11-doc)")
    return PYTHON_DOCS


@dataclass(frozen=True, slots=True)
class Route:
    """A canned answer. ``slow``: held until the server closes. ``length=False``: no Content-Length, so the body
    ends when the connection does."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    slow: bool = False
    length: bool = True


@dataclass(frozen=True, slots=True)
class Seen:
    path: str
    headers: dict[str, str]


class DocsServer:
    """``with DocsServer(folder) as site``: ``site.url("/library/")``, ``site.routes[path] = Route(...)``,
    ``site.requests`` (what was asked, in order)."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root
        self.routes: dict[str, Route] = {}
        self.requests: list[Seen] = []
        self._lock = threading.Lock()
        self._release = threading.Event()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.site = self
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name="docs-server")

    @property
    def origin(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def url(self, path: str) -> str:
        return self.origin + path

    def paths(self) -> list[str]:
        """The paths asked for, queries included, in order."""
        with self._lock:
            return [seen.path for seen in self.requests]

    def __enter__(self) -> DocsServer:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._release.set()  # slow handlers answer (to nobody) and end, so their threads can be joined
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def record(self, path: str, headers: dict[str, str]) -> None:
        with self._lock:
            self.requests.append(Seen(path, headers))

    def hold(self) -> None:
        self._release.wait(timeout=30)


class _Server(ThreadingHTTPServer):
    # Handler threads are joined on close, so no thread outlives its test.
    daemon_threads = False
    block_on_close = True
    site: DocsServer

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client that gave up on a slow answer is expected here, not a failure


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        site = self.server.site
        site.record(self.path, {k.lower(): v for k, v in self.headers.items()})
        path = unquote(urlsplit(self.path).path)
        route = site.routes.get(path)
        if route is not None:
            if route.slow:
                site.hold()
            self._answer(route.status, route.body, route.headers, length=route.length)
        else:
            self._file(site.root, path)

    def _file(self, root: Path | None, path: str) -> None:
        relative = posixpath.normpath(path).lstrip("/")
        target = (root / relative) if root is not None and not relative.startswith("..") else None
        if target is not None and target.is_dir():
            target = target / "index.html"
        if target is None or not target.is_file():
            self._answer(404, b"<html><body>not here</body></html>", {"Content-Type": "text/html"})
            return
        stat = target.stat()
        etag = f'"{stat.st_mtime_ns:x}-{stat.st_size:x}"'
        modified = formatdate(stat.st_mtime, usegmt=True)
        validators = {"ETag": etag, "Last-Modified": modified}
        if self._not_modified(etag, int(stat.st_mtime)):
            self._answer(304, b"", validators)
            return
        kind = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        self._answer(200, target.read_bytes(), {"Content-Type": kind, **validators})

    def _not_modified(self, etag: str, mtime: int) -> bool:
        if (asked := self.headers.get("If-None-Match")) is not None:
            return etag in [tag.strip() for tag in asked.split(",")]
        if (since := self.headers.get("If-Modified-Since")) is not None:
            return mtime <= int(parsedate_to_datetime(since).timestamp())
        return False

    def _answer(self, status: int, body: bytes, headers: dict[str, str], *, length: bool = True) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        if length and status != 304:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body and status != 304:
            self.wfile.write(body)
