"""Damaged loader inputs for fuzzing the bounded parser: seed files and Hypothesis strategies that mutate them.

Seeds are the shared PDFs (when the data folder is present) plus one file of every format made here with the
loader tests' factories: PDF, DOCX, Markdown, text, HTML, EPUB, a message and a mailbox, PPTX, ODP, ODT, XLSX,
ODS, CSV, and tiny PNG, JPEG and TIFF scans. A mutation is what broken and hostile files do: flipped bytes,
truncation, deleted or repeated regions (a PDF object repeated a thousand times), format tokens inserted where
they do not belong, and splices of one file into another. Zip packages (DOCX, PPTX, XLSX, OpenDocument, EPUB)
have their XML members mutated too and re-zipped, or the damage would mostly stop at the zip layer.

Used by ``tests/kb/test_loader_sandbox.py`` (a short deterministic run) and ``bench/fuzz_loaders.py`` (the long one).
"""

from __future__ import annotations

import io
import re
import zipfile
from dataclasses import dataclass
from email.message import EmailMessage
from pathlib import Path

import docx
import pymupdf
from hypothesis import strategies as st
from PIL import Image

from sextant.kb.documents import LoadError
from sextant.kb.loader_sandbox import BoundedParser, ParseLimitError, ParserCrash
from tests.kb.loaders import html_factory, mail_factory, sheets_factory, slides_factory
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
    ".html": [
        b"<h1>",
        b"</h2>",
        b"<table><tr><td>",
        b"</table>",
        b'<td colspan="99999" rowspan="99999">',
        b"<caption>",
        b"<div>" * 512,
        b"<script>",
        b"<!--",
        b"<![CDATA[",
        b'<meta charset="utf-7">',
        b'<meta http-equiv="Content-Type" content="text/html; charset=x-unknown">',
        b"&#0;&#xD800;&#99999999;",
        b"<?xml version='1.0' encoding='utf-16'?>",
        b"\x00",
        b"\xff\xfe",
    ],
    ".csv": [
        b'"',
        b'""',
        b",",
        b";",
        b"\t",
        b"|",
        b"\x00",
        b"\r",
        b"\n" * 100,
        b'"' + b"x" * 1000,
        b"," * 2000,
        b"\xef\xbb\xbf",
        b"\xff\xfe",
    ],
    ".eml": [
        b"\r\n--==boundary-0==\r\n",
        b"\n--==boundary-0==--\n",
        b'\nContent-Type: multipart/mixed; boundary="x"\n\n--x\n',
        b"\nContent-Type: message/rfc822\n\n",
        b"\nContent-Transfer-Encoding: base64\n",
        b"\nContent-Transfer-Encoding: quoted-printable\n",
        b'; charset="x-unknown"',
        b"=?utf-8?b?////?=",
        b"=?x-unknown?q?=FF?=",
        b"\nContent-Disposition: attachment; filename*=utf-8''%FF%FE.pdf\n",
        b"\nSubject: " + b"a" * 2000 + b"\n",
        b"=\n",
        b"\n\n",
        b"\x00",
    ],
    ".mbox": [b"\nFrom MAILER-DAEMON Fri Mar  1 09:30:00 2024\n", b"\nFrom \n", b"\n>From ", b"\n\nFrom x\n" * 50],
    ".png": [b"\x89PNG\r\n\x1a\n", b"IHDR", b"\x7f\xff\xff\xff", b"IDAT", b"IEND", b"PLTE", b"tRNS", b"pHYs"],
    ".jpg": [
        b"\xff\xd8",
        b"\xff\xd9",
        b"\xff\xc0\x00\x11\x08\xff\xff\xff\xff",
        b"\xff\xc4",
        b"\xff\xda",
        b"\xff\xdd\x00\x04\x00\x00",
        b"\xff",
    ],
    ".tif": [b"II*\x00", b"MM\x00*", b"\xff\xff\xff\x7f", b"\x00\x01\x03\x00\x01\x00\x00\x00", b"\x08\x00\x00\x00"],
    ".pptx": [
        b"<a:tbl><a:tr><a:tc>",
        b'<a:gridCol w="-1"/>',
        b'gridSpan="99999"',
        b'rowSpan="99999"',
        b"<p:grpSp>" * 64,
        b'<a:off x="-99999999999" y="x"/>',
        b'r:id="rId999"',
        b'r:embed="../../../etc/passwd"',
    ],
    ".odp": [
        b"<draw:page>",
        b"<draw:frame>" * 64,
        b'svg:x="NaNcm"',
        b'table:number-columns-spanned="99999"',
        b"<presentation:notes>",
        b"<table:table>",
    ],
    ".odt": [
        b'<text:h text:outline-level="99999">',
        b'<text:s text:c="999999999"/>',
        b"<text:list>" * 256,
        b'table:number-rows-repeated="999999999"',
        b"<table:covered-table-cell/>",
        b"<text:note>",
    ],
    ".xlsx": [
        b'<c r="XFD1048576" t="s"><v>99999</v></c>',
        b'<mergeCell ref="A1:XFD1048576"/>',
        b'<dimension ref="A1:XFD1048576"/>',
        b'<sheet name="x" sheetId="9" r:id="rId99"/>',
        b'<c t="n"><v>NaN</v></c>',
        b'state="hidden"',
        b"<row>" * 256,
    ],
    ".ods": [
        b'table:number-columns-repeated="16384"',
        b'table:number-rows-repeated="1048576"',
        b'office:value-type="float" office:value="1e999"',
        b"<table:table-row>" * 256,
        b'table:display="false"',
        b"<table:covered-table-cell/>",
    ],
    ".epub": [
        b'<itemref idref="c0"/>' * 64,
        b'<item id="x" href="../../../etc/passwd" media-type="application/xhtml+xml"/>',
        b'full-path="/dev/zero"',
        b'<a href="#nowhere">',
        b"<h1>",
        b"<nav>",
        b'linear="no"',
    ],
}
for _suffix, _same in (
    (".htm", ".html"),
    (".xhtml", ".html"),
    (".tsv", ".csv"),
    (".tab", ".csv"),
    (".jpeg", ".jpg"),
    (".tiff", ".tif"),
):
    _JUNK[_suffix] = _JUNK[_same]
