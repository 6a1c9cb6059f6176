"""Kill the agent's ``sextant-kb`` child again and again under streamed load: does anyone get a wrong answer?

The real agent process is started as a person starts it (``python -m sextant.agent.cli``, no model: answers are
excerpts, deterministic for a fixed store), on a fresh store holding the evaluation corpus's Markdown and text
files. Each of the first 16 golden questions is asked once on a healthy agent; that answer is its reference.

Then ``--clients`` asyncio clients stream those questions without pause while the main task, ``--kills``
times, waits for the agent to say the knowledge base is connected, lets the load run ``--gap`` s, and sends
``SIGKILL`` to the ``sextant-kb`` child. ``/health`` is polled every 50 ms from the kill: *reported* is how long
until it says ``kb_connected: false``; *recovered* is how long until it says ``true`` again.

A client whose question is refused waits ``REFUSED_PAUSE_S`` before its next one, as a person would.
Every streamed request ends one of three ways: *answered* (an ``answer`` frame), *refused* (a 503 or an
``error`` frame: honest), or something else (a transport error, a stream with no ``done``). An answered
request is **wrong** when its answer text or its sources differ from the question's reference; this is what
a dead knowledge base used to produce ("Nothing in the documents matches this question.").

For scale, the same script times ``--cold-starts`` cold starts of ``sextant-kb`` alone on a copy of the store
(spawn to its tool list over MCP stdio), spread between the kills so that they meet the same load as the
restarts do: the goal is recovery p95 within the server's own cold start p95 + 5 s.

    nice -n 5 python bench/kill_kb.py --json bench/out/kill_kb.json
"""

from __future__ import annotations

import os

# The agent and its sextant-kb child inherit these: no model hub is reachable.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx
from load_agent import Agent, corpus, ingest, questions  # bench/ is the script's own folder
from mcp import Client

from sextant.agent.kb_client import stdio_server

REPO = Path(__file__).resolve().parent.parent
POLL_S = 0.05
REFUSED_PAUSE_S = 1.0


@dataclass
class Tally:
    answered: int = 0
    wrong: int = 0
    refused: int = 0
    broken: int = 0
    wrong_samples: list[str] = field(default_factory=list)
    broken_samples: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Reply:
    status: int
    answer: tuple[str, str] | None  # (text, sources as JSON) of the answer frame
    ended: bool  # a done frame came
    error: str | None


async def ask(client: httpx.AsyncClient, question: str) -> Reply:
    try:
        async with client.stream("POST", "/query/stream", json={"question": question}) as response:
            if response.status_code != 200:
                return Reply(response.status_code, None, True, (await response.aread()).decode()[:200])
            text, passages, error, event, ended = None, [], None, "", False
            async for line in response.aiter_lines():
                if line.startswith("event: "):
                    event = line[len("event: ") :]
                    ended = ended or event == "done"
                elif line.startswith("data: "):
                    data = json.loads(line[len("data: ") :])
                    if event == "error":
                        error = data["message"]
                    elif event == "answer":
                        text = data["text"]
                    elif event == "sources":
                        passages = data["passages"]
            answer = None if text is None else (text, json.dumps(passages, sort_keys=True))
            return Reply(200, answer, ended, error)
    except httpx.HTTPError as exc:
        return Reply(0, None, False, f"{type(exc).__name__}: {exc}")


def judge(reply: Reply, question: str, reference: dict[str, tuple[str, str]], tally: Tally) -> None:
    if reply.status == 503 or (reply.status == 200 and reply.error is not None and reply.ended):
        tally.refused += 1
    elif reply.status == 200 and reply.answer is not None and reply.ended:
        tally.answered += 1
        if reply.answer != reference[question]:
            tally.wrong += 1
            if len(tally.wrong_samples) < 5:
                tally.wrong_samples.append(f"{question!r}: {reply.answer[0][:160]!r}")
    else:
        tally.broken += 1
        if len(tally.broken_samples) < 5:
            tally.broken_samples.append(f"{reply.status}: {reply.error}")


async def load(
    url: str, asked: list[str], reference: dict[str, tuple[str, str]], clients: int, stop: asyncio.Event
) -> Tally:
    tally = Tally()

    async def worker(offset: int) -> None:
        async with httpx.AsyncClient(base_url=url, timeout=120) as client:
            n = offset
            while not stop.is_set():
                question = asked[n % len(asked)]
                reply = await ask(client, question)
                judge(reply, question, reference, tally)
                if reply.status == 503 or reply.error is not None:
                    # As the browser does: a refused question is asked again later, not in a tight loop.
                    await asyncio.sleep(REFUSED_PAUSE_S)
                n += clients

    await asyncio.gather(*(worker(i) for i in range(clients)))
    return tally


