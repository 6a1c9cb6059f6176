"""A bounded load test of the real agent process on loopback: concurrent streamed queries, then its rate limiter.

The agent is started as a person starts it (``python -m sextant.agent.cli``, which spawns ``sextant-kb`` over
stdio) with no model (``SEXTANT_PROVIDER=none``: answers are excerpts, so the work measured is the HTTP layer,
the MCP hop and the knowledge base's search), on a fresh temporary store that the evaluation corpus's Markdown
and text files (eval/corpus) are ingested into through ``POST /ingest``; the questions are the first 16 of
eval/golden.jsonl.

1. load: for each concurrency in ``--clients`` (repeated ``--repeats`` times), that many asyncio clients share
   ``--requests`` streamed queries (``POST /query/stream``, each read to its ``done`` frame). Per round:
   requests/s, p50/p95 latency to ``done``, errors, and the resident memory of the agent and of its
   ``sextant-kb`` child sampled through the round (start, peak, end). The limit is one client IP here, so
   ``SEXTANT_RATE_LIMIT`` is set far above the run. "Memory bounded" means the peak does not climb from round
   to round at the same concurrency.
2. limiter: a fresh agent on the same store with ``SEXTANT_RATE_LIMIT=--limit`` per ``--window`` s, and
   ``--limit-requests`` streamed queries from 8 clients: exactly ``--limit`` answers, every other request a 429
   carrying ``Retry-After``, never a 5xx; ``/health`` stays unlimited.

An error is anything other than a 200 whose stream ends in ``done`` with no ``error`` frame, or (phase 2 only)
a 429 with ``Retry-After``. The exit status is 1 on any error or a limiter count off by one, so it can gate.

    nice -n 5 python bench/load_agent.py --json bench/out/load_agent.json
"""

from __future__ import annotations

import os

# The agent and its sextant-kb child inherit these: no model hub is reachable, and a lookup costs ~46 s of retries.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

import argparse
import asyncio
import contextlib
import json
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "eval" / "corpus"
QUESTIONS_FILE = REPO / "eval" / "golden.jsonl"
QUESTION_COUNT = 16
SAMPLE_S = 0.1


@dataclass
class Memory:
    """Resident set sizes in MiB, sampled while a round runs."""

    agent_start: float = 0.0
    agent_peak: float = 0.0
    agent_end: float = 0.0
    kb_start: float = 0.0
    kb_peak: float = 0.0
    kb_end: float = 0.0


@dataclass
class Round:
    clients: int
    requests: int
    seconds: float
    requests_per_s: float
    p50_ms: float
    p95_ms: float
    max_ms: float
    ok: int
    limited: int
    errors: int
    error_samples: list[str] = field(default_factory=list)
    memory: Memory = field(default_factory=Memory)
    loadavg_1m: float = 0.0


@dataclass
class Outcome:
    status: int
    ms: float
    retry_after: str | None = None
    problem: str | None = None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Agent:
    """``sextant-agent`` in its own session (so its ``sextant-kb`` child goes with it), stopped by its PID."""

    def __init__(self, store: Path, logs: Path, **settings: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {
            **os.environ,
            "SEXTANT_PROVIDER": "none",
            "SEXTANT_CHROMA_DIR": str(store),
            "SEXTANT_MODELS_DIR": str(store.parent / "models"),
            "SEXTANT_OVERVIEWS": "off",
            "SEXTANT_LOG_LEVEL": "WARNING",
            **{f"SEXTANT_{name.upper()}": value for name, value in settings.items()},
        }
        self.log = logs.open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "sextant.agent.cli", "--host", "127.0.0.1", "--port", str(self.port)],
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.ps = psutil.Process(self.process.pid)

    def wait_healthy(self, timeout_s: float = 300) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the agent exited with {self.process.returncode} before it was healthy")
            try:
                health = httpx.get(f"{self.url}/health", timeout=5).json()
                if health.get("kb_connected"):
                    return dict(health)
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        raise RuntimeError(f"the agent was not healthy within {timeout_s:.0f} s")

    def kb(self) -> psutil.Process | None:
        """The ``sextant-kb`` child (the MCP server); the parse worker, if any, is not it."""
        for child in self.ps.children(recursive=True):
            try:
                if any("sextant-kb" in part or "sextant.kb.server" in part for part in child.cmdline()):
                    return child
            except psutil.NoSuchProcess:
                continue
        return None

    def rss_mib(self) -> tuple[float, float]:
        kb = self.kb()
        agent = self.ps.memory_info().rss / 2**20
        return agent, (kb.memory_info().rss / 2**20 if kb is not None else 0.0)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)  # its own session: the agent and its children
                self.process.wait()
        self.log.close()


