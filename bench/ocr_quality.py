"""OCR quality and speed on the shared PDFs (learning/ocr.md): which OCR route, and does a scan cite right?

1. Routes: born-digital pages rendered in grayscale and read by Tesseract as a program (``ocr.py``'s route,
   at 300 and 200 dpi) and by PyMuPDF's built-in OCR; two character error rates (below) against the page's
   own text layer, and seconds per page.
2. Known items: each PDF rendered to 300 dpi grayscale JPEG pages and rebuilt with no text layer (a scan),
   loaded by the PDF loader (OCR), and five phrases of four words drawn (seeded) from each page of the
   born-digital load looked up, letters and digits only, on the same page of the scan's load.

Two error rates for each page and pooled over pages (errors summed over reference characters summed):

- *Strict CER*: the Levenshtein distance between the two texts joined line after line, so a block read in
  another order than the text layer's counts as deleted in one place and inserted in another. The text
  layer's order is the PDF generator's, not necessarily a reader's: an ACM title page stores its author grid
  author by author (name, affiliation, address), and Tesseract reads it row by row across the grid.
- *Flexible CER*: reading-order independent, after Flexible Character Accuracy (FCA; C. Clausner,
  S. Pletschacher, A. Antonacopoulos, Pattern Recognition Letters 131, 2020; also in the dinglehopper tool):
  lines are matched to the reference wherever they lie, a line may be split, then characters are counted.
  ``flexible_order``: both texts are split into lines (NFKC, whitespace collapsed, empty lines dropped), a
  pool of reference pieces and a pool of OCR pieces. For a pair, the shorter piece is aligned to its best
  substring of the longer (edit distance d, free ends in the longer one: ``best_substring``); the pair is
  worth ``len(shorter) - 2d`` (a match needs fewer edits than half its characters) and pieces under 3
  characters are not matched on their own. Repeatedly the pair worth most over both pools is matched: the
  shorter piece leaves its pool; the longer one's left and right parts (stripped of the spaces at the cut)
  go back into theirs, so a line may be matched piece by piece to several lines of the other text (a split,
  both ways). Each matched OCR piece is placed where its reference piece lies (line, then character); an
  unmatched one stays after the piece that comes before it in the OCR's own order. The OCR pieces, in that
  order, are joined (parts of one word cut apart and placed side by side are one word again) and compared
  with the reference by the same Levenshtein distance as the strict CER; the flexible error count is the
  smaller of that and the strict one (the OCR's own order is one of the orders allowed). Flexible CER =
  errors / reference length, the strict denominator. Pairs are tried best first from an upper bound on their
  worth (an edit destroys at most three of the shorter piece's trigrams, so d >= its trigrams missing from
  the longer / 3), computed exactly only when a pair comes up: a page takes well under a second.
  Deviations from the paper: one greedy rule instead of its sweep over penalty coefficients; edits counted
  by one alignment of the reordered page instead of match by match plus every unmatched character, so a
  line read badly enough to stay unmatched (small capitals read as capitals) counts its edits where it
  stands, not once deleted and once inserted. Reordering forgives the order of lines and parts of lines,
  never a misread, missing or extra character.

3. Options (``--options``): the same route pages read by Tesseract with other page segmentation modes,
   ``preserve_interword_spaces``, 400 dpi, and table finding off or on; both error rates and seconds per page.
   ``--wide`` compares ``ocr.py``'s route with given Tesseract arguments added on WIDE_PAGES (32 pages) only.

    nice -n 10 .venv/bin/python bench/ocr_quality.py --data ../shared/data [--options] [--json learning/ocr.json]
    nice -n 10 .venv/bin/python bench/ocr_quality.py --data ../shared/data --wide='-c textord_tabfind_find_tables=0'
    .venv/bin/python bench/ocr_quality.py --check   (the metrics' self-checks only)
"""

from __future__ import annotations

