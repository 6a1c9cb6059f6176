"""What the loop asks the model next, for models that call tools and for local ones that do not."""

from __future__ import annotations

from dataclasses import dataclass, field

from sextant.agent.passages import Passage
from sextant.agent.policies import (
    ANSWER_PROMPT,
    MAX_TURNS,
    SEARCH_PROMPT,
    SYSTEM_PROMPT,
    WEB_ANSWER_PROMPT,
    ForcedSearch,
    Search,
    ToolUse,
)
from sextant.llm.chat import ChatRequest, Message, ModelTurn, ToolCall, ToolSpec, UserText
from sextant.llm.statements import STATEMENTS_INSTRUCTION

KB_SEARCH = ToolSpec("kb_search", "Search the documents.", {"type": "object", "properties": {"query": {}}})
TOOLS = (KB_SEARCH,)
QUESTION = "How often should the machine be descaled?"
DESCALE = Passage(
    label=1,
    title="Manual",
    page_label="4",
    text="The boiler is steel. Descale the machine every three months. The case is red.",
)
SOURDOUGH = Passage(label=2, title="Bread", text="Feed the starter twice a day.")


@dataclass
class FakeRun:
    question: str = QUESTION
    history: tuple[Message, ...] = ()
    turns: int = 0
    searches: int = 0
    found_any: bool = False
    ready: bool = False
    passages: list[Passage] = field(default_factory=list)

    def shown_passages(self) -> list[Passage]:
        return self.passages


def test_forced_search_first_searches_for_the_question_itself() -> None:
    step = ForcedSearch(TOOLS, max_output_tokens=300).next_step(FakeRun(), [UserText(QUESTION)])
    assert step == Search(ToolCall("search-1", "kb_search", {"query": QUESTION}))


def test_forced_search_with_history_asks_the_model_for_the_query() -> None:
    history = (UserText("Tell me about the espresso machine."), ModelTurn("It has a steel boiler [1]."))
    messages: list[Message] = [*history, UserText("How often is it descaled?")]
    step = ForcedSearch(TOOLS, max_output_tokens=300).next_step(FakeRun(history=history), messages)
    assert isinstance(step, ChatRequest)
    assert (step.system, step.tool_choice, step.tools, step.max_output_tokens) == (
        SEARCH_PROMPT,
        "kb_search",
        TOOLS,
        256,
    )
    assert step.messages == tuple(messages)


def test_forced_search_with_nothing_found_has_nothing_to_ask() -> None:
    assert ForcedSearch(TOOLS, max_output_tokens=300).next_step(FakeRun(searches=1), []) is None


def test_forced_search_then_asks_once_for_statements_over_the_trimmed_passages() -> None:
    run = FakeRun(searches=1, found_any=True, passages=[DESCALE, SOURDOUGH])
    step = ForcedSearch(TOOLS, max_output_tokens=300).next_step(run, [UserText(QUESTION)])
    assert isinstance(step, ChatRequest)
    assert (step.tool_choice, step.answer_format, step.citable, step.max_output_tokens) == (
        "none",
        "statements",
        (1, 2),
        300,
    )
    assert step.system == f"{ANSWER_PROMPT}\n\n{STATEMENTS_INSTRUCTION}" and step.tools == ()
    [message] = step.messages
    assert isinstance(message, UserText)
    assert message.text.startswith("Passages:\n\n[1] ") and message.text.endswith(f"Question: {QUESTION}")
    assert "Descale the machine every three months." in message.text
    # Only the sentences that share the question's words: not the boiler, the case, or the sourdough passage.
    assert "steel" not in message.text and "red" not in message.text and "[2]" not in message.text


def test_the_statements_turn_keeps_the_conversation_before_it() -> None:
    history = (UserText("Hi"), ModelTurn("Hello."))
    run = FakeRun(history=history, searches=1, found_any=True, passages=[DESCALE])
    step = ForcedSearch(TOOLS, max_output_tokens=300).next_step(run, [])
    assert isinstance(step, ChatRequest) and step.messages[:2] == history and len(step.messages) == 3


def test_tool_use_lets_the_model_search_until_it_is_ready() -> None:
    policy = ToolUse(TOOLS, web_search=False, max_output_tokens=500)
    messages = [UserText(QUESTION)]
    step = policy.next_step(FakeRun(), messages)
    assert isinstance(step, ChatRequest)
    assert (step.system, step.tool_choice, step.tools, step.answer_format) == (SYSTEM_PROMPT, "auto", TOOLS, "prose")
    assert step.messages == tuple(messages)

    ready = FakeRun(turns=2, searches=1, found_any=True, ready=True, passages=[DESCALE])
    answer = policy.next_step(ready, messages)
    assert isinstance(answer, ChatRequest)
    assert (answer.tool_choice, answer.answer_format, answer.citable) == ("none", "statements", (1,))
    # Untrimmed: a model that calls tools reads each whole passage.
    assert "The boiler is steel." in answer.messages[-1].text  # type: ignore[union-attr]


def test_tool_use_asks_for_the_answer_when_its_turns_run_out() -> None:
    policy = ToolUse(TOOLS, web_search=False, max_output_tokens=500)
    step = policy.next_step(FakeRun(turns=MAX_TURNS - 1, passages=[DESCALE]), [UserText(QUESTION)])
    assert isinstance(step, ChatRequest) and step.answer_format == "statements"


def test_with_web_search_the_final_turn_is_prose_grounded_by_the_provider() -> None:
    policy = ToolUse(TOOLS, web_search=True, max_output_tokens=500)
    searching = policy.next_step(FakeRun(), [UserText(QUESTION)])
    assert isinstance(searching, ChatRequest) and searching.web_search and searching.tool_choice == "auto"
    final = policy.next_step(FakeRun(ready=True, passages=[DESCALE]), [UserText(QUESTION)])
    assert isinstance(final, ChatRequest)
    assert (final.system, final.tool_choice, final.answer_format, final.web_search) == (
        WEB_ANSWER_PROMPT,
        "none",
        "prose",
        True,
    )