# An .mbox holds messages: a message's damage is a mailbox's too.
_JUNK[".mbox"] += _JUNK[".eml"]
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
    made |= {
        "made.html": _html(),
        "made.epub": _epub(),
        "made.eml": _message().as_bytes(),
        "made.mbox": _mbox(),
        "made.pptx": slides_factory.deck(),
        "made.odp": slides_factory.opendocument(slides_factory.ODP, _ODP_DECK, title="Fuzzing deck"),
        "made.odt": slides_factory.opendocument(slides_factory.ODT, _ODT_HANDBOOK, title="Fuzzing handbook"),
        "made.xlsx": _xlsx(),
        "made.ods": _ods(),
        "made.csv": sheets_factory.csv_bytes(_PRICES),
        "made.png": _image("PNG"),
        "made.jpg": _image("JPEG"),
        "made.tif": _image("TIFF"),
    }
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
    kind, reason, _ = outcome_detail(parser, seed)
    return kind, reason


def outcome_detail(parser: BoundedParser, seed: Seed) -> tuple[str, str, int]:
    """``outcome``, and how many pages (slides, sheets) a loaded document names as left out. A file is read as
    ingest reads it, a container (a message, a mailbox) with its parts (``BoundedParser.parse_with_parts``): a
    crash there is a crash."""
    try:
        doc, _ = parser.parse_with_parts(seed.data, seed.name)
    except ParserCrash as exc:
        return CRASH, exc.reason, 0
    except ParseLimitError as exc:
        return exc.setting, exc.reason, 0
    except LoadError as exc:
        return REFUSED, exc.reason, 0
    return LOADED, "", len(doc.skipped_pages)


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


_PRICES: list[list[object]] = [
    ["Item", "Cost", "Notes"],
    ["Tea", 3, 'green, "loose"'],
    ["Coffee", 4, "line\nbreak"],
    ["Cake", 2.5, ""],
]
_PRICES_HTML = (
    "<table><caption>Table 2: Drinks</caption><thead><tr><th>Item</th><th>Cost</th></tr></thead>"
    '<tbody><tr><td rowspan="2">Tea</td><td>3</td></tr><tr><td colspan="2">4</td></tr></tbody></table>'
)


def _html() -> bytes:
    body = (
        "<nav><a href='#a'>skip</a></nav><h1>Fuzzing notes</h1><p>Some <em>emphasis</em> and a "
        "<a href='http://example.org'>link</a>.</p><h2 id='a'>Prices</h2>" + _PRICES_HTML + "<h3>Notes</h3>"
        "<ul><li>one</li><li>two<ol><li>nested</li></ol></li></ul><pre>print('not a heading')</pre>"
        "<script>var x = '<h1>not text</h1>';</script><style>p { color: red }</style><footer>Footer</footer>"
    )
    return html_factory.page(body, title="Fuzzing page")


def _epub() -> bytes:
    chapters = [
        ("one.xhtml", html_factory.chapter("<h1>Arrival</h1><p>Collect your badge.</p><h2>Parking</h2><p>Bays.</p>")),
        ("two.xhtml", html_factory.chapter("<h1>Prices</h1>" + _PRICES_HTML, title="Prices")),
        ("notes.xhtml", html_factory.chapter("<p>A non-linear note.</p>")),
    ]
    nav = [("one.xhtml", "Arrival"), ("two.xhtml", "Prices")]
    return html_factory.epub(chapters, title="Fuzzing book", nav=nav, non_linear=["notes.xhtml"])


def _message(subject: str = "Quarterly numbers", message_id: str = "<q1-numbers@example.com>") -> EmailMessage:
    return mail_factory.message(
        subject=subject,
        message_id=message_id,
        body="Revenue rose 12% in the first quarter.\n\nThe details are below.\n",
        html="<h1>Quarter</h1><p>Revenue rose.</p>" + _PRICES_HTML,
        attachments=[("prices.csv", sheets_factory.csv_bytes(_PRICES), "text/csv")],
    )


