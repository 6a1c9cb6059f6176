"""How long a file saved into a watched folder takes to become searchable, and what watching costs idle.

``process``: a real ``sextant-kb --watch DIR`` over stdio with the SDK's client. Each trial saves a Markdown
file whose first sentence is its own, then calls ``kb_search`` with that sentence every ``POLL_S`` until the
file's document is among the hits; the latency runs from the write's close to that answer. Reference, in this
script with the same model: ``embedder.embed`` of that file's chunks, so the latency is also a ratio to the
embedder's own time (what no watcher can beat). Then the idle cost: the server's CPU time (psutil, its parse
worker included) over ``--idle-s`` with no change on disk and no call.

``sweep``: the ``Watcher`` in this process at several ``step_ms`` (watchfiles' quiet period, also how often its
Rust loop wakes): latency from the write to the stored record, and this process's CPU over ``--sweep-idle-s``
while only the watcher runs. This is what ``watch.STEP_MS`` is chosen by.

    python bench/watch_latency.py --trials 20 --idle-s 30 > bench/out/watch.md
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import psutil
from mcp import Client, StdioServerParameters

from sextant.kb.chunking import ChunkingConfig, chunk_document
from sextant.kb.embeddings import Embedder, load_embedder, quiet_model_loading
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.loader_sandbox import BoundedParser
from sextant.kb.loaders import markdown
from sextant.kb.watch import Watcher
from sextant.settings import KbSettings

POLL_S = 0.05
WORDS = "keeper lamp lens tower harbour storm beacon signal coast chart compass tide reef anchor vessel mast sail"


def note(n: int) -> tuple[str, str]:
    """A file of a few chunks whose first sentence (the query) no other trial's file has."""
    words = WORDS.split()
    first = f"Logbook entry {n}: the {words[n % len(words)]} of station {n * 7919 % 1000} was checked at dawn."
    body = "\n\n".join(" ".join(words[(n + i * j) % len(words)] for j in range(90)) + "." for i in range(1, 4))
    return first, f"# Log {n}\n\n{first}\n\n{body}\n"


def embed_seconds(embedder: Embedder, text: str, chunk_tokens: int) -> float:
    """The embedder's time for the chunks of ``text``, as ingest would cut them (median of three)."""
    doc = markdown.load(text.encode("utf-8"), "note.md")
    chunks = [c.text for c in chunk_document(doc, embedder, ChunkingConfig(target=chunk_tokens))]
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        embedder.embed(chunks)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def pct(xs: list[float], q: float) -> float:
    return sorted(xs)[min(len(xs) - 1, round(q * (len(xs) - 1)))]


def server_cpu(pid: int) -> float:
    proc = psutil.Process(pid)
    total = sum(proc.cpu_times()[:2])
    for child in proc.children(recursive=True):
        try:
            total += sum(child.cpu_times()[:2])
        except psutil.NoSuchProcess:
            continue
    return total


async def process_run(args: argparse.Namespace, embedder: Embedder, work: Path) -> None:
    chunk_tokens = KbSettings(_env_file=None).chunk_tokens
    docs = work / "watched"
    docs.mkdir()
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(work),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "SEXTANT_CHROMA_DIR": str(work / "store"),
        "SEXTANT_LOG_LEVEL": "WARNING",
    }
    script = shutil.which("sextant-kb", path=str(Path(sys.executable).parent))
    assert script, "sextant-kb is not installed: pip install -e '.[dev]'"
    params = StdioServerParameters(command=script, args=["--watch", str(docs)], env=env, cwd=str(work))
    before = {p.pid for p in psutil.Process().children()}
    async with Client(params, read_timeout_seconds=300) as client:
        [pid] = [p.pid for p in psutil.Process().children() if p.pid not in before]
        latencies: list[float] = []
        ratios: list[float] = []
        for n in range(args.trials):
            first, text = note(n)
            path = docs / f"log-{n:03d}.md"
            path.write_text(text, encoding="utf-8")
            t0 = time.perf_counter()
            while True:
                found = await client.call_tool("kb_search", {"query": first, "k": 5, "detail": "ids"})
                hits = (found.structured_content or {}).get("hits", [])
                if any(h["document_id"] == path.stem for h in hits):
                    break
                await asyncio.sleep(POLL_S)
            latency = time.perf_counter() - t0
            latencies.append(latency)
            ratios.append(latency / embed_seconds(embedder, text, chunk_tokens))
            print(f"trial {n}: {latency * 1000:.0f} ms", file=sys.stderr)
        await asyncio.sleep(3)  # let the last pass's saves finish before idling
        cpu0, t0 = server_cpu(pid), time.perf_counter()
        await asyncio.sleep(args.idle_s)
        idle = (server_cpu(pid) - cpu0) / (time.perf_counter() - t0)
    print("## `sextant-kb --watch`, end to end over stdio\n")
    poll_ms = POLL_S * 1000
    print(f"{args.trials} files saved one at a time; searchable: kb_search (every {poll_ms:.0f} ms) finds it\n")
    print("| measure | p50 | p95 | max |")
    print("|---|---|---|---|")
    for name, xs, scale, fmt in (
        ("save → searchable (ms)", latencies, 1000, ".0f"),
        ("ratio to embedding", ratios, 1, ".1f"),
    ):
        print(f"| {name} | {pct(xs, 0.5) * scale:{fmt}} | {pct(xs, 0.95) * scale:{fmt}} | {max(xs) * scale:{fmt}} |")
    print(f"\nidle over {args.idle_s:.0f} s: {idle * 100:.3f} % of one core (server and its parse worker)\n")


