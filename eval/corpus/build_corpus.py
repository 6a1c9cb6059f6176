"""Build the generated part of Sextant's evaluation corpus: the PDFs and DOCX files.

Sources live in ``eval/corpus/src/<id>.md`` in a small Markdown subset (ATX headings, paragraphs,
``-`` bullets, pipe tables, ``*italic*``/``**bold**``). In PDF sources a line ``<!-- pagebreak -->``
starts a new physical page, so the page each passage lands on is fixed by the source, not by text
flow: a page whose text does not fit is an error rather than a silent overflow.

The output is deterministic: fixed metadata dates, no random PDF /ID, and DOCX zip entries with a
fixed timestamp. Run from anywhere:

    python eval/corpus/build_corpus.py          # (re)build eval/corpus/*.pdf and *.docx
    python eval/corpus/build_corpus.py --check  # build in memory and fail if the files differ

All text was written for the Sextant project (CC BY 4.0).
"""

from __future__ import annotations

import argparse
import html
import io
import re
import sys
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import docx
import pymupdf
from docx.shared import Pt


def say(msg: str) -> None:
    sys.stdout.write(msg + "\n")


def warn(msg: str) -> None:
    sys.stderr.write(msg + "\n")


HERE = Path(__file__).resolve().parent
SRC = HERE / "src"
DOCS = HERE / "documents"
FIXED_PDF_DATE = "D:20250101000000Z"
FIXED_DT = datetime(2025, 1, 1, tzinfo=UTC)
PAGEBREAK = "<!-- pagebreak -->"


@dataclass(frozen=True)
class PdfSpec:
    doc_id: str
    title: str
    author: str
    # pymupdf page-label rules; every PDF gets labels so that get_label() is never empty.
    labels: list[dict] = field(default_factory=list)


PDFS = [
    PdfSpec(
        "espresso-maintenance",
        "Caring for Your Home Espresso Machine",
        "Sextant evaluation corpus",
        # title page and about/contents page are i, ii; chapters start at 1 on physical page 3
        [
            {"startpage": 0, "prefix": "", "style": "r", "firstpagenum": 1},
            {"startpage": 2, "prefix": "", "style": "D", "firstpagenum": 1},
        ],
    ),
    PdfSpec(
        "lab-safety-manual",
        "Laboratory Safety Manual, Department of Chemistry, Fenwick College",
        "Sextant evaluation corpus",
        # title, foreword, contents are i, ii, iii; sections start at 1 on physical page 4
        [
            {"startpage": 0, "prefix": "", "style": "r", "firstpagenum": 1},
            {"startpage": 3, "prefix": "", "style": "D", "firstpagenum": 1},
        ],
    ),
    PdfSpec(
        "lighthouse-history",
        "The Carrick Ness Light: A Short History",
        "Sextant evaluation corpus",
        [{"startpage": 0, "prefix": "", "style": "D", "firstpagenum": 1}],
    ),
    PdfSpec(
        "variable-stars-primer",
        "Variable Stars: A Primer for Beginners",
        "Sextant evaluation corpus",
        [{"startpage": 0, "prefix": "", "style": "D", "firstpagenum": 1}],
    ),
]

DOCXS = ["travel-expense-policy", "employee-onboarding-handbook"]

# ---------------------------------------------------------------------------------------------
# A tiny Markdown-subset parser shared by the PDF and DOCX writers (and by eval/check_golden.py).


@dataclass
class Block:
    kind: str  # heading | para | bullet | table | pagebreak
    text: str = ""
    level: int = 0
    rows: list[list[str]] = field(default_factory=list)  # table: header row first


