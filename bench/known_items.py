"""Known items over held-out real files, by format: is the labelled passage among the first five, from the right place?

    python scripts/formats_corpus.py --out /tmp/formats-corpus
    python bench/known_items.py --corpus /tmp/formats-corpus [--set eval/formats.jsonl] [--json OUT] [--check-labels]

The corpus is ingested as a user would (``sextant-ingest -r DIR --no-summaries``, in a child process, so a
mailbox's messages are stored as documents of their own) into a fresh temporary store (SEXTANT_CHROMA_DIR,
SEXTANT_PROVIDER=none), then each question goes through ``KnowledgeBase.search`` (mode ``rrf`` unless
``--mode``). A hit is judged by ``sextant.evals.golden``: same document, and on the labelled page, or in the
labelled section or holding the evidence. Per format: found@5 (any target in the first five: issue 53's
measure), recall@5, MRR@10, and each miss with what came first. ``--check-labels`` first confirms, from the
loaded documents alone, that each evidence is in its document and on its page (or in its section).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sextant.contract.results import Hit, SearchMode
from sextant.evals.golden import Question, Target, judge, load_golden, normalise
from sextant.evals.metrics import mrr_at_k, recall_at_k

K = 5
DEPTH = 10  # hits fetched: MRR is over the first ten


@dataclass(slots=True)
class Graded:
    """One question's outcome."""

    question: Question
    fmt: str
    found: bool
    recall: float
    rr: float
    first: list[str] = field(default_factory=list)  # the first hits, as "doc_id § section p.N: text…"

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.question.id,
            "format": self.fmt,
            "question": self.question.text,
            "found@5": self.found,
            "recall@5": round(self.recall, 4),
            "rr@10": round(self.rr, 4),
            "targets": [_where(t) for t in self.question.targets],
            "first": self.first,
        }


