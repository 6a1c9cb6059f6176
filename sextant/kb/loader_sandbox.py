"""The loaders' sandbox: every file is parsed in a worker process with a time limit and an address-space limit.

A broken or hostile file can make a parser loop, allocate without end or crash in native code (MuPDF is
C). Parsed in the server's own process, any of those takes the server down; parsed here, it costs one
worker, which is killed and replaced, and the file is refused with the limit it hit.

One long-lived worker (``python -m sextant.kb.loader_worker``, its side of the protocol) serves file after file,
since starting one costs about a second of imports. It caps its own address space with ``RLIMIT_AS`` (Linux), and the
parent kills it when a file takes longer than the time limit. Requests are serialised by a lock: one
file at a time, in arrival order. The protocol is length-prefixed frames on the worker's stdin and
stdout, and replies are JSON, never pickle: the worker reads hostile input, so nothing it sends back
may be able to run code here.

OCR makes a file's cost scale with its scanned pages (1.5-3 s each on two cores, learning/ocr.md), which the
parent cannot count before parsing. So before each page it OCRs, the worker sends a ``more_time_s`` frame and the
parent moves the file's deadline by SEXTANT_OCR_TIMEOUT_S: a file may take SEXTANT_PARSE_TIMEOUT_S plus that
much per OCR'd page (at most SEXTANT_MAX_PDF_PAGES of them), and Tesseract itself is killed after
SEXTANT_OCR_TIMEOUT_S on any one page. Tesseract runs as a child of the worker, so RLIMIT_AS bounds it too
(it peaks near 90 MB on a 300 dpi page).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import signal
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

from sextant.kb.documents import (
    ContainedFile,
    LoadedDocument,
    LoadError,
    OcrPage,
    PageSpan,
    RowSpan,
    SectionSpan,
    SkippedFile,
    SkippedPage,
    TableSpan,
    Unpacked,
)
from sextant.kb.loaders import loader_of, ocr
from sextant.settings import KbSettings

MB = 1024 * 1024
FRAME = struct.Struct(">Q")
# A worker imports PyMuPDF, pypdf and python-docx before it says it is ready.
_START_TIMEOUT_S = 120.0
# Native libraries size their thread pools and malloc arenas by the core count; in a worker that parses
# one file on one thread those only reserve address space that counts against RLIMIT_AS.
_WORKER_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MALLOC_ARENA_MAX": "1"}


class ParseLimitError(LoadError):
    """The file hit a resource limit while being parsed; ``setting`` names the variable that sets it."""

    def __init__(self, name: str, reason: str, setting: str) -> None:
        super().__init__(name, reason)
        self.setting = setting


class ParserCrash(LoadError):
    """The parser failed in a way no loader names: the worker died, or a loader raised an unexpected error.

    The file is still refused (the server goes on); a fuzz run counts these as bugs to fix.
    """


@dataclass(frozen=True, slots=True)
class ParseLimits:
    """What one file may cost to parse; each limit is refused by its setting's name."""

    timeout_s: float = 20.0
    memory_mb: int = 768
    max_file_bytes: int = 10 * MB
    max_pdf_pages: int = 2000
    max_document_chars: int = 5_000_000
    ocr: ocr.OcrOptions = field(default_factory=ocr.OcrOptions)

    @classmethod
    def from_settings(cls, settings: KbSettings) -> ParseLimits:
        return cls(
            timeout_s=settings.parse_timeout_s,
            memory_mb=settings.parse_memory_mb,
            max_file_bytes=settings.max_file_bytes,
            max_pdf_pages=settings.max_pdf_pages,
            max_document_chars=settings.max_document_chars,
            ocr=ocr.OcrOptions.from_settings(settings),
        )


def check_file_size(name: str, size: int, limits: ParseLimits) -> None:
    """Refuse a file larger than ``SEXTANT_MAX_FILE_BYTES`` before anything reads it.

    Raises:
        LoadError: the file is too large.
    """
    if size > limits.max_file_bytes:
        raise LoadError(
            name,
            f"the file is {size / MB:.1f} MB, more than SEXTANT_MAX_FILE_BYTES={limits.max_file_bytes} "
            f"({limits.max_file_bytes / MB:.1f} MB); split it, or raise the limit",
        )


def too_many_chars_reason(chars: int, limit: int) -> str:
    """The refusal of a document whose text is longer than ``SEXTANT_MAX_DOCUMENT_CHARS``."""
    return f"its text is {chars:,} characters, more than SEXTANT_MAX_DOCUMENT_CHARS={limit}; split it, or raise it"


