"""Benchmark the local model on golden questions: forced-call queries, statements answers, tokens per second.

For each answerable question of eval/golden.jsonl (the first ``--questions``), the model is made to call
``kb_search`` (is the call valid, and how many of the question's content words reach the query?), then
answers in statements over three passages: the question's own evidence and two other questions' evidence,
in a seeded order (is the reply complete JSON, and does it cite the right passage?).

    python -m bench.local_model --model qwen2.5-coder-0.5b-instruct --questions 10   # from the repo root
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import time
from pathlib import Path
from typing import Any

from jsonschema import ValidationError, validate

from sextant.agent.settings import AgentSettings
from sextant.llm.chat import ChatRequest, ModelError, ModelTurn, ToolCall, ToolResult, ToolResults, TurnEnd, UserText
from sextant.llm.llama_local import LlamaModel
from tests.llm.conftest import KB_SEARCH, SYSTEM

REPO = Path(__file__).resolve().parent.parent
_WORD = re.compile(r"[a-z0-9]{4,}")


def _content_words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


async def _run_turn(model: LlamaModel, request: ChatRequest) -> tuple[TurnEnd, float]:
    start = time.perf_counter()
    events = [event async for event in model.stream(request)]
    end = events[-1]
    assert isinstance(end, TurnEnd)
    return end, time.perf_counter() - start


async def bench(model: LlamaModel, golden: list[dict[str, Any]], seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    rows = []
    for i, item in enumerate(golden):
        question = UserText(item["question"])
        row: dict[str, Any] = {"id": item["id"], "question": item["question"]}
        forced = ChatRequest(SYSTEM, (question,), tools=(KB_SEARCH,), tool_choice="kb_search", max_output_tokens=128)
        try:
            end, seconds = await _run_turn(model, forced)
            query = end.turn.tool_calls[0].arguments["query"]
            validate(end.turn.tool_calls[0].arguments, KB_SEARCH.input_schema)
            asked = _content_words(item["question"])
            recall = len(asked & _content_words(query)) / max(len(asked), 1)
            row.update(call_valid=True, query=query, query_recall=recall)
        except (ModelError, ValidationError) as error:
            row.update(call_valid=False, query=str(error), query_recall=0.0)
        others = [g for j, g in enumerate(golden) if j != i]
        evidence = [item["evidence"], *(g["evidence"] for g in rng.sample(others, 2))]
        order = rng.sample(range(3), 3)
        passages = "\n".join(f"[{n + 1}] {evidence[k]}" for n, k in enumerate(order))
        gold_label = order.index(0) + 1
        call = ToolCall("call-1", "kb_search", {"query": item["question"]})
        messages = (question, ModelTurn("", (call,)), ToolResults((ToolResult("call-1", "kb_search", passages),)))
        answer = ChatRequest(SYSTEM, messages, answer_format="statements", citable=(1, 2, 3), max_output_tokens=300)
        end, seconds = await _run_turn(model, answer)
        raw_complete = bool(end.statements) and end.finish_reason == "stop"
        cited = {label for s in end.statements for label in s.sources}
        row.update(
            json_valid=raw_complete,
            cites_gold=gold_label in cited,
            cites_only_shown=cited <= {1, 2, 3},
            statements=[s.text for s in end.statements],
            tokens_per_s=end.usage.output_tokens / seconds,
            answer_seconds=seconds,
        )
        rows.append(row)
        speed = row["tokens_per_s"]
        print(f"{item['id']}: query={row['query']!r} cites={sorted(cited)} gold={gold_label} {speed:.1f} tok/s")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="qwen2.5-coder-0.5b-instruct")
    parser.add_argument("--questions", type=int, default=10)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=REPO / "bench" / "out" / "local_model.json")
    args = parser.parse_args()
    golden = [json.loads(line) for line in (REPO / "eval" / "golden.jsonl").read_text().splitlines() if line.strip()]
    golden = [g for g in golden if g["answerable"] and g.get("evidence")][: args.questions]
    settings = AgentSettings(local_model=args.model, threads=args.threads, _env_file=None)
    model = LlamaModel.from_settings(settings)
    rows = asyncio.run(bench(model, golden, args.seed))
    n = len(rows)
    summary = {
        "model": args.model,
        "questions": n,
        "forced_call_valid": sum(r["call_valid"] for r in rows) / n,
        "query_keyword_recall": sum(r["query_recall"] for r in rows) / n,
        "statements_json_valid": sum(r["json_valid"] for r in rows) / n,
        "cites_gold_passage": sum(r["cites_gold"] for r in rows) / n,
        "cites_only_shown": sum(r["cites_only_shown"] for r in rows) / n,
        "tokens_per_s": sum(r["tokens_per_s"] for r in rows) / n,
        "answer_seconds": sum(r["answer_seconds"] for r in rows) / n,
    }
    print(json.dumps(summary, indent=2))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"summary": summary, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