import argparse
import heapq
import itertools
import json
import os
import random
import shlex
import statistics
import subprocess
import sys
import time
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pymupdf

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sextant.kb.loaders import ocr, pdf

ROUTE_PAGES = {  # (file, 1-based page): two-column papers, a title page, a manual page
    "sample-sigconf.pdf": (1, 2),
    "elstest-5p.pdf": (1,),
    "pmlr-sample.pdf": (1, 5),
    "R-intro.pdf": (12,),
}
# For a change of options: every page of the three papers and every tenth page of the manual.
WIDE_PAGES = {
    "sample-sigconf.pdf": tuple(range(1, 7)),
    "elstest-5p.pdf": tuple(range(1, 5)),
    "pmlr-sample.pdf": tuple(range(1, 12)),
    "R-intro.pdf": tuple(range(5, 114, 10)),
}
SCANNED = ("sample-sigconf.pdf", "elstest-5p.pdf", "pmlr-sample.pdf")
PHRASES_PER_PAGE = 5
SEED = 53


def levenshtein(a: str, b: str) -> int:
    """Edit distance, bit-parallel (Myers 1999, Hyyrö's global variant): one pass over ``b``, ``a`` as bits."""
    return _column_scores(a, b, anywhere=False)[-1]


def _check_levenshtein() -> None:
    rng = random.Random(SEED)
    for _ in range(200):
        a = "".join(rng.choice("abc ") for _ in range(rng.randint(0, 12)))
        b = "".join(rng.choice("abc ") for _ in range(rng.randint(0, 12)))
        row = list(range(len(b) + 1))
        for i, ca in enumerate(a, 1):
            prev, row[0] = row[0], i
            for j, cb in enumerate(b, 1):
                prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
        assert levenshtein(a, b) == row[-1], (a, b)


def _column_scores(p: str, t: str, *, anywhere: bool) -> list[int]:
    """The last row of the edit-distance table of ``p`` against ``t``: entry j is the distance of ``p`` to
    ``t[:j]``, or with ``anywhere`` to the best substring of ``t`` ending at j (free start; Sellers 1980).
    Bit-parallel as ``levenshtein``; with ``anywhere`` row 0 is all zeros, so no carry enters at the top."""
    m = len(p)
    if not m:
        return [0] * (len(t) + 1) if anywhere else list(range(len(t) + 1))
    peq: dict[str, int] = {}
    for i, c in enumerate(p):
        peq[c] = peq.get(c, 0) | (1 << i)
    mask, last, carry = (1 << m) - 1, 1 << (m - 1), 0 if anywhere else 1
    pv, mv, score = mask, 0, m
    scores = [m]
    for c in t:
        eq = peq.get(c, 0)
        xv = eq | mv
        xh = (((eq & pv) + pv) ^ pv) | eq
        ph = mv | (~(xh | pv) & mask)
        mh = pv & xh
        if ph & last:
            score += 1
        elif mh & last:
            score -= 1
        scores.append(score)
        ph = ((ph << 1) | carry) & mask
        mh = (mh << 1) & mask
        pv = mh | (~(xv | ph) & mask)
        mv = ph & xv
    return scores


def best_substring(p: str, t: str) -> tuple[int, int, int]:
    """(d, start, end): the substring ``t[start:end]`` nearest ``p`` and its edit distance d to ``p``.

    The best end is found with a free start; the start, by aligning ``p`` backwards from that end. Either is
    moved outwards over characters that cost nothing more (a mark, ``Break*`` for ``Break∗``), so that a match
    does not leave them behind as pieces of their own."""
    forward = _column_scores(p, t, anywhere=True)
    d = min(forward)
    end = forward.index(d)
    while end < len(t) and forward[end + 1] == d:
        end += 1
    backward = _column_scores(p[::-1], t[:end][::-1], anywhere=False)
    length = backward.index(d)
    while length < end and backward[length + 1] == d:
        length += 1
    return d, end - length, end