async def streamed_query(client: httpx.AsyncClient, question: str) -> Outcome:
    started = time.perf_counter()
    try:
        async with client.stream("POST", "/query/stream", json={"question": question}) as response:
            if response.status_code != 200:
                await response.aread()
                return Outcome(
                    response.status_code,
                    (time.perf_counter() - started) * 1000,
                    retry_after=response.headers.get("retry-after"),
                    problem=None if response.status_code == 429 else response.text[:200],
                )
            event, problem = "", None
            async for line in response.aiter_lines():
                if line.startswith("event: "):
                    event = line[len("event: ") :]
                    if event == "error":
                        problem = "an error frame"
            ms = (time.perf_counter() - started) * 1000
            if event != "done":
                problem = f"the stream ended on {event or 'nothing'!r}, not done"
            return Outcome(200, ms, problem=problem)
    except httpx.HTTPError as exc:
        return Outcome(0, (time.perf_counter() - started) * 1000, problem=f"{type(exc).__name__}: {exc}")


async def sample_memory(agent: Agent, memory: Memory, stop: asyncio.Event) -> None:
    while not stop.is_set():
        a, k = agent.rss_mib()
        memory.agent_peak, memory.kb_peak = max(memory.agent_peak, a), max(memory.kb_peak, k)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), SAMPLE_S)


async def run_round(agent: Agent, clients: int, requests: int, asked: list[str], *, limit_expected: bool) -> Round:
    memory = Memory()
    memory.agent_start, memory.kb_start = agent.rss_mib()
    stop = asyncio.Event()
    sampler = asyncio.create_task(sample_memory(agent, memory, stop))
    outcomes: list[Outcome] = []
    issued = 0

    async def worker(client: httpx.AsyncClient) -> None:
        nonlocal issued
        while issued < requests:
            n = issued
            issued += 1
            outcomes.append(await streamed_query(client, asked[n % len(asked)]))

    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    started = time.perf_counter()
    async with httpx.AsyncClient(base_url=agent.url, timeout=300, limits=limits) as client:
        await asyncio.gather(*(worker(client) for _ in range(clients)))
    seconds = time.perf_counter() - started
    stop.set()
    await sampler
    memory.agent_end, memory.kb_end = agent.rss_mib()
    for name in ("agent_start", "agent_peak", "agent_end", "kb_start", "kb_peak", "kb_end"):
        setattr(memory, name, round(getattr(memory, name), 1))

    ok, limited, errors = [], [], []
    for o in outcomes:
        if o.status == 200 and o.problem is None:
            ok.append(o)
        elif limit_expected and o.status == 429 and o.retry_after:
            limited.append(o)
        else:
            errors.append(o)
    latencies = sorted(o.ms for o in ok) or [0.0]
    return Round(
        clients=clients,
        requests=len(outcomes),
        seconds=round(seconds, 2),
        requests_per_s=round(len(outcomes) / seconds, 2),
        p50_ms=round(statistics.median(latencies), 1),
        p95_ms=round(latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))], 1),
        max_ms=round(latencies[-1], 1),
        ok=len(ok),
        limited=len(limited),
        errors=len(errors),
        error_samples=[f"{o.status}: {o.problem or 'no Retry-After'}" for o in errors[:5]],
        memory=memory,
        loadavg_1m=round(os.getloadavg()[0], 2),
    )


def corpus() -> list[Path]:
    """The evaluation corpus in the formats ``/ingest`` takes as text (its PDFs and DOCX go through /upload)."""
    return sorted(
        p for folder in ("documents", "src") for p in (CORPUS / folder).iterdir() if p.suffix in (".md", ".txt")
    )


def questions() -> list[str]:
    lines = QUESTIONS_FILE.read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["question"] for line in lines if line.strip()][:QUESTION_COUNT]


def ingest(agent: Agent, files: list[Path]) -> int:
    documents = [{"id": p.stem, "title": p.stem, "content": p.read_text(encoding="utf-8")} for p in files]
    response = httpx.post(f"{agent.url}/ingest", json={"documents": documents}, timeout=600)
    response.raise_for_status()
    results = response.json()["results"]
    refused = [r for r in results if r["status"] == "refused"]
    if refused:
        raise RuntimeError(f"ingest refused {refused}")
    return sum(r.get("chunks") or 0 for r in results)


