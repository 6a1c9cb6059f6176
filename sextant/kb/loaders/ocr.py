"""OCR of one page image with Tesseract: its words, each with a box and a confidence.

Tesseract 5 (LSTM) runs as a program, ``tesseract stdin stdout -l LANG tsv``, one page per run: a run is
killed after SEXTANT_OCR_TIMEOUT_S, and its memory is its own. It runs on one thread (``OMP_THREAD_LIMIT=1``):
on two shared cores its OpenMP threads made a page 4x slower (1.5 s against 5.7 s at 300 dpi), and PyMuPDF's
built-in OCR took 3.4-4.3 s for the same page (learning/ocr.md). Pages are rendered at 300 dpi in grayscale
and handed over as PNM, which costs nothing to encode.

A word's box is in pixels of the image for ``ocr_image`` and in PDF page coordinates (unrotated, as MuPDF's
own text) for ``ocr_page``; ``page_dict`` and ``page_words`` turn a page's words into the shapes of
``page.get_text("dict")`` and ``page.get_text("words")``, so an OCR'd page goes through the PDF loader's
reading order, running heads and hyphen mending like any other page.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import statistics
import subprocess
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import pymupdf

    from sextant.settings import KbSettings

OcrMode = Literal["auto", "off"]
DPI = 300
# A scan's own resolution is read as it is, within these bounds: below, Tesseract misses small print; above,
# it only takes longer.
MIN_DPI, MAX_DPI = 150, 400
# A page is a scan when its text layer is shorter than this (non-space characters) while images cover at least
# this share of it; measured in learning/ocr.md.
SCAN_MAX_CHARS = 200
SCAN_MIN_IMAGE_SHARE = 0.5
# A poster rendered at 300 dpi would be hundreds of megapixels: its longer side is held to this.
MAX_SIDE_PX = 7000
# What MuPDF's "dict" reports as a span's size is the font size; an OCR'd line's height (ascender to
# descender) is about 1.2 of it. Rounded to whole points so that noise in the height does not look like
# a dozen heading levels.
_LINE_HEIGHT_PER_POINT = 1.2
_ENV = {"OMP_THREAD_LIMIT": "1"}


class OcrUnavailable(Exception):
    """OCR cannot run here (turned off, Tesseract or its language data missing); ``reason`` says what to do."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class OcrFailed(Exception):
    """Tesseract ran but gave no result for one page (too slow, or it failed); ``reason`` says which."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class OcrOptions:
    """SEXTANT_OCR, SEXTANT_OCR_LANG and SEXTANT_OCR_TIMEOUT_S, as the loaders read them."""

    mode: OcrMode = "auto"
    lang: str = "eng"
    timeout_s: float = 30.0
    dpi: int = DPI

    @classmethod
    def from_settings(cls, settings: KbSettings) -> OcrOptions:
        return cls(mode=settings.ocr, lang=settings.ocr_lang, timeout_s=settings.ocr_timeout_s)


# A line that ends so ends its sentence (or a heading, a list item): what follows may start a new paragraph.
_ENDS_SENTENCE = re.compile(r"[.!?:;)\]\"'”’]$")


@dataclass(frozen=True, slots=True)
class OcrWord:
    """One word Tesseract read: its box, text and confidence (0-100), and where it sits in Tesseract's layout."""

    x0: float
    y0: float
    x1: float
    y1: float
    text: str
    confidence: float
    block: int
    paragraph: int
    line: int


@dataclass(frozen=True, slots=True)
class OcrResult:
    """A page's words in reading order (Tesseract's), boxes in the unit of ``width`` and ``height``."""

    words: tuple[OcrWord, ...]
    width: float
    height: float

    @property
    def confidence(self) -> float:
        """Mean word confidence, 0-100; 0 for a page without words."""
        return statistics.fmean(w.confidence for w in self.words) if self.words else 0.0

    @property
    def text(self) -> str:
        """The words, a line each line, a blank line between paragraphs."""
        paragraphs: list[list[str]] = []
        last: tuple[int, int] | None = None
        last_line: tuple[int, int, int] | None = None
        for word in self.words:
            key = (word.block, word.paragraph)
            if key != last:
                paragraphs.append([])
                last, last_line = key, None
            line = (word.block, word.paragraph, word.line)
            if line != last_line:
                paragraphs[-1].append(word.text)
                last_line = line
            else:
                paragraphs[-1][-1] += " " + word.text
        return "\n\n".join("\n".join(lines) for lines in paragraphs)


