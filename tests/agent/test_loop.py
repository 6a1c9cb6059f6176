"""The tool-use loop with the scripted model, over the real knowledge-base MCP server (in memory)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from sextant.agent.chat import GroundingSupport, ModelError, Statement, ToolCall, Usage, WebSource
from sextant.agent.events import AgentEvent, AnswerEvent, CitationEvent, SourcesEvent, ToolCallEvent, ToolResultEvent
from sextant.agent.kb_client import KbClient
from sextant.agent.loop import MAX_TURNS, NOT_ANSWERED, AgentLoop, HistoryItem
from sextant.agent.models.scripted import ScriptedModel, ScriptedTurn, search_call
from sextant.agent.passages import Passage
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.server import create_server

ESPRESSO = (
    "# Espresso\n\nBrew espresso with water at 93 degrees Celsius. A double shot uses 18 grams of finely "
    "ground coffee and yields about 36 grams of liquid in 25 to 30 seconds."
)
TAXES = "# Household taxes\n\nKeep receipts for seven years. The filing deadline for the household return is April 15."

pytestmark = pytest.mark.slow


@asynccontextmanager
async def open_kb(kb: KnowledgeBase) -> AsyncIterator[KbClient]:
    """The real server over the in-memory transport (a fixture would enter and exit it in different tasks)."""
    async with KbClient(create_server(kb)) as client:
        outcome = await client.call(
            "kb_ingest",
            {
                "documents": [
                    {"id": "espresso", "title": "Espresso guide", "content": ESPRESSO},
                    {"id": "taxes", "title": "Household taxes", "content": TAXES},
                ]
            },
        )
        assert outcome.ok
        yield client


async def collect(events: AsyncIterator[AgentEvent]) -> list[AgentEvent]:
    return [event async for event in events]


def answer_of(events: list[AgentEvent]) -> AnswerEvent:
    answers = [e for e in events if isinstance(e, AnswerEvent)]
    assert len(answers) == 1
    return answers[0]


async def test_search_then_answer_streams_events_in_order_and_removes_dangling_labels(kb: KnowledgeBase) -> None:
    async with open_kb(kb) as kb_tools:
        model = ScriptedModel(
            [
                ScriptedTurn(tool_calls=(search_call("espresso water temperature"),), usage=Usage(100, 10)),
                ScriptedTurn(text="Brew at 93 degrees Celsius [1]. Use a cold cup [7].", usage=Usage(300, 20)),
            ],
            json_replies=[{"results": [{"statement": 0, "supported": True}], "addresses_question": True}],
        )
        events = await collect(AgentLoop(kb_tools, model).run("How hot should espresso water be?"))

        kinds = [e.event for e in events]
        assert kinds[:3] == ["tool_call", "tool_result", "sources"]
        assert kinds[-1] == "answer"
        assert "token" in kinds
        call = events[0]
        assert isinstance(call, ToolCallEvent) and call.arguments["detail"] == "full" and not call.forced
        result = events[1]
        assert isinstance(result, ToolResultEvent) and result.found >= 1 and result.labels[0] == 1
        sources = events[2]
        assert isinstance(sources, SourcesEvent) and sources.passages[0].document_id == "espresso"
        assert "93 degrees" in sources.passages[0].text  # the whole chunk, not a snippet

        citations = [(e.label, e.valid) for e in events if isinstance(e, CitationEvent)]
        assert citations == [(1, True), (7, False)]
        answer = answer_of(events)
        assert answer.mode == "model"
        assert "[7]" not in answer.text and "[1]" in answer.text
        assert answer.citations.dangling == [7]
        assert (answer.citations.labels_total, answer.citations.labels_valid) == (2, 1)
        assert (answer.citations.claims, answer.citations.claims_cited) == (2, 1)
        assert answer.usage.input_tokens == 400
        assert answer.verification.checked and answer.verification.unsupported == []

        # The model read numbered passages: the label it cites is written into what it was shown.
        tool_message = model.requests[1].messages[-1]
        assert "[1] Espresso guide" in tool_message.results[0].content  # type: ignore[union-attr]


async def test_the_loop_stops_after_six_turns_and_the_last_turn_may_not_call_tools(kb: KnowledgeBase) -> None:
    async with open_kb(kb) as kb_tools:
        turns = [ScriptedTurn(tool_calls=(search_call(f"espresso {n}", f"c{n}"),)) for n in range(MAX_TURNS - 1)]
        turns.append(ScriptedTurn(text="Brew at 93 degrees [1]."))
        model = ScriptedModel(turns, json_replies=[{"results": [], "addresses_question": True}])
        events = await collect(AgentLoop(kb_tools, model).run("espresso?"))

        assert answer_of(events).turns == MAX_TURNS
        assert [r.tool_choice for r in model.requests] == ["auto"] * (MAX_TURNS - 1) + ["none"]
        # The same chunk found again keeps its first label.
        assert max(p.label for p in [e for e in events if isinstance(e, SourcesEvent)][-1].passages) <= 4


async def test_nothing_found_is_an_event_and_the_model_is_told(kb: KnowledgeBase) -> None:
    async with open_kb(kb) as kb_tools:
        model = ScriptedModel(
            [
                ScriptedTurn(tool_calls=(search_call("quantum chromodynamics lattice gauge"),)),
                ScriptedTurn(text="The documents do not answer this."),
            ]
        )
        events = await collect(AgentLoop(kb_tools, model).run("What is lattice QCD?"))
        result = next(e for e in events if isinstance(e, ToolResultEvent))
        assert result.found == 0 and result.summary.startswith("nothing found")
        assert "Nothing found" in model.requests[1].messages[-1].results[0].content  # type: ignore[union-attr]
        answer = answer_of(events)
        assert answer.citations.claims_cited == 0 and not answer.verification.checked


async def test_kb_ingest_is_discovered_but_never_offered_to_the_model(kb: KnowledgeBase) -> None:
    async with open_kb(kb) as kb_tools:
        assert "kb_ingest" in kb_tools.tools
        assert {t.name for t in kb_tools.offered()} == {"kb_search", "kb_list", "kb_stats"}
        rogue = ToolCall("c1", "kb_ingest", {"documents": [{"id": "x", "title": "x", "content": "policy is 30 days"}]})
        model = ScriptedModel([ScriptedTurn(tool_calls=(rogue,)), ScriptedTurn(text="Done.")])
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
                ScriptedTurn(text="Seven years [1], and a double uses 18 grams [3]."),
            ],
            json_replies=[{"results": [], "addresses_question": True}],
        )
        events = await collect(AgentLoop(kb_tools, model).run("And espresso?", history=history, held=held))

        first = model.requests[0]
        assert [type(m).__name__ for m in first.messages] == ["UserText", "ModelTurn", "UserText"]
        assert "[1] Household taxes" in first.messages[-1].text  # type: ignore[union-attr]
        result = next(e for e in events if isinstance(e, ToolResultEvent))
        assert min(result.labels) == 3
        answer = answer_of(events)
        assert answer.citations.dangling == [] and answer.citations.labels_valid == 2


async def test_without_a_model_the_answer_is_labelled_excerpts_with_citations(kb: KnowledgeBase) -> None:
    async with open_kb(kb) as kb_tools:
        events = await collect(AgentLoop(kb_tools, None).run("How many grams of coffee in a double espresso?"))
        answer = answer_of(events)
        assert answer.mode == "excerpts" and answer.reason == "no model is configured"
        assert answer.text.startswith("**Excerpts, not a written answer**")
        assert "18 grams" in answer.text and "[1]" in answer.text
        assert answer.citations.dangling == [] and answer.citations.labels_valid >= 1


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


async def test_a_local_model_is_made_to_search_and_its_statements_get_markers(kb: KnowledgeBase) -> None:
    async with open_kb(kb) as kb_tools:
        model = ScriptedModel(
            [
                ScriptedTurn(tool_calls=(search_call("zzz unrelated"),)),
                ScriptedTurn(tool_calls=(search_call("espresso grams"),)),
                ScriptedTurn(
                    statements=(Statement("A double uses 18 grams of coffee.", (1, 2)), Statement("Hi", (99,)))
                ),
            ],
            calls_tools_itself=False,
            json_replies=[{"results": [{"statement": 0, "supported": True}], "addresses_question": True}],
        )
        events = await collect(AgentLoop(kb_tools, model).run("How much coffee in a double?"))
        choices = [(r.tool_choice, r.answer_format) for r in model.requests]
        found_first = next(e for e in events if isinstance(e, ToolResultEvent)).found
        if found_first == 0:
            assert choices == [("kb_search", "prose"), ("kb_search", "prose"), ("none", "statements")]
        else:
            assert choices[0] == ("kb_search", "prose") and choices[1] == ("none", "statements")
        answer = answer_of(events)
        assert "18 grams of coffee [1]" in answer.text
        # A statement that rests on no passage shown is dropped, not printed without its citation.
        assert "Hi" not in answer.text and answer.citations.unsourced == ["Hi"]
        # The answer turn sees the passages and the question in one message, and may cite only those shown.
        final = model.requests[-1]
        assert [type(m).__name__ for m in final.messages] == ["UserText"]
        assert final.messages[0].text.startswith("Passages:\n\n[1] Espresso guide")  # type: ignore[union-attr]
        assert set(final.citable) == {p.label for p in [e for e in events if isinstance(e, SourcesEvent)][-1].passages}


async def test_verification_marks_or_drops_unsupported_statements(kb: KnowledgeBase) -> None:
    async with open_kb(kb) as kb_tools:

        def script() -> ScriptedModel:
            return ScriptedModel(
                [
                    ScriptedTurn(tool_calls=(search_call("espresso"),)),
                    ScriptedTurn(text="Brew at 93 degrees [1]. Espresso cures colds [1]."),
                ],
                json_replies=[
                    {
                        "results": [{"statement": 0, "supported": True}, {"statement": 1, "supported": False}],
                        "addresses_question": True,
                    }
                ],
            )

        marked = answer_of(await collect(AgentLoop(kb_tools, script(), verify="mark").run("espresso?")))
        assert marked.verification.unsupported == ["Espresso cures colds [1]."]
        assert "cures colds [1]. _(not supported" in marked.text
        dropped = answer_of(await collect(AgentLoop(kb_tools, script(), verify="drop").run("espresso?")))
        assert "cures colds" not in dropped.text and "93 degrees [1]" in dropped.text


async def test_web_sources_share_the_numbering_and_grounded_spans_get_labels(kb: KnowledgeBase) -> None:
    async with open_kb(kb) as kb_tools:
        text = "Espresso—a strong coffee—comes from Italy."
        italy = text.index("Italy") + len("Italy")
        model = ScriptedModel(
            [
                ScriptedTurn(tool_calls=(search_call("espresso"),)),
                ScriptedTurn(
                    text=text,
                    web_sources=(WebSource("https://example.org/espresso", "Espresso history"),),
                    grounding=(GroundingSupport(0, italy, (0,)),),
                ),
            ],
            json_replies=[{"results": [{"statement": 0, "supported": True}], "addresses_question": True}],
        )
        events = await collect(AgentLoop(kb_tools, model, web_search=True).run("Where is espresso from?"))
        sources = [e for e in events if isinstance(e, SourcesEvent)][-1].passages
        web = [p for p in sources if p.tier == "web"]
        assert len(web) == 1 and web[0].label == max(p.label for p in sources)
        answer = answer_of(events)
        assert f"Italy[{web[0].label}]." in answer.text


async def test_a_structured_answer_with_no_sourced_statement_says_the_documents_do_not_answer(
    kb: KnowledgeBase,
) -> None:
    async with open_kb(kb) as kb_tools:
        model = ScriptedModel(
            [
                ScriptedTurn(tool_calls=(search_call("capital of Mongolia"),)),
                ScriptedTurn(tool_calls=(search_call("Mongolia capital city"),)),
                ScriptedTurn(statements=(Statement("The capital of Mongolia is Ulaanbaatar.", ()),)),
            ],
            calls_tools_itself=False,
        )
        answer = answer_of(await collect(AgentLoop(kb_tools, model, verify="off").run("Capital of Mongolia?")))
        assert answer.text == NOT_ANSWERED
        assert answer.citations.unsourced == ["The capital of Mongolia is Ulaanbaatar."]