TRIGRAM = 3
MIN_PIECE = 3  # shorter pieces are not placed by a match of their own: they would fit almost anywhere


@dataclass(frozen=True, slots=True)
class Piece:
    """Part of a line: its text and where it starts (line number, character in the normalized line)."""

    text: str
    line: int
    at: int


def _pieces(text: str) -> list[Piece]:
    lines = (norm(line) for line in text.splitlines())
    return [Piece(line, number, 0) for number, line in enumerate(lines) if line]


def _cut(piece: Piece, start: int, end: int) -> list[Piece]:
    """``piece`` without ``[start:end]``: its left and right parts, each stripped of the spaces at the cut."""
    out = []
    for a, b in ((0, start), (end, len(piece.text))):
        part = piece.text[a:b]
        if part.strip():
            out.append(Piece(part.strip(), piece.line, piece.at + a + len(part) - len(part.lstrip())))
    return out


def flexible_order(reference: str, read: str) -> str:
    """``read``'s lines, or parts of them, put in ``reference``'s order (the module's docstring, Flexible CER)."""
    grams: dict[str, frozenset[str]] = {}

    def trigrams(text: str) -> frozenset[str]:
        if text not in grams:
            grams[text] = frozenset(text[i : i + TRIGRAM] for i in range(len(text) - TRIGRAM + 1))
        return grams[text]

    def bound(ref: Piece, got: Piece) -> int:
        """At least what matching ``ref`` and ``got`` is worth: an edit destroys at most TRIGRAM of the shorter
        piece's trigrams, so d >= (its trigrams missing from the longer piece) / TRIGRAM."""
        short, long = sorted((ref.text, got.text), key=len)
        if len(short) < MIN_PIECE:
            return 0
        return len(short) - 2 * -(-len(trigrams(short) - trigrams(long)) // TRIGRAM)

    refs = dict(enumerate(_pieces(reference)))
    reads = dict(enumerate(_pieces(read)))
    ids = itertools.count(max(len(refs), len(reads)))
    # (-worth, 0 if the worth is exact or 1 if it is a bound, reference piece, OCR piece): the best match first.
    heap = [(-b, 1, r, o) for r in refs for o in reads if (b := bound(refs[r], reads[o])) > 0]
    heapq.heapify(heap)
    placed: list[tuple[Piece, tuple[int, int]]] = []  # OCR pieces matched, and where in the reference
    while heap:
        _, inexact, r, o = heapq.heappop(heap)
        if r not in refs or o not in reads:
            continue
        ref, got = refs[r], reads[o]
        short, long = sorted((ref.text, got.text), key=len)
        d, start, end = best_substring(short, long)
        if inexact:  # the exact worth goes back in the queue, ahead of bounds as high as it
            if len(short) - 2 * d > 0:
                heapq.heappush(heap, (-(len(short) - 2 * d), 0, r, o))
            continue
        del refs[r], reads[o]
        new_refs, new_reads = [], []
        if len(ref.text) <= len(got.text):  # the reference piece lies in the OCR piece: cut the OCR piece
            placed.append((Piece(got.text[start:end], got.line, got.at + start), (ref.line, ref.at)))
            new_reads = _cut(got, start, end)
        else:  # the OCR piece lies in the reference piece: cut the reference piece
            placed.append((got, (ref.line, ref.at + start)))
            new_refs = _cut(ref, start, end)
        for piece in new_refs:
            refs[n := next(ids)] = piece
            for o2, other in reads.items():
                if (b := bound(piece, other)) > 0:
                    heapq.heappush(heap, (-b, 1, n, o2))
        for piece in new_reads:
            reads[n := next(ids)] = piece
            for r2, other in refs.items():
                if (b := bound(other, piece)) > 0:
                    heapq.heappush(heap, (-b, 1, r2, n))
    # A piece matched nowhere keeps its place after the piece before it in the OCR's own order.
    pieces: list[tuple[Piece, tuple[int, int] | None]] = [*placed, *((p, None) for p in reads.values())]
    pieces.sort(key=lambda pair: (pair[0].line, pair[0].at))
    where, ordered = (-1, 0), []
    for n, (piece, place) in enumerate(pieces):
        where = place or where
        ordered.append((where, n, piece))
    ordered.sort()
    # Parts of a word that were cut apart and placed side by side again are one word again.
    text = ""
    for k, (_, _, piece) in enumerate(ordered):
        before = ordered[k - 1][2] if k else None
        glued = before is not None and before.line == piece.line and before.at + len(before.text) == piece.at
        text += piece.text if glued or not text else " " + piece.text
    return text


def flexible_errors(reference: str, read: str) -> int:
    """Edits from ``read`` to ``reference`` in the better of two reading orders: the OCR's own, and the
    reference's (``flexible_order``); at most the strict count, with the same reference length."""
    strict = levenshtein(norm(reference), norm(read))
    return min(strict, levenshtein(norm(reference), flexible_order(reference, read)))


def _check_flexible() -> None:
    rng = random.Random(SEED)
    for _ in range(300):
        p = "".join(rng.choice("abc ") for _ in range(rng.randint(0, 8)))
        t = "".join(rng.choice("abc ") for _ in range(rng.randint(0, 12)))
        d, start, end = best_substring(p, t)
        brute = min(levenshtein(p, t[i:j]) for i in range(len(t) + 1) for j in range(i, len(t) + 1))
        assert d == brute == levenshtein(p, t[start:end]), (p, t, d, brute, start, end)
        assert _column_scores(p, t, anywhere=False)[-1] == levenshtein(p, t), (p, t)
    one = "The quick brown fox jumps over the lazy dog.\nPack my box with five dozen liquor jugs."
    two = "Sphinx of black quartz, judge my vow.\nHow vexingly quick daft zebras jump!"
    assert flexible_errors(one, one) == 0
    # Blocks read in another order: nothing wrong for the flexible measure, a block moved for the strict one.
    assert flexible_errors(one + "\n" + two, two + "\n" + one) == 0
    assert levenshtein(norm(one + "\n" + two), norm(two + "\n" + one)) > 30
    # An author grid stored row by row and read name by name (a line read as parts of several), and back.
    grid = "Ann Smith Bob Jones Eve Brown\nMIT Cambridge Yale New Haven Rice Houston"
    names = "Ann Smith\nMIT Cambridge\nBob Jones\nYale New Haven\nEve Brown\nRice Houston"
    assert flexible_errors(grid, names) == flexible_errors(names, grid) == 0
    assert levenshtein(norm(grid), norm(names)) > 20
    # A misread letter is one error (1 / length), in order or not; a line missed or made up counts its letters.
    assert flexible_errors(one, one.replace("lazy", "1azy")) == 1
    assert flexible_errors(one + "\n" + two, two + "\n" + one.replace("lazy", "1azy")) == 1
    assert flexible_errors(one + "\n" + two, one) == len(norm(two)) + 1
    assert flexible_errors(one, one + "\nzzz qqq") == 8
    assert flexible_errors("", "") == 0
    assert flexible_errors("abc", "") == 3


def norm(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split())


def letters(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKC", text).casefold() if c.isalnum())


Reader = Callable[[pymupdf.Page], str]


def measure(
    folder: Path, route: str, dpi: int, reader: Reader, pages: dict[str, tuple[int, ...]] = ROUTE_PAGES
) -> dict[str, Any]:
    """Both error rates of ``reader`` on ``pages``, per page and pooled, and its seconds per page."""
    strict = flexible = chars = 0
    seconds = 0.0
    per_page: dict[str, dict[str, float]] = {}
    for name, numbers in pages.items():
        with pymupdf.open(folder / name) as doc:
            for number in numbers:
                page = doc[number - 1]
                layer = page.get_text()
                reference = norm(layer)
                start = time.perf_counter()
                read = reader(page)
                seconds += time.perf_counter() - start
                error = levenshtein(reference, norm(read))
                flexible_error = flexible_errors(layer, read)
                per_page[f"{name} p{number}"] = {
                    "cer": round(error / len(reference), 4),
                    "flexible_cer": round(flexible_error / len(reference), 4),
                }
                strict += error
                chars += len(reference)
                flexible += flexible_error
    count = len(per_page)
    row = {
        "route": route,
        "dpi": dpi,
        "pages": count,
        "reference_chars": chars,
        "cer": strict / chars,
        "median_page_cer": statistics.median(p["cer"] for p in per_page.values()),
        "flexible_cer": flexible / chars,
        "median_page_flexible_cer": statistics.median(p["flexible_cer"] for p in per_page.values()),
        "s_per_page": seconds / count,
        "page_cer": per_page,
    }
    print(
        f"{route} @ {dpi} dpi: CER {row['cer']:.2%} (median {row['median_page_cer']:.2%}), flexible CER "
        f"{row['flexible_cer']:.2%} (median {row['median_page_flexible_cer']:.2%}), {row['s_per_page']:.2f} s/page",
        file=sys.stderr,
    )
    return row


def _tessdata() -> None:
    tessdata = subprocess.run(["tesseract", "--list-langs"], capture_output=True, text=True, check=True)
    os.environ.setdefault("TESSDATA_PREFIX", tessdata.stdout.split('"')[1])


def product(dpi: int) -> Reader:
    """``ocr.py``'s route: the page in grayscale at ``dpi``, read by ``ocr.ocr_image``."""
    chosen = ocr.OcrOptions()

    def read(page: pymupdf.Page) -> str:
        pixmap = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)
        return ocr.ocr_image(pixmap.tobytes("pnm"), chosen).text

    return read


def tesseract_with(dpi: int, args: Sequence[str]) -> Reader:
    """``ocr.py``'s command (one thread, TSV, PNM on stdin) with ``args`` in place of ``--psm 3``."""

    def read(page: pymupdf.Page) -> str:
        pixmap = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)
        done = subprocess.run(
            ["tesseract", "stdin", "stdout", "-l", "eng", *args, "tsv"],
            input=pixmap.tobytes("pnm"),
            capture_output=True,
            check=True,
            env={**os.environ, "OMP_THREAD_LIMIT": "1"},
        )
        return ocr.parse_tsv(done.stdout.decode("utf-8", "replace")).text

    return read


