"""Grade the agent end to end on a golden set: what its searches retrieved, and how it cited.

The agent runs as in production: the real loop, the configured model, ``sextant-kb`` as a stdio
subprocess over the set's store. Retrieval is graded on the passages the loop's searches returned,
in the order they were numbered (so a model-written query that misses shows up here); answers are
written as ``sextant-judge`` JSONL and graded for citation validity and abstention.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sextant.agent.answer_check import AnswerCheck
from sextant.agent.events import (
    AgentEvent,
    AnswerEvent,
    AnswerStatement,
    SourcesEvent,
    StatementEvent,
    ToolResultEvent,
)
from sextant.agent.kb_client import SHARED_STORE, KbClient, ScopedKb, stdio_server
from sextant.agent.loop import AgentLoop
from sextant.agent.passages import Passage
from sextant.agent.policies import sentences_read
from sextant.agent.settings import AgentSettings
from sextant.evals.golden import Question
from sextant.evals.harness import ModeReport, grade_retrievals
from sextant.evals.oracle import find, read
from sextant.llm.chat import ChatModel, YesNoModel


@dataclass(frozen=True, slots=True)
class RetrievedPassage:
    """A passage the agent was shown, in the shape the golden-set judge reads."""

    chunk_id: str
    document_id: str
    pages: list[int]
    section: str | None
    text: str | None

    @classmethod
    def of(cls, passage: Passage) -> RetrievedPassage:
        pages = [passage.page] if passage.page is not None else []
        return cls(passage.chunk_id or "", passage.document_id or "", pages, passage.section, passage.text)


@dataclass
class AgentRun:
    question: Question
    retrieved: list[Passage] = field(default_factory=list)
    searches_found: list[int] = field(default_factory=list)
    answer: AnswerEvent | None = None
    # Seconds from the question: until the first search returned, the first statement, the answer.
    searched_s: float | None = None
    first_statement_s: float | None = None
    answered_s: float | None = None
    checking_s: float = 0.0  # of those, the seconds the answer check's model spent reading

    @property
    def retrieval_abstained(self) -> bool:
        return not any(self.searches_found)


async def ask_all(
    questions: Sequence[Question],
    model: ChatModel | None,
    store: Path,
    settings: AgentSettings,
    progress: Callable[[int, AgentRun], None] | None = None,
    answer_check: AnswerCheck | None = None,
) -> list[AgentRun]:
    """Every question through the served loop (``AgentLoop.from_settings``) and a real ``sextant-kb`` process over
    ``store``."""
    checker = TimedChecker(answer_check.model) if answer_check is not None else None
    params = stdio_server(None)
    params.env = {**(params.env or dict(os.environ)), "SEXTANT_CHROMA_DIR": str(store), "SEXTANT_LOG_LEVEL": "WARNING"}
    runs: list[AgentRun] = []
    async with KbClient(params) as kb:
        loop = AgentLoop.from_settings(
            ScopedKb(kb, SHARED_STORE),
            model,
            settings,
            answer_check=AnswerCheck(checker) if checker is not None else None,
            # No daily budget: a question stopped by it would be answered in excerpts, and the set would grade a
            # different loop from one question to the next. An evaluation's spend is bounded by its question count.
            budget=None,
        )
        for question in questions:
            run = AgentRun(question)
            checked_before = checker.seconds if checker is not None else 0.0
            passages: dict[int, Passage] = {}
            order: list[int] = []
            started = time.perf_counter()
            async for event in loop.run(question.text):
                _record(event, run, passages, order)
                _time(event, run, time.perf_counter() - started)
            run.retrieved = [passages[label] for label in order if label in passages]
            run.checking_s = (checker.seconds if checker is not None else 0.0) - checked_before
            runs.append(run)
            if progress is not None:
                progress(len(runs), run)
    return runs


class TimedChecker:
    """The answer check's model, with the seconds it has spent answering counted."""

    def __init__(self, model: YesNoModel) -> None:
        self.model = model
        self.name = model.name
        self.seconds = 0.0

    async def yes_probability(self, system: str, question: str) -> float:
        started = time.perf_counter()
        try:
            return await self.model.yes_probability(system, question)
        finally:
            self.seconds += time.perf_counter() - started

    async def aclose(self) -> None:
        await self.model.aclose()


