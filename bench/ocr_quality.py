"""OCR quality and speed on the shared PDFs (learning/ocr.md): which OCR route, and does a scan cite right?

1. Routes: born-digital pages rendered in grayscale and read by Tesseract as a program (``ocr.py``'s route,
   at 300 and 200 dpi) and by PyMuPDF's built-in OCR; character error rate (CER, Levenshtein distance over
   the reference's length, both NFKC with whitespace collapsed) against the page's own text layer, and
   seconds per page.
2. Known items: each PDF rendered to 300 dpi grayscale JPEG pages and rebuilt with no text layer (a scan),
   loaded by the PDF loader (OCR), and five phrases of four words drawn (seeded) from each page of the
   born-digital load looked up, letters and digits only, on the same page of the scan's load.

    nice -n 10 .venv/bin/python bench/ocr_quality.py --data ../shared/data [--json learning/ocr.json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
import unicodedata
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
SCANNED = ("sample-sigconf.pdf", "elstest-5p.pdf", "pmlr-sample.pdf")
PHRASES_PER_PAGE = 5
SEED = 53


def levenshtein(a: str, b: str) -> int:
    """Edit distance, bit-parallel (Myers 1999, Hyyrö's global variant): one pass over ``b``, ``a`` as bits."""
    if not a:
        return len(b)
    m = len(a)
    peq: dict[str, int] = {}
    for i, c in enumerate(a):
        peq[c] = peq.get(c, 0) | (1 << i)
    mask, last = (1 << m) - 1, 1 << (m - 1)
    pv, mv, score = mask, 0, m
    for c in b:
        eq = peq.get(c, 0)
        xv = eq | mv
        xh = (((eq & pv) + pv) ^ pv) | eq
        ph = mv | (~(xh | pv) & mask)
        mh = pv & xh
        if ph & last:
            score += 1
        elif mh & last:
            score -= 1
        ph = ((ph << 1) | 1) & mask
        mh = (mh << 1) & mask
        pv = mh | (~(xv | ph) & mask)
        mv = ph & xv
    return score


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


def norm(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split())


def letters(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKC", text).casefold() if c.isalnum())


def routes(folder: Path) -> list[dict[str, Any]]:
    chosen = ocr.OcrOptions()
    tessdata = subprocess.run(["tesseract", "--list-langs"], capture_output=True, text=True, check=True)
    os.environ.setdefault("TESSDATA_PREFIX", tessdata.stdout.split('"')[1])
    rows = []
    for route, dpi in (("tesseract program (ocr.py)", 300), ("tesseract program (ocr.py)", 200), ("PyMuPDF OCR", 300)):
        errors = chars = 0
        seconds = 0.0
        pages = 0
        per_page: dict[str, float] = {}
        for name, numbers in ROUTE_PAGES.items():
            with pymupdf.open(folder / name) as doc:
                for number in numbers:
                    page = doc[number - 1]
                    reference = norm(page.get_text())
                    start = time.perf_counter()
                    if route.startswith("PyMuPDF"):
                        textpage = page.get_textpage_ocr(dpi=dpi, full=True, language="eng")
                        read = page.get_text(textpage=textpage)
                    else:
                        pixmap = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)
                        read = ocr.ocr_image(pixmap.tobytes("pnm"), chosen).text
                    seconds += time.perf_counter() - start
                    error = levenshtein(reference, norm(read))
                    per_page[f"{name} p{number}"] = round(error / len(reference), 4)
                    errors += error
                    chars += len(reference)
                    pages += 1
        rows.append(
            {
                "route": route,
                "dpi": dpi,
                "pages": pages,
                "cer": errors / chars,
                "median_page_cer": statistics.median(per_page.values()),
                "s_per_page": seconds / pages,
                "page_cer": per_page,
            }
        )
        print(f"{route} @ {dpi} dpi: CER {errors / chars:.2%}, {seconds / pages:.2f} s/page", file=sys.stderr)
    return rows


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
    args = parser.parse_args()
    folder = args.data / "pdfs"
    if not folder.is_dir():
        raise SystemExit(f"no PDFs at {folder}: pass --data (the shared data folder)")
    ocr.check_available(ocr.OcrOptions())
    _check_levenshtein()
    result = {"routes": routes(folder), "known_items": known_items(folder)}
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