def pymupdf_ocr(dpi: int) -> Reader:
    def read(page: pymupdf.Page) -> str:
        return page.get_text(textpage=page.get_textpage_ocr(dpi=dpi, full=True, language="eng"))

    return read


def routes(folder: Path) -> list[dict[str, Any]]:
    _tessdata()
    return [
        measure(folder, "tesseract program (ocr.py)", 300, product(300)),
        measure(folder, "tesseract program (ocr.py)", 200, product(200)),
        measure(folder, "PyMuPDF OCR", 300, pymupdf_ocr(300)),
    ]


OPTIONS: tuple[tuple[str, int, tuple[str, ...]], ...] = (
    ("--psm 3 (default: automatic layout)", 300, ("--psm", "3")),
    ("--psm 1 (automatic layout with OSD)", 300, ("--psm", "1")),
    ("--psm 4 (one column of text)", 300, ("--psm", "4")),
    ("--psm 6 (one uniform block)", 300, ("--psm", "6")),
    ("--psm 3 -c preserve_interword_spaces=1", 300, ("--psm", "3", "-c", "preserve_interword_spaces=1")),
    ("--psm 3 -c textord_tabfind_find_tables=0", 300, ("--psm", "3", "-c", "textord_tabfind_find_tables=0")),
    (
        "--psm 3 -c textord_tablefind_recognize_tables=1",
        300,
        ("--psm", "3", "-c", "textord_tablefind_recognize_tables=1"),
    ),
    ("--psm 3", 400, ("--psm", "3")),
)


