"""sextant-eval-agent's grading, through the real loop and a real sextant-kb process (scripted model)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from limits import RateLimitItemPerSecond
from limits.aio.storage import MemoryStorage
from limits.aio.strategies import MovingWindowRateLimiter

from sextant.agent.answer_check import answer_check_for
from sextant.agent.ask import ask
from sextant.agent.budget import DailyBudget
from sextant.agent.events import (
    AgentEvent,
    AnswerEvent,
    AnswerStatement,
    CitationSummary,
    Evidence,
    UsageInfo,
    Verification,
)
from sextant.agent.kb_client import SHARED_STORE, ScopedKb
from sextant.agent.kb_supervisor import KbSupervisor
from sextant.agent.loop import AgentLoop
from sextant.agent.ops import Metrics
from sextant.agent.passages import Passage
from sextant.agent.policies import SENTENCES_SHOWN
from sextant.agent.routes.query import served_loop
from sextant.agent.settings import AgentSettings
from sextant.agent.state import AgentState
from sextant.evals.agent_eval import (
    AgentRun,
    TimedChecker,
    answer_summary,
    ask_all,
    evidence_reach,
    grade_runs,
    judge_rows,
    on_the_evidence,
    timing_summary,
    write_jsonl,
)
from sextant.evals.golden import Question, Target
from sextant.evals.judge_cli import judge_file
from sextant.kb.documents import LoadedDocument, PageSpan
from sextant.kb.embeddings import Embedder
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.llm.chat import Quote, Statement
from sextant.llm.factory import ModelChoice
from sextant.llm.scripted import ScriptedModel, ScriptedTurn, ScriptedYesNo, search_call
from sextant.settings import KbSettings

READY = ScriptedTurn(text="READY")
ESPRESSO = "A double shot of espresso uses 18 grams of finely ground coffee."
TAXES = "Sales tax returns are filed quarterly, by the 20th day of the second month."


@pytest.mark.slow
def test_the_agent_is_graded_on_what_its_searches_returned_and_how_it_cited(tmp_path: Path, embedder: Embedder) -> None:
    store = tmp_path / "store"
    with KnowledgeBase.open(KbSettings(chroma_dir=store, _env_file=None), embedder=embedder) as kb:  # type: ignore[call-arg]
        for doc_id, text in (("espresso", ESPRESSO), ("taxes", TAXES)):
            kb.ingest(doc_id, LoadedDocument(text=text, title=doc_id, pages=(PageSpan(0, len(text), 1, "1"),)))
    questions = [
        Question("q1", "How much coffee in a double?", True, (Target("espresso", 1, None, "uses 18 grams"),), "fact"),
        Question("q2", "What is lattice QCD?", False, (), "unanswerable"),
    ]
    model = ScriptedModel(
        [
            ScriptedTurn(tool_calls=(search_call("double espresso coffee grams"),)),
            READY,
            ScriptedTurn(
                statements=(
                    Statement("A double uses 18 grams of coffee.", (Quote(1, "18 grams of finely ground coffee"),)),
                    # Passage 9 was never shown: the quote is not looked for and the statement is dropped.
                    Statement("It tastes strong and bitter.", (Quote(9, "strong and bitter"),)),
                )
            ),
            ScriptedTurn(tool_calls=(search_call("lattice quantum chromodynamics"),)),
            READY,
            ScriptedTurn(statements=()),
        ]
    )
    seen: list[str] = []
    settings = AgentSettings(_env_file=None)  # type: ignore[call-arg]  # the served defaults, as a route would have them
    runs = anyio.run(ask_all, questions, model, store, settings, lambda n, run: seen.append(run.question.id))
    assert seen == ["q1", "q2"]

    report = grade_runs("agent", runs)
    assert report.metrics["hit@1"] == 1.0  # the espresso passage was the first one numbered
    summary = answer_summary(runs)
    # The claim citing unshown passage 9 was dropped before it was written: no dangling label reaches the answer.
    assert summary["dangling_labels"] == 0 and summary["label_validity"] == 1.0
    assert summary["statements"] == 1 and summary["citation_precision"] == 1.0
    assert summary["labels_per_statement"] == 1.0
    assert summary["answer_p50_s"] is not None and summary["grounded_turn_p50_s"] is not None
    first = runs[0].answer
    assert first is not None and first.text == "A double uses 18 grams of coffee [1]."
    assert first.citations.unsourced == ["It tastes strong and bitter."]
    assert first.statements[0].evidence[0].quote == ESPRESSO  # the whole sentence the quote stands in
    assert summary["abstained_on_unanswerable"] == 1.0 and summary["abstained_on_answerable"] == 0.0
    assert summary["abstention_disagreements"] == 0 and runs[1].answer is not None and runs[1].answer.abstained
    # The kept statement stands on the labelled snippet; one standing on other words of the passage would not.
    assert summary["answered_on_the_evidence"] == 1.0
    assert summary["evidence_in_passages_shown"] == summary["evidence_in_sentences_read"] == 1.0
    elsewhere = AnswerStatement(text="A double.", evidence=[Evidence.at(1, ESPRESSO, 0, 13)], supported=True)
    assert on_the_evidence(runs[0]) and not on_the_evidence(runs[0], [elsewhere])

    answers = tmp_path / "answers.jsonl"
    write_jsonl(answers, judge_rows(runs))
    rows = [json.loads(line) for line in answers.read_text().splitlines()]
    assert rows[0]["passages"]["1"] == ESPRESSO and "[9]" not in rows[0]["answer"]
    assert [s["text"] for s in rows[0]["statements"]] == ["A double uses 18 grams of coffee."]
    [removed] = rows[0]["removed"]
    assert {k: removed[k] for k in ("text", "quotes", "check")} == {
        "text": "It tastes strong and bitter.",
        "quotes": [{"label": 9, "quote": "strong and bitter"}],
        "check": "quote",
    }
    assert (removed["trail"][0]["reason"], removed["trail"][-1]["reason"]) == ("label_not_shown", "no_evidence")
    lines, failed = judge_file(answers)
    assert failed == 0, lines  # the unsupported claim never reached the answer, so nothing is left uncited


def test_evidence_reach_says_whether_the_labelled_snippet_was_shown_and_among_the_sentences_read() -> None:
    coffee = " ".join(f"The coffee grinder model {i} grinds coffee beans finely." for i in range(SENTENCES_SHOWN + 2))
    buried = f"{coffee} The tank holds two litres."
    espresso = Passage(label=1, document_id="espresso", title="Manual", text=f"{ESPRESSO} {coffee}")
    manual = Passage(label=1, document_id="espresso", title="Manual", text=buried)
    taxes = Passage(label=1, document_id="taxes", title="Taxes", text=TAXES)

    def run(question: str, evidence: str, passage: Passage) -> AgentRun:
        target = Target("espresso", 1, None, evidence)
        return AgentRun(Question("q", question, True, (target,), "fact"), retrieved=[passage])

    runs = [
        run("How much coffee does a double espresso use?", "uses 18 grams", espresso),  # shown and read
        run("Which grinder grinds the coffee beans finely?", "two litres", manual),
        run("How much coffee does a double espresso use?", "uses 18 grams", taxes),  # not shown
        AgentRun(Question("u", "What is lattice QCD?", False, (), "unanswerable"), retrieved=[taxes]),
    ]
    # The tank's sentence shares no word with the question, and ten grinders' sentences do: it is not read.
    assert evidence_reach(runs) == {"evidence_in_passages_shown": 0.6667, "evidence_in_sentences_read": 0.3333}


def test_the_floor_is_the_writer_s_turn_alone_the_answer_check_s_reading_left_out() -> None:
    question = Question("q", "How much coffee?", True, (), "fact")
    runs = [
        AgentRun(question, searched_s=1.0, first_statement_s=9.0, answered_s=11.0, checking_s=2.0),
        AgentRun(question, searched_s=1.0, first_statement_s=7.0, answered_s=9.0, checking_s=1.0),
        AgentRun(question, searched_s=1.0, answered_s=5.0),  # abstained before any check
    ]
    assert timing_summary(runs) == {
        "answer_p50_s": 9.0,
        "first_statement_after_search_p50_s": 7.0,
        "answer_check_p50_s": 1.0,
        "grounded_turn_p50_s": 7.0,  # 8, 7 and 4 seconds of writing after the search
        "answer_to_floor": 1.286,
    }


def test_the_answer_check_s_model_is_timed_and_answers_as_it_would() -> None:
    checker = TimedChecker(ScriptedYesNo([0.7]))
    assert anyio.run(checker.yes_probability, "system", "Does it answer?") == 0.7
    assert checker.name == "scripted-yes-no" and checker.seconds > 0


class _NoKb:
    """Stands in for the ``sextant-kb`` process: the loops below are built, never run against it."""

    def __init__(self, server: object) -> None:
        self.server = server

    async def __aenter__(self) -> _NoKb:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None


def _loops_built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settings: AgentSettings) -> dict[str, AgentLoop]:
    """The loop each entry point builds over ``settings``, a priced model and an answer check: the route's
    (``served_loop``, under a daily budget), ``sextant-ask``'s and ``sextant-eval-agent``'s (``ask_all``)."""
    choice = ModelChoice(ScriptedModel([], priced=True), "scripted", "test double", ScriptedYesNo([]))
    state = AgentState(
        settings=settings,
        kb=KbSupervisor(None),  # never entered
        choice=choice,
        budget=DailyBudget(1.0, tmp_path / "spend.json"),
        limiter=MovingWindowRateLimiter(MemoryStorage()),
        rate=RateLimitItemPerSecond(10, 60),
        metrics=Metrics(1.0),
    )
    built: list[AgentLoop] = []

    async def answer_at_once(self: AgentLoop, question: str, **_: Any) -> AsyncIterator[AgentEvent]:
        built.append(self)
        yield AnswerEvent(
            text="",
            mode="model",
            citations=CitationSummary(claims=0, claims_cited=0, labels_total=0, labels_valid=0, dangling=[]),
            verification=Verification(checked=False),
            abstained=True,
            usage=UsageInfo(),
            turns=0,
        )

    monkeypatch.setattr(AgentLoop, "run", answer_at_once)
    monkeypatch.setattr("sextant.agent.ask.KbClient", _NoKb)
    monkeypatch.setattr("sextant.evals.agent_eval.KbClient", _NoKb)
    monkeypatch.setattr("sextant.agent.ask.build_model", lambda settings: choice)
    route = served_loop(state, ScopedKb(_NoKb(None), SHARED_STORE))  # type: ignore[arg-type]
    question = Question("q", "How much coffee in a double?", True, (), "fact")
    anyio.run(ask_all, [question], choice.model, tmp_path / "store", settings, None, answer_check_for(choice))
    assert anyio.run(ask, question.text, settings) == 0
    [measured, shell] = built
    return {"route": route, "ask": shell, "eval": measured}


def _configured(loop: AgentLoop) -> dict[str, object]:
    """What the loop's settings and models make of it (the route times its models and the evaluation its
    checker: the names are the models')."""
    return {
        "model": loop.model.name if loop.model is not None else None,
        "answer_check": loop.answer_check.model.name if loop.answer_check is not None else None,
        "verify": loop.verify,
        "unsupported": loop.unsupported,
        "quotes": loop.quotes,
        "web_search": loop.web_search,
        "max_output_tokens": loop.max_output_tokens,
    }


def test_the_route_sextant_ask_and_the_evaluation_build_the_same_loop_from_the_same_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = AgentSettings(  # type: ignore[call-arg]
        _env_file=None, verify="mark", unsupported="mark", quotes="exact", web_search="on", max_output_tokens=300
    )
    loops = _loops_built(tmp_path, monkeypatch, settings)
    served = _configured(loops["route"])
    assert served == {
        "model": "scripted",
        "answer_check": "scripted-yes-no",
        "verify": "mark",
        "unsupported": "mark",
        "quotes": "exact",
        "web_search": True,
        "max_output_tokens": 300,
    }
    assert _configured(loops["ask"]) == served and _configured(loops["eval"]) == served
    # The one difference, named where each is built: the daily budget is the server's.
    assert loops["route"].budget is not None and loops["ask"].budget is None and loops["eval"].budget is None


def test_the_evaluation_s_loop_has_the_route_s_output_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = AgentSettings(_env_file=None, max_output_tokens=512)  # type: ignore[call-arg]
    loops = _loops_built(tmp_path, monkeypatch, settings)
    assert loops["eval"].max_output_tokens == loops["route"].max_output_tokens == 512
