"""Python's own documentation as Markdown files, a pool of public text for training the reranker without labels.

    apt-get install python3.11-doc          # Debian's package: the reST sources ship beside the HTML
    python scripts/python_docs_pool.py --out pool/python-docs
    sextant-train-reranker pseudo --docs pool/python-docs --out pool/python-docs-pseudo

None of Sextant's evaluation sets contains this text (learning/reranker.md). The FAQ's questions are its
headings, the tutorial and the how-tos are prose with sections: what the ``heading`` pseudo-questions need.
Only what the Markdown loader would misread is changed: reST section adornments become ATX headings (their
level in the order a file first uses each style, as reST defines it), inline roles become their text, and
directive lines that carry no prose (labels, index entries, authors) are left out.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

SOURCES = Path("/usr/share/doc/python3.11/html/_sources")
# The prose a question could be asked of; the library and language references are mostly signatures and grammar.
PARTS = ("faq", "tutorial", "howto", "glossary.rst.txt")

_ADORNMENT = re.compile(r"^([=\-~^*\"#+`'.:_])\1{3,}\s*$")
# :mod:`json`, :func:`~os.path.join`, :ref:`the tutorial <tut-intro>`: the words a reader sees.
_ROLE = re.compile(r":[a-z]+(?::[a-z]+)?:`~?([^`<]*?)\s*(?:<[^`>]*>)?`")
_NO_PROSE = re.compile(
    r"^\.\. (?:_[^:]*:|index::|highlight::|sectionauthor::|moduleauthor::|module::|currentmodule::|"
    r"testsetup::|testcleanup::|toctree::|include::|\|)"
)


def to_markdown(rst: str) -> str:
    """The reST text with ATX headings, plain roles and no prose-free directive lines."""
    lines = rst.splitlines()
    styles: list[tuple[str, bool]] = []  # (character, overlined), in the order the file first uses them
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        over = _ADORNMENT.match(line)
        if over and i + 2 < len(lines) and lines[i + 1].strip() and lines[i + 2].strip() == line.strip():
            out.append(_heading(lines[i + 1].strip(), (over.group(1), True), styles))
            i += 3
            continue
        under = _ADORNMENT.match(lines[i + 1]) if i + 1 < len(lines) else None
        if under and line.strip() and not _ADORNMENT.match(line) and not line.startswith(" "):
            out.append(_heading(line.strip(), (under.group(1), False), styles))
            i += 2
            continue
        if over or _NO_PROSE.match(line):
            i += 1
            while i < len(lines) and lines[i].startswith(" ") and lines[i].strip():  # the directive's own options
                i += 1
            continue
        out.append(_ROLE.sub(r"\1", line))
        i += 1
    return "\n".join(out).strip() + "\n"


def _heading(text: str, style: tuple[str, bool], styles: list[tuple[str, bool]]) -> str:
    if style not in styles:
        styles.append(style)
    return "#" * min(styles.index(style) + 1, 6) + " " + _ROLE.sub(r"\1", text)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, required=True, help="folder for the Markdown files")
    p.add_argument("--sources", type=Path, default=SOURCES, help="the reST sources (python3.11-doc's _sources)")
    ns = p.parse_args(argv)
    files = [f for part in PARTS for f in sorted((ns.sources / part).glob("**/*.rst.txt")) or [ns.sources / part]]
    files = [f for f in files if f.is_file()]
    if not files:
        sys.exit(f"no reST sources under {ns.sources}: apt-get install python3.11-doc")
    ns.out.mkdir(parents=True, exist_ok=True)
    for source in files:
        target = ns.out / flat_name(source.relative_to(ns.sources))
        target.write_text(to_markdown(source.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"{len(files)} files written to {ns.out}", file=sys.stderr)


def flat_name(relative: Path) -> str:
    """``faq/library.rst.txt`` -> ``faq-library.md``: one folder, because a document's id is its file name
    without the suffix, and three parts each have an ``index``."""
    return "-".join(relative.with_suffix("").with_suffix("").parts) + ".md"


if __name__ == "__main__":
    main()