def options(folder: Path) -> list[dict[str, Any]]:
    _tessdata()
    return [measure(folder, label, dpi, tesseract_with(dpi, args)) for label, dpi, args in OPTIONS]


def wide(folder: Path, args: Sequence[str]) -> list[dict[str, Any]]:
    """``ocr.py``'s route and the same with ``args`` added, on WIDE_PAGES: what else a change moves."""
    _tessdata()
    return [
        measure(folder, "--psm 3", 300, tesseract_with(300, ("--psm", "3")), WIDE_PAGES),
        measure(folder, " ".join(("--psm", "3", *args)), 300, tesseract_with(300, ("--psm", "3", *args)), WIDE_PAGES),
    ]


def scan_of(path: Path) -> bytes:
    out = pymupdf.open()
    with pymupdf.open(path) as doc:
        for page in doc:
            pixmap = page.get_pixmap(dpi=300, colorspace=pymupdf.csGRAY)
            new = out.new_page(width=page.rect.width, height=page.rect.height)
            new.insert_image(new.rect, stream=pixmap.tobytes("jpeg", jpg_quality=85))
    return out.tobytes(deflate=True)


def known_items(folder: Path) -> list[dict[str, Any]]:
    rng = random.Random(SEED)
    rows = []
    for name in SCANNED:
        data = (folder / name).read_bytes()
        truth = pdf.load(data, name)
        scan = scan_of(folder / name)
        start = time.perf_counter()
        read = pdf.load(scan, name)
        pages = read.ocr_pages
        seconds = time.perf_counter() - start
        found = total = 0
        misses = []
        for page in truth.pages:
            words = truth.text[page.start : page.end].split()
            if len(words) < 8:
                continue
            scanned = next(p for p in read.pages if p.number == page.number)
            on_page = letters(read.text[scanned.start : scanned.end])
            for _ in range(PHRASES_PER_PAGE):
                phrase = ""
                while len(letters(phrase)) < 12:  # four words, and not four numbers or symbols
                    at = rng.randrange(len(words) - 3)
                    phrase = " ".join(words[at : at + 4])
                total += 1
                if letters(phrase) in on_page:
                    found += 1
                else:
                    misses.append(f"p{page.number}: {phrase}")
        confidence = sum(p.confidence for p in pages) / max(len(pages), 1)
        rows.append(
            {
                "file": name,
                "pages": len(read.pages),
                "ocr_pages": len(pages),
                "found": found,
                "phrases": total,
                "mean_confidence": round(confidence, 1),
                "s_per_page": seconds / len(read.pages),
                "misses": misses,
            }
        )
        print(f"{name}: {found}/{total} on the right page, {seconds / len(read.pages):.2f} s/page", file=sys.stderr)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path(os.environ.get("SEXTANT_DATA_DIR", "../shared/data")))
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--options", action="store_true", help="also measure Tesseract's options (3.)")
    parser.add_argument("--only-options", action="store_true", help="measure Tesseract's options only")
    parser.add_argument("--check", action="store_true", help="run the metrics' self-checks and stop")
    parser.add_argument(
        "--wide", metavar="ARGS", help="only compare ocr.py's route with these tesseract arguments added, on WIDE_PAGES"
    )
    args = parser.parse_args()
    _check_levenshtein()
    _check_flexible()
    if args.check:
        print("self-checks passed", file=sys.stderr)
        return
    folder = args.data / "pdfs"
    if not folder.is_dir():
        raise SystemExit(f"no PDFs at {folder}: pass --data (the shared data folder)")
    ocr.check_available(ocr.OcrOptions())
    result: dict[str, Any] = {}
    if args.wide:
        result["wide"] = wide(folder, shlex.split(args.wide))
    else:
        if not args.only_options:
            result["routes"] = routes(folder)
        if args.options or args.only_options:
            result["options"] = options(folder)
        if not args.only_options:
            result["known_items"] = known_items(folder)
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