def _split_row(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def parse_blocks(source: str) -> list[Block]:
    blocks: list[Block] = []
    para: list[str] = []
    lines = source.splitlines()

    def flush() -> None:
        if para:
            blocks.append(Block("para", " ".join(s.strip() for s in para)))
            para.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if stripped == PAGEBREAK:
            flush()
            blocks.append(Block("pagebreak"))
        elif not stripped:
            flush()
        elif m := re.match(r"^(#{1,6})\s+(.*)$", stripped):
            flush()
            blocks.append(Block("heading", m.group(2).strip(), level=len(m.group(1))))
        elif stripped.startswith("- "):
            flush()
            blocks.append(Block("bullet", stripped[2:].strip()))
        elif stripped.startswith("|"):
            flush()
            rows = []
            while i < len(lines) and lines[i].strip().startswith("|"):
                cells = _split_row(lines[i])
                if not all(re.fullmatch(r":?-{3,}:?", c) for c in cells):
                    rows.append(cells)
                i += 1
            blocks.append(Block("table", rows=rows))
            continue
        else:
            para.append(stripped)
        i += 1
    flush()
    return blocks


def plain(text: str) -> str:
    """Inline markup removed: what a reader (and text extraction) sees."""
    text = re.sub(r"\*\*(.+?)\*\*", r"\1", text)
    return re.sub(r"\*(.+?)\*", r"\1", text)


def inline_html(text: str) -> str:
    text = html.escape(text, quote=False)
    text = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", text)
    return re.sub(r"\*(.+?)\*", r"<i>\1</i>", text)


# ---------------------------------------------------------------------------------------------
# PDF

CSS = """
body { font-family: serif; font-size: 11pt; line-height: 1.35; }
h1 { font-size: 20pt; margin-bottom: 10pt; }
h2 { font-size: 14pt; margin-top: 6pt; margin-bottom: 6pt; }
p { margin-top: 0; margin-bottom: 7pt; text-align: left; }
ul { margin-top: 0; margin-bottom: 7pt; }
li { margin-bottom: 3pt; }
table { border-collapse: collapse; margin-bottom: 8pt; }
th, td { border: 0.5pt solid #444; padding: 3pt; font-size: 9.5pt; vertical-align: top; }
th { background-color: #e8e8e8; }
"""

PAGE_W, PAGE_H = 595, 842  # A4 in points
BODY = pymupdf.Rect(64, 70, PAGE_W - 64, PAGE_H - 70)


def blocks_to_html(blocks: list[Block]) -> str:
    out: list[str] = []
    in_list = False
    for b in blocks:
        if b.kind != "bullet" and in_list:
            out.append("</ul>")
            in_list = False
        if b.kind == "heading":
            out.append(f"<h{b.level}>{inline_html(b.text)}</h{b.level}>")
        elif b.kind == "para":
            out.append(f"<p>{inline_html(b.text)}</p>")
        elif b.kind == "bullet":
            if not in_list:
                out.append("<ul>")
                in_list = True
            out.append(f"<li>{inline_html(b.text)}</li>")
        elif b.kind == "table":
            head, *body = b.rows
            out.append("<table><tr>" + "".join(f"<th>{inline_html(c)}</th>" for c in head) + "</tr>")
            for row in body:
                out.append("<tr>" + "".join(f"<td>{inline_html(c)}</td>" for c in row) + "</tr>")
            out.append("</table>")
    if in_list:
        out.append("</ul>")
    return "\n".join(out)


def split_pages(blocks: list[Block]) -> list[list[Block]]:
    pages: list[list[Block]] = [[]]
    for b in blocks:
        if b.kind == "pagebreak":
            pages.append([])
        else:
            pages[-1].append(b)
    return pages


def build_pdf(spec: PdfSpec) -> bytes:
    blocks = parse_blocks((SRC / f"{spec.doc_id}.md").read_text(encoding="utf-8"))
    doc = pymupdf.open()
    for n, page_blocks in enumerate(split_pages(blocks), start=1):
        page = doc.new_page(width=PAGE_W, height=PAGE_H)
        spare, scale = page.insert_htmlbox(BODY, blocks_to_html(page_blocks), css=CSS, scale_low=1)
        if spare < 0 or scale != 1:
            raise SystemExit(f"{spec.doc_id}: page {n} does not fit; shorten it or add a page break")
    doc.set_page_labels(spec.labels)
    for page in doc:
        # running header and printed page label (the label, not the physical number, as in print)
        page.insert_text((64, 45), spec.title, fontname="helv", fontsize=8, color=(0.4, 0.4, 0.4))
        label = page.get_label()
        width = pymupdf.get_text_length(label, fontname="helv", fontsize=9)
        page.insert_text(((PAGE_W - width) / 2, PAGE_H - 40), label, fontname="helv", fontsize=9)
    doc.set_metadata(
        {
            "title": spec.title,
            "author": spec.author,
            "subject": "Sextant evaluation corpus; CC BY 4.0",
            "keywords": "",
            "creator": "eval/corpus/build_corpus.py",
            "producer": "PyMuPDF",
            "creationDate": FIXED_PDF_DATE,
            "modDate": FIXED_PDF_DATE,
            "trapped": "",
        }
    )
    data = doc.tobytes(garbage=4, deflate=True, no_new_id=True)
    doc.close()
    return data


# ---------------------------------------------------------------------------------------------
# DOCX


def _add_runs(paragraph, text: str) -> None:
    for part in re.split(r"(\*\*.+?\*\*|\*.+?\*)", text):
        if not part:
            continue
        if part.startswith("**"):
            paragraph.add_run(part[2:-2]).bold = True
        elif part.startswith("*"):
            paragraph.add_run(part[1:-1]).italic = True
        else:
            paragraph.add_run(part)


def build_docx(doc_id: str) -> bytes:
    blocks = parse_blocks((SRC / f"{doc_id}.md").read_text(encoding="utf-8"))
    d = docx.Document()
    d.styles["Normal"].font.size = Pt(11)
    title = next(b.text for b in blocks if b.kind == "heading" and b.level == 1)
    for b in blocks:
        if b.kind == "heading":
            d.add_heading(plain(b.text), level=b.level)
        elif b.kind == "para":
            _add_runs(d.add_paragraph(), b.text)
        elif b.kind == "bullet":
            _add_runs(d.add_paragraph(style="List Bullet"), b.text)
        elif b.kind == "table":
            head, *body = b.rows
            table = d.add_table(rows=1 + len(body), cols=len(head))
            table.style = "Table Grid"
            for r, row in enumerate([head, *body]):
                if len(row) != len(head):
                    raise SystemExit(f"{doc_id}: table row {row} has the wrong number of cells")
                for c, cell_text in enumerate(row):
                    cell = table.cell(r, c)
                    cell.text = plain(cell_text)
                    if r == 0:
                        for run in cell.paragraphs[0].runs:
                            run.bold = True
    cp = d.core_properties
    cp.title = title
    cp.author = "Sextant evaluation corpus"
    cp.last_modified_by = "eval/corpus/build_corpus.py"
    cp.comments = "Written for the Sextant project; CC BY 4.0"
    cp.created = cp.modified = cp.last_printed = FIXED_DT
    cp.revision = 1
    raw = io.BytesIO()
    d.save(raw)
    # re-pack with fixed timestamps so the bytes do not depend on when the script ran
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(raw.getvalue())) as zin, zipfile.ZipFile(out, "w") as zout:
        for info in zin.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=(2025, 1, 1, 0, 0, 0))
            fixed.compress_type = zipfile.ZIP_DEFLATED
            fixed.external_attr = 0o644 << 16
            zout.writestr(fixed, zin.read(info.filename))
    return out.getvalue()


# ---------------------------------------------------------------------------------------------


def build_all() -> dict[Path, bytes]:
    files = {DOCS / f"{s.doc_id}.pdf": build_pdf(s) for s in PDFS}
    files.update({DOCS / f"{d}.docx": build_docx(d) for d in DOCXS})
    return files


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="verify committed files match a fresh build")
    args = ap.parse_args()
    files = build_all()
    if args.check:
        stale = [p.name for p, data in files.items() if not p.exists() or p.read_bytes() != data]
        if stale:
            warn("out of date: " + ", ".join(stale))
            return 1
        say(f"{len(files)} generated files are up to date")
        return 0
    for path, data in files.items():
        path.write_bytes(data)
        say(f"wrote {path.relative_to(HERE.parent.parent)} ({len(data)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
