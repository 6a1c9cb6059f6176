"""Damaged loader inputs for fuzzing the bounded parser: seed files and Hypothesis strategies that mutate them.

Seeds are the shared PDFs (when the data folder is present) plus a PDF, a DOCX, Markdown and plain text
made here. A mutation is what broken and hostile files do: flipped bytes, truncation, deleted or repeated
regions (a PDF object repeated a thousand times), format tokens inserted where they do not belong, and
splices of one file into another. A DOCX is a zip, so its XML members are mutated too and re-zipped, or
the damage would mostly stop at the zip layer.

Used by ``tests/kb/test_loader_sandbox.py`` (a short deterministic run) and ``bench/fuzz_loaders.py`` (the long one).
"""

from __future__ import annotations

import io
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

import docx
import pymupdf
from hypothesis import strategies as st

from sextant.kb.documents import LoadError
from sextant.kb.loader_sandbox import BoundedParser, ParseLimitError, ParserCrash
from tests.kb.loaders.pdf_factory import FILLER, grid_table, new_page, paragraph, to_bytes

CRASH = "crash"
LOADED = "loaded"
REFUSED = "refused"


@dataclass(frozen=True, slots=True)
class Seed:
    name: str
    data: bytes


_JUNK = {
    ".pdf": [
        b"obj",
        b"endobj",
        b"stream\n",
        b"\nendstream",
        b"xref\n0 99999\n",
        b"trailer",
        b"<<",
        b">>",
        b"[",
        b"/Length 2147483647",
        b"/Count 999999999",
        b"/Kids [1 0 R 1 0 R]",
        b"/Filter /FlateDecode",
        b"/Filter [/LZWDecode /ASCII85Decode /RunLengthDecode]",
        b"99999999 0 R",
        b"-1 0 R",
        b"%%EOF",
        b"startxref\n999999999\n",
        b"/Type /Page /Parent 1 0 R",
        b"/Encrypt 5 0 R",
        b"(" * 64,
        b"<<" * 256,
        b"[" * 256,
        b"/Outlines 3 0 R /PageLabels << /Nums [0 << /S /r /St -5 >>] >>",
    ],
    ".docx": [
        b"<w:tbl><w:tr><w:tc><w:tbl>",
        b'<w:gridSpan w:val="99999"/>',
        b"<w:vMerge/>",
        b'<w:pStyle w:val="Heading9"/>',
        b"<w:p>" * 512,
        b"</w:body>",
        b"<w:t>" + "\u202e".encode() * 8,
    ],
    ".md": [
        b"#" * 300 + b" ",
        b"\n|" + b"|" * 300 + b"\n|---|\n",
        b"\n```\n",
        b"[" * 2000,
        b"*" * 2000,
        b"\\" * 500,
        b"\r",
        b"\x00",
        b"\xff\xfe",
        b"\n===\n",
        b"<table><tr><td>",
        b"\n- " * 500,
        b"> " * 500,
    ],
    ".txt": [b"\n===\n", b"\n---\n", b"\nSHOUTED HEADING\n\n", b"\r\n" * 100, b"\x00", b"\xff\xfe", b"\t" * 500],
}
# A zip package's damage that matters is in its XML (the zip layer alone refuses most of its own damage).
_ZIP_PACKAGES = (".docx", ".pptx", ".xlsx", ".odt", ".odp", ".ods", ".epub")
_XML_MEMBER = re.compile(r"\.(?:xml|xhtml|html|opf|ncx|rels)$|^mimetype$")
_XML_JUNK = [
    b'<!DOCTYPE x [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;">]>',
    b'<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>&e;',
    b"</",
    b"<a>" * 512,
    b"&#0;",
    b"\x00\xff",
    b"PK\x03\x04",
    "\u202e".encode() * 8,
]


def made_seeds() -> list[Seed]:
    """The seeds made in code: one of each format, each exercising its loader's sections and tables."""
    made = {"made.pdf": _pdf(), "made.docx": _docx(), "made.md": _markdown(), "made.txt": _text()}
    return [Seed(name, data) for name, data in made.items()]


def shared_seeds(data_dir: Path, *, max_bytes: int | None = None) -> list[Seed]:
    """The shared PDFs under ``data_dir/pdfs`` (none when the folder is absent), optionally only the small ones."""
    folder = data_dir / "pdfs"
    paths = sorted(folder.glob("*.pdf")) if folder.is_dir() else []
    return [Seed(p.name, p.read_bytes()) for p in paths if max_bytes is None or p.stat().st_size <= max_bytes]


@st.composite
def mutated(draw: st.DrawFn, seeds: list[Seed]) -> Seed:
    """One seed, damaged by one to four mutations (of a DOCX's XML members, or of the raw bytes).

    The format is drawn first, PDFs twice as often as each other format (MuPDF is native code), so that
    four shared PDFs do not crowd out the one DOCX.
    """
    formats = sorted({Path(s.name).suffix for s in seeds})
    suffix = draw(st.sampled_from([f for f in (".pdf", *formats) if f in formats]))
    seed = draw(st.sampled_from([s for s in seeds if Path(s.name).suffix == suffix]))
    steps = draw(st.integers(1, 4))
    if suffix in _ZIP_PACKAGES and draw(st.booleans()):
        data = _mutate_member(draw, seed.data, suffix, steps, seeds)
    else:
        data = seed.data
        for _ in range(steps):
            data = _mutate(draw, data, _JUNK.get(suffix, _JUNK[".txt"]), seeds)
    return Seed(seed.name, data)


