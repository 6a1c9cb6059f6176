"""The child that renders one PDF page (``python -m sextant.kb.page_render MEMORY_MB``; ``page_image.py`` runs it).

Reads one JSON request on stdin (``path``, ``page``, ``quote``, and ``ocr``: the OCR settings and the page's
words when the parent has them), answers one JSON object on stdout: the PNG (base64) and what was drawn, or
``refused`` (no such page, an encrypted file), ``memory`` or ``error``. Imports only PyMuPDF (and, for a
scanned page, ``loaders/ocr.py``), so it starts in about half a second.

The quote is searched as the loaders read text (Unicode NFKC, whitespace collapsed) with ligatures expanded
on the page, as the PDF loader expands them; MuPDF's search joins lines and hyphenated words. When the
whole quote is not on the page (it runs onto the next one, or the text layer differs from the passage), its
longest sentence is tried, then its first 60 characters.

A scanned page (``ocr.is_scan``) has no text layer to search: its words are read again by OCR, exactly as the
loader read them (same renderer, resolution and Tesseract, so the same words and boxes), and the quote is found
in them letter by letter, case and punctuation aside, which also joins words hyphenated across lines. Reading a
page takes 1.5-3 s, rendering it 0.3 s; storing every scanned word's box at ingest would have cost a new store
format for a view few pages get (learning/ocr.md). The words go back to the parent, which keeps the last pages'
and sends them with the next request for the same page.
"""

from __future__ import annotations

import base64
import json
import os
import re
import sys
import unicodedata
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # at run time the child imports only PyMuPDF, to start fast
    from sextant.contract.results import Match

# About 144 dpi for a Letter or A4 page; a poster is scaled down to keep the image's longer side in bounds.
ZOOM = 2.0
MAX_SIDE_PX = 2000
MAX_HIGHLIGHTS = 64
OPENING_CHARS = 60
HIGHLIGHT_RGB = (1.0, 0.85, 0.0)
_SENTENCE = re.compile(r"(?<=[.!?;:])\s+")


def quote_candidates(quote: str) -> list[tuple[Match, str]]:
    """What to search for, in order: the whole quote, its longest sentence, its first 60 characters."""
    whole = " ".join(unicodedata.normalize("NFKC", quote).split())
    if not whole:
        return []
    found: list[tuple[Match, str]] = [("quote", whole)]
    sentences = [s for s in _SENTENCE.split(whole) if s]
    longest = max(sentences, key=len) if sentences else whole
    if longest != whole:
        found.append(("sentence", longest))
    if len(whole) > OPENING_CHARS:
        opening = whole[:OPENING_CHARS].rsplit(" ", 1)[0] or whole[:OPENING_CHARS]
        if all(opening != words for _, words in found):
            found.append(("opening", opening))
    return found


def letters(text: str) -> str:
    """``text`` as scanned words are compared: NFKC, case-folded, letters and digits only."""
    return "".join(c for c in unicodedata.normalize("NFKC", text).casefold() if c.isalnum())


def find_in_words(words: list[list[Any]], text: str) -> list[tuple[float, float, float, float]]:
    """Where ``text`` runs through OCR'd ``words`` (``[x0, y0, x1, y1, text, line_id]``): a box per line it covers.

    Compared letter by letter, so spacing, punctuation and a hyphen at a line's end do not matter.
    """
    key = letters(text)
    if not key:
        return []
    owner: list[int] = []  # the word each letter of ``stream`` comes from
    parts = []
    for index, word in enumerate(words):
        part = letters(str(word[4]))
        parts.append(part)
        owner.extend([index] * len(part))
    stream = "".join(parts)
    rects: list[tuple[float, float, float, float]] = []
    at = stream.find(key)
    while at >= 0 and len(rects) < MAX_HIGHLIGHTS:
        covered = words[owner[at] : owner[at + len(key) - 1] + 1]
        lines: dict[Any, list[float]] = {}
        for x0, y0, x1, y1, _, line in covered:
            box = lines.setdefault(line, [x0, y0, x1, y1])
            box[:] = [min(box[0], x0), min(box[1], y0), max(box[2], x1), max(box[3], y1)]
        rects.extend((b[0], b[1], b[2], b[3]) for b in lines.values())
        at = stream.find(key, at + len(key))
    return rects[:MAX_HIGHLIGHTS]


