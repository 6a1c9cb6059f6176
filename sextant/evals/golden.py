"""Labelled questions and how a retrieved passage is judged against them.

A question lists its relevant *targets* (document, and page or section, plus a verbatim evidence
snippet). A hit satisfies a target when it is from the same document and on the labelled page (for
paged documents), or else in the labelled section or containing the evidence. A target with neither
page, section nor evidence names a whole document ("which document…" questions): any passage of it
satisfies the target, its overview included. Each target counts
once: ranked hits become target ids (relevant) or their own chunk ids (not), so the metrics'
``qrels`` are the targets, each with gain 1.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


class Cited(Protocol):
    """What judging needs of a retrieved passage: a search hit, or a passage the agent was shown."""

    @property
    def chunk_id(self) -> str: ...
    @property
    def document_id(self) -> str: ...
    @property
    def pages(self) -> list[int]: ...
    @property
    def section(self) -> str | None: ...
    @property
    def text(self) -> str | None: ...


class GoldenError(Exception):
    """A golden file is malformed; the message names the line."""


@dataclass(frozen=True, slots=True)
class Target:
    doc_id: str
    page: int | None
    section: str | None
    evidence: str


@dataclass(frozen=True, slots=True)
class Question:
    id: str
    text: str
    answerable: bool
    targets: tuple[Target, ...]
    kind: str


def load_golden(path: Path) -> list[Question]:
    """Read a golden ``.jsonl`` file.

    Raises:
        GoldenError: a line is not valid JSON or lacks a field.
    """
    questions: list[Question] = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            targets = tuple(
                Target(
                    doc_id=str(r["doc_id"]),
                    page=int(r["page"]) if r.get("page") is not None else None,
                    section=r.get("section"),
                    evidence=str(r.get("evidence", "")),
                )
                for r in row.get("relevant", [])
            )
            questions.append(
                Question(str(row["id"]), str(row["question"]), bool(row["answerable"]), targets, row.get("kind", ""))
            )
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise GoldenError(f"{path}:{n}: {exc}") from exc
    return questions


def normalise(text: str) -> str:
    """NFKC (PDF ligatures) and collapsed whitespace, for evidence matching."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


def satisfies(hit: Cited, target: Target, hit_text: str) -> bool:
    """Whether ``hit`` (with its full ``hit_text``) is a correct citation for ``target``."""
    if hit.document_id != target.doc_id:
        return False
    if target.page is None and target.section is None and not target.evidence:
        return True
    if target.page is not None:
        return target.page in hit.pages
    in_section = target.section is not None and hit.section == target.section
    return in_section or (bool(target.evidence) and normalise(target.evidence) in normalise(hit_text))


def judge(question: Question, hits: Sequence[Cited]) -> tuple[list[str], dict[str, int]]:
    """``(ranked, qrels)`` for the metrics: each hit as the target it first satisfies, or itself."""
    found: set[int] = set()
    ranked: list[str] = []
    for hit in hits:
        label = hit.chunk_id
        for i, target in enumerate(question.targets):
            if i not in found and satisfies(hit, target, hit.text or ""):
                found.add(i)
                label = f"target-{i}"
                break
        ranked.append(label)
    return ranked, {f"target-{i}": 1 for i in range(len(question.targets))}
