"""The tool-use loop with the scripted model, over the real knowledge-base MCP server (in memory)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from sextant.agent.answer_check import AnswerCheck
from sextant.agent.events import (
    AgentEvent,
    AnswerEvent,
    CitationEvent,
    SourcesEvent,
    StatementEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from sextant.agent.kb_client import SHARED_STORE, KbClient, ScopedKb
from sextant.agent.loop import NOT_ANSWERED, AgentLoop, HistoryItem
from sextant.agent.passages import Passage
from sextant.agent.policies import MAX_TURNS
from sextant.agent.search_tool import EMPTY_KNOWLEDGE_BASE
from sextant.agent.settings import AgentSettings
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.server import create_server
from sextant.llm.chat import GroundingSupport, ModelError, Quote, Statement, ToolCall, Usage, WebSource
from sextant.llm.gemini import GeminiModel
from sextant.llm.scripted import ScriptedModel, ScriptedTurn, ScriptedYesNo, search_call
from tests.llm.gemini_protocol_server import GeminiProtocolServer, function_call_part, response, text_part

ESPRESSO = (
    "# Espresso\n\nBrew espresso with water at 93 degrees Celsius. A double shot uses 18 grams of finely "
    "ground coffee and yields about 36 grams of liquid in 25 to 30 seconds."
)
BREW = "Brew espresso with water at 93 degrees Celsius."  # the sentence the quotes below stand in
TAXES = "# Household taxes\n\nKeep receipts for seven years. The filing deadline for the household return is April 15."

pytestmark = pytest.mark.slow


@asynccontextmanager
async def open_kb(kb: KnowledgeBase) -> AsyncIterator[ScopedKb]:
    """The real server over the in-memory transport (a fixture would enter and exit it in different tasks)."""
    async with KbClient(create_server(kb)) as client:
        shared = ScopedKb(client, SHARED_STORE)
        outcome = await shared.call(
            "kb_ingest",
            {
                "documents": [
                    {"id": "espresso", "title": "Espresso guide", "content": ESPRESSO},
                    {"id": "taxes", "title": "Household taxes", "content": TAXES},
                ]
            },
        )
        assert outcome.ok
        yield shared


async def collect(events: AsyncIterator[AgentEvent]) -> list[AgentEvent]:
    return [event async for event in events]


def answer_of(events: list[AgentEvent]) -> AnswerEvent:
    answers = [e for e in events if isinstance(e, AnswerEvent)]
    assert len(answers) == 1
    return answers[0]


def quoted(text: str, *quotes: tuple[int, str]) -> Statement:
    return Statement(text, tuple(Quote(label, words) for label, words in quotes))


READY = ScriptedTurn(text="READY")


async def test_search_then_a_grounded_answer_keeps_only_labels_whose_quotes_stand_in_the_passage(
    kb: KnowledgeBase,
) -> None:
    async with open_kb(kb) as kb_tools:
        model = ScriptedModel(
            [
                ScriptedTurn(tool_calls=(search_call("espresso water temperature"),), usage=Usage(100, 10)),
                ScriptedTurn(text="READY", usage=Usage(150, 2)),
                ScriptedTurn(
                    statements=(
                        quoted("Brew at 93 °C.", (1, "water at 93\ndegrees Celsius"), (7, "a cold cup")),
                        quoted("Use a cold cup.", (1, "Always use a cold cup")),
                    ),
                    usage=Usage(300, 20),
                ),
            ]
        )
        events = await collect(AgentLoop(kb_tools, model).run("How hot should espresso water be?"))

        kinds = [e.event for e in events]
        assert kinds[:3] == ["tool_call", "tool_result", "sources"]
        assert kinds[-1] == "answer"
        call = events[0]
        assert isinstance(call, ToolCallEvent) and call.arguments["detail"] == "full" and not call.forced
        result = events[1]
        assert isinstance(result, ToolResultEvent) and result.found >= 1 and result.labels[0] == 1
        sources = events[2]
        assert isinstance(sources, SourcesEvent) and sources.passages[0].document_id == "espresso"
        passage = sources.passages[0].text
        assert "93 degrees" in passage  # the whole chunk, not a snippet

        # The quote is found across the line break and travels as its whole sentence; [7] was never shown; the
        # second quote is not in passage 1.
        statements = [e for e in events if isinstance(e, StatementEvent)]
        assert len(statements) == 1 and statements[0].index == 0
        evidence = statements[0].statement.evidence
        assert [(e.label, e.quote) for e in evidence] == [(1, BREW)]
        assert passage[evidence[0].start : evidence[0].end] == BREW
        assert [(e.label, e.valid) for e in events if isinstance(e, CitationEvent)] == [(1, True)]
        answer = answer_of(events)
        assert answer.text == "Brew at 93 °C [1]." and not answer.abstained
        assert answer.statements == [statements[0].statement]
        assert answer.citations.unsourced == ["Use a cold cup."]
        assert [(r.text, r.check, [q.label for q in r.quotes]) for r in answer.verification.removed] == [
            ("Use a cold cup.", "quote", [1])
        ]
        assert answer.usage.input_tokens == 550 and answer.turns == 3
        assert not answer.verification.checked and "1 of 3 quotes found" in answer.verification.note

        # The answer turn reads the passages and the question in one message and may cite only those shown.
        final = model.requests[-1]
        assert (final.tool_choice, final.answer_format) == ("none", "statements")
        assert final.messages[-1].text.startswith("Passages:\n\n[1] Espresso guide")  # type: ignore[union-attr]
        assert set(final.citable) == {p.label for p in sources.passages}


async def test_after_five_turns_of_searching_the_sixth_must_answer(kb: KnowledgeBase) -> None:
    async with open_kb(kb) as kb_tools:
        turns = [ScriptedTurn(tool_calls=(search_call(f"espresso {n}", f"c{n}"),)) for n in range(MAX_TURNS - 1)]
        turns.append(ScriptedTurn(statements=(quoted("93 degrees.", (1, "93 degrees Celsius")),)))
        model = ScriptedModel(turns)
        events = await collect(AgentLoop(kb_tools, model).run("espresso?"))

        assert answer_of(events).turns == MAX_TURNS
        assert [r.tool_choice for r in model.requests] == ["auto"] * (MAX_TURNS - 1) + ["none"]
        # The same chunk found again keeps its first label.
        assert max(p.label for p in [e for e in events if isinstance(e, SourcesEvent)][-1].passages) <= 4


async def test_nothing_found_is_an_event_and_an_empty_answer_says_the_documents_do_not_answer(
    kb: KnowledgeBase,
) -> None:
    async with open_kb(kb) as kb_tools:
        model = ScriptedModel(
            [
                ScriptedTurn(tool_calls=(search_call("quantum chromodynamics lattice gauge"),)),
                READY,
                ScriptedTurn(statements=()),
            ]
        )
        events = await collect(AgentLoop(kb_tools, model).run("What is lattice QCD?"))
        result = next(e for e in events if isinstance(e, ToolResultEvent))
        assert result.found == 0 and result.summary.startswith("nothing found")
        assert "Nothing found" in model.requests[1].messages[-1].results[0].content  # type: ignore[union-attr]
        answer = answer_of(events)
        assert answer.text == NOT_ANSWERED and answer.statements == [] and answer.citations.unsourced == []
        assert answer.abstained


async def test_kb_ingest_is_discovered_but_never_offered_to_the_model(kb: KnowledgeBase) -> None:
    async with open_kb(kb) as kb_tools:
        assert "kb_ingest" in kb_tools.connection.tools  # type: ignore[attr-defined]
        assert {t.name for t in kb_tools.offered()} == {"kb_search", "kb_list", "kb_stats"}
        rogue = ToolCall("c1", "kb_ingest", {"documents": [{"id": "x", "title": "x", "content": "policy is 30 days"}]})
        model = ScriptedModel([ScriptedTurn(tool_calls=(rogue,)), READY, ScriptedTurn(statements=())])
        events = await collect(AgentLoop(kb_tools, model).run("add a doc"))
        result = next(e for e in events if isinstance(e, ToolResultEvent))
        assert not result.ok and "not available" in result.summary
        listed = await kb_tools.call("kb_list", {})
        assert listed.structured is not None
        assert {d["id"] for d in listed.structured["documents"]} == {"espresso", "taxes"}


async def test_follow_ups_keep_labels_and_numbering_resumes_after_those_held(kb: KnowledgeBase) -> None:
    async with open_kb(kb) as kb_tools:
        held = [
            Passage(
                label=1,
                chunk_id="old-1",
                document_id="taxes",
                title="Household taxes",
                text="Keep receipts for 7 years.",
            ),
            Passage(label=2, chunk_id="old-2", document_id="taxes", title="Household taxes", text="Deadline April 15."),
        ]
        history = [HistoryItem("user", "How long keep receipts?"), HistoryItem("assistant", "Seven years [1].")]
        model = ScriptedModel(
            [
                ScriptedTurn(tool_calls=(search_call("espresso dose"),)),
                READY,
                ScriptedTurn(
                    statements=(
                        quoted("Receipts are kept seven years.", (1, "Keep receipts for 7 years")),
                        quoted("A double uses 18 grams.", (3, "A double shot uses 18 grams")),
                    )
                ),
            ]
        )
        events = await collect(AgentLoop(kb_tools, model).run("And espresso?", history=history, held=held))

        first = model.requests[0]
        assert [type(m).__name__ for m in first.messages] == ["UserText", "ModelTurn", "UserText"]
        assert "[1] Household taxes" in first.messages[-1].text  # type: ignore[union-attr]
        result = next(e for e in events if isinstance(e, ToolResultEvent))
        assert min(result.labels) == 3
        answer = answer_of(events)
        assert answer.text == "Receipts are kept seven years [1]. A double uses 18 grams [3]."
        assert answer.citations.dangling == [] and answer.citations.labels_valid == 2


async def test_without_a_model_the_answer_is_the_best_sentences_each_cited_with_its_span(kb: KnowledgeBase) -> None:
    async with open_kb(kb) as kb_tools:
        events = await collect(AgentLoop(kb_tools, None).run("How many grams of coffee in a double espresso?"))
        answer = answer_of(events)
        assert answer.mode == "excerpts" and answer.reason == "no model is configured" and not answer.abstained
        assert answer.text.startswith("**Excerpts, not a written answer**")
        sources = [e for e in events if isinstance(e, SourcesEvent)][-1].passages
        by_label = {p.label: p for p in sources}
        assert answer.statements and "18 grams" in answer.statements[0].text
        for statement in answer.statements:
            (evidence,) = statement.evidence
            assert by_label[evidence.label].text[evidence.start : evidence.end] == evidence.quote
            assert by_label[evidence.label].document_id == "espresso"  # the tax guide matches nothing asked
        assert f"[{answer.statements[0].evidence[0].label}]" in answer.text
        assert answer.citations.dangling == []


async def test_an_unreachable_model_falls_back_to_excerpts(kb: KnowledgeBase) -> None:
    async with open_kb(kb) as kb_tools:
        model = ScriptedModel([ScriptedTurn(error=ModelError("503 unavailable", retryable=True, status=503))])
        answer = answer_of(await collect(AgentLoop(kb_tools, model).run("espresso dose?")))
        assert answer.mode == "excerpts" and "could not be reached" in answer.reason


class SpentBudget:
    def __init__(self, limit: float) -> None:
        self.limit, self.spent = limit, 0.0

    def exhausted(self) -> bool:
        return self.spent >= self.limit

    def add(self, cost_usd: float) -> None:
        self.spent += cost_usd


async def test_a_spent_budget_stops_model_calls_and_answers_with_excerpts(kb: KnowledgeBase) -> None:
    async with open_kb(kb) as kb_tools:
        model = ScriptedModel([ScriptedTurn(tool_calls=(search_call("espresso"),), usage=Usage(cost_usd=0.5))])
        budget = SpentBudget(0.4)
        answer = answer_of(await collect(AgentLoop(kb_tools, model, budget=budget).run("espresso?")))
        assert answer.mode == "excerpts" and "budget" in answer.reason
        assert len(model.requests) == 1 and budget.spent == 0.5


async def test_a_local_model_answers_in_one_turn_after_the_loop_searches_for_the_question(kb: KnowledgeBase) -> None:
    async with open_kb(kb) as kb_tools:
        model = ScriptedModel(
            [
                ScriptedTurn(
                    statements=(
                        quoted(
                            "A double uses 18 grams of coffee.", (1, "A double shot uses 18 grams of finely ground")
                        ),
                        quoted("Hi", (99, "nothing")),
                    )
                ),
            ],
            calls_tools_itself=False,
        )
        question = "How much coffee in a double espresso?"
        events = await collect(AgentLoop(kb_tools, model).run(question))
        call = next(e for e in events if isinstance(e, ToolCallEvent))
        assert call.forced and call.arguments["query"] == question
        assert [(r.tool_choice, r.answer_format) for r in model.requests] == [("none", "statements")]
        answer = answer_of(events)
        assert answer.text == "A double uses 18 grams of coffee [1]." and answer.turns == 1
        # A statement that rests on no passage shown is dropped, not printed without its citation.
        assert answer.citations.unsourced == ["Hi"]
        # The model reads the sentences that match the question, not every passage found.
        shown = model.requests[0].messages[0].text  # type: ignore[union-attr]
        assert "18 grams" in shown and "filing deadline" not in shown


async def test_a_local_model_writes_the_query_of_a_follow_up(kb: KnowledgeBase) -> None:
    async with open_kb(kb) as kb_tools:
        model = ScriptedModel(
            [ScriptedTurn(tool_calls=(search_call("espresso dose grams"),)), ScriptedTurn(statements=())],
            calls_tools_itself=False,
        )
        history = [HistoryItem("user", "Tell me about espresso."), HistoryItem("assistant", "It is coffee.")]
        events = await collect(AgentLoop(kb_tools, model).run("How much of it in a double?", history=history))
        assert [r.tool_choice for r in model.requests] == ["kb_search", "none"]
        call = next(e for e in events if isinstance(e, ToolCallEvent))
        assert call.arguments["query"] == "espresso dose grams"
        assert answer_of(events).text == NOT_ANSWERED


async def test_a_local_model_is_not_asked_when_the_search_finds_nothing(kb: KnowledgeBase) -> None:
    async with open_kb(kb) as kb_tools:
        model = ScriptedModel([], calls_tools_itself=False)
        answer = answer_of(await collect(AgentLoop(kb_tools, model).run("quantum chromodynamics lattice gauge?")))
        assert model.requests == [] and answer.text == NOT_ANSWERED and answer.mode == "model"


async def test_an_empty_knowledge_base_is_named_as_such_not_as_documents_that_do_not_answer(kb: KnowledgeBase) -> None:
    async with KbClient(create_server(kb)) as client:
        kb_tools = ScopedKb(client, SHARED_STORE)
        for model in (ScriptedModel([], calls_tools_itself=False), None):
            events = await collect(AgentLoop(kb_tools, model).run("How hot should espresso water be?"))
            result = next(e for e in events if isinstance(e, ToolResultEvent))
            assert result.found == 0 and result.summary == EMPTY_KNOWLEDGE_BASE
            answer = answer_of(events)
            assert answer.text == EMPTY_KNOWLEDGE_BASE and kb.location not in answer.text


async def test_unsupported_statements_can_be_kept_visibly_marked(kb: KnowledgeBase) -> None:
    async with open_kb(kb) as kb_tools:
        model = ScriptedModel(
            [
                ScriptedTurn(
                    statements=(
                        quoted("Brew at 93 degrees.", (1, "93 degrees Celsius")),
                        quoted("Espresso cures colds.", (1, "espresso cures colds")),
                    )
                )
            ],
            calls_tools_itself=False,
        )
        answer = answer_of(await collect(AgentLoop(kb_tools, model, unsupported="mark").run("espresso temperature?")))
        assert answer.text == "Brew at 93 degrees [1]. Espresso cures colds. _(not found in the passages)_"
        assert [s.supported for s in answer.statements] == [True, False]
        assert answer.citations.unsourced == []


async def test_the_optional_model_check_still_marks_what_it_finds_unsupported(kb: KnowledgeBase) -> None:
    async with open_kb(kb) as kb_tools:
        model = ScriptedModel(
            [
                ScriptedTurn(
                    statements=(
                        quoted("Brew at 93 degrees.", (1, "93 degrees Celsius")),
                        quoted("A double is 18 grams.", (1, "18 grams of finely ground coffee")),
                    )
                )
            ],
            calls_tools_itself=False,
            json_replies=[
                {
                    "results": [{"statement": 0, "supported": True}, {"statement": 1, "supported": False}],
                    "addresses_question": True,
                }
            ],
        )
        answer = answer_of(await collect(AgentLoop(kb_tools, model, verify="mark").run("espresso grams degrees?")))
        assert answer.verification.checked and answer.verification.unsupported == ["A double is 18 grams [1]."]
        assert "18 grams [1]. _(not supported" in answer.text


async def test_web_sources_share_the_numbering_and_grounded_spans_get_labels(kb: KnowledgeBase) -> None:
    async with open_kb(kb) as kb_tools:
        text = "Espresso—a strong coffee—comes from Italy."
        italy = text.index("Italy") + len("Italy")
        model = ScriptedModel(
            [
                ScriptedTurn(tool_calls=(search_call("espresso"),)),
                READY,
                ScriptedTurn(
                    text=text,
                    web_sources=(WebSource("https://example.org/espresso", "Espresso history"),),
                    grounding=(GroundingSupport(0, italy, (0,)),),
                ),
            ]
        )
        events = await collect(AgentLoop(kb_tools, model, web_search=True).run("Where is espresso from?"))
        assert model.requests[-1].tool_choice == "none" and model.requests[-1].answer_format == "prose"
        sources = [e for e in events if isinstance(e, SourcesEvent)][-1].passages
        web = [p for p in sources if p.tier == "web"]
        assert len(web) == 1 and web[0].label == max(p.label for p in sources)
        answer = answer_of(events)
        assert f"Italy[{web[0].label}]." in answer.text and not answer.abstained


async def test_a_statement_that_says_the_documents_do_not_answer_is_an_abstention(kb: KnowledgeBase) -> None:
    async with open_kb(kb) as kb_tools:
        model = ScriptedModel(
            [
                ScriptedTurn(
                    statements=(
                        Statement("The documents do not mention the capital of Mongolia."),
                        quoted("The capital of Mongolia is Ulaanbaatar.", (1, "Ulaanbaatar is the capital")),
                    )
                )
            ],
            calls_tools_itself=False,
        )
        answer = answer_of(await collect(AgentLoop(kb_tools, model).run("How hot should espresso water be?")))
        assert answer.text == NOT_ANSWERED
        assert answer.citations.unsourced == ["The capital of Mongolia is Ulaanbaatar."]


def _local_answer(*statements: Statement) -> ScriptedModel:
    return ScriptedModel([ScriptedTurn(statements=statements)], calls_tools_itself=False)


async def test_a_found_quote_that_does_not_answer_the_question_goes_and_the_answer_abstains(
    kb: KnowledgeBase,
) -> None:
    async with open_kb(kb) as kb_tools:
        model = _local_answer(quoted("Brew at 93 degrees.", (1, BREW)))
        checker = ScriptedYesNo([0.2])
        loop = AgentLoop(kb_tools, model, answer_check=AnswerCheck(checker))
        events = await collect(loop.run("Which coffee beans make the best espresso?"))
        answer = answer_of(events)
        assert answer.text == NOT_ANSWERED and answer.statements == []
        assert not any(isinstance(e, StatementEvent) for e in events)  # nothing was shown, then taken back
        assert (answer.verification.answer_checks, answer.verification.not_answering) == (1, ["Brew at 93 degrees."])
        [removed] = answer.verification.removed
        assert (removed.text, removed.check, removed.quotes[0].label, removed.quotes[0].quote) == (
            "Brew at 93 degrees.",
            "answer",
            1,
            BREW,
        )
        assert "1 of 1 statements removed because their sentences do not answer" in answer.verification.note
        assert f"Text: From Espresso guide, Espresso: {BREW}\n\nQuestion: Which coffee beans" in checker.questions[0]


async def test_statements_the_check_keeps_are_streamed_and_the_others_go(kb: KnowledgeBase) -> None:
    async with open_kb(kb) as kb_tools:
        model = _local_answer(
            quoted("Brew at 93 degrees.", (1, BREW)),
            quoted("A double uses 18 grams.", (1, "A double shot uses 18 grams of finely ground coffee")),
        )
        loop = AgentLoop(kb_tools, model, answer_check=AnswerCheck(ScriptedYesNo([0.9, 0.1])))
        events = await collect(loop.run("How hot should the water for espresso be?"))
        answer = answer_of(events)
        assert answer.text == "Brew at 93 degrees [1]."
        assert [e.statement.text for e in events if isinstance(e, StatementEvent)] == ["Brew at 93 degrees."]
        assert answer.verification.not_answering == ["A double uses 18 grams."]


async def test_a_question_after_a_number_is_not_answered_by_a_statement_without_one(kb: KnowledgeBase) -> None:
    """The kind of answer is checked for every model, before any checker model is asked."""
    async with open_kb(kb) as kb_tools:
        quote = (1, "A double shot uses 18 grams of finely ground coffee")
        model = _local_answer(quoted("A double shot uses finely ground coffee.", quote))
        checker = ScriptedYesNo([])
        loop = AgentLoop(kb_tools, model, answer_check=AnswerCheck(checker))
        answer = answer_of(await collect(loop.run("How many grams of coffee does a double shot use?")))
        assert answer.text == NOT_ANSWERED and checker.questions == []
        [removed] = answer.verification.removed
        assert (removed.text, removed.check) == ("A double shot uses finely ground coffee.", "answer")
        counted = _local_answer(quoted("A double shot uses 18 grams of finely ground coffee.", quote))
        kept = answer_of(await collect(AgentLoop(kb_tools, counted).run("How many grams does a double shot use?")))
        assert kept.text == "A double shot uses 18 grams of finely ground coffee [1]."


async def test_a_check_that_cannot_be_made_keeps_the_statement(kb: KnowledgeBase) -> None:
    async with open_kb(kb) as kb_tools:
        model = _local_answer(quoted("Brew at 93 degrees.", (1, BREW)))
        loop = AgentLoop(kb_tools, model, answer_check=AnswerCheck(ScriptedYesNo([ModelError("too long")])))
        answer = answer_of(await collect(loop.run("How hot should the water for espresso be?")))
        assert answer.text == "Brew at 93 degrees [1]."
        assert answer.verification.answer_checks == 0


async def test_a_statement_whose_quote_is_not_found_is_never_sent_to_the_check(kb: KnowledgeBase) -> None:
    async with open_kb(kb) as kb_tools:
        checker = ScriptedYesNo([])
        model = _local_answer(quoted("Brew at 99 degrees.", (1, "water at 99 degrees")))
        answer = answer_of(await collect(AgentLoop(kb_tools, model, answer_check=AnswerCheck(checker)).run("How hot?")))
        assert answer.text == NOT_ANSWERED and checker.questions == []


async def test_gemini_s_quotes_get_the_same_check_through_the_real_adapter(
    kb: KnowledgeBase, gemini_server: GeminiProtocolServer
) -> None:
    """The real google-genai client against the local Gemini protocol server (a double at the network edge)."""
    gemini_server.enqueue(
        response(function_call_part("kb_search", {"query": "espresso water"}, call_id="c1"), finish_reason="STOP")
    )
    gemini_server.enqueue(response(text_part("READY"), finish_reason="STOP"))
    answer_json = {
        "statements": [
            {"text": "Brew at 93 °C.", "evidence": [{"passage": 1, "quote": "water at 93 degrees Celsius"}]},
            {"text": "Espresso was invented in 1884.", "evidence": [{"passage": 1, "quote": "invented in 1884"}]},
        ]
    }
    gemini_server.enqueue(response(text_part(json.dumps(answer_json)), finish_reason="STOP"))
    gemini = GeminiModel(api_key=gemini_server.api_key, base_url=gemini_server.base_url, thinking_budget=0)
    try:
        async with open_kb(kb) as kb_tools:
            events = await collect(AgentLoop(kb_tools, gemini).run("How hot should espresso water be?"))
    finally:
        await gemini.aclose()
    answer = answer_of(events)
    assert answer.text == "Brew at 93 °C [1]."
    assert answer.citations.unsourced == ["Espresso was invented in 1884."]
    [evidence] = answer.statements[0].evidence
    assert evidence.quote == BREW and evidence.label == 1
    config = gemini_server.last_body()["generationConfig"]
    assert config["responseMimeType"] == "application/json"


def test_the_served_measured_and_shell_loops_are_one_loop_built_from_the_settings() -> None:
    """The route, sextant-ask and sextant-eval-agent all build it with AgentLoop.from_settings."""
    settings = AgentSettings(  # type: ignore[call-arg]
        _env_file=None, verify="drop", unsupported="mark", quotes="exact", web_search="on", max_output_tokens=300
    )
    loop = AgentLoop.from_settings(None, None, settings, answer_check=None, budget=None)  # type: ignore[arg-type]
    assert (loop.verify, loop.unsupported, loop.quotes, loop.web_search, loop.max_output_tokens) == (
        "drop",
        "mark",
        "exact",
        True,
        300,
    )