def ingest(corpus: Path, store: Path) -> str:
    """Run ``sextant-ingest -r corpus --no-summaries`` into ``store``; returns its report (refusals included)."""
    env = dict(os.environ, SEXTANT_CHROMA_DIR=str(store), SEXTANT_PROVIDER="none", HF_HUB_OFFLINE="1")
    code = "from sextant.kb.cli.ingest import main; main()"
    run = subprocess.run(
        [sys.executable, "-c", code, "-r", str(corpus), "--no-summaries"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    return (run.stdout + run.stderr).strip()


def grade(questions: Sequence[Question], formats: dict[str, str], store: Path, mode: SearchMode) -> list[Graded]:
    """Ask every answerable question of the store and judge the first hits."""
    from sextant.kb.knowledge_base import KnowledgeBase
    from sextant.settings import KbSettings

    graded: list[Graded] = []
    with KnowledgeBase.open(KbSettings(chroma_dir=store)) as kb:
        for q in questions:
            if not q.answerable:
                continue
            hits = kb.search(q.text, DEPTH, mode=mode, detail="full", abstain=False).hits
            ranked, qrels = judge(q, hits)
            graded.append(
                Graded(
                    question=q,
                    fmt=formats.get(q.id, "?"),
                    found=any(label in qrels for label in ranked[:K]),
                    recall=recall_at_k(ranked, qrels, K),
                    rr=mrr_at_k(ranked, qrels, DEPTH),
                    first=[_describe(h) for h in hits[:3]],
                )
            )
    return graded


def table(graded: Sequence[Graded]) -> list[dict[str, Any]]:
    """One row per format, in the order first seen, then ``all``."""
    order = list(dict.fromkeys(g.fmt for g in graded))
    rows = []
    for fmt in [*order, "all"]:
        group = [g for g in graded if fmt in ("all", g.fmt)]
        rows.append(
            {
                "format": fmt,
                "questions": len(group),
                "found@5": sum(g.found for g in group),
                "recall@5": round(statistics.fmean(g.recall for g in group), 3),
                "mrr@10": round(statistics.fmean(g.rr for g in group), 3),
            }
        )
    return rows


def markdown(rows: Sequence[dict[str, Any]], graded: Sequence[Graded], mode: str) -> str:
    lines = [
        f"### Known items over held-out files, mode {mode} (primary: found@5)",
        "",
        "| format | questions | found@5 | recall@5 | MRR@10 |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        share = r["found@5"] / r["questions"] if r["questions"] else 0.0
        lines.append(
            f"| {r['format']} | {r['questions']} | {r['found@5']} ({share:.0%}) | {r['recall@5']:.3f} | "
            f"{r['mrr@10']:.3f} |"
        )
    misses = [g for g in graded if not g.found]
    if misses:
        lines += ["", "Misses (target; then the first three hits):"]
        for g in misses:
            lines.append(f"- {g.question.id} [{g.fmt}] {g.question.text}")
            lines.append(f"  target: {'; '.join(_where(t) for t in g.question.targets)}")
            lines += [f"  {n}. {first}" for n, first in enumerate(g.first, start=1)]
    return "\n".join(lines)


def check_labels(corpus: Path, questions: Sequence[Question]) -> tuple[list[str], list[str]]:
    """Problems with the labels, read from the loaded documents (no store, no search), and notes: where the
    loader's sections differ from the document's own headings that label a target."""
    docs = _loaded(corpus)
    problems: list[str] = []
    notes: list[str] = []
    for q in questions:
        for t in q.targets:
            doc = docs.get(t.doc_id)
            if doc is None:
                problems.append(f"{q.id}: no document {t.doc_id!r} in the corpus")
                continue
            text = normalise(doc.text)
            evidence = normalise(t.evidence)
            if evidence not in text:
                problems.append(f"{q.id}: evidence not in {t.doc_id}: {t.evidence!r}")
                continue
            if t.page is not None:
                page = next((p for p in doc.pages if p.number == t.page), None)
                if page is None or evidence not in normalise(doc.text[page.start : page.end]):
                    problems.append(f"{q.id}: evidence not on page {t.page} of {t.doc_id}")
            elif t.section is not None:
                spans = [s for s in doc.sections if evidence in normalise(doc.text[s.start : s.end])]
                if not any(s.title == t.section for s in spans):
                    # The label names the document's own heading; a loader whose sections stop short of it is
                    # a finding about the loader, reported here, not a wrong label.
                    inner = spans[-1].title if spans else "none"
                    notes.append(f"{q.id}: the loader puts this evidence under {inner!r}, not {t.section!r}")
    return problems, notes


def _loaded(corpus: Path) -> dict[str, Any]:
    """Every document the corpus makes, by id: each file, and each part of a container (a mailbox's messages)."""
    from sextant.kb.document_ids import document_id_for, is_container, part_id
    from sextant.kb.loaders import load_bytes, load_file, mail, supported_files

    docs: dict[str, Any] = {}
    for path in supported_files(corpus):
        doc_id = document_id_for(path)
        docs[doc_id] = load_file(path)
        if is_container(path.name):
            taken: set[str] = set()
            for part in mail.unpack(path.read_bytes(), path.name).files:
                pid = part_id(doc_id, part.key, taken)
                taken.add(pid)
                docs[pid] = load_bytes(part.data, part.name)
    return docs


def _where(t: Target) -> str:
    place = f" p.{t.page}" if t.page is not None else (f" § {t.section}" if t.section else "")
    return f"{t.doc_id}{place}: {t.evidence[:60]!r}"


def _describe(hit: Hit) -> str:
    place = f" p.{','.join(map(str, hit.pages))}" if hit.pages else ""
    section = f" § {hit.section}" if hit.section else ""
    text = " ".join((hit.text or "").split())[:90]
    return f"{hit.document_id}{section}{place}: {text!r}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, required=True, help="the folder scripts/formats_corpus.py made")
    parser.add_argument("--set", type=Path, default=Path("eval/formats.jsonl"), dest="golden")
    parser.add_argument("--mode", default="rrf", choices=["rrf", "hybrid", "dense", "lexical", "rerank"])
    parser.add_argument("--json", type=Path, help="write the table, the questions' outcomes and the ingest report")
    parser.add_argument("--store", type=Path, help="keep the store here (default: a temporary folder, removed)")
    parser.add_argument("--check-labels", action="store_true", help="verify the labels against the loaded files first")
    ns = parser.parse_args(argv)
    if not ns.corpus.is_dir():
        parser.error(f"{ns.corpus} is not a folder: build it with scripts/formats_corpus.py --out {ns.corpus}")
    questions = load_golden(ns.golden)
    formats = {
        str(row["id"]): str(row.get("format", "?"))
        for row in map(json.loads, ns.golden.read_text(encoding="utf-8").splitlines())
    }
    if ns.check_labels:
        problems, notes = check_labels(ns.corpus, questions)
        print("\n".join(notes + problems) or "labels: every evidence is in its document and place", file=sys.stderr)
        if problems:
            sys.exit(1)
    with tempfile.TemporaryDirectory(prefix="known-items-") as tmp:
        store = ns.store or Path(tmp) / "store"
        report = ingest(ns.corpus, store)
        print(report, file=sys.stderr)
        graded = grade(questions, formats, store, ns.mode)
    rows = table(graded)
    print(markdown(rows, graded, ns.mode))
    if ns.json:
        out = {"set": str(ns.golden), "mode": ns.mode, "k": K, "primary": "found@5", "ingest": report.splitlines()}
        out |= {"formats": rows, "questions": [g.as_json() for g in graded]}
        ns.json.write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
