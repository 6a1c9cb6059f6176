"""Navigation on a page that marks no main element: named by its classes and ids, or made of links.

DocBook XSL, Publican, Texinfo's makeinfo, Doxygen and SiSU mark no ``<main>``; their bars are found by the
words their class and id attributes use, and, as a last resort, by link density (``html`` module docstring).
"""

from __future__ import annotations

import re

from lxml import etree

_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
# With no main element marked, these words in a class or id (split on "-" and "_") name navigation: DocBook
# XSL's navheader/navfooter, Publican's docnav and banner, Texinfo's nav-panel and section-toc, Doxygen's
# navpath, main-nav, side-nav and footer, Bootstrap's navbar. Not "sidebar" (a DocBook sidebar is content) and
# not "header" or "contents" (Doxygen's page title and body).
_NAV_WORD_RE = re.compile(
    r"nav(?:bar|igation|header|footer|path|panel|row|tabs?|links?)?|docnav|breadcrumbs?|toc|menu|banner|masthead"
    r"|footer|pager|pagination|titlearea"
)
_WORD_SPLIT_RE = re.compile(r"[\s_-]+")
LINK_DENSE_TAGS = frozenset({"div", "p", "ul", "ol", "dl", "table", "td", "center", "span"})
# HTML link types (and Texinfo's "up") that mark a link as moving through a document's sequence of pages.
_NAV_RELS = frozenset({"next", "prev", "previous", "up", "contents", "index", "start", "first", "last", "home"})
# A navigation bar is short: a block with more text than this is content, however many links it has.
_NAV_MAX_CHARS = 600


def named_navigation(element: etree._Element) -> bool:
    """Whether a word of the element's class or id names navigation (``navheader``, ``side-nav``, ``section-toc``)."""
    names = f"{element.get('class') or ''} {element.get('id') or ''}".lower()
    return any(_NAV_WORD_RE.fullmatch(word) for word in _WORD_SPLIT_RE.split(names) if word)


def link_dense(element: etree._Element) -> bool:
    """A short block made mostly of links ("Next: A, Previous: B, Up: C"): three quarters of its text, or half
    when a link is marked as sequential navigation (``rel="next"``, an ``accesskey``)."""
    links = 0
    linked = 0
    total = 0
    sequential = False
    for node in element.iter():
        if node.tag in _HEADINGS:
            return False  # a section with its heading, however short, is content
        if node.tag == "a" and node.get("href") is not None:
            links += 1
            linked += sum(len(t.strip()) for t in node.itertext())
            rels = (node.get("rel") or "").lower().split()
            sequential = sequential or node.get("accesskey") is not None or not _NAV_RELS.isdisjoint(rels)
        if isinstance(node.tag, str) and node.tag not in ("script", "style"):
            total += len((node.text or "").strip())
        if node is not element:
            total += len((node.tail or "").strip())
        if total > _NAV_MAX_CHARS:
            return False
    return links >= 2 and (linked * 4 >= total * 3 or (sequential and linked * 2 >= total))