def sweep_run(args: argparse.Namespace, embedder: Embedder, work: Path) -> None:
    print("## Watcher in process, by step_ms\n")
    print("| step_ms | save → stored p50 (ms) | p95 (ms) | idle CPU (% of a core) |")
    print("|---|---|---|---|")
    with BoundedParser() as parser:
        for step in args.steps:
            latencies, idle = sweep_one(args, embedder, parser, work / f"sweep-{step}", step)
            p50, p95 = pct(latencies, 0.5) * 1000, pct(latencies, 0.95) * 1000
            print(f"| {step} | {p50:.0f} | {p95:.0f} | {idle * 100:.3f} |", flush=True)
    print()


def sweep_one(
    args: argparse.Namespace, embedder: Embedder, parser: BoundedParser, folder: Path, step: int
) -> tuple[list[float], float]:
    """Latencies from write to stored record, and this process's idle CPU (fraction of a core), at ``step``."""
    (folder / "docs").mkdir(parents=True)
    settings = KbSettings(chroma_dir=folder / "store", _env_file=None)
    me = psutil.Process()
    passes: list[int] = []
    with (
        KnowledgeBase.open(settings, embedder=embedder) as kb,
        Watcher(kb, parser, [folder / "docs"], step_ms=step, on_pass=lambda report: passes.append(len(report.done))),
    ):
        wait_for(lambda: bool(passes))
        latencies = []
        for n in range(args.sweep_trials):
            _, text = note(n)
            doc_id = f"log-{n:03d}"
            (folder / "docs" / f"{doc_id}.md").write_text(text, encoding="utf-8")
            t0 = time.perf_counter()
            wait_for(partial(stored, kb, doc_id))
            latencies.append(time.perf_counter() - t0)
        time.sleep(2)
        cpu0, t0 = sum(me.cpu_times()[:2]), time.perf_counter()
        time.sleep(args.sweep_idle_s)
        idle = (sum(me.cpu_times()[:2]) - cpu0) / (time.perf_counter() - t0)
    return latencies, idle


def stored(kb: KnowledgeBase, doc_id: str) -> bool:
    return kb.store.get_document(doc_id) is not None


def wait_for(condition: Callable[[], bool]) -> None:
    while not condition():
        time.sleep(0.01)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--idle-s", type=float, default=30.0)
    ap.add_argument("--steps", type=int, nargs="+", default=[10, 50, 200])
    ap.add_argument("--sweep-trials", type=int, default=8)
    ap.add_argument("--sweep-idle-s", type=float, default=15.0)
    ap.add_argument("--only", choices=["process", "sweep"])
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    quiet_model_loading()
    embedder = load_embedder(KbSettings().embedder)  # the server's model
    work = Path(tempfile.mkdtemp(prefix="sextant-watch-bench-")).resolve()
    try:
        when, load = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), os.getloadavg()[0]
        print(f"# watch latency ({when}, {os.cpu_count()} cores, load {load:.1f})\n")
        if args.only != "sweep":
            asyncio.run(process_run(args, embedder, work))
        if args.only != "process":
            sweep_run(args, embedder, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
