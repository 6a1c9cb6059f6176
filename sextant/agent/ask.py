"""``sextant-ask QUESTION``: one question through the agent in the terminal.

The same path as the HTTP API: the configured model (the local one when no key is set), the real
``sextant-kb`` process over stdio, the loop with numbered passages and checked citations. The answer
streams as it is written; the cited sources follow, each with its page and section, then every statement the
model wrote with the checks' verdicts on it (on stderr): kept, or removed by which rule and why.
"""

from __future__ import annotations

import argparse
import os
import sys

import anyio

from sextant.agent.answer_check import answer_check_for
from sextant.agent.events import AnswerEvent, SourcesEvent, TokenEvent, ToolCallEvent, ToolResultEvent
from sextant.agent.kb_client import SHARED_STORE, KbClient, ScopedKb, stdio_server
from sextant.agent.loop import AgentLoop
from sextant.agent.passages import Passage
from sextant.agent.settings import AgentSettings, load_agent_settings
from sextant.agent.statement_checks import trail_line
from sextant.llm.factory import build_model
from sextant.logs import configure_logging


async def ask(question: str, settings: AgentSettings) -> int:
    choice = build_model(settings)
    print(f"model: {choice.detail}", file=sys.stderr)
    passages: list[Passage] = []
    answer: AnswerEvent | None = None
    streamed: list[str] = []
    async with KbClient(stdio_server(settings.kb_command)) as kb:
        shared = ScopedKb(kb, SHARED_STORE)
        loop = AgentLoop.from_settings(
            shared,
            choice.model,
            settings,
            answer_check=answer_check_for(choice),
            # The daily budget is the server's (``AgentState.budget``, what its callers may spend); a question asked
            # at the terminal is the operator's own and is not counted against it.
            budget=None,
        )
        try:
            async for event in loop.run(question):
                if isinstance(event, ToolCallEvent):
                    print(f"· {event.name} {event.arguments.get('query', '')!r}", file=sys.stderr)
                elif isinstance(event, ToolResultEvent):
                    print(f"  {event.summary}", file=sys.stderr)
                elif isinstance(event, TokenEvent) and choice.model is not None:
                    streamed.append(event.text)
                    print(event.text, end="", flush=True)
                elif isinstance(event, SourcesEvent):
                    passages = event.passages
                elif isinstance(event, AnswerEvent):
                    answer = event
        finally:
            await choice.aclose()
    if answer is None:
        print("no answer", file=sys.stderr)
        return 1
    if choice.model is None:
        print(f"{answer.text}\n")
    elif answer.text != "".join(streamed).strip():
        # The check removed labels or marked statements: the checked answer is the record.
        print(f"\n\nChecked answer:\n{answer.text}\n")
    else:
        print("\n")
    cited = {p.label for p in passages if f"[{p.label}]" in answer.text}
    for passage in passages:
        if passage.label in cited:
            print(f"[{passage.label}] {passage.citation()}  ({passage.uri})")
    if answer.citations.dangling:
        print(f"removed labels that named no passage shown: {answer.citations.dangling}", file=sys.stderr)
    if any(s.trail for s in answer.statements) or answer.verification.removed:
        print("checks (each rule's verdict, in order):", file=sys.stderr)
    for kept in answer.statements:
        if kept.trail:
            print(f"  kept {kept.text!r}: {trail_line(kept.trail)}", file=sys.stderr)
    for removed in answer.verification.removed:
        print(f"  removed {removed.text!r}: {trail_line(removed.trail)}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="sextant-ask", description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("question", help="the question, in quotes")
    args = parser.parse_args(argv)
    # The knowledge-base process inherits this environment: its routine INFO lines would interleave the answer.
    os.environ.setdefault("SEXTANT_LOG_LEVEL", "WARNING")
    settings = load_agent_settings()
    configure_logging(settings.log_level, settings.log_format)
    sys.exit(anyio.run(ask, args.question, settings))
