"""The loaders' sandbox, the worker's side: ``python -m sextant.kb.loader_worker MEMORY_MB TIMEOUT_S``.

Started by ``loader_sandbox.BoundedParser``, which holds the other side of the protocol. The worker imports every
loader, caps its own address space (``RLIMIT_AS``, Linux) and says it is ready; then, until its stdin closes, it
reads one request (a JSON header frame naming the operation and the limits, then the file's bytes) and answers with
one JSON frame: the document (``parse``), the document with a container's files from one reading of the file
(``parse_with_parts``), an image made into a PDF (``as_pdf``), or what stopped it: a loader's refusal, memory, any
other error (a crash). Before each page it OCRs it asks for more time (``more_time_s``). An alarm ends a worker
whose parent died while a file stalled.
"""

from __future__ import annotations

import base64
import functools
import json
import math
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import asdict
from typing import IO, Any

from sextant.kb.documents import LoadError, Unpacked
from sextant.kb.loader_sandbox import FRAME, MB, document_to_json, too_many_chars_reason, write_frame
from sextant.kb.loaders import ocr


def _serve(memory_mb: int, timeout_s: float) -> None:
    """Parse requests from stdin until it closes, one reply frame each."""
    import logging
    import resource

    # stdout carries the protocol; a library that prints would corrupt it, so fd 1 becomes stderr.
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    requests = sys.stdin.buffer
    # Each damaged file makes pypdf log its repairs; the refusal reason already says what matters.
    logging.basicConfig(level=logging.ERROR)

    import pymupdf

    from sextant.kb.loaders import import_loaders

    import_loaders()
    pymupdf.TOOLS.mupdf_display_errors(False)
    pymupdf.TOOLS.mupdf_display_warnings(False)
    if sys.platform.startswith("linux"):
        limit = memory_mb * MB
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a crash must not write a core dump per bad file
    _send(replies, {"ready": True})
    while True:
        try:
            header = json.loads(_read_request(requests))
            data = _read_request(requests)
        except EOFError:
            return
        except MemoryError:  # the file alone does not fit
            _send(replies, {"memory": True})
            return
        # If the parent dies while a file stalls, nobody kills this worker: the alarm does (SIGALRM ends it).
        signal.alarm(int(timeout_s) + 30)
        chosen = _ocr_options(header)
        with ocr.configured(chosen, on_page=functools.partial(_more_time, replies, chosen.timeout_s)):
            work = _WORK.get(str(header.get("op")), _parse_one)
            reply = _answer(functools.partial(work, data, header))
        signal.alarm(0)
        try:
            _send(replies, reply)
        except BrokenPipeError:
            return
        if "memory" in reply:
            return


def _ocr_options(header: dict[str, Any]) -> ocr.OcrOptions:
    given = header.get("ocr")
    if not isinstance(given, dict):
        return ocr.OcrOptions()
    mode: ocr.OcrMode = "off" if given.get("mode") == "off" else "auto"
    return ocr.OcrOptions(mode=mode, lang=str(given["lang"]), timeout_s=float(given["timeout_s"]))


def _more_time(replies: IO[bytes], seconds: float) -> None:
    """Ask the parent for ``seconds`` more (a page is about to be OCR'd), and give the alarm as much."""
    _send(replies, {"more_time_s": seconds})
    signal.alarm(signal.alarm(0) + math.ceil(seconds))


def _parse_one(data: bytes, header: dict[str, Any]) -> dict[str, Any]:
    from sextant.kb.loaders import load_bytes

    doc = load_bytes(data, str(header["name"]), max_pdf_pages=int(header["max_pdf_pages"]))
    if len(doc.text) > int(header["max_chars"]):
        return {"refused": too_many_chars_reason(len(doc.text), int(header["max_chars"]))}
    return {"document": document_to_json(doc)}


def _parse_with_parts_one(data: bytes, header: dict[str, Any]) -> dict[str, Any]:
    """``parse``, with the files a container holds, from one reading of the file (``loaders.load_with_parts``)."""
    from sextant.kb.loaders import load_with_parts

    max_chars = int(header["max_chars"])
    doc, found = load_with_parts(data, str(header["name"]), max_pdf_pages=int(header["max_pdf_pages"]))
    if len(doc.text) > max_chars:
        return {"refused": too_many_chars_reason(len(doc.text), max_chars)}
    reply: dict[str, Any] = {"document": document_to_json(doc)}
    if found is not None:
        reply["unpacked"] = _unpacked_to_json(found, max_chars)
    return reply


def _unpacked_to_json(found: Unpacked, max_chars: int) -> dict[str, Any]:
    """A container's files, each with its document where the container's reading made it (a mailbox's message).

    A document over ``max_chars`` is not sent: the parent then asks for the part to be parsed, and it is refused
    the way any file that long is.
    """
    files = [
        {
            "key": f.key,
            "name": f.name,
            "title": f.title,
            "data": base64.b64encode(f.data).decode("ascii"),
            "loaded": document_to_json(f.loaded) if f.loaded is not None and len(f.loaded.text) <= max_chars else None,
        }
        for f in found.files
    ]
    return {"files": files, "skipped": [asdict(skipped) for skipped in found.skipped]}


def _answer(work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``work``'s reply, or what stopped it: memory, a loader's refusal, or any other error (a crash)."""
    try:
        return work()
    except MemoryError:
        return {"memory": True}
    except LoadError as exc:
        # Loaders turn a parser's own error into a refusal; one that was really out of memory says so.
        return {"memory": True} if _caused_by_memory(exc) else {"refused": exc.reason}
    except Exception as exc:
        return {"memory": True} if _caused_by_memory(exc) else {"error": f"{type(exc).__name__}: {exc}"[:500]}


def _as_pdf_one(data: bytes, header: dict[str, Any]) -> dict[str, Any]:
    from sextant.kb.loaders import image

    pdf = image.as_pdf(data, str(header["name"]), max_pages=int(header["max_pdf_pages"]))
    return {"pdf": base64.b64encode(pdf).decode("ascii")}


_WORK = {"parse": _parse_one, "parse_with_parts": _parse_with_parts_one, "as_pdf": _as_pdf_one}


def _caused_by_memory(exc: BaseException) -> bool:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, MemoryError):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _read_request(stream: IO[bytes]) -> bytes:
    head = stream.read(FRAME.size)
    if len(head) < FRAME.size:
        raise EOFError
    (size,) = FRAME.unpack(head)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return data


def _send(stream: IO[bytes], reply: dict[str, Any]) -> None:
    write_frame(stream, json.dumps(reply).encode("utf-8"))
    stream.flush()


if __name__ == "__main__":
    _serve(int(sys.argv[1]), float(sys.argv[2]))
