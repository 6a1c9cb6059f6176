"""Words hyphenated across a PDF line break: a syllable break is rejoined, a compound keeps its hyphen.

A PDF's text arrives line by line, so ``mainte-`` / ``nance`` and ``entry-`` / ``level`` look the
same. Only a hyphen after a letter followed by a lowercase letter is a candidate, and the
document's own words decide, in this order:

1. the joined word (``maintenance``) occurs elsewhere in the document: join, dropping the hyphen;
2. the hyphenated pair (``entry-level``) occurs elsewhere: keep the hyphen;
3. the first half is a prefix English writes closed up (``sub``, ``inter``, ``some``): join;
4. both halves have at least three letters, the second occurs elsewhere as a word of its own, and
   so does the first or the second has at least four letters (``fume`` / ``hood``,
   ``entry`` / ``level``): keep the hyphen, the break falls between two words;
5. otherwise join: ``mainte`` and ``nance`` are not words.

"Elsewhere" means outside line-end breaks: the fragments either side of a candidate are not
counted as words, so ``mainte`` does not vouch for itself. A soft hyphen (U+00AD) ending a line
is a syllable break by definition and always joins.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

SOFT_HYPHEN = "\u00ad"
_WORD_RE = re.compile(r"[^\W\d_]+")  # a run of letters
_COMPOUND_RE = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)+")
_LEADING_WORD_RE = re.compile(r"^[^\W\d_]+")
_TRAILING_WORD_RE = re.compile(r"[^\W\d_]+$")
_MIN_PART = 3
_MIN_LONE_TAIL = 4  # a tail this long vouches for the break on its own ("entry-" / "level")
# Prefixes and function words that English closes up (subdirectory, interaction, something,
# cannot): a word starting so, broken after them, is a joined word more often than a compound.
_CLOSED_HEADS = frozenset(
    {
        "anti",
        "any",
        "can",
        "com",
        "con",
        "counter",
        "dis",
        "every",
        "extra",
        "hyper",
        "inter",
        "intra",
        "macro",
        "micro",
        "mis",
        "mono",
        "multi",
        "out",
        "over",
        "per",
        "poly",
        "pre",
        "pro",
        "semi",
        "some",
        "sub",
        "super",
        "sur",
        "there",
        "trans",
        "ultra",
        "under",
        "what",
        "when",
        "where",
        "with",
    }
)


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """The words (lowercased) and adjacent hyphenated pairs (``entry-level``) of one document."""

    words: frozenset[str] = field(default_factory=frozenset)
    compounds: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def of(cls, blocks: Iterable[Sequence[str]]) -> Vocabulary:
        """The vocabulary of a document given as blocks of lines, leaving out line-break fragments."""
        words: set[str] = set()
        compounds: set[str] = set()
        for lines in blocks:
            for index, line in enumerate(lines):
                found = [match.group().lower() for match in _WORD_RE.finditer(line)]
                if found and index + 1 < len(lines) and _split_word(line, lines[index + 1]):
                    found.pop()
                if found and index > 0 and _split_word(lines[index - 1], line):
                    found.pop(0)
                words.update(found)
                for match in _COMPOUND_RE.finditer(line):
                    parts = match.group().lower().split("-")
                    compounds.update(f"{a}-{b}" for a, b in itertools.pairwise(parts))
        return cls(frozenset(words), frozenset(compounds))

    def keeps_hyphen(self, head: str, tail: str) -> bool:
        """True when ``head-`` / ``tail`` broken over two lines is a compound, not a split word."""
        head, tail = head.lower(), tail.lower()
        if not head or not tail or head + tail in self.words:
            return False
        if f"{head}-{tail}" in self.compounds:
            return True
        if head in _CLOSED_HEADS or min(len(head), len(tail)) < _MIN_PART or tail not in self.words:
            return False
        return head in self.words or len(tail) >= _MIN_LONE_TAIL


_NO_WORDS = Vocabulary()


def _breaks(line: str, following: str) -> bool:
    """True when ``line`` ends in a hyphen after a letter and ``following`` starts lowercase."""
    return len(line) > 1 and line.endswith("-") and line[-2].isalpha() and following[:1].islower()


def _split_word(line: str, following: str) -> bool:
    """True when a word may run from the end of ``line`` into ``following``."""
    return line.endswith(SOFT_HYPHEN) or _breaks(line, following)


def join_lines(lines: Sequence[str], vocabulary: Vocabulary = _NO_WORDS) -> str:
    """Join lines with newlines, mending words hyphenated across a break as ``vocabulary`` decides.

    Without a vocabulary every candidate is joined (``exam-`` + ``ple`` -> ``example``).
    """
    out = ""
    for line in lines:
        if not out:
            out = line
        elif out.endswith(SOFT_HYPHEN) and line[:1].isalpha():
            out = out[:-1] + line
        elif _breaks(out, line):
            head = _TRAILING_WORD_RE.search(out[:-1])
            tail = _LEADING_WORD_RE.match(line)
            keep = head is not None and tail is not None and vocabulary.keeps_hyphen(head.group(), tail.group())
            out = (out if keep else out[:-1]) + line
        else:
            out = out.removesuffix(SOFT_HYPHEN) + "\n" + line
    return out.removesuffix(SOFT_HYPHEN)