def _record(event: AgentEvent, run: AgentRun, passages: dict[int, Passage], order: list[int]) -> None:
    if isinstance(event, ToolResultEvent) and event.name == "kb_search":
        run.searches_found.append(event.found)
        order.extend(label for label in event.labels if label not in order)
    elif isinstance(event, SourcesEvent):
        passages.update({p.label: p for p in event.passages if p.tier == "kb"})
    elif isinstance(event, AnswerEvent):
        run.answer = event


def _time(event: AgentEvent, run: AgentRun, seconds: float) -> None:
    if isinstance(event, ToolResultEvent) and run.searched_s is None:
        run.searched_s = seconds
    elif isinstance(event, StatementEvent) and run.first_statement_s is None:
        run.first_statement_s = seconds
    elif isinstance(event, AnswerEvent):
        run.answered_s = seconds


def grade_runs(name: str, runs: Sequence[AgentRun]) -> ModeReport:
    by_id = {run.question.id: run for run in runs}

    def retrieve(question: Question) -> tuple[list[RetrievedPassage], bool]:
        run = by_id[question.id]
        return [RetrievedPassage.of(p) for p in run.retrieved], run.retrieval_abstained

    return grade_retrievals(name, [run.question for run in runs], retrieve)


def judge_rows(runs: Sequence[AgentRun]) -> list[dict[str, Any]]:
    """The answers in ``sextant-judge`` format (id, answer, the passages shown, answerable), with what was removed."""
    return [
        {
            "id": run.question.id,
            "answer": run.answer.text if run.answer else "",
            "passages": {str(p.label): p.text for p in run.retrieved},
            "answerable": run.question.answerable,
            "mode": run.answer.mode if run.answer else "none",
            "abstained": run.answer.abstained if run.answer else True,
            "statements": [s.model_dump() for s in run.answer.statements] if run.answer else [],
            # What the checks removed, with the quotes the model wrote, so that an abstention can be traced to the
            # quote check or the answer check and a variant of either replayed without the model.
            "removed": [r.model_dump() for r in run.answer.verification.removed] if run.answer else [],
        }
        for run in runs
    ]


def answer_summary(runs: Sequence[AgentRun]) -> dict[str, Any]:
    """Citation validity, verification firing, the answer check's removals and abstention over the answers."""
    answers = [run.answer for run in runs if run.answer is not None]
    labels_total = sum(a.citations.labels_total for a in answers)
    labels_valid = sum(a.citations.labels_valid for a in answers)
    checked = [a for a in answers if a.verification.checked]
    answerable = [run for run in runs if run.question.answerable and run.answer]
    unanswerable = [run for run in runs if not run.question.answerable and run.answer]

    def abstains(run: AgentRun) -> bool:
        assert run.answer is not None
        return run.answer.abstained

    return {
        "answers": len(answers),
        "model_answers": sum(1 for a in answers if a.mode == "model"),
        "label_validity": round(labels_valid / labels_total, 4) if labels_total else None,
        "dangling_labels": sum(len(a.citations.dangling) for a in answers),
        "claims_cited_share": round(
            sum(a.citations.claims_cited for a in answers) / max(1, sum(a.citations.claims for a in answers)), 4
        ),
        "verification_checked": len(checked),
        "verification_fired": sum(1 for a in checked if a.verification.unsupported),
        "answer_checks": sum(a.verification.answer_checks for a in answers),
        "answer_check_removed": sum(len(a.verification.not_answering) for a in answers),
        "abstained_on_unanswerable": _share([abstains(r) for r in unanswerable]),
        "abstained_on_answerable": _share([abstains(r) for r in answerable]),
        # Answers whose typed abstention the oracle's reading of their text contradicts: a product bug if not 0.
        "abstention_disagreements": sum(_disagrees(r) for r in runs if r.answer is not None),
        # An answer the citation check accepts may still stand on the wrong sentence: this one reads the labels.
        "answered_on_the_evidence": _share([on_the_evidence(r) for r in answerable]),
        "mean_turns": round(statistics.fmean(a.turns for a in answers), 2) if answers else None,
        "tokens_out": sum(a.usage.output_tokens for a in answers),
        **evidence_reach(runs),
        **evidence_summary(runs),
        **timing_summary(runs),
    }


def _disagrees(run: AgentRun) -> bool:
    assert run.answer is not None
    shown = {p.label: p.text for p in run.retrieved}
    return read(run.answer.text, shown, abstained=run.answer.abstained).disagrees


