"""How much of a page's navigation the HTML loader lets into its text, per documentation generator.

A page's navigation is what lies outside its ``<main>`` / ``role="main"`` element or, for a generator that marks
no main element, what an XPath written by hand for that generator names (DocBook's ``navheader``, Doxygen's
``side-nav``…). A *piece* is a text node of at least 4 characters in the navigation and not also in the content;
it *leaks* when it turns up in the loaded text. *Kept* is the share of the content's words the loader keeps.

    apt-get download debian-handbook maint-guide flex-doc doxygen-doc mkdocs-doc ...   # the packages in SETS
    for f in *.deb; do dpkg-deb -x "$f" "pkgs/${f%%_*}"; done
    python bench/html_leakage.py --root pkgs [--pages 40]

Results and what they mean: ``learning/document-formats.md``.
"""

from __future__ import annotations

import argparse
import collections
import random
import sys
from pathlib import Path

import lxml.html
from lxml import etree

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from sextant.kb.documents import LoadError  # noqa: E402
from sextant.kb.loaders import html  # noqa: E402

MAIN = "//main | //*[@role='main']"
DROPPED = ("script", "style", "noscript", "head", "template")
DOCBOOK_NAV = "//div[@class='navheader'] | //div[@class='navfooter']"
DOXYGEN_NAV = (
    "//div[@id='top'] | //div[@id='side-nav'] | //div[@id='nav-path'] | //*[@class='footer'] | //div[@class='summary']"
)
# (generator, package folder under --root, or an absolute folder; file pattern; the navigation's XPath, or None
# where the page marks its main element)
SETS = [
    ("Sphinx", "/usr/share/doc/python3.11/html", "**/*.html", None),
    ("Sphinx", "python-requests-doc", "**/*.html", None),
    ("Sphinx", "cmake-doc", "**/*.html", None),
    ("Publican DocBook", "debian-handbook", "usr/share/doc/debian-handbook/html/en-US/*.html",
     "//div[@id='banner'] | //p[@id='title'] | //ul[contains(@class,'docnav')]"),
    ("DocBook XSL", "debian-reference-en", "**/*.en.html", DOCBOOK_NAV),
    ("DocBook XSL", "maint-guide", "**/*.en.html", DOCBOOK_NAV),
    ("Texinfo", "flex-doc", "**/*.html", "//div[@class='header'] | //div[contains(@class,'nav-panel')]"),
    ("Doxygen", "doxygen-doc", "usr/share/doc/doxygen/html/*.html", DOXYGEN_NAV),
    ("Doxygen", "libsdl2-doc", "**/*.html", DOXYGEN_NAV),
    ("Doxygen", "libjson-c-doc", "**/*.html", DOXYGEN_NAV),
    ("javadoc", "libcommons-lang3-java-doc", "**/*.html", None),
    ("javadoc", "libjsoup-java-doc", "**/*.html", None),
    ("MkDocs", "mkdocs-doc", "**/*.html", None),
    ("SiSU", "live-manual-html", "**/*.en.html", "//table[contains(@summary,'navigation')]"),
]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, required=True, help="folder of unpacked packages, one folder each")
    parser.add_argument("--pages", type=int, default=40, help="pages sampled per package (default 40)")
    parser.add_argument("--seed", type=int, default=53)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    print("| generator | package | pages | nav pieces | leaked | pages leaking | words kept (mean / worst) |")
    print("|---|---|---:|---:|---:|---:|---|")
    for generator, package, pattern, nav in SETS:
        folder = Path(package) if Path(package).is_absolute() else args.root / package
        files = sorted(p for p in folder.glob(pattern) if not {"_modules", "src-html"} & set(p.parts))
        if not files:
            print(f"| {generator} | {package} | not found under {folder} | | | | |")
            continue
        rows = [row for path in rng.sample(files, min(args.pages, len(files))) if (row := measure(path, nav))]
        if not rows:
            continue
        kept = [row[2] for row in rows]
        print(
            f"| {generator} | {package} | {len(rows)} | {sum(r[0] for r in rows)} | {sum(r[1] for r in rows)} "
            f"| {sum(1 for r in rows if r[1])} | {100 * sum(kept) / len(kept):.1f} % / {100 * min(kept):.0f} % |",
            flush=True,
        )


def measure(path: Path, nav_xpath: str | None) -> tuple[int, int, float] | None:
    """(navigation pieces, pieces leaked, share of content words kept), or None for a page without content."""
    data = path.read_bytes()
    root = lxml.html.fromstring(data)
    for element in root.xpath("|".join(f"//{tag}" for tag in DROPPED)):
        element.drop_tree()
    body = root.find(".//body")
    if body is None:
        return None
    if nav_xpath is None:
        mains = root.xpath(MAIN)
        if not mains:
            return None
        content = max(mains, key=lambda e: sum(1 for _ in e.iterancestors()))
        inside = set(content.iter())
        nav = [e.text for e in body.iter() if e not in inside and isinstance(e.tag, str) and e.text]
        content_text = "".join(content.itertext())
    else:
        marked = root.xpath(nav_xpath)
        nav = [text for element in marked for text in element.itertext()]
        for element in marked:
            if element.getparent() is not None:
                element.drop_tree()
        content_text = "".join(body.itertext())
    content_words = " ".join(content_text.split())
    pieces = {" ".join(t.split()) for t in nav} - {""}
    pieces = {p for p in pieces if len(p) >= 4 and p not in content_words}
    try:
        text = " ".join(html.load(data, path.name).text.split())
    except LoadError:
        text = ""
    wanted = collections.Counter(content_words.split())
    got = collections.Counter(text.split())
    kept = sum(min(n, got[w]) for w, n in wanted.items()) / max(1, sum(wanted.values()))
    return len(pieces), sum(1 for p in pieces if p in text), kept


if __name__ == "__main__":
    try:
        main()
    except etree.ParserError as exc:
        sys.exit(f"html_leakage: {exc}")