class BoundedParser:
    """Parses files in a worker process under ``limits``; safe to share between threads."""

    def __init__(self, limits: ParseLimits | None = None, *, command: Sequence[str] | None = None) -> None:
        """``command`` replaces the worker (``python -m sextant.kb.loader_worker``); tests run stand-ins with it."""
        self.limits = limits or ParseLimits()
        self._command = list(command) if command is not None else None
        self.starts = 0  # workers started so far; the fuzz run reports it
        # Told ``(file name, page count so far)`` as each page of a file is about to be OCR'd: a scan is the one
        # file that takes minutes, and a progress bar can say how far it is.
        self.on_ocr_page: Callable[[str, int], None] | None = None
        self._lock = threading.Lock()
        self._worker: subprocess.Popen[bytes] | None = None

    def parse(self, data: bytes, name: str) -> LoadedDocument:
        """Parse a file's bytes (the loader is chosen by the suffix of ``name``), within the limits.

        Raises:
            LoadError: the file is refused: too large, unreadable (the loader's reason), or it hit a limit
                (``ParseLimitError``) or crashed the parser (``ParserCrash``).
        """
        return document_from_json(self._ask("parse", data, name)["document"])

    def parse_with_parts(self, data: bytes, name: str) -> tuple[LoadedDocument, Unpacked | None]:
        """``parse``, with the files a container holds (None for any other file), in one request from one reading
        of the file (``loaders.load_with_parts``): a mailbox's messages are parsed once, in the worker, and come back
        already read (``ContainedFile.loaded``); a part that cannot be read is named in ``Unpacked.skipped``.

        Raises:
            LoadError: as ``parse``.
        """
        reply = self._ask("parse_with_parts", data, name)
        found = reply.get("unpacked")
        return document_from_json(reply["document"]), unpacked_from_json(found) if found is not None else None

    def original(self, data: bytes, name: str) -> bytes | None:
        """What the document's page images are drawn from: a PDF's own bytes, an image's pages made into a PDF
        (in the worker: the image is untrusted input); None for a file without pages to show.

        Raises:
            LoadError: as ``parse``.
        """
        kind = loader_of(name)
        if kind == "pdf":
            return data
        if kind != "image":
            return None
        return base64.b64decode(self._ask("as_pdf", data, name)["pdf"])

    def _ask(self, op: str, data: bytes, name: str) -> dict[str, Any]:
        """Send one file to the worker and return its reply: a document, or a container's files.

        Raises:
            LoadError: the file is refused (too large, unreadable, over a limit) or crashed the parser.
        """
        check_file_size(name, len(data), self.limits)
        limits = self.limits
        header = json.dumps(
            {
                "op": op,
                "name": name,
                "max_pdf_pages": limits.max_pdf_pages,
                "max_chars": limits.max_document_chars,
                "ocr": {"mode": limits.ocr.mode, "lang": limits.ocr.lang, "timeout_s": limits.ocr.timeout_s},
            }
        ).encode("utf-8")
        ocr_pages = 0
        with self._lock:
            worker = self._ready_worker(name)
            assert worker.stdin is not None
            try:
                write_frame(worker.stdin, header)
                write_frame(worker.stdin, data)
                worker.stdin.flush()
            except OSError:
                pass  # the worker stopped reading (out of memory, or dead): its reply, if any, says which
            deadline = time.monotonic() + limits.timeout_s
            try:
                reply = _read_frame(worker, deadline)
                while "more_time_s" in reply:  # a page is about to be OCR'd
                    if ocr_pages < limits.max_pdf_pages:
                        ocr_pages += 1
                        deadline += min(float(reply["more_time_s"]), limits.ocr.timeout_s)
                        if self.on_ocr_page is not None:
                            self.on_ocr_page(name, ocr_pages)
                    reply = _read_frame(worker, deadline)
            except TimeoutError:
                self._stop_worker()
                extra = (
                    f" plus SEXTANT_OCR_TIMEOUT_S={limits.ocr.timeout_s:g} s for each of its {ocr_pages} OCR'd pages"
                )
                raise ParseLimitError(
                    name,
                    f"parsing took longer than SEXTANT_PARSE_TIMEOUT_S={limits.timeout_s:g} s"
                    f"{extra if ocr_pages else ''}; the file may be "
                    "damaged or built to stall parsers: re-export it, or raise the limit if it is merely very large",
                    "SEXTANT_PARSE_TIMEOUT_S",
                ) from None
            except (EOFError, OSError):
                raise self._died(name) from None
            if "memory" in reply:
                self._stop_worker()  # a worker that ran out of memory may hold broken native state
        return _outcome(reply, name, self.limits)

    def read_file(self, path: Path) -> bytes:
        """A file's bytes, once its size is checked against the limits.

        Raises:
            LoadError: the file is too large or cannot be read.
        """
        try:
            check_file_size(path.name, path.stat().st_size, self.limits)
            return path.read_bytes()
        except OSError as exc:
            raise LoadError(path.name, f"cannot be read: {exc.strerror or exc}") from exc

    @property
    def worker_pid(self) -> int | None:
        """The running worker's process id, if one is running."""
        worker = self._worker
        return worker.pid if worker is not None and worker.poll() is None else None

    def close(self) -> None:
        """Stop the worker; a later ``parse`` starts a new one."""
        with self._lock:
            self._stop_worker()

    def __enter__(self) -> BoundedParser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _ready_worker(self, name: str) -> subprocess.Popen[bytes]:
        if self._worker is not None and self._worker.poll() is None:
            return self._worker
        self._stop_worker()
        env = {**os.environ, **_WORKER_ENV}
        # The worker must import this very package, even when it runs from a checkout that is not installed.
        root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
        command = self._command or [sys.executable, "-m", "sextant.kb.loader_worker"]
        command = [*command, str(self.limits.memory_mb), str(self.limits.timeout_s)]
        # Own session: a Ctrl-C meant for the parent must not interrupt the worker mid-reply.
        worker = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, start_new_session=True
        )
        self._worker = worker
        self.starts += 1
        try:
            ready = _read_frame(worker, time.monotonic() + _START_TIMEOUT_S)
        except (TimeoutError, EOFError, OSError):
            self._stop_worker()
            raise ParserCrash(name, "the parser process did not start; see the server's log for why") from None
        if ready != {"ready": True}:
            self._stop_worker()
            raise ParserCrash(name, f"the parser process did not start: {ready}")
        return worker

    def _died(self, name: str) -> ParserCrash:
        worker = self._worker
        code = worker.wait(timeout=5) if worker is not None else None
        self._stop_worker()
        if code is not None and code < 0:
            how = f"signal {signal.Signals(-code).name}" if -code in signal.valid_signals() else f"signal {-code}"
        else:
            how = f"exit status {code}"
        return ParserCrash(name, f"the parser process died ({how}) while reading it; the file is probably damaged")

    def _stop_worker(self) -> None:
        worker, self._worker = self._worker, None
        if worker is None:
            return
        if worker.poll() is None:
            worker.kill()
        worker.wait()
        for stream in (worker.stdin, worker.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


def _outcome(reply: dict[str, Any], name: str, limits: ParseLimits) -> dict[str, Any]:
    if "document" in reply or "unpacked" in reply or "pdf" in reply:
        return reply
    if "refused" in reply:
        raise LoadError(name, str(reply["refused"]))
    if "memory" in reply:
        raise ParseLimitError(
            name,
            f"parsing needed more memory than SEXTANT_PARSE_MEMORY_MB={limits.memory_mb}; the file may be damaged "
            "or built to exhaust memory: re-export it, or raise the limit if it is merely very large",
            "SEXTANT_PARSE_MEMORY_MB",
        )
    suffix = Path(name).suffix.lower() or "file"
    failure = reply.get("error", reply)
    raise ParserCrash(name, f"the {suffix} parser failed on it ({failure}); the file is probably damaged")


def document_to_json(doc: LoadedDocument) -> dict[str, Any]:
    return asdict(doc)


def document_from_json(data: dict[str, Any]) -> LoadedDocument:
    """The inverse of ``document_to_json``; the spans are validated again on this side."""
    return LoadedDocument(
        text=data["text"],
        title=data["title"],
        pages=tuple(PageSpan(**p) for p in data["pages"]),
        sections=tuple(SectionSpan(**s) for s in data["sections"]),
        tables=tuple(
            TableSpan(
                start=t["start"],
                end=t["end"],
                rows=tuple(RowSpan(**r) for r in t["rows"]),
                header=t["header"],
                caption=t["caption"],
            )
            for t in data["tables"]
        ),
        skipped_pages=tuple(SkippedPage(**p) for p in data["skipped_pages"]),
        ocr_pages=tuple(OcrPage(**p) for p in data["ocr_pages"]),
    )


def unpacked_from_json(data: dict[str, Any]) -> Unpacked:
    """A container's files as the worker sends them; a document that comes with one is validated here too."""
    return Unpacked(
        files=tuple(
            ContainedFile(
                f["key"],
                f["name"],
                base64.b64decode(f["data"]),
                f["title"],
                document_from_json(f["loaded"]) if f.get("loaded") is not None else None,
            )
            for f in data["files"]
        ),
        skipped=tuple(SkippedFile(**skipped) for skipped in data["skipped"]),
    )


def write_frame(stream: IO[bytes], payload: bytes) -> None:
    """One frame of the protocol, either way: the payload's length, then the payload."""
    stream.write(FRAME.pack(len(payload)))
    stream.write(payload)


def _read_exactly(fd: int, n: int, deadline: float) -> bytes:
    """``n`` bytes from ``fd``, waiting no later than ``deadline``.

    Raises:
        TimeoutError: the deadline passed.
        EOFError: the other end closed first.
    """
    parts: list[bytes] = []
    while n:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            raise TimeoutError
        part = os.read(fd, min(n, 1 << 20))
        if not part:
            raise EOFError
        parts.append(part)
        n -= len(part)
    return b"".join(parts)


def _read_frame(worker: subprocess.Popen[bytes], deadline: float) -> dict[str, Any]:
    assert worker.stdout is not None
    fd = worker.stdout.fileno()
    (size,) = FRAME.unpack(_read_exactly(fd, FRAME.size, deadline))
    reply = json.loads(_read_exactly(fd, size, deadline))
    if not isinstance(reply, dict):
        raise EOFError
    return reply