def on_the_evidence(run: AgentRun, statements: Sequence[AnswerStatement] | None = None) -> bool:
    """Whether a statement of the answer (or of ``statements``) stands on the golden evidence of its question."""
    if run.answer is None:
        return False
    said = run.answer.statements if statements is None else statements
    return stands_on_the_evidence(run.question, said, run.retrieved)


def stands_on_the_evidence(
    question: Question, statements: Sequence[AnswerStatement], passages: Sequence[Passage]
) -> bool:
    """Whether a statement's span overlaps where a labelled snippet stands in a passage of the labelled document."""
    spans = [(e.label, e.start, e.end) for statement in statements for e in statement.evidence]
    return overlaps(spans, _labelled_spans(question, passages))


def _labelled_spans(question: Question, passages: Sequence[Passage]) -> list[tuple[int, int, int]]:
    """``(label, start, end)`` of each labelled snippet of ``question`` where it stands in a passage of its document."""
    spans: list[tuple[int, int, int]] = []
    for passage in passages:
        for target in question.targets:
            if target.doc_id == passage.document_id and target.evidence:
                gold = find(target.evidence, passage.text)
                if gold is not None:
                    spans.append((passage.label, *gold))
    return spans


def overlaps(spans: Sequence[tuple[int, int, int]], gold: Sequence[tuple[int, int, int]]) -> bool:
    """Whether a ``(label, start, end)`` span overlaps a labelled one in the same passage."""
    return any(
        label == g and start < g_end and g_start < end for label, start, end in spans for g, g_start, g_end in gold
    )


def evidence_reach(runs: Sequence[AgentRun]) -> dict[str, Any]:
    """Of the answerable questions with labelled snippets, the share whose snippet was in a passage shown, and
    the share whose snippet was among the sentences a small model reads of them (``ForcedSearch``): where an
    answer is lost before the writer, in the search or in the choice of sentences."""
    labelled = [r for r in runs if r.question.answerable and any(t.evidence for t in r.question.targets)]
    shown: list[bool] = []
    read: list[bool] = []
    for run in labelled:
        gold = _labelled_spans(run.question, run.retrieved)
        shown.append(bool(gold))
        sentences = sentences_read(run.question.text, run.retrieved)
        read.append(overlaps([(s.label, s.start, s.end) for s in sentences], gold))
    return {"evidence_in_passages_shown": _share(shown), "evidence_in_sentences_read": _share(read)}


def evidence_summary(runs: Sequence[AgentRun]) -> dict[str, Any]:
    """Citation precision (cited passages that contain the statement's quote, checked here again, from the
    passage text the client received) and labels per statement."""
    cited = contained = statements = 0
    labels = 0
    for run in runs:
        if run.answer is None:
            continue
        texts = {p.label: p.text for p in run.retrieved}
        for statement in run.answer.statements:
            statements += 1
            distinct = {e.label for e in statement.evidence}
            labels += len(distinct)
            for label in distinct:
                cited += 1
                quotes = [e.quote for e in statement.evidence if e.label == label]
                contained += any(find(q, texts.get(label, "")) is not None for q in quotes)
    return {
        "statements": statements,
        "citation_precision": round(contained / cited, 4) if cited else None,
        "labels_per_statement": round(labels / statements, 3) if statements else None,
    }


def timing_summary(runs: Sequence[AgentRun]) -> dict[str, Any]:
    """Median seconds: to the answer, to the first statement after the search returned, of the answer check's
    reading, and of the writer's grounded turn alone (search returned to answer, less the check's reading), the
    floor an answer cannot beat."""
    answered = [r.answered_s for r in runs if r.answered_s is not None]
    after_search = [
        r.first_statement_s - r.searched_s for r in runs if r.first_statement_s is not None and r.searched_s is not None
    ]
    turn = [
        r.answered_s - r.searched_s - r.checking_s
        for r in runs
        if r.answered_s is not None and r.searched_s is not None
    ]
    p50 = statistics.median
    return {
        "answer_p50_s": round(p50(answered), 2) if answered else None,
        "first_statement_after_search_p50_s": round(p50(after_search), 2) if after_search else None,
        "answer_check_p50_s": round(p50([r.checking_s for r in runs]), 2) if runs else None,
        "grounded_turn_p50_s": round(p50(turn), 2) if turn else None,
        "answer_to_floor": round(p50(answered) / p50(turn), 3) if answered and turn and p50(turn) > 0 else None,
    }


def _share(flags: list[bool]) -> float | None:
    return round(sum(flags) / len(flags), 4) if flags else None


def write_jsonl(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