async def health(client: httpx.AsyncClient) -> bool | None:
    try:
        return bool((await client.get("/health")).json()["kb_connected"])
    except httpx.HTTPError:
        return None


async def kills(
    agent: Agent, count: int, gap_s: float, copy: Path, cold_every: int
) -> tuple[list[float], list[float], list[float]]:
    reported, recovered, colds = [], [], []
    async with httpx.AsyncClient(base_url=agent.url, timeout=10) as client:
        for n in range(count):
            while await health(client) is not True:
                await asyncio.sleep(POLL_S)
            await asyncio.sleep(gap_s)
            kb = agent.kb()
            if kb is None:
                raise RuntimeError("no sextant-kb child to kill")
            killed = time.perf_counter()
            kb.kill()
            while await health(client) is not False:
                await asyncio.sleep(POLL_S)
            reported.append(time.perf_counter() - killed)
            while await health(client) is not True:
                await asyncio.sleep(POLL_S)
            recovered.append(time.perf_counter() - killed)
            print(f"kill {n + 1}/{count}: reported {reported[-1]:.2f} s, recovered {recovered[-1]:.2f} s", flush=True)
            if (n + 1) % cold_every == 0:
                colds.append(await cold_start(copy))
                print(f"cold start of sextant-kb alone: {colds[-1]:.2f} s", flush=True)
    return reported, recovered, colds


async def cold_start(store: Path) -> float:
    server = stdio_server(None, [])
    server.env = {**(server.env or {}), "SEXTANT_CHROMA_DIR": str(store), "SEXTANT_LOG_LEVEL": "WARNING"}
    started = time.perf_counter()
    async with Client(server, read_timeout_seconds=300) as client:
        await client.list_tools()
        return time.perf_counter() - started


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50_s": round(statistics.median(ordered), 2), "p95_s": round(p95, 2), "max_s": round(ordered[-1], 2)}


async def run(args: argparse.Namespace, report: dict[str, Any]) -> bool:
    asked = questions()
    with tempfile.TemporaryDirectory(prefix="sextant-kill-kb-") as tmp:
        store, logs = Path(tmp) / "store", Path(tmp) / "agent.log"
        agent = Agent(store, logs, rate_limit=str(10**9))
        try:
            agent.wait_healthy()
            report["chunks"] = ingest(agent, corpus())
            reference: dict[str, tuple[str, str]] = {}
            async with httpx.AsyncClient(base_url=agent.url, timeout=120) as client:
                for question in asked:
                    reply = await ask(client, question)
                    if reply.answer is None:
                        raise RuntimeError(f"no reference answer for {question!r}: {reply}")
                    reference[question] = reply.answer
            copy = Path(tmp) / "store-copy"
            shutil.copytree(store, copy)  # the store as the agent's child opens it, never opened by two at once
            stop = asyncio.Event()
            loader = asyncio.create_task(load(agent.url, asked, reference, args.clients, stop))
            every = max(1, args.kills // max(1, args.cold_starts))
            reported, recovered, colds = await kills(agent, args.kills, args.gap, copy, every)
            stop.set()
            tally = await loader
        finally:
            agent.stop()
    report.update(
        kills=args.kills,
        clients=args.clients,
        tally=asdict(tally),
        reported=summary(reported),
        recovered=summary(recovered),
        cold_start=summary(colds),
    )
    report["recovery_p95_minus_cold_start_p95_s"] = round(
        report["recovered"]["p95_s"] - report["cold_start"]["p95_s"], 2
    )
    return tally.wrong == 0 and tally.broken == 0 and report["recovery_p95_minus_cold_start_p95_s"] <= 5.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=50)
    parser.add_argument("--clients", type=int, default=4, help="concurrent streaming clients during the kills")
    parser.add_argument("--gap", type=float, default=1.0, help="seconds of load on a healthy agent before a kill")
    parser.add_argument("--cold-starts", type=int, default=5)
    parser.add_argument("--json", type=Path, default=REPO / "bench" / "out" / "kill_kb.json")
    args = parser.parse_args(argv)
    report: dict[str, Any] = {"cpus": os.cpu_count(), "loadavg_at_start": [round(x, 2) for x in os.getloadavg()]}
    ok = asyncio.run(run(args, report))
    report["loadavg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
