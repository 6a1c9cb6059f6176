"""HTML pages: Debian's Python manual (Sphinx, with its furniture) and made pages for the edge cases."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from sextant.kb.documents import LoadedDocument, LoadError, SectionSpan
from sextant.kb.loader_sandbox import document_from_json, document_to_json
from sextant.kb.loaders import html
from tests.kb.loaders.html_factory import PYTHON_MANUAL, assert_sections_cite_headings, page

MANUAL = Path(PYTHON_MANUAL)
needs_manual = pytest.mark.skipif(
    not MANUAL.is_dir(), reason=f"{PYTHON_MANUAL} is absent: apt-get install python3.11-doc to test on the real manual"
)
# Text that Sphinx puts around every page of the manual, outside the main content.
FURNITURE = ("Previous topic", "Next topic", "This Page", "Report a Bug", "Show Source", "Navigation", "¶", "Theme")


def _manual(relative: str) -> LoadedDocument:
    path = MANUAL / relative
    return html.load(path.read_bytes(), path.name)


@needs_manual
def test_socket_page_has_its_sections_with_their_anchors() -> None:
    doc = _manual("library/socket.html")
    assert doc.title == "socket — Low-level networking interface"
    found = {(s.title, s.level, s.anchor) for s in doc.sections}
    assert ("socket — Low-level networking interface", 1, "module-socket") in found
    assert ("Socket families", 2, "socket-families") in found
    assert ("Creating sockets", 4, "creating-sockets") in found
    assert doc.text.startswith("socket — Low-level networking interface")
    assert_sections_cite_headings(doc)


@needs_manual
def test_socket_page_keeps_its_code_verbatim() -> None:
    doc = _manual("library/socket.html")
    echo_server = "    conn, addr = s.accept()\n    with conn:\n        print('Connected by', addr)"
    assert echo_server in doc.text


@needs_manual
@pytest.mark.parametrize("relative", ["library/socket.html", "library/stdtypes.html", "tutorial/index.html"])
def test_sphinx_furniture_stays_out(relative: str) -> None:
    text = _manual(relative).text
    assert [phrase for phrase in FURNITURE if phrase in text] == []
    assert "Python Software Foundation" not in text


@needs_manual
def test_stdtypes_table_is_a_header_and_its_rows() -> None:
    doc = _manual("library/stdtypes.html")
    boolean = doc.tables[0]
    assert boolean.header == "Operation | Result | Notes"
    rows = [doc.text[r.start : r.end] for r in boolean.rows]
    assert rows == [
        "x or y | if x is false, then y, else x | (1)",
        "x and y | if x is false, then x, else y | (2)",
        "not x | if x is false, then True, else False | (3)",
    ]
    assert_sections_cite_headings(doc)


@needs_manual
def test_rowspan_is_repeated_on_every_row_it_covers() -> None:
    doc = _manual("library/venv.html")
    (activation,) = doc.tables
    assert activation.header == "Platform | Shell | Command to activate virtual environment"
    rows = [doc.text[r.start : r.end] for r in activation.rows]
    assert rows[:2] == [
        "POSIX | bash/zsh | $ source <venv>/bin/activate",
        "POSIX | fish | $ source <venv>/bin/activate.fish",
    ]
    assert [row.split(" | ")[0] for row in rows] == ["POSIX"] * 4 + ["Windows"] * 2


@needs_manual
def test_two_header_rows_and_colspan_make_one_header_line() -> None:
    doc = _manual("c-api/typeobj.html")
    slots = doc.tables[0]
    assert (
        slots.header
        == "PyTypeObject Slot [1] | Type | special methods/attrs | Info [2] O | Info [2] T | Info [2] D | Info [2] I"
    )
    assert doc.text[slots.rows[1].start : slots.rows[1].end] == "tp_basicsize | Py_ssize_t |  | X | X |  | X"


@needs_manual
def test_every_page_of_the_manual_loads_well_formed_and_fast() -> None:
    pages = sorted(MANUAL.rglob("*.html"))
    assert len(pages) > 400
    began = time.perf_counter()
    for path in pages:
        try:
            doc = html.load(path.read_bytes(), path.name)
        except LoadError as exc:
            assert path.name == "search.html" and "JavaScript" in exc.reason  # its content is built by a script
            continue
        assert_sections_cite_headings(doc)
        assert "Previous topic" not in doc.text
    per_page_ms = (time.perf_counter() - began) * 1000 / len(pages)
    assert per_page_ms < 100  # about 8 ms on one core; a shared test box gets ten times that margin


def test_headings_nest_into_sections_with_anchors() -> None:
    doc = html.load(
        page(
            '<main><h1 id="top">Guide</h1><p>Intro.</p>'
            '<section id="setup"><h2>Setup</h2><p>Install it.</p>'
            "<h3><a name='linux'></a>On Linux</h3><p>apt.</p></section>"
            "<h2>Use</h2><p>Run it.</p></main>",
            title="Guide — Example Docs",
        ),
        "guide.html",
    )
    assert doc.title == "Guide"  # the <title> only adds the site's name to the h1
    assert [(s.title, s.level, s.anchor) for s in doc.sections] == [
        ("Guide", 1, "top"),
        ("Setup", 2, "setup"),
        ("On Linux", 3, "linux"),
        ("Use", 2, ""),
    ]
    setup = doc.sections[1]
    assert doc.text[setup.start : setup.end] == "Setup\n\nInstall it.\n\nOn Linux\n\napt.\n\n"
    assert_sections_cite_headings(doc)


def test_page_without_headings_has_no_sections_and_takes_its_title_tag() -> None:
    doc = html.load(page("<p>Just a note.</p><div>And a line.</div>", title="Note  to self"), "note.html")
    assert doc.text == "Just a note.\n\nAnd a line."
    assert doc.sections == ()
    assert doc.title == "Note to self"


def test_title_falls_back_to_the_file_name() -> None:
    assert html.load(page("<p>text</p>"), "folder/readme.htm").title == "readme"


def test_navigation_header_footer_and_scripts_are_dropped_without_a_main_element() -> None:
    body = (
        "<header><a href='/'>Home</a> <a href='/blog'>Blog</a></header>"
        "<nav><ul><li>Menu item</li></ul></nav>"
        "<div role='navigation'>Breadcrumbs</div>"
        "<article><header><h1>Post</h1></header><p>Body text.</p><footer>Posted Monday</footer></article>"
        "<article><p>Second post.</p></article>"
        "<aside>Related links</aside><script>var x = 'script text';</script><style>p{}</style>"
        "<p hidden>Hidden</p><p style='display: none'>Invisible</p><span aria-hidden='true'>★</span>"
        "<footer>© 2026 Example</footer>"
    )
    doc = html.load(page(body), "blog.html")
    assert doc.text == "Post\n\nBody text.\n\nSecond post."


FILES = Path(__file__).parent / "files" / "html"


@pytest.mark.parametrize(
    ("name", "first_heading", "navigation"),
    [
        # Publican's DocBook: "Download the ebook" banner, docnav bars with "Prev / Up / Home / Next".
        ("debian-handbook-sect.apt-file.html", "6.4. The apt-file Command", ("Download the ebook", "Prev", "Home")),
        # DocBook XSL: navheader and navfooter tables.
        ("maint-guide-upload.en.html", "Chapter 9. Uploading the package", ("Prev", "Next", "Table of Contents")),
        # Texinfo's makeinfo: a "Next: …, Previous: …, Up: …" paragraph, links marked rel="next"/"prev".
        ("flex-Cxx.html", "18 Generating C++ Scanners", ("Next:", "Previous:", "Performance Considerations")),
        # Doxygen: title area, menu, path bar and "Generated by doxygen" footer.
        ("json-c-json__types_8h.html", "Detailed Description", ("json-c", "Main Page", "Generated by")),
    ],
)
def test_generators_navigation_stays_out_without_a_main_element(
    name: str, first_heading: str, navigation: tuple[str, ...]
) -> None:
    raw = (FILES / name).read_bytes()
    assert b'role="main"' not in raw and b"<main" not in raw  # what this test is about
    doc = html.load(raw, name)
    assert doc.sections[0].title == first_heading
    assert [phrase for phrase in navigation if phrase in doc.text.split("\n\n")[0] + doc.text[-300:]] == []
    lines = set(doc.text.splitlines())
    assert lines.isdisjoint({"Prev", "Next", "Up", "Home", "Download the ebook", "Main Page"})
    assert_sections_cite_headings(doc)


def test_generators_content_is_kept_when_navigation_goes() -> None:
    handbook = html.load((FILES / "debian-handbook-sect.apt-file.html").read_bytes(), "apt-file.html").text
    assert "apt-file search" in handbook  # a DocBook sidebar is content, not a site's sidebar
    doxygen = html.load((FILES / "json-c-json__types_8h.html").read_bytes(), "types.html").text
    assert doxygen.startswith("json_types.h File Reference")  # Doxygen's title sits in div.header
    assert "json_type_boolean" in doxygen


def test_link_dense_blocks_go_but_a_page_of_links_keeps_them() -> None:
    links = "<a href='a.html' rel='prev'>Installing</a> | <a href='index.html'>Up</a> | <a href='c.html'>Using</a>"
    bar = f"<div>{links}</div>"
    body = f"{bar}<div><h2>Configuring</h2><p>Edit <a href='f.html'>the file</a> and restart.</p></div>{bar}"
    assert html.load(page(body), "configure.html").text == "Configuring\n\nEdit the file and restart."
    index = "<ul><li><a href='a.html'>Installing</a></li><li><a href='c.html'>Using</a></li></ul>"
    assert html.load(page(index), "index.html").text == "Installing\n\nUsing"


def test_named_navigation_goes_only_where_no_main_element_is_marked() -> None:
    body = "<div class='navheader'>Prev Next</div><div class='section'><p>Text.</p></div><div id='nav-path'>Path</div>"
    assert html.load(page(body), "a.html").text == "Text."
    marked = "<main><p>Text.</p><div class='menu'>Kept: the author marked this as main content.</div></main>"
    assert html.load(page(marked), "b.html").text == "Text.\n\nKept: the author marked this as main content."


def test_asides_inside_the_main_content_stay() -> None:
    body = "<aside>Site sidebar</aside><main><p>See note [1].</p><aside class='footnote'>[1] The note.</aside></main>"
    assert html.load(page(body), "notes.html").text == "See note [1].\n\n[1] The note."


def test_a_table_is_a_header_line_and_one_line_per_row() -> None:
    body = (
        "<p>Table 2: Opening hours</p>"
        "<table><tr><th>Day</th><th>Opens</th></tr><tr><td>Monday</td><td> 08:00\n</td></tr>"
        "<tr><td></td><td></td></tr><tr><td>Friday</td><td><b>09</b>:00</td></tr></table><p>After.</p>"
    )
    doc = html.load(page(body), "hours.html")
    (table,) = doc.tables
    assert (table.header, table.caption) == ("Day | Opens", "Table 2: Opening hours")
    assert [doc.text[r.start : r.end] for r in table.rows] == ["Monday | 08:00", "Friday | 09:00"]
    assert doc.text.endswith("Friday | 09:00\n\nAfter.")
    assert_sections_cite_headings(doc)


def test_a_caption_element_is_written_above_its_table() -> None:
    body = (
        "<table><caption>Prices</caption><thead><tr><td>Item</td><td>Cost</td></tr></thead>"
        "<tbody><tr><td>Tea</td><td>2</td></tr></tbody></table>"
    )
    doc = html.load(page(body), "prices.html")
    assert doc.text == "Prices\n\nItem | Cost\nTea | 2"
    assert doc.tables[0].caption == "Prices"


def test_a_layout_table_is_read_as_blocks() -> None:
    inner = "<table><tr><td>A</td><td>B</td></tr></table>"
    body = f"<table><tr><td><h1>Old site</h1><p>Welcome.</p></td><td>{inner}</td></tr></table>"
    doc = html.load(page(body), "old.html")
    assert [s.title for s in doc.sections] == ["Old site"]
    assert doc.tables[0].header == "A | B"
    assert doc.text.startswith("Old site\n\nWelcome.")


def test_pre_is_kept_verbatim_and_br_breaks_lines() -> None:
    body = "<p>Run:</p><pre>\n$ make   all\n    indented &lt;tag&gt;\n\n</pre><p>one<br>two  <br/> three</p>"
    assert html.load(page(body), "code.html").text == "Run:\n\n$ make   all\n    indented <tag>\n\none\ntwo\nthree"


def test_entities_and_a_declared_legacy_charset_are_decoded() -> None:
    body = "<h1>Caf\xe9 &amp; cr&egrave;me</h1><p>&lt;b&gt; &#8212; &nbsp;5&euro; na\xefve soft&shy;hyphen</p>"
    data = (
        '<html><head><meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">'
        f"</head><body>{body}</body></html>"
    ).encode("latin-1")
    doc = html.load(data, "menu.html")
    assert doc.text == "Café & crème\n\n<b> — 5€ naïve softhyphen"
    assert doc.sections[0].title == "Café & crème"


def test_undeclared_bytes_are_utf8_or_else_windows_1252() -> None:
    assert html.load("<p>Grüße “quoted”</p>".encode(), "a.html").text == "Grüße “quoted”"
    assert html.load("<p>Grüße “quoted”</p>".encode("windows-1252"), "b.html").text == "Grüße “quoted”"


def test_a_bom_wins_over_a_wrong_declaration() -> None:
    data = '<meta charset="windows-1252"><p>Ωmega</p>'.encode("utf-16")
    assert html.load(data, "bom.html").text == "Ωmega"


def test_malformed_html_is_read_as_a_browser_would() -> None:
    body = "<h2>Unclosed<p>First para<p>Second <b>bold <i>both</b> after</div></span><table><tr><td>x<td>y"
    doc = html.load(f"<html><body>{body}".encode(), "broken.html")
    assert doc.sections[0].title.startswith("Unclosed")
    assert "Second bold both after" in doc.text
    assert doc.tables[0].header == "x | y"
    assert_sections_cite_headings(doc)


def test_xhtml_is_parsed_as_xml_and_falls_back_to_html() -> None:
    xhtml = (
        b'<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>X</title></head>'
        b'<body><h1 id="a">One</h1><a id="empty"/><p>After the self-closed anchor.</p></body></html>'
    )
    doc = html.load(xhtml, "page.xhtml")
    assert doc.text == "One\n\nAfter the self-closed anchor."
    assert (doc.sections[0].anchor, doc.title) == ("a", "X")
    with_entity = xhtml.replace(b"After", b"&nbsp;After")  # undefined in XML without the DTD
    assert html.load(with_entity, "page.xhtml").text == "One\n\nAfter the self-closed anchor."


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "holds no HTML"),
        (b"  \n\t", "holds no HTML"),
        (page(""), "main content holds no text"),
        (page("<nav>Only navigation</nav><script>render()</script>"), "main content holds no text"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary content"),
    ],
)
def test_pages_without_text_are_refused(data: bytes, reason: str) -> None:
    with pytest.raises(LoadError) as refused:
        html.load(data, "empty.html")
    assert reason in refused.value.reason
    assert refused.value.name == "empty.html"


def test_a_huge_page_loads_in_linear_time() -> None:
    sections = "".join(f"<h2>Part {n}</h2>" + "<p>Some words in a paragraph.</p>" * 50 for n in range(400))
    deep = "<div>" * 1000 + "<p>deep text</p>" + "</div>" * 1000  # past the walker's depth cap
    began = time.perf_counter()
    doc = html.load(page(f"<h1>Big</h1>{sections}{deep}"), "big.html")
    assert time.perf_counter() - began < 20
    assert len(doc.sections) == 401
    assert doc.text.count("Some words in a paragraph.") == 20_000
    assert "deep text" in doc.text
    assert_sections_cite_headings(doc)


def test_nesting_past_the_parsers_limit_is_refused_not_cut() -> None:
    deep = "<div>" * 3000 + "<p>lost</p>" + "</div>" * 3000
    with pytest.raises(LoadError, match="nested too deeply"):
        html.load(page(f"<p>kept</p>{deep}<p>lost too</p>"), "deep.html")


def test_the_sandbox_round_trip_keeps_the_anchor() -> None:
    doc = LoadedDocument(
        text="Setup\n\nInstall it.",
        title="Guide",
        sections=(SectionSpan(0, 18, "Setup", 2, "setup"), SectionSpan(7, 18, "Install", 3)),
    )
    again = document_from_json(document_to_json(doc))
    assert again == doc
    assert [s.anchor for s in again.sections] == ["setup", ""]