# The worker sets these per file (``configured``); elsewhere they come from the environment.
_options: ContextVar[OcrOptions | None] = ContextVar("ocr_options", default=None)
_on_page: ContextVar[Callable[[], None] | None] = ContextVar("ocr_on_page", default=None)


def options() -> OcrOptions:
    """The OCR settings in force: those ``configured`` set, else SEXTANT_OCR* from the environment."""
    chosen = _options.get()
    return chosen if chosen is not None else _from_environment()


@functools.cache
def _from_environment() -> OcrOptions:
    from sextant.settings import KbSettings

    return OcrOptions.from_settings(KbSettings())


@contextlib.contextmanager
def configured(chosen: OcrOptions, on_page: Callable[[], None] | None = None) -> Iterator[None]:
    """Use ``chosen`` meanwhile; ``on_page`` is called before each page is OCR'd (the sandbox extends its
    time limit by SEXTANT_OCR_TIMEOUT_S per page with it)."""
    options_token = _options.set(chosen)
    page_token = _on_page.set(on_page)
    try:
        yield
    finally:
        _on_page.reset(page_token)
        _options.reset(options_token)


def packages(lang: str) -> str:
    """The Debian packages that give Tesseract ``lang`` (``eng+deu`` -> the English and German data)."""
    return " ".join(["tesseract-ocr", *(f"tesseract-ocr-{code.lower()}" for code in lang.split("+") if code)])


def check_available(chosen: OcrOptions) -> None:
    """Raise ``OcrUnavailable`` unless OCR may run and Tesseract has the language asked for.

    Raises:
        OcrUnavailable: OCR is off, Tesseract is not installed, or the language's data is missing.
    """
    if chosen.mode == "off":
        raise OcrUnavailable("OCR is turned off (SEXTANT_OCR=off); set SEXTANT_OCR=auto to read scanned pages")
    install = f"`apt install {packages(chosen.lang)}`"
    langs = installed_languages()
    if langs is None:
        raise OcrUnavailable(
            f"it needs OCR and Tesseract is not installed: install it ({install}, or run scripts/setup.sh) "
            "and add the file again; SEXTANT_OCR=off turns OCR off"
        )
    missing = [code for code in chosen.lang.split("+") if code not in langs]
    if missing:
        raise OcrUnavailable(
            f"Tesseract has no data for SEXTANT_OCR_LANG={chosen.lang!r} (missing {', '.join(missing)}; "
            f"installed: {', '.join(sorted(langs)) or 'none'}); install it with {install}"
        )


