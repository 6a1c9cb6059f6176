"""Pseudo-questions from a store's own chunks, for training its query encoder without labels.

Each source turns text the store already holds into (question, chunks it should find) pairs:

- ``title``: a document's title finds every chunk of that document;
- ``heading``: a section heading finds the chunks of the section under it (documents with headings only);
- ``model``: a question the local model wrote about a chunk finds that chunk
  (``sextant.training.model_questions``; slow, so opt-in and cached);
- ``sentence``: one sentence of a chunk finds that chunk (and the neighbour its overlap shares it
  with). The stored vector was embedded from text that contains the sentence, so this cannot hide
  it as the inverse cloze task does (Lee et al., "Latent Retrieval for Weakly Supervised Open
  Domain Question Answering", ACL 2019); what it can teach is which of the store's similar chunks
  a short, claim-like text points to.

Positives are chunk ids, not document ids: a heading or a sentence belongs to some chunks of a
document and not to the others. Everything is derived from the text and a seed, so the same store
gives the same questions (and a rerun resumes its checkpoint).
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

Source = Literal["title", "heading", "sentence", "model"]
# The sources made from the text alone, in a second; "model" asks the local model, about a second a chunk.
SOURCES: tuple[Source, ...] = ("title", "heading", "sentence")
_SOURCE_NAMES: dict[Source, str] = {
    "title": "titles",
    "heading": "headings",
    "sentence": "sentences",
    "model": "the local model",
}
K = TypeVar("K", bound=Hashable)

# A sentence ends at . ! or ? before a space and a capital or digit; enough for prose, and a missed
# boundary only makes one pseudo-question longer.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
# Shorter is a fragment (a figure label, "Methods."); longer is no question and costs most of a step.
MIN_WORDS, MAX_WORDS = 6, 25
# "3.2 Loops", "Chapter 5. Pressure": the number says nothing a question would.
_NUMBERING = re.compile(r"^(?:(?:chapter|section|part|appendix)\s+)?\d+(?:\.\d+)*[.:)]?\s+", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class ChunkText:
    """What a pseudo-question is made from: one stored chunk's text and where it sits."""

    id: str
    doc_id: str
    title: str
    section: str
    text: str


@dataclass(frozen=True, slots=True)
class PseudoQuery:
    id: str
    text: str
    positives: tuple[str, ...]  # chunk ids
    source: Source


def title_queries(chunks: Sequence[ChunkText]) -> list[PseudoQuery]:
    """Each document's title, finding all its chunks; a title that is only the document's id is no question."""
    by_doc = _group(chunks, lambda c: c.doc_id)
    return [
        PseudoQuery(f"title:{doc}", group[0].title, tuple(c.id for c in group), "title")
        for doc, group in by_doc.items()
        if _words(group[0].title) >= 2 and group[0].title != doc
    ]


def heading_queries(chunks: Sequence[ChunkText]) -> list[PseudoQuery]:
    """Each section heading that is not the document's title, finding the chunks of its section."""
    by_section = _group((c for c in chunks if c.section and c.section != c.title), lambda c: (c.doc_id, c.section))
    found = []
    for (doc, section), group in by_section.items():
        text = _NUMBERING.sub("", section)
        if _words(text) >= 2:
            found.append(PseudoQuery(f"heading:{doc}:{section}", text, tuple(c.id for c in group), "heading"))
    return found


def sentence_queries(chunks: Sequence[ChunkText], seed: int) -> list[PseudoQuery]:
    """One sentence of each chunk that has one of a question's length, finding the chunks that hold it.

    Chunks overlap (a fifth of their length), so a sentence may be in its neighbour too: that
    neighbour is a positive, not a negative to push away.
    """
    found = []
    for group in _group(chunks, lambda c: c.doc_id).values():
        flat = {c.id: " ".join(c.text.split()) for c in group}
        for chunk in group:
            candidates = [s for s in sentences(chunk.text) if _question_like(s) and s != chunk.title]
            if candidates:
                pick = random.Random(f"{seed}:{chunk.id}").choice(candidates)
                # Its own chunk always: a sentence joined across a skipped heading line is in no chunk verbatim.
                holders = tuple(cid for cid, text in flat.items() if pick in text or cid == chunk.id)
                found.append(PseudoQuery(f"sentence:{chunk.id}", pick, holders, "sentence"))
    return found