def table(rounds: list[Round]) -> str:
    lines = [
        "| clients | requests | req/s | p50 ms | p95 ms | errors | agent RSS MiB start/peak/end "
        "| kb RSS MiB start/peak/end | load 1m |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rounds:
        m = r.memory
        lines.append(
            f"| {r.clients} | {r.requests} | {r.requests_per_s:.2f} | {r.p50_ms:.0f} | {r.p95_ms:.0f} | {r.errors} "
            f"| {m.agent_start:.0f}/{m.agent_peak:.0f}/{m.agent_end:.0f} | {m.kb_start:.0f}/{m.kb_peak:.0f}/"
            f"{m.kb_end:.0f} | {r.loadavg_1m:.2f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, nargs="+", default=[8, 32], help="concurrency of each round")
    parser.add_argument("--requests", type=int, default=200, help="streamed queries per round")
    parser.add_argument("--repeats", type=int, default=3, help="rounds per concurrency (memory across rounds)")
    parser.add_argument("--limit", type=int, default=10, help="SEXTANT_RATE_LIMIT of the limiter phase")
    parser.add_argument("--window", type=int, default=60, help="SEXTANT_RATE_WINDOW of the limiter phase (s)")
    parser.add_argument("--limit-requests", type=int, default=40, help="streamed queries in the limiter phase")
    parser.add_argument("--json", type=Path, default=REPO / "bench" / "out" / "load_agent.json")
    args = parser.parse_args(argv)
    if args.limit_requests <= args.limit:
        parser.error("--limit-requests must exceed --limit, or the limiter is never reached")

    asked = questions()
    report: dict[str, Any] = {
        "cpus": os.cpu_count(),
        "loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
        "documents": [str(p.relative_to(REPO)) for p in corpus()],
        "questions": QUESTION_COUNT,
    }
    failed = False
    with tempfile.TemporaryDirectory(prefix="sextant-load-") as tmp:
        store, logs = Path(tmp) / "store", Path(tmp) / "agent.log"
        agent = Agent(store, logs, rate_limit=str(10**9))
        try:
            started = time.perf_counter()
            agent.wait_healthy()
            report["startup_s"] = round(time.perf_counter() - started, 1)
            report["chunks"] = ingest(agent, corpus())
            asyncio.run(run_round(agent, 1, 4, asked, limit_expected=False))  # warm-up: first-query costs off the clock
            rounds = [
                asyncio.run(run_round(agent, clients, args.requests, asked, limit_expected=False))
                for _ in range(args.repeats)
                for clients in args.clients
            ]
        finally:
            agent.stop()
            if agent.process.returncode not in (0, -signal.SIGTERM):
                sys.stderr.write(logs.read_text(errors="replace")[-3000:])
        report["load"] = [asdict(r) for r in rounds]
        failed |= any(r.errors for r in rounds)
        print(table(rounds))

        limiter = Agent(store, logs, rate_limit=str(args.limit), rate_window=str(args.window))
        try:
            limiter.wait_healthy()
            limited = asyncio.run(run_round(limiter, 8, args.limit_requests, asked, limit_expected=True))
            health = [httpx.get(f"{limiter.url}/health", timeout=30).status_code for _ in range(args.limit + 5)]
        finally:
            limiter.stop()
        expected = {"ok": args.limit, "limited": args.limit_requests - args.limit, "errors": 0}
        seen = {"ok": limited.ok, "limited": limited.limited, "errors": limited.errors}
        report["limiter"] = {
            **asdict(limited),
            "rate_limit": args.limit,
            "window_s": args.window,
            "expected": expected,
            "health_statuses": sorted(set(health)),
        }
        failed |= seen != expected or set(health) != {200}
        print(
            f"\nlimiter ({args.limit} per {args.window} s, {args.limit_requests} streamed queries from 8 clients): "
            f"{limited.ok} answered, {limited.limited} refused with 429 + Retry-After, {limited.errors} errors "
            f"(expected {expected}); /health x{len(health)}: {sorted(set(health))}"
        )

    report["loadavg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    report["passed"] = not failed
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(f"\nload average at start {report['loadavg_at_start']}, at end {report['loadavg_at_end']}; {args.json}")
    if failed:
        sys.stderr.write("load_agent: FAILED (errors or a limiter count off; see the JSON)\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