@functools.cache
def installed_languages() -> frozenset[str] | None:
    """The languages Tesseract can read, or None when it is not installed."""
    binary = shutil.which("tesseract")
    if binary is None:
        return None
    try:
        done = subprocess.run(
            [binary, "--list-langs"], capture_output=True, timeout=30, check=False, env={**os.environ, **_ENV}
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    # The first line names the data folder; the rest are language codes.
    lines = done.stdout.decode("utf-8", "replace").splitlines()[1:]
    return frozenset(line.strip() for line in lines if line.strip())


def ocr_image(image: bytes, chosen: OcrOptions) -> OcrResult:
    """Read the words of one image (any format Leptonica reads: PNM, PNG, JPEG, TIFF); boxes in pixels.

    Raises:
        OcrUnavailable: as ``check_available``.
        OcrFailed: Tesseract took longer than the options' ``timeout_s`` or failed on the image.
    """
    check_available(chosen)
    binary = shutil.which("tesseract") or "tesseract"
    try:
        done = subprocess.run(
            [binary, "stdin", "stdout", "-l", chosen.lang, "--psm", "3", "tsv"],
            input=image,
            capture_output=True,
            timeout=chosen.timeout_s,
            check=False,
            env={**os.environ, **_ENV},
        )
    except subprocess.TimeoutExpired:
        raise OcrFailed(f"OCR took longer than SEXTANT_OCR_TIMEOUT_S={chosen.timeout_s:g} s") from None
    except OSError as exc:
        raise OcrFailed(f"Tesseract could not be started ({exc})") from None
    if done.returncode != 0:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        raise OcrFailed(f"Tesseract failed ({tail[0][:200]})")
    return parse_tsv(done.stdout.decode("utf-8", "replace"))


def parse_tsv(tsv: str) -> OcrResult:
    """Tesseract's TSV: the page's size from its level-1 row, a word from each level-5 row with text."""
    words: list[OcrWord] = []
    width = height = 0.0
    for row in tsv.splitlines()[1:]:
        cells = row.split("\t")
        if len(cells) < 12:
            continue
        level, _, block, paragraph, line, _, left, top, w, h = (int(float(c)) for c in cells[:10])
        if level == 1:
            width, height = float(w), float(h)
        text = "\t".join(cells[11:]).strip()
        if level == 5 and text:
            words.append(
                OcrWord(left, top, left + w, top + h, text, max(0.0, float(cells[10])), block, paragraph, line)
            )
    return OcrResult(tuple(words), width, height)


def is_scan(page: pymupdf.Page, chars: int) -> bool:
    """Whether ``page``, whose text layer has ``chars`` non-space characters, is to be read by OCR.

    An image and no text at all; or a negligible text layer (a scanner's stamp, a Bates number) over images
    covering at least half of the page.
    """
    if chars >= SCAN_MAX_CHARS:
        return False
    share = image_share(page)
    return share > 0 if chars == 0 else share >= SCAN_MIN_IMAGE_SHARE


def image_share(page: pymupdf.Page) -> float:
    """The share of ``page`` that its images cover (overlaps count twice; at most 1)."""
    import pymupdf

    area = abs(page.rect) or 1.0
    covered = sum(abs(pymupdf.Rect(info["bbox"]) & page.rect) for info in page.get_image_info())
    return min(1.0, covered / area)


def render_zoom(page: pymupdf.Page, chosen: OcrOptions) -> float:
    """Pixels per point to OCR ``page`` at: a full-page scan's own resolution (within MIN_DPI-MAX_DPI), else
    the options' dpi; a poster's longer side is held to MAX_SIDE_PX."""
    import pymupdf

    dpi = float(chosen.dpi)
    area = abs(page.rect) or 1.0
    images = [(abs(pymupdf.Rect(info["bbox"])), info) for info in page.get_image_info()]
    if images:
        covered, largest = max(images, key=lambda pair: pair[0])
        box = pymupdf.Rect(largest["bbox"])
        if covered >= SCAN_MIN_IMAGE_SHARE * area and box.width > 0 and largest.get("width"):
            dpi = min(MAX_DPI, max(MIN_DPI, 72 * float(largest["width"]) / box.width))
    return min(dpi / 72, MAX_SIDE_PX / max(page.rect.width, page.rect.height, 1.0))


def ocr_page(page: pymupdf.Page, chosen: OcrOptions) -> OcrResult:
    """Render ``page`` in grayscale and read it; boxes in the page's unrotated coordinates.

    Raises:
        OcrUnavailable: as ``check_available``.
        OcrFailed: as ``ocr_image``.
    """
    import pymupdf

    check_available(chosen)
    hook = _on_page.get()
    if hook is not None:
        hook()
    zoom = render_zoom(page, chosen)
    pixmap = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), colorspace=pymupdf.csGRAY, alpha=False)
    read = ocr_image(pixmap.tobytes("pnm"), chosen)
    del pixmap
    # Pixels -> the rotated page (1/zoom) -> the unrotated page, where MuPDF's text and highlights live.
    to_page = pymupdf.Matrix(1 / zoom, 1 / zoom) * page.derotation_matrix
    words = []
    for word in read.words:
        box = pymupdf.Rect(word.x0, word.y0, word.x1, word.y1) * to_page
        words.append(replace(word, x0=box.x0, y0=box.y0, x1=box.x1, y1=box.y1))
    return OcrResult(tuple(words), page.cropbox.width, page.cropbox.height)