def scanned_words(page: Any, given: dict[str, Any]) -> list[list[Any]] | None:
    """The OCR'd words of ``page`` when it is a scan, as ``find_in_words`` takes them; None when it is not one
    or OCR cannot run (the page is then drawn without highlights)."""
    from sextant.kb.loaders import ocr

    if not ocr.is_scan(page, len("".join(page.get_text().split()))):
        return None
    chosen = ocr.OcrOptions(
        mode=given.get("mode", "auto"), lang=given.get("lang", "eng"), timeout_s=given.get("timeout_s", 30.0)
    )
    try:
        result = ocr.ocr_page(page, chosen)
    except (ocr.OcrUnavailable, ocr.OcrFailed):
        return None
    return [
        [round(w.x0, 2), round(w.y0, 2), round(w.x1, 2), round(w.y1, 2), w.text, f"{w.block}.{w.paragraph}.{w.line}"]
        for w in result.words
    ]


def render(path: str, number: int, quote: str, ocr: dict[str, Any] | None = None) -> dict[str, Any]:
    """Page ``number`` of the PDF at ``path`` as the reply the parent reads (see the module docstring)."""
    import pymupdf

    pymupdf.TOOLS.mupdf_display_errors(False)
    pymupdf.TOOLS.mupdf_display_warnings(False)
    with pymupdf.open(path, filetype="pdf") as doc:
        if doc.needs_pass:
            return {"refused": "the PDF is encrypted"}
        if not 1 <= number <= doc.page_count:
            return {"refused": f"the PDF has no page {number} (it has {doc.page_count} pages)"}
        page = doc[number - 1]
        matched: Match = "no_quote" if not quote.strip() else "not_found"
        quads: list[Any] = []
        # Not TEXT_PRESERVE_LIGATURES, which search keeps by default: passages spell "ﬁ" as "fi".
        flags = pymupdf.TEXT_DEHYPHENATE | pymupdf.TEXT_PRESERVE_WHITESPACE | pymupdf.TEXT_MEDIABOX_CLIP
        for kind, words in quote_candidates(quote):
            quads = page.search_for(words, quads=True, flags=flags)[:MAX_HIGHLIGHTS]
            if quads:
                matched = kind
                break
        given = ocr or {}
        scanned = given.get("words")
        if not quads and quote.strip() and scanned is None:
            scanned = scanned_words(page, given)
        if not quads and scanned:
            for kind, words in quote_candidates(quote):
                quads = [pymupdf.Rect(box).quad for box in find_in_words(scanned, words)]
                if quads:
                    matched = kind
                    break
        rects = []
        if quads:
            # A highlight annotation multiplies its colour over the page, so the words stay legible under it;
            # the document is only changed in memory.
            annot = page.add_highlight_annot(quads)
            annot.set_colors(stroke=HIGHLIGHT_RGB)
            annot.update()
            rects = [q.rect for q in quads]
        width, height = page.rect.width, page.rect.height
        zoom = min(ZOOM, MAX_SIDE_PX / max(width, height, 1.0))
        matrix = pymupdf.Matrix(zoom, zoom)
        pixmap = page.get_pixmap(matrix=matrix, annots=True, alpha=False)
        rects_px = [tuple(round(v, 1) for v in (r * page.rotation_matrix * matrix)) for r in rects]
        info = {
            "width_pt": width,
            "height_pt": height,
            "width_px": pixmap.width,
            "height_px": pixmap.height,
            "highlights": len(rects),
            "rects_px": rects_px,
            "matched": matched,
        }
        reply: dict[str, Any] = {"info": info, "png": base64.b64encode(pixmap.tobytes("png")).decode("ascii")}
        if scanned is not None:
            reply["ocr_words"] = scanned
        return reply


def serve(memory_mb: int) -> None:
    """Read one request from stdin, answer on stdout; everything a library prints goes to stderr."""
    import resource

    import pymupdf  # noqa: F401  (before the limit: importing reserves address space that rendering never uses)

    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    if sys.platform.startswith("linux"):
        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    request = json.loads(sys.stdin.buffer.read())
    try:
        reply = render(str(request["path"]), int(request["page"]), str(request["quote"]), request.get("ocr"))
    except MemoryError:
        reply = {"memory": True}
    except Exception as exc:
        reply = {"error": f"{type(exc).__name__}: {exc}"[:500]}
    replies.write(json.dumps(reply))
    replies.flush()


if __name__ == "__main__":
    serve(int(sys.argv[1]))
