"""One numbered list of passages per conversation, shared by the knowledge-base and web tiers.

A passage gets its label before the model reads it (``[3]`` is written into the text the model sees),
so the number the model cites is the number the browser shows. Labels the client already holds from
earlier turns keep their meaning: numbering resumes after them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, Field

from sextant.agent.sentences import Sentence, split
from sextant.contract.results import Hit
from sextant.llm.chat import WebSource

# What the model reads of one passage; the browser always gets the whole chunk.
MODEL_TEXT_CHARS = 1600


class Passage(BaseModel):
    """A passage the model was shown, with everything the browser needs to open it."""

    label: int = Field(ge=1)
    tier: Literal["kb", "web"] = "kb"
    chunk_id: str | None = None
    document_id: str | None = None
    title: str = Field(max_length=500)
    source: str = Field(default="", max_length=2000)
    page: int | None = None
    page_label: str | None = None
    page_unit: Literal["page", "slide"] = "page"
    section: str | None = None
    text: str = Field(default="", max_length=20_000)
    uri: str | None = Field(default=None, description="kb:// resource of the cited page, or the web page's URL.")
    link: str | None = Field(
        default=None, description="For a document fetched from the web: the cited section's address (URL#fragment)."
    )

    def citation(self) -> str:
        """Human-readable place: title, page label and section."""
        parts = [self.title]
        if self.page_label or self.page:
            parts.append(f"{'slide' if self.page_unit == 'slide' else 'p.'} {self.page_label or self.page}")
        if self.section:
            parts.append(self.section)
        return ", ".join(parts)

    def for_model(self) -> str:
        body = self.text if len(self.text) <= MODEL_TEXT_CHARS else self.text[:MODEL_TEXT_CHARS] + " …"
        return f"[{self.label}] {self.citation()}\n{body}"


class PassageBook:
    """Assigns labels; the same chunk (or URL) seen twice keeps its first label."""

    def __init__(self, held: Iterable[Passage] = ()) -> None:
        self._by_label: dict[int, Passage] = {}
        self._by_key: dict[str, int] = {}
        self._sentences: dict[int, list[Sentence]] = {}
        for passage in held:
            self._remember(passage)

    def _remember(self, passage: Passage) -> None:
        self._by_label[passage.label] = passage
        key = _key(passage)
        if key is not None:
            self._by_key.setdefault(key, passage.label)

    def _next_label(self) -> int:
        return max(self._by_label, default=0) + 1

    def add_hits(self, hits: Iterable[Hit]) -> list[Passage]:
        """Number ``kb_search`` hits in rank order."""
        added: list[Passage] = []
        for hit in hits:
            known = self._by_key.get(f"kb:{hit.chunk_id}")
            if known is not None:
                added.append(self._by_label[known])
                continue
            passage = Passage(
                label=self._next_label(),
                chunk_id=hit.chunk_id or None,
                document_id=hit.document_id,
                title=(hit.title or hit.document_id or "untitled")[:500],
                source=hit.source[:2000],
                page=hit.page,
                page_label=hit.page_label,
                page_unit=hit.page_unit,
                section=hit.section,
                text=(hit.text or "")[:20_000],
                uri=hit.uri,
                link=hit.link,
            )
            self._remember(passage)
            added.append(passage)
        return added

    def add_web(self, sources: Iterable[WebSource]) -> list[int]:
        """Number web sources; returns their labels in the order given."""
        labels: list[int] = []
        for source in sources:
            known = self._by_key.get(f"web:{source.url}")
            if known is None:
                passage = Passage(label=self._next_label(), tier="web", title=source.title[:500] or source.url[:500])
                passage = passage.model_copy(update={"uri": source.url, "source": source.url[:2000]})
                self._remember(passage)
                known = passage.label
            labels.append(known)
        return labels

    def get(self, label: int) -> Passage | None:
        return self._by_label.get(label)

    def sentences(self, passage: Passage) -> list[Sentence]:
        """``passage``'s quotable sentences, cut once however many checks read them (a passage's text never changes
        under its label)."""
        cut = self._sentences.get(passage.label)
        if cut is None:
            cut = self._sentences[passage.label] = split(passage.label, passage.text)
        return cut

    def labels(self) -> set[int]:
        return set(self._by_label)

    def all(self) -> list[Passage]:
        return [self._by_label[label] for label in sorted(self._by_label)]

    def knowledge_base(self, labels: Iterable[int]) -> list[Passage]:
        """The knowledge-base passages (no web pages) among ``labels``, in label order."""
        return [p for label in sorted(set(labels)) if (p := self._by_label.get(label)) is not None and p.tier == "kb"]


def _key(passage: Passage) -> str | None:
    if passage.tier == "kb" and passage.chunk_id:
        return f"kb:{passage.chunk_id}"
    if passage.tier == "web" and passage.uri:
        return f"web:{passage.uri}"
    return None