def sentences(text: str) -> list[str]:
    """The prose sentences of ``text``: markdown heading lines and table rows are not prose."""
    prose = " ".join(line for line in text.splitlines() if not line.lstrip().startswith("#") and "|" not in line)
    return [s.strip() for s in _SENTENCE_END.split(" ".join(prose.split())) if s.strip()]


def pseudo_queries(
    chunks: Sequence[ChunkText],
    sources: Iterable[Source],
    limit: int | None,
    seed: int,
    written: Sequence[PseudoQuery] = (),
) -> list[PseudoQuery]:
    """The questions of ``sources``, at most ``limit`` of them, drawn evenly across sources.

    A source with fewer than its share gives all it has and the rest goes to the others, so a
    store without headings still gets ``limit`` questions. ``written``: the model's questions, the
    ``model`` source's pool.
    """
    makers: dict[Source, Callable[[Sequence[ChunkText]], list[PseudoQuery]]] = {
        "title": title_queries,
        "heading": heading_queries,
        "sentence": lambda c: sentence_queries(c, seed),
        "model": lambda _: list(written),
    }
    pools = {s: makers[s](chunks) for s in dict.fromkeys(sources)}
    for source, pool in pools.items():
        random.Random(f"{seed}:{source}").shuffle(pool)
    if limit is None:
        return [q for pool in pools.values() for q in pool]
    taken: dict[Source, int] = {s: 0 for s in pools}
    left, open_sources = limit, [s for s in pools if pools[s]]
    while left > 0 and open_sources:
        share = max(1, left // len(open_sources))
        for source in list(open_sources):
            more = min(share, len(pools[source]) - taken[source], left)
            taken[source] += more
            left -= more
            if taken[source] == len(pools[source]):
                open_sources.remove(source)
            if left == 0:
                break
    return [q for s, pool in pools.items() for q in pool[: taken[s]]]


def as_training_data(queries: Sequence[PseudoQuery]) -> tuple[dict[str, dict[str, int]], dict[str, str]]:
    """``(qrels, questions)`` in the query-encoder trainer's terms, with chunk ids standing for documents."""
    qrels = {q.id: dict.fromkeys(q.positives, 1) for q in queries}
    return qrels, {q.id: q.text for q in queries}


def fingerprint(chunk_ids: Sequence[str], queries: Sequence[PseudoQuery], embedder: str) -> str:
    """What a checkpoint must match to be resumed: the same chunks, questions and document embedder."""
    digest = hashlib.sha256(embedder.encode())
    for cid in chunk_ids:
        digest.update(b"\0c" + cid.encode())
    for q in queries:
        digest.update(b"\0q" + q.text.encode() + b"\0" + "\0".join(q.positives).encode())
    return digest.hexdigest()


def counts(queries: Iterable[PseudoQuery]) -> Mapping[Source, int]:
    tally: dict[Source, int] = {}
    for q in queries:
        tally[q.source] = tally.get(q.source, 0) + 1
    return tally


def described(made: Mapping[Source, int]) -> str:
    """``"40 from titles, 300 from headings"``: what a command made, in the words its progress line uses."""
    return ", ".join(f"{n} from {_SOURCE_NAMES[s]}" for s, n in made.items()) or "none"


def _question_like(sentence: str) -> bool:
    """Of a question's length and mostly words: a contents line ("35 eigen . . . .") or a row of numbers is not."""
    words = sentence.split()
    return MIN_WORDS <= len(words) <= MAX_WORDS and sum(w.isalpha() for w in words) * 2 >= len(words)


def _words(text: str) -> int:
    return len(text.split())


def _group(chunks: Iterable[ChunkText], key: Callable[[ChunkText], K]) -> dict[K, list[ChunkText]]:
    groups: dict[K, list[ChunkText]] = {}
    for chunk in chunks:
        groups.setdefault(key(chunk), []).append(chunk)
    return groups
