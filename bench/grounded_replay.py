"""The product's grounded turns under two llama.cpp runtimes, side by side.

    python bench/grounded_replay.py --runtimes chain greedy --limit 20 --out bench/out/greedy-grammar
    python bench/grounded_replay.py --runtimes steady drafting --limit 20 --out bench/out/drafting
    python bench/grounded_replay.py --runtimes drafting drafting-2 --limit 20 --out bench/out/decode-threads

The real loop and the real ``sextant-kb`` process answer the golden sample (``sextant-eval-agent``'s seeded
one) with the configured local model; every grounded request the loop sends is recorded. Each request is
then replayed through the same model file loaded once per runtime in this process, in alternating order:
``chain`` (no strategies, the library's own decoding: its sampler chain runs the grammar over the whole
vocabulary at every token), ``greedy`` (``GreedyDecoding``: the grammar judges the model's top token first),
``steady`` (and ``SystemTurnPrefix``, the product's until run 23: the cache keeps the system turn only) or
``drafting`` (and ``PromptLookupDrafting``, the product's: tokens drafted from the prompt checked in one pass)
or ``drafting-2`` (the same, generating with two threads instead of one: learning/local-threads.md,
2026-12-05). The report gives the seconds of each turn and until its first statement, the first runtime's over
the second's, and whether the replies are the same text.
"""

from __future__ import annotations

import json
import random
import statistics
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

# llama_local first: it sets how llama.cpp's threads wait (as the product runs them) before llama_cpp loads.
from sextant.llm.llama_local import LlamaModel, load_gguf, product_strategies  # isort: skip

import anyio
import llama_cpp
from answer_check_variants import question_parser  # bench/ is the script's own folder

from sextant.agent.settings import load_agent_settings
from sextant.evals.agent_cli import agent_sets
from sextant.evals.agent_eval import ask_all
from sextant.evals.golden import load_golden
from sextant.llm.chat import ChatEvent, ChatRequest, StatementDone, TurnEnd, Usage
from sextant.llm.llama_runtime import Compose, LlamaRuntime, Strategies
from sextant.llm.llama_strategies import GreedyDecoding, SystemTurnPrefix
from sextant.llm.settings import ModelSettings
from sextant.llm.writer_choice import writer

# The served loop with the answer check off, quotes matched as facts, unsupported statements dropped: what these
# recordings were made with.
OFF = load_agent_settings().model_copy(update={"verify": "off", "unsupported": "drop", "quotes": "facts"})


class Recording:
    """The product's model, recording the grounded requests it is sent."""

    calls_tools_itself = False
    priced = False

    def __init__(self, model: LlamaModel) -> None:
        self.name = model.name
        self.requests: list[ChatRequest] = []
        self._model = model

    async def stream(self, request: ChatRequest) -> AsyncIterator[ChatEvent]:
        if request.answer_format == "statements":
            self.requests.append(request)
        async for event in self._model.stream(request):
            yield event

    async def complete_json(self, system: str, prompt: str, schema: dict[str, Any]) -> tuple[dict[str, Any], Usage]:
        return await self._model.complete_json(system, prompt, schema)

    async def aclose(self) -> None:
        await self._model.aclose()


async def timed(model: LlamaModel, request: ChatRequest) -> dict[str, Any]:
    started = time.perf_counter()
    first: float | None = None
    text = ""
    async for event in model.stream(request):
        if isinstance(event, StatementDone) and first is None:
            first = time.perf_counter() - started
        elif isinstance(event, TurnEnd):
            text = json.dumps([s.text for s in event.statements]) + event.turn.text
    return {"turn_s": time.perf_counter() - started, "first_s": first, "text": text}


def two_thread_drafting(runtime: LlamaRuntime) -> Strategies:
    """The product's strategies, generating with two threads (the product's single tokens take one, DECODE_THREADS)."""
    llama_cpp.llama_set_n_threads(runtime.ctx, 2, 2)
    return product_strategies(runtime)


RUNTIMES: dict[str, Compose] = {
    "chain": lambda runtime: Strategies(),
    "greedy": lambda runtime: Strategies(GreedyDecoding()),
    "steady": lambda runtime: Strategies(GreedyDecoding(), SystemTurnPrefix.of(runtime)),
    "drafting": product_strategies,
    "drafting-2": two_thread_drafting,
}


async def replay(requests: list[ChatRequest], settings: ModelSettings, names: list[str]) -> list[dict[str, Any]]:
    models = {}
    for name in names:
        llama, label = load_gguf(
            writer(settings).model, settings.model_files_dir(), settings.threads, compose=RUNTIMES[name]
        )
        models[name] = LlamaModel(llama, label, settings.max_output_tokens)
    rows = []
    for i, request in enumerate(requests):
        row = {name: await timed(models[name], request) for name in (names if i % 2 == 0 else names[::-1])}
        rows.append(row)
        first, second = (row[name] for name in names)
        print(
            f"{i + 1}/{len(requests)}: {names[0]} {first['turn_s']:.2f} s, {names[1]} {second['turn_s']:.2f} s, "
            f"same reply: {first['text'] == second['text']}",
            flush=True,
        )
    for model in models.values():
        await model.aclose()
    return rows


def p50(rows: list[dict[str, Any]], name: str, key: str) -> float:
    return statistics.median(r[name][key] for r in rows if r[name][key] is not None)


def main() -> None:
    parser = question_parser(__doc__)
    parser.add_argument("--runtimes", nargs=2, choices=sorted(RUNTIMES), default=["chain", "greedy"])
    parser.add_argument("--out", type=Path, default=Path("bench/out/grounded-replay"))
    args = parser.parse_args()
    names: list[str] = args.runtimes
    sets = agent_sets(args.eval_dir)
    golden = load_golden(sets["small"].golden)
    questions = random.Random(args.seed).sample(golden, args.limit)
    settings = ModelSettings()
    llama, label = load_gguf(writer(settings).model, settings.model_files_dir(), settings.threads)
    recording = Recording(LlamaModel(llama, label, settings.max_output_tokens))
    anyio.run(ask_all, questions, recording, args.store / sets["small"].store, OFF)
    anyio.run(recording.aclose)
    rows = anyio.run(replay, recording.requests, settings, names)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "turns.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")
    a, b = names
    same = sum(r[a]["text"] == r[b]["text"] for r in rows)
    print(f"{len(rows)} grounded turns of {label}; the same reply in {same}")
    print("| runtime | turn p50 | first statement p50 |")
    print("|---|---|---|")
    for name in names:
        print(f"| {name} | {p50(rows, name, 'turn_s'):.2f} s | {p50(rows, name, 'first_s'):.2f} s |")
    turn_ratio = statistics.median(r[a]["turn_s"] / r[b]["turn_s"] for r in rows)
    firsts = [r for r in rows if r[a]["first_s"] and r[b]["first_s"]]
    first_ratio = statistics.median(r[a]["first_s"] / r[b]["first_s"] for r in firsts)
    print(f"{a} / {b}, median per turn: whole turn {turn_ratio:.2f}x, first statement {first_ratio:.2f}x")


if __name__ == "__main__":
    main()
