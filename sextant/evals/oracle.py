"""The evaluation's own reading of an answer: the labels it cites, whether a quote stands in a passage, whether
it abstained.

Written apart from the product's checks (``sextant.agent.citations``, ``evidence``, ``grounding``) and never
importing them (an import-linter contract in ``pyproject.toml`` holds this): a figure the evaluation reports must
not agree with the product only because both read answers with the same code. The product says what it did in
its typed answer (``abstained``, the statements and their evidence); this module checks that against the answer's
text and the passages the client received, by simpler rules than the product's:

- a label is ``[n]`` or ``[n, m]`` not followed by ``(`` (a Markdown link's text);
- a quote stands in a passage when its letters and digits, NFKC-normalised and case-folded, appear in that
  order in the passage's (spaces, punctuation, hyphens and quote marks are not compared);
- an answer abstains when it cites no passage it was shown and says so: it is empty, or a sentence of it denies
  that the documents hold the answer (a "not", "no", "nothing"… beside a word for the documents or for answering:
  "The documents do not mention…", "Nothing in the passages…"). An uncited answer that says nothing of the kind
  answered, without support.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

# A claim is a sentence of at least this many words: shorter pieces are headings and list markers.
CLAIM_WORDS = 4
_DENIALS = frozenset({"not", "no", "nothing", "none", "cannot", "never", "neither"})
# Stems of the words by which an answer speaks of its sources or of answering from them.
_SOURCES = (
    *("document", "passage", "source", "text", "context", "knowledge", "inform"),
    *("answer", "mention", "say", "said", "state", "cover", "contain", "provide", "match"),
)
# A sentence ends at ".", "!" or "?" before a space or the line's end, with the labels after it; not at the last
# stop of a dotted abbreviation ("a.k.a.", "i.e.", "e.g.").
_SENTENCE = re.compile(r"\S.*?(?:(?<!\.\w)[.!?](?:\s*\[[\d\s,]+\])*(?=\s|$)|$)")


@dataclass(frozen=True)
class Letters:
    """The letters and digits of a text, folded, with where each stands in the original."""

    text: str
    origin: tuple[int, ...]

    @classmethod
    def of(cls, text: str) -> Letters:
        kept: list[str] = []
        origin: list[int] = []
        for index, char in enumerate(text):
            for folded in unicodedata.normalize("NFKC", char).casefold():
                if folded.isalnum():
                    kept.append(folded)
                    origin.append(index)
        return cls("".join(kept), tuple(origin))


def find(snippet: str, text: str) -> tuple[int, int] | None:
    """Where ``snippet`` stands in ``text`` (``text[start:end]``), by letters and digits alone; None if nowhere."""
    needle = Letters.of(snippet).text
    if not needle:
        return None
    haystack = Letters.of(text)
    at = haystack.text.find(needle)
    if at < 0:
        return None
    return haystack.origin[at], haystack.origin[at + len(needle) - 1] + 1


def labels(answer: str) -> list[int]:
    """Every label ``answer`` cites, in order, repeats kept."""
    found: list[int] = []
    position = answer.find("[")
    while position >= 0:
        close = answer.find("]", position)
        if close < 0:
            break
        inside = [piece.strip() for piece in answer[position + 1 : close].split(",")]
        link = answer[close + 1 : close + 2] == "("
        if not link and inside and all(piece.isdigit() and len(piece) <= 4 for piece in inside):
            found.extend(int(piece) for piece in inside)
        position = answer.find("[", position + 1)
    return found


def claims(answer: str) -> list[str]:
    """The sentences of ``answer`` that state something: four words or more, not a question or a lead-in; each
    with the labels that follow its full stop ("… weeks. [1]")."""
    return [s.strip() for line in answer.splitlines() for s in _SENTENCE.findall(line) if _states_something(s)]


def denies_an_answer(sentence: str) -> bool:
    """Whether ``sentence`` says the documents do not hold the answer: a denial and a word for the sources."""
    words = sentence.casefold().replace("n't", " not").replace("’", "'").split()
    words = ["".join(c for c in w if c.isalpha()) for w in words]
    return any(w in _DENIALS for w in words) and any(w.startswith(_SOURCES) for w in words)


def _states_something(sentence: str) -> bool:
    words = [w for w in sentence.split() if any(c.isalpha() for c in w)]
    return len(words) >= CLAIM_WORDS and not sentence.endswith(("?", ":"))


@dataclass(frozen=True)
class Reading:
    """What the oracle makes of one answer.

    ``abstained`` is the answer's own typed field where it has one, else the oracle's reading of its text;
    ``disagrees`` says that the typed field and the text differ (a product bug the figures would otherwise hide);
    ``unfound`` lists each statement's evidence quote that does not stand in the passage it names."""

    cited: list[int]
    unresolved: list[int] = field(default_factory=list)
    uncited: list[str] = field(default_factory=list)
    abstained: bool = False
    disagrees: bool = False
    unfound: list[tuple[int, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Every label resolves, every claim carries one (an abstention needs none), every quote is found."""
        cites = self.abstained or not self.uncited
        return not self.unresolved and cites and not self.disagrees and not self.unfound


def read(
    answer: str,
    shown: Mapping[int, str],
    *,
    abstained: bool | None = None,
    evidence: Sequence[tuple[int, str]] = (),
) -> Reading:
    """Read ``answer`` against the passages ``shown`` (by label); ``abstained`` and ``evidence`` (label, quote)
    are what the product's typed answer says, where the caller has it."""
    cited = sorted(set(labels(answer)))
    unresolved = [n for n in cited if n not in shown]
    pieces = [s for line in answer.splitlines() for s in _SENTENCE.findall(line)]
    by_text = not (set(cited) & set(shown)) and (not pieces or any(denies_an_answer(s) for s in pieces))
    uncited = [c for c in claims(answer) if not labels(c)]
    unfound = [(label, quote) for label, quote in evidence if find(quote, shown.get(label, "")) is None]
    return Reading(
        cited=cited,
        unresolved=unresolved,
        uncited=uncited,
        abstained=by_text if abstained is None else abstained,
        disagrees=abstained is not None and abstained != by_text,
        unfound=unfound,
    )
