"""Each check's effect on recorded answers: the statements it removed, and those its tolerances kept, on the labelled
snippet and elsewhere.

Read from the rows ``sextant-eval-agent`` writes (``answers-*.jsonl``: the passages shown, the statements kept with
their evidence and trail, those removed with the quotes the model wrote and their trail) and the golden set they
answer. A row written before statements carried a trail is checked again by ``statement_checks.replay``, the
answer check's recorded outcome standing in for its model; a kept statement is then replayed on its evidence, so
which tolerance kept it is not known (its quotes were not recorded).

A statement is **on the snippet** when its question is answerable and a span it cites (its evidence when kept;
where its quotes, or its own words, stand in the passages they name when removed) overlaps where the labelled
snippet stands in a passage shown (both found by the oracle's matcher); otherwise **elsewhere**, as is every
statement on an unanswerable question. A kept statement on the snippet is a right answer (the checks made its claim
agree with its evidence); a removed one pointed at the right place, but its claim may still misstate it (which is
what ``says`` removes), so removals on the snippet bound the right answers a rule cost from above. A kept
statement elsewhere is a wrong answer, or a right one from another sentence the labels missed.

Which rule decided, from the trail: a removal is the last verdict's, with ``supported``'s "no evidence" told apart
into ``says`` (a quote was found but its sentences do not say the claim) and ``quote`` (none found); a kept
statement is the tolerance's that gave its evidence when the exact lookup did not (``found_by_run``,
``own_words``, ``fact_sentence``), else ``exact``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

from sextant.agent.answer_check import AnswerCheck
from sextant.agent.events import Verdict
from sextant.agent.statement_checks import Replayed, StatementChecks, replay
from sextant.evals.agent_eval import overlaps
from sextant.evals.golden import Question
from sextant.evals.oracle import find
from sextant.llm.chat import Quote, Statement

REMOVERS = ("quote", "says", "answer_kind", "answer_check")
TOLERANCES = ("found_by_run", "own_words", "fact_sentence")


@dataclass
class Effects:
    """Per rule, the statements it decided: ``removed[rule]`` and ``kept[rule]`` count those on the snippet and
    elsewhere."""

    removed: dict[str, Counter[str]] = field(default_factory=dict)
    kept: dict[str, Counter[str]] = field(default_factory=dict)
    statements: int = 0

    def add(self, kept: bool, rule: str, on_snippet: bool) -> None:
        side = self.kept if kept else self.removed
        side.setdefault(rule, Counter())["on_snippet" if on_snippet else "elsewhere"] += 1
        self.statements += 1

    def as_json(self) -> dict[str, Any]:
        def rows(side: dict[str, Counter[str]], rules: Iterable[str]) -> dict[str, dict[str, int]]:
            return {r: {k: side.get(r, Counter())[k] for k in ("on_snippet", "elsewhere")} for r in rules}

        return {
            "statements": self.statements,
            "removed_by": rows(self.removed, REMOVERS),
            "kept_by": rows(self.kept, ("exact", *TOLERANCES)),
        }


@dataclass(frozen=True)
class Recorded:
    """One statement of a recorded answer: as the model wrote it (its quotes from its trail, or, for a kept
    statement recorded before the trail, its evidence), whether it was kept, its recorded trail (empty before the
    trail), the spans it cites, and the answer check's recorded P(yes) (before the trail, only its side of 0.5 was
    recorded: 1 or 0)."""

    statement: Statement
    kept: bool
    trail: list[Verdict]
    spans: list[tuple[int, int, int]]
    p_yes: float

    def replayed(self, question: str, passages: Mapping[int, str]) -> Replayed:
        """Its fate under today's checks, the answer check giving its recorded outcome."""
        checks = StatementChecks(answer_check=AnswerCheck(RecordedReading(self.p_yes)))
        return anyio.run(replay, question, passages, self.statement, checks)


