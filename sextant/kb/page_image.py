"""A cited PDF page as a PNG, with the quoted words highlighted: found, checked and rendered for ``kb_page_image``.

The page is rendered from the original file kept beside the store (``originals.py``) in a child process
(``page_render.py``) under the parsing limits, SEXTANT_PARSE_TIMEOUT_S and SEXTANT_PARSE_MEMORY_MB:
rendering draws images and fonts that text extraction never touched, so a hostile file costs the child,
not the server. The child answers in JSON, never pickle, since it reads untrusted input.

A scanned page's quote is found in the words OCR reads from it (``page_render.py``); the child may then take
SEXTANT_OCR_TIMEOUT_S more. Those words are kept here for the last ``OCR_PAGES_KEPT`` pages, keyed by the kept
file's identity (path, size, modification time), so that showing the page again costs a render, not an OCR.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from sextant.contract.meta import NO_PAGE_IMAGE
from sextant.contract.results import PageImage
from sextant.kb.knowledge_base import KnowledgeBase, KnowledgeBaseError

# One render at a time in this process, as one parse at a time: each child may take SEXTANT_PARSE_MEMORY_MB.
_RENDERING = threading.Lock()
OCR_PAGES_KEPT = 32  # a scanned page's words are about 30 KB of JSON
_ocr_words: OrderedDict[tuple[str, int, int, int, str], list[Any]] = OrderedDict()  # guarded by _RENDERING


class NoPageImage(KnowledgeBaseError):
    """There is no image of that page to show: no such document or page, or no original kept for it."""

    def __init__(self, why: str) -> None:
        super().__init__(f"{NO_PAGE_IMAGE}: {why}")


class RenderFailed(Exception):
    """The page exists but could not be rendered (the child hit a limit or crashed)."""


def page_image(kb: KnowledgeBase, doc_id: str, page: int, quote: str | None = None) -> tuple[bytes, PageImage]:
    """Render page ``page`` of a stored PDF to PNG bytes, highlighting ``quote``.

    Raises:
        NoPageImage: no such document or page, or no original PDF is kept for the document.
        RenderFailed: the page could not be rendered within the limits.
    """
    record = kb.store.get_document(doc_id)
    if record is None:
        raise NoPageImage(f"no document with id {doc_id!r}; kb_list shows the ids")
    if record.pages and page not in {p.number for p in record.pages}:
        raise NoPageImage(f"{doc_id!r} has no page {page} (it has {len(record.pages)} pages)")
    path = kb.originals.get(doc_id)
    if path is None:
        if record.source.lower().endswith(".pdf"):
            why = "its original PDF is not kept (it was stored without its file): upload the file to see its pages"
        else:
            why = f"only PDFs have them, and it came from {record.source or 'text'!r}"
        raise NoPageImage(f"{doc_id!r} has no page images: {why}")
    settings = kb.settings
    ocr = {"mode": settings.ocr, "lang": settings.ocr_lang, "timeout_s": settings.ocr_timeout_s}
    with _RENDERING:
        stat = path.stat()
        key = (str(path), stat.st_size, stat.st_mtime_ns, page, settings.ocr_lang)
        if key in _ocr_words:
            _ocr_words.move_to_end(key)
            ocr["words"] = _ocr_words[key]
        reply = _run_child(
            {"path": str(path), "page": page, "quote": quote or "", "ocr": ocr},
            memory_mb=settings.parse_memory_mb,
            timeout_s=settings.parse_timeout_s + (0 if "words" in ocr else settings.ocr_timeout_s),
        )
        if isinstance(reply.get("ocr_words"), list):
            _ocr_words[key] = reply["ocr_words"]
            while len(_ocr_words) > OCR_PAGES_KEPT:
                _ocr_words.popitem(last=False)
    if "refused" in reply:
        raise NoPageImage(f"{doc_id!r}: {reply['refused']}")
    if "png" not in reply:
        raise RenderFailed(f"page {page} of {doc_id!r} could not be rendered: {reply.get('error', reply)}")
    info = PageImage.model_validate({**reply["info"], "document_id": doc_id, "page": page})
    return base64.b64decode(reply["png"]), info


def _run_child(request: dict[str, Any], *, memory_mb: int, timeout_s: float) -> dict[str, Any]:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MALLOC_ARENA_MAX": "1"}
    # The child must import this very package, even when it runs from a checkout that is not installed.
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "sextant.kb.page_render", str(memory_mb)],
            input=json.dumps(request).encode("utf-8"),
            capture_output=True,
            env=env,
            timeout=timeout_s + 5,  # the child's imports, on top of the render itself
            start_new_session=True,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise RenderFailed(f"rendering took longer than SEXTANT_PARSE_TIMEOUT_S={timeout_s:g} s") from None
    try:
        reply: dict[str, Any] = json.loads(done.stdout)
    except ValueError:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
        raise RenderFailed(f"the renderer died ({tail[0][:300]})") from None
    if reply.get("memory"):
        raise RenderFailed(f"rendering needed more memory than SEXTANT_PARSE_MEMORY_MB={memory_mb}")
    return reply