def _mbox() -> bytes:
    plain = mail_factory.message(
        subject="Second", message_id="<second@example.com>", body="From here on, a >From line.\n"
    )
    return mail_factory.mbox(_message(), plain, _message("Third", "<third@example.com>"))


_ODP_DECK = """<office:presentation>
<draw:page draw:name="one">
  <draw:frame svg:x="1cm" svg:y="10cm"><draw:text-box><text:p>Lower</text:p></draw:text-box></draw:frame>
  <draw:frame presentation:class="title" svg:x="1cm" svg:y="5cm"><draw:text-box><text:p>Plan</text:p></draw:text-box>
  </draw:frame>
  <draw:g><draw:custom-shape svg:x="2in" svg:y="1in"><text:p>Group right</text:p></draw:custom-shape>
    <draw:custom-shape svg:x="1in" svg:y="1in"><text:p>Group left</text:p></draw:custom-shape></draw:g>
  <presentation:notes><draw:frame presentation:class="notes"><draw:text-box><text:p>Say hello.</text:p>
  </draw:text-box></draw:frame></presentation:notes>
</draw:page>
<draw:page draw:name="empty"/>
<draw:page draw:name="three"><draw:frame svg:x="1cm" svg:y="1cm"><table:table>
  <table:table-row><table:table-cell><text:p>Item</text:p></table:table-cell><table:table-cell><text:p>Cost</text:p>
  </table:table-cell></table:table-row>
  <table:table-row><table:table-cell table:number-columns-spanned="2"><text:p>Tea</text:p></table:table-cell>
  <table:covered-table-cell/></table:table-row>
</table:table></draw:frame></draw:page>
</office:presentation>"""
_ODT_HANDBOOK = """<office:text>
<text:h text:outline-level="1">Arrival</text:h>
<text:p>Collect<text:s text:c="2"/>your badge<text:note><text:note-body><text:p>A footnote.</text:p></text:note-body>
</text:note>.</text:p>
<text:p>Table 1: Opening hours</text:p>
<table:table><table:table-header-rows><table:table-row>
<table:table-cell><text:p>Day</text:p></table:table-cell><table:table-cell><text:p>Opens</text:p></table:table-cell>
</table:table-row></table:table-header-rows>
<table:table-row><table:table-cell table:number-rows-spanned="2"><text:p>Weekdays</text:p></table:table-cell>
<table:table-cell><text:p>08:00</text:p></table:table-cell></table:table-row>
<table:table-row><table:covered-table-cell/><table:table-cell><text:p>late</text:p></table:table-cell></table:table-row>
<table:table-row table:number-rows-repeated="50">
<table:table-cell table:number-columns-repeated="20"/></table:table-row>
</table:table>
<text:list><text:list-item><text:h text:outline-level="2">Parking</text:h></text:list-item></text:list>
<text:section><text:p>Bays are numbered.</text:p></text:section>
<text:h text:outline-level="1">Leaving</text:h><text:p>Return the badge.</text:p>
</office:text>"""


def _xlsx() -> bytes:
    sheets: dict[str, list[list[object]]] = {
        "Prices": [*_PRICES, [None, None, None], ["Total", "=SUM(B2:B4)", None]],
        "Lookup": [["k", "v"], [1, 2]],
    }
    return sheets_factory.xlsx_bytes(sheets, hidden=["Lookup"])


def _ods() -> bytes:
    cells = sheets_factory.ods_cell
    rows = [
        sheets_factory.ods_row("Item", "Cost"),
        sheets_factory.ods_row("Tea", 3),
        sheets_factory.ods_row(cells("Coffee", repeat=2), cells(4.5, display="4.50")),
        sheets_factory.ods_row(cells(), repeat=1000),
        sheets_factory.ods_row("Cake", cells(2, covered=True)),
    ]
    return sheets_factory.ods_bytes({"Prices": rows, "Lookup": [sheets_factory.ods_row("k", "v")]}, hidden=["Lookup"])


def _image(kind: str) -> bytes:
    """A few words, 100 dpi, a few KB: OCR'd in well under a second, so that mutations, not pages, cost the time."""
    doc = pymupdf.open()
    doc.new_page(width=220, height=40).insert_text((8, 26), "Descale the boiler", fontsize=14)
    frames = [doc[0].get_pixmap(dpi=100, colorspace=pymupdf.csGRAY)]
    if kind == "TIFF":  # a second frame: the loader's page per frame
        doc.new_page(width=220, height=40).insert_text((8, 26), "Every eight weeks", fontsize=14)
        frames.append(doc[1].get_pixmap(dpi=100, colorspace=pymupdf.csGRAY))
    images = [Image.frombytes("L", (p.width, p.height), p.samples) for p in frames]
    out = io.BytesIO()
    if kind == "TIFF":  # LZW, as scanners write it: its decoder gets the damage
        images[0].save(
            out, format=kind, dpi=(100, 100), save_all=True, append_images=images[1:], compression="tiff_lzw"
        )
    else:
        images[0].save(out, format=kind, dpi=(100, 100))
    return out.getvalue()