def recorded_statements(row: Mapping[str, Any]) -> list[Recorded]:
    """The statements of one ``answers-*.jsonl`` row, kept then removed."""
    passages = {int(label): str(text) for label, text in row["passages"].items()}
    found: list[Recorded] = []
    for kept in row.get("statements", []):
        trail = _trail(kept)
        quotes = _written(trail) or [(e["label"], e["quote"]) for e in kept["evidence"]]
        spans = [(e["label"], e["start"], e["end"]) for e in kept["evidence"]]
        found.append(Recorded(_statement(kept["text"], quotes), True, trail, spans, _p_yes(trail, True)))
    for removed in row.get("removed", []):
        quotes = [(q["label"], q["quote"]) for q in removed["quotes"]]
        spans = _written_spans(removed["text"], quotes, passages)
        trail = _trail(removed)
        p_yes = _p_yes(trail, removed["check"] != "answer")
        found.append(Recorded(_statement(removed["text"], quotes), False, trail, spans, p_yes))
    return found


def effects(rows: Iterable[Mapping[str, Any]], questions: Mapping[str, Question]) -> Effects:
    """Every recorded statement of ``rows`` (answers of ``questions``, by id) attributed to the rule that decided it."""
    tally = Effects()
    for row in rows:
        question = questions.get(str(row["id"]))
        if question is None or row.get("mode") != "model":
            continue
        passages = {int(label): str(text) for label, text in row["passages"].items()}
        gold = snippet_spans(question, passages)
        for statement in recorded_statements(row):
            trail = statement.trail or statement.replayed(question.text, passages).trail
            rule = kept_by(trail) if statement.kept else removed_by(trail)
            tally.add(statement.kept, rule, question.answerable and overlaps(statement.spans, gold))
    return tally


def removed_by(trail: Sequence[Verdict]) -> str:
    """The rule that removed a statement, from its trail."""
    last = trail[-1] if trail else None
    if last is None or last.rule in ("answer_kind", "answer_check"):
        return last.rule if last is not None else "quote"
    return "says" if any(v.rule == "says" for v in trail) else "quote"


def kept_by(trail: Sequence[Verdict]) -> str:
    """The tolerance that gave a kept statement its evidence, or ``exact``."""
    passed = {(v.rule, v.reason) for v in trail if v.passed}
    if ("fact_sentence", "holds_every_word") in passed:
        return "fact_sentence"
    if ("own_words", "in_passage") in passed:
        return "own_words"
    if ("quote", "found_by_run") in passed and ("quote", "found") not in passed:
        return "found_by_run"
    return "exact"


def snippet_spans(question: Question, passages: Mapping[int, str]) -> list[tuple[int, int, int]]:
    """``(label, start, end)`` wherever a labelled snippet of ``question`` stands in a passage shown."""
    spans = []
    for label, text in passages.items():
        for target in question.targets:
            at = find(target.evidence, text) if target.evidence else None
            if at is not None:
                spans.append((label, *at))
    return spans


def _written_spans(text: str, quotes: list[tuple[int, str]], passages: Mapping[int, str]) -> list[tuple[int, int, int]]:
    """Where a removed statement's quotes stand in the passages they name, and its own words in any passage."""
    spans = [(label, *at) for label, quote in quotes if (at := find(quote, passages.get(label, ""))) is not None]
    spans += [(label, *at) for label, passage in passages.items() if (at := find(text, passage)) is not None]
    return spans


def _trail(statement: Mapping[str, Any]) -> list[Verdict]:
    return [Verdict.model_validate(v) for v in statement.get("trail", [])]


def _written(trail: Sequence[Verdict]) -> list[tuple[int, str]]:
    """The quotes as the model wrote them, from the verdicts on each."""
    return [(v.label, v.quote) for v in trail if v.rule in ("quote", "says") and v.label is not None and v.quote]


def _statement(text: str, quotes: Sequence[tuple[int, str]]) -> Statement:
    return Statement(text, tuple(Quote(label, words) for label, words in quotes))


def _p_yes(trail: Sequence[Verdict], answers: bool) -> float:
    scores = [v.score for v in trail if v.rule == "answer_check" and v.score is not None]
    return scores[-1] if scores else 1.0 if answers else 0.0


class RecordedReading:
    """The answer check's model as the recording has it: its P(yes) for this statement, given again (the model is
    not run in a replay)."""

    name = "recorded"

    def __init__(self, probability: float) -> None:
        self.probability = probability

    async def yes_probability(self, system: str, question: str) -> float:
        return self.probability

    async def aclose(self) -> None:
        return None