def page_dict(result: OcrResult) -> dict[str, Any]:
    """The words as ``page.get_text("dict")`` would give them: a block per paragraph, a span per line."""
    blocks: list[dict[str, Any]] = []
    for _, words in _grouped(_paragraphs(result.words), lambda w: (w.block, w.paragraph)):
        lines = []
        for _, line_words in _grouped(words, lambda w: w.line):
            box = _union(line_words)
            # The median word, not the line's box: one tall symbol (a sum, a fraction, a subscript) stretches the
            # box of an equation's line, and the heading rule would take it for a larger font.
            size = round(statistics.median(w.y1 - w.y0 for w in line_words) / _LINE_HEIGHT_PER_POINT)
            text = " ".join(w.text for w in line_words)
            lines.append({"bbox": box, "spans": [{"text": text, "size": float(size), "flags": 0, "font": "OCR"}]})
        blocks.append({"type": 0, "number": len(blocks), "bbox": _union(words), "lines": lines})
    return {"width": result.width, "height": result.height, "blocks": blocks}


def _paragraphs(words: Sequence[OcrWord]) -> list[OcrWord]:
    """``words`` with a Tesseract paragraph that continues a sentence joined to the one before it.

    Tesseract starts a paragraph where a line's length or indent changes, so a sentence that wraps onto a shorter
    line ("…calf rennet for every" / "ten litres of milk, stirred in.") comes back as two paragraphs, cut mid-
    sentence. A paragraph in the same block, whose previous line does not end a sentence and which starts within a
    line's height of it, is the same paragraph.
    """
    out: list[OcrWord] = []
    last: tuple[int, int, int] | None = None  # the previous line's (block, paragraph, line), as Tesseract numbered it
    previous: list[OcrWord] = []  # the previous line, as written
    for key, line in _grouped(words, lambda w: (w.block, w.paragraph, w.line)):
        continues = last is not None and key[:2] == last[:2]
        joins = (
            not continues
            and last is not None
            and key[0] == last[0]
            and not _ENDS_SENTENCE.search(previous[-1].text)
            and min(w.y0 for w in line) - max(w.y1 for w in previous) < _line_height(previous)
        )
        # Lines are numbered within their paragraph: a joined paragraph's lines count on from the one it joins.
        paragraph, number = (previous[0].paragraph, previous[0].line + 1) if continues or joins else (key[1], 1)
        previous = [replace(w, paragraph=paragraph, line=number) for w in line]
        out.extend(previous)
        last = key
    return out


def _line_height(line: Sequence[OcrWord]) -> float:
    return max(w.y1 for w in line) - min(w.y0 for w in line)


def page_words(result: OcrResult) -> list[tuple[float, float, float, float, str, int, int, int]]:
    """The words as ``page.get_text("words")`` would give them: box, text, block, line and word numbers."""
    out: list[tuple[float, float, float, float, str, int, int, int]] = []
    for block_no, (_, words) in enumerate(_grouped(_paragraphs(result.words), lambda w: (w.block, w.paragraph))):
        for line_no, (_, line_words) in enumerate(_grouped(words, lambda w: w.line)):
            out.extend((w.x0, w.y0, w.x1, w.y1, w.text, block_no, line_no, n) for n, w in enumerate(line_words))
    return out


def _grouped(words: Sequence[OcrWord], key: Callable[[OcrWord], Any]) -> list[tuple[Any, list[OcrWord]]]:
    groups: list[tuple[Any, list[OcrWord]]] = []
    for word in words:
        k = key(word)
        if not groups or groups[-1][0] != k:
            groups.append((k, []))
        groups[-1][1].append(word)
    return groups


def _union(words: list[OcrWord]) -> tuple[float, float, float, float]:
    return (min(w.x0 for w in words), min(w.y0 for w in words), max(w.x1 for w in words), max(w.y1 for w in words))