def _mutate_member(draw: st.DrawFn, package: bytes, suffix: str, steps: int, seeds: list[Seed]) -> bytes:
    with zipfile.ZipFile(io.BytesIO(package)) as source:
        members = {info.filename: source.read(info) for info in source.infolist()}
    target = draw(st.sampled_from(sorted(m for m in members if _XML_MEMBER.search(m))))
    junk = _JUNK.get(suffix, []) + _XML_JUNK
    for _ in range(steps):
        members[target] = _mutate(draw, members[target], junk, seeds)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zipped:
        for name, content in members.items():
            zipped.writestr(name, content)
    return out.getvalue()


def _mutate(draw: st.DrawFn, data: bytes, junk: list[bytes], seeds: list[Seed]) -> bytes:
    n = len(data)
    at = draw(st.integers(0, n))
    kind = draw(st.sampled_from(["flip", "truncate", "delete", "insert", "repeat", "splice"]))
    if kind == "flip" and n:
        out = bytearray(data)
        for _ in range(draw(st.integers(1, 16))):
            out[draw(st.integers(0, n - 1))] ^= draw(st.integers(1, 255))
        return bytes(out)
    if kind == "truncate":
        return data[:at]
    if kind == "delete":
        return data[:at] + data[at + draw(st.integers(1, 4096)) :]
    if kind == "insert":
        piece = draw(st.one_of(st.sampled_from(junk), st.binary(min_size=1, max_size=64)))
        return data[:at] + piece * draw(st.integers(1, 8)) + data[at:]
    if kind == "repeat":
        region = data[at : at + draw(st.integers(1, 4096))]
        return data[:at] + region * draw(st.integers(2, 200)) + data[at:]
    other = draw(st.sampled_from(seeds)).data
    start = draw(st.integers(0, len(other)))
    return data[:at] + other[start : start + draw(st.integers(1, 8192))] + data[at:]


def outcome(parser: BoundedParser, seed: Seed) -> tuple[str, str]:
    """``(kind, reason)``: ``loaded``, ``refused`` (the loader's reason), a limit's setting name, or ``crash``.

    A crash is a failure no loader names: the worker died, or a loader raised something other than
    LoadError. Anything the parent raises beyond LoadError propagates: that is the server going down.
    """
    try:
        parser.parse(seed.data, seed.name)
    except ParserCrash as exc:
        return CRASH, exc.reason
    except ParseLimitError as exc:
        return exc.setting, exc.reason
    except LoadError as exc:
        return REFUSED, exc.reason
    return LOADED, ""


def reason_group(reason: str) -> str:
    """A refusal's reason without its particulars (numbers, the parser's own message), for counting."""
    head = re.split(r"[(;:]", reason, maxsplit=1)[0]
    return re.sub(r"\d+", "N", head).strip()


def _pdf() -> bytes:
    doc = pymupdf.open()
    for number in range(3):
        page = new_page(doc)
        paragraph(page, (72, 50, 540, 90), f"Chapter {number + 1}", fontsize=18)
        paragraph(page, (72, 100, 540, 300), FILLER * 2)
        if number == 1:
            grid_table(page, 320, [["Item", "Cost"], ["Tea", "3"], ["Coffee", "4"]])
    doc.set_toc([[1, "Chapter 1", 1], [1, "Chapter 2", 2], [2, "Prices", 2], [1, "Chapter 3", 3]])
    doc.set_metadata({"title": "Made for fuzzing"})
    return to_bytes(doc, garbage=0, deflate=False)


def _docx() -> bytes:
    document = docx.Document()
    document.add_paragraph("Fuzzing Handbook", style="Title")
    document.add_heading("Arrival", level=1)
    document.add_paragraph("Collect your badge at reception.")
    document.add_paragraph("Table 1: Opening hours", style="Caption")
    table = document.add_table(rows=3, cols=3)
    for r, cells in enumerate([["Day", "Opens", "Closes"], ["Monday", "08:00", "18:00"], ["Friday", "08:00", "16:00"]]):
        for c, cell in enumerate(cells):
            table.cell(r, c).text = cell
    document.add_heading("Parking", level=2)
    document.add_paragraph("Bays are numbered.")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _markdown() -> bytes:
    return (
        b"---\ntitle: Fuzzing notes\n---\n\n# Fuzzing notes\n\nSome *emphasis*, a [link](http://example.org) and "
        b"`code`.\n\n## Prices\n\nTable 2: Drinks\n\n| Item | Cost |\n|---|---:|\n| Tea | 3 |\n| Coffee | 4 |\n\n"
        b"```python\nprint('not a heading')\n# nor this\n```\n\nSetext heading\n==============\n\n- one\n- two\n\n"
        b"> quoted\n\n<div>html</div>\n"
    )


def _text() -> bytes:
    return (
        b"SAFETY RULES\n\nWear goggles.\n\nFIRST AID\n\nCall for help.\n\nOpening hours\n=============\n\n"
        b"Monday to Friday.\n\nParking\n-------\n\nBays are numbered.\n"
    )
