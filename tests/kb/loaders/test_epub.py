"""EPUB books: two from Debian packages (Sphinx's and SiSU's EPUB output) and made ones for the edge cases."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from sextant.kb.documents import LoadError
from sextant.kb.loaders import epub
from tests.kb.loaders.html_factory import assert_sections_cite_headings, chapter, encryption_xml
from tests.kb.loaders.html_factory import epub as make_epub

# Debian: apt-get install ubuntu-packaging-guide-epub live-manual-epub
PACKAGING_GUIDE = Path("/usr/share/doc/ubuntu-packaging-guide-epub/ubuntu-packaging-guide.epub")
LIVE_MANUAL = Path("/usr/share/doc/live-manual/epub/live-manual.en.epub")


def _real(path: Path) -> bytes:
    if not path.is_file():
        pytest.skip(f"{path} is absent: apt-get install {path.parts[4]} to test on a real EPUB")
    return path.read_bytes()


def test_sphinx_book_reads_its_chapters_in_spine_order() -> None:
    doc = epub.load(_real(PACKAGING_GUIDE), PACKAGING_GUIDE.name)
    assert doc.title == "Ubuntu Packaging Guide"
    chapters = [s.title for s in doc.sections if s.level == 1]
    assert chapters[:3] == ["Ubuntu Packaging Guide", "1. Introduction to Ubuntu Development", "2. Getting Set Up"]
    gpg = next(s for s in doc.sections if s.title == "2.1.1. Create your GPG key")
    assert (gpg.level, gpg.anchor) == (3, "ubuntu-packaging-guide/getting-set-up.xhtml#create-your-gpg-key")
    # The spine's linear="no" items are the guide's other translations.
    assert "Einführung" not in doc.text
    assert_sections_cite_headings(doc)


def test_sisu_book_without_section_markup_still_has_a_section_per_chapter() -> None:
    doc = epub.load(_real(LIVE_MANUAL), LIVE_MANUAL.name)
    assert doc.title == "Live Systems Manual"
    installation = next(s for s in doc.sections if s.title == "3. Installation" and s.level == 1)
    assert installation.anchor == "OEBPS/installation.xhtml#o109"
    assert "3.1 Requirements" in doc.text[installation.start : installation.end]
    assert_sections_cite_headings(doc)


def test_sisu_subsections_come_from_the_ncx_and_part_title_pages_are_not_sections() -> None:
    doc = epub.load(_real(LIVE_MANUAL), LIVE_MANUAL.name)
    found = {s.title: s for s in doc.sections}
    usb = found["4.5.2 Copying an ISO hybrid image to a USB stick"]  # a bold paragraph, known only to the NCX
    assert (usb.level, usb.anchor) == (3, "OEBPS/the-basics.xhtml#o195")
    assert found["4.5 Using an ISO hybrid live image"].level == 2
    assert doc.section_at(usb.start + 60) == usb
    # "Installation" and "User" are pages with only a part's title; the chapter is "3. Installation".
    assert [s.title for s in doc.sections if s.title in ("Installation", "User", "About")] == []
    assert [s.title for s in doc.sections if s.level == 1][1:4] == [
        "1. About this manual",
        "2. About the Live Systems Project",
        "3. Installation",
    ]
    assert_sections_cite_headings(doc)


def test_chapters_become_level_one_sections_and_headings_nest_under_them() -> None:
    data = make_epub(
        [
            ("one.xhtml", chapter('<h2 id="c1">Chapter One</h2><p>First.</p><h3 id="s">Scene</h3><p>Inner.</p>')),
            ("two.xhtml", chapter("<p>Untitled opening text.</p><h1>A Part</h1><p>More.</p>", title="Two")),
            ("three.xhtml", chapter("<p>Plain.</p>")),
            ("cover.xhtml", chapter("")),
        ],
        nav=(("two.xhtml", "Chapter Two"), ("one.xhtml#c1", "Chapter One")),
    )
    doc = epub.load(data, "made.epub")
    assert doc.title == "A Made Book"
    assert [(s.title, s.level, s.anchor) for s in doc.sections] == [
        ("Chapter One", 1, "OEBPS/one.xhtml#c1"),
        ("Scene", 2, "OEBPS/one.xhtml#s"),
        ("Chapter Two", 1, "OEBPS/two.xhtml"),  # the label from the table of contents, written above the text
        ("A Part", 2, "OEBPS/two.xhtml"),
    ]
    assert doc.text.endswith("Chapter Two\n\nUntitled opening text.\n\nA Part\n\nMore.\n\nPlain.")
    two = doc.sections[2]
    assert doc.text[two.start : two.end].endswith("More.")  # the untitled third chapter is in no section
    assert_sections_cite_headings(doc)


def test_toc_links_to_unmarked_paragraphs_become_sections_nested_by_depth() -> None:
    body = (
        '<h1 id="c">1. Setup</h1><p>Intro.</p><p class="bold" id="p1">1.1 Install</p><p>Run apt.</p>'
        '<p><a name="p2"></a>1.1.1 From source</p><p>Build it.</p><p id="p3">Not the label</p><p>End.</p>'
    )
    data = make_epub(
        [("part.xhtml", chapter("<h1>Part One</h1>")), ("one.xhtml", chapter(body))],
        nav_tree=(
            ("part.xhtml", "Part One", 0),
            ("one.xhtml", "1. Setup", 1),
            ("one.xhtml#p1", "1.1 Install", 2),
            ("one.xhtml#p2", "1.1.1 From source", 3),
            ("one.xhtml#p3", "1.2 Elsewhere", 2),
        ),
    )
    doc = epub.load(data, "made.epub")
    assert [(s.title, s.level, s.anchor) for s in doc.sections] == [
        ("1. Setup", 1, "OEBPS/one.xhtml#c"),
        ("1.1 Install", 2, "OEBPS/one.xhtml#p1"),
        ("1.1.1 From source", 3, "OEBPS/one.xhtml#p2"),
    ]
    assert "Part One" not in doc.text  # a page with only a part's title
    assert (
        doc.text[doc.sections[1].start : doc.sections[1].end]
        == "1.1 Install\n\nRun apt.\n\n1.1.1 From source\n\nBuild it.\n\nNot the label\n\nEnd."
    )
    assert_sections_cite_headings(doc)


def test_tables_in_chapters_keep_their_rows() -> None:
    table = "<h1>Prices</h1><table><tr><th>Item</th><th>Cost</th></tr><tr><td>Tea</td><td>2</td></tr></table>"
    doc = epub.load(make_epub([("a.xhtml", chapter("<h1>Intro</h1><p>x</p>")), ("b.xhtml", chapter(table))]), "t.epub")
    (prices,) = doc.tables
    assert prices.header == "Item | Cost"
    assert [doc.text[r.start : r.end] for r in prices.rows] == ["Tea | 2"]
    assert_sections_cite_headings(doc)


def test_non_linear_items_are_left_out_and_a_chapter_read_twice_is_read_once() -> None:
    data = make_epub(
        [("a.xhtml", chapter("<h1>Main</h1>")), ("notes.xhtml", chapter("<h1>Notes</h1>"))], non_linear=("notes.xhtml",)
    )
    assert epub.load(data, "n.epub").text == "Main"


def test_title_falls_back_to_the_first_chapter_then_the_file_name() -> None:
    assert epub.load(make_epub([("a.xhtml", chapter("<h1>Heading</h1>"))], title=""), "book.epub").title == "Heading"
    assert epub.load(make_epub([("a.xhtml", chapter("<p>x</p>"))], title=""), "dir/book.epub").title == "book"


def test_font_obfuscation_is_not_drm() -> None:
    fonts = encryption_xml([("http://www.idpf.org/2008/embedding", "OEBPS/fonts/serif.otf")])
    assert epub.load(make_epub([("a.xhtml", chapter("<h1>Free</h1>"))], encryption=fonts), "f.epub").text == "Free"


def test_drm_encrypted_content_is_refused() -> None:
    drm = encryption_xml(
        [
            ("http://www.w3.org/2001/04/xmlenc#aes128-cbc", "OEBPS/a.xhtml"),
            ("http://www.idpf.org/2008/embedding", "f.otf"),
        ]
    )
    with pytest.raises(LoadError) as refused:
        epub.load(make_epub([("a.xhtml", chapter("<h1>Locked</h1>"))], encryption=drm), "drm.epub")
    assert refused.value.reason.startswith(
        "DRM-protected: META-INF/encryption.xml encrypts 1 file(s), such as OEBPS/a.xhtml"
    )


def _zip(files: dict[str, str]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as book:
        for path, content in files.items():
            book.writestr(path, content)
    return out.getvalue()


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"not a zip at all", "not an EPUB (it is not a zip package)"),
        (_zip({"mimetype": "application/epub+zip"}), "META-INF/container.xml is missing"),
        (_zip({"META-INF/container.xml": "<container><unclosed>"}), "not well-formed XML"),
        (make_epub([("a.xhtml", chapter(""))]), "empty: no chapter"),
        (make_epub([("a.xhtml", "\x00\x01binary")]), "chapter OEBPS/a.xhtml: binary content"),
    ],
)
def test_unreadable_books_are_refused_with_a_reason(data: bytes, reason: str) -> None:
    with pytest.raises(LoadError) as refused:
        epub.load(data, "bad.epub")
    assert reason in refused.value.reason
    assert refused.value.name == "bad.epub"


def _without(data: bytes, member: str) -> bytes:
    """The package ``data`` without the zip member ``member``."""
    with zipfile.ZipFile(io.BytesIO(data)) as book:
        kept = {info.filename: book.read(info) for info in book.infolist() if info.filename != member}
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as book:
        for path, content in kept.items():
            book.writestr(path, content)
    return out.getvalue()


def test_a_chapter_missing_from_the_package_is_named() -> None:
    data = _without(make_epub([("a.xhtml", chapter("<h1>A</h1>"))]), "OEBPS/a.xhtml")
    with pytest.raises(LoadError, match=r"OEBPS/a\.xhtml is named in the package but missing"):
        epub.load(data, "gap.epub")


def _three_chapters(second: str) -> bytes:
    return make_epub(
        [
            ("one.xhtml", chapter("<h1>One</h1><p>The first chapter is read.</p>")),
            ("two.xhtml", second),
            ("three.xhtml", chapter("<h1>Three</h1><p>The third chapter is read.</p>")),
        ]
    )


def test_a_chapter_damaged_in_the_zip_is_left_out_and_named_and_the_rest_is_read() -> None:
    marker = b"MARKER-OF-THE-SECOND-CHAPTER"
    data = _three_chapters(chapter(f"<h1>Two</h1><p>{marker.decode()}</p>"))
    assert data.count(marker) == 1  # stored, not compressed: the chapter's bytes are in the file as they are
    damaged = data.replace(marker, marker.lower())  # its CRC no longer matches
    doc = epub.load(damaged, "damaged.epub")
    (skipped,) = doc.skipped_pages
    assert (skipped.number, skipped.label) == (2, "OEBPS/two.xhtml")
    assert skipped.reason.startswith("damaged EPUB: OEBPS/two.xhtml cannot be unpacked (Bad CRC-32")
    assert "The first chapter is read." in doc.text and "The third chapter is read." in doc.text
    assert "marker" not in doc.text.lower()


def test_a_chapter_missing_from_a_longer_book_is_left_out_and_named() -> None:
    data = _without(_three_chapters(chapter("<h1>Two</h1><p>Gone.</p>")), "OEBPS/two.xhtml")
    doc = epub.load(data, "gap.epub")
    assert [(s.number, s.label) for s in doc.skipped_pages] == [(2, "OEBPS/two.xhtml")]
    assert "is named in the package but missing" in doc.skipped_pages[0].reason
    assert "The third chapter is read." in doc.text


def test_a_chapter_whose_xhtml_is_not_xml_is_read_in_part_and_named() -> None:
    broken = chapter("<h1>Two</h1><p>Write to <team@example.org> for help.</p><p>Still read.</p>")
    doc = epub.load(_three_chapters(broken), "recovered.epub")
    (skipped,) = doc.skipped_pages
    assert (skipped.number, skipped.label) == (2, "OEBPS/two.xhtml")
    assert skipped.reason.startswith("read in part: its XHTML is not well-formed XML (error parsing attribute name")
    assert "Write to" in doc.text and "Still read." in doc.text  # what the HTML parser recovered is kept
    assert "team@example.org" not in doc.text  # read as a tag: the loss the reason warns of
    assert "The third chapter is read." in doc.text


def test_html_entities_in_xhtml_lose_nothing_and_are_not_named() -> None:
    doc = epub.load(_three_chapters(chapter("<h1>Two</h1><p>Tea&nbsp;time&mdash;at four.</p>")), "entities.epub")
    assert doc.skipped_pages == ()
    assert "Tea time—at four." in doc.text  # the walk folds a no-break space to a space


def test_a_real_chapter_that_is_not_xml_is_named() -> None:
    doc = epub.load(_real(LIVE_MANUAL), LIVE_MANUAL.name)
    assert [(s.number, s.label) for s in doc.skipped_pages] == [(47, "OEBPS/metadata.xhtml")]
    assert doc.skipped_pages[0].reason.startswith("read in part")
    assert epub.load(_real(PACKAGING_GUIDE), PACKAGING_GUIDE.name).skipped_pages == ()
