"""Embedded Chroma against a real ``chroma run`` server on loopback: the same workload, side by side.

One process holds two knowledge bases with the same embedder: one on the embedded (persistent) store,
one on a ``chroma run`` server that this script starts on a free 127.0.0.1 port and stops by its PID
at the end. Both get the same documents and the same queries, alternating which side goes first
(A B, B A, ...), because the machine is shared and only neighbouring measurements compare.

1. ingest: SciFact abstracts through ``kb.ingest`` inside ``kb.batch()`` (as ``sextant-ingest`` runs),
   in ``--reps`` subsets, each timed on both sides. Embedding is the same work on both sides and
   most of ingest, so its noise would drown the difference being asked about: the vectors of exactly
   the texts ingest embeds are computed once up front (timed: the embedding rate) and served from
   memory during the timed ingest, which checks that every one was served. The timed part is then
   chunking, the Chroma writes and BM25, where the two stores differ; end-to-end ingest with
   embedding follows as 1 / (1/embed + 1/store).
2. search: warm ``kb.search`` (hybrid, k = 5, no reranker; the query is embedded for real) on the
   stores built by 1; per stage from ``SearchResult.timings_ms``, p50/p95 per side and ratios.
3. memory: resident set of the Chroma server (while running), and of a fresh process per side that
   opens the store and searches, so each knowledge-base process is measured alone.

    python bench/chroma_server.py --data ../shared/data --json bench/out/chroma_server.json
"""

from __future__ import annotations

import os

# Before any model import: no hub is reachable (as in bench_kb.py).
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import argparse
import json
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from bench_kb import STAGES, THREADS, index_texts, ingest_batch, log, read_corpus, read_queries, timed, write_json

from sextant.kb.chunking import ChunkingConfig
from sextant.kb.embeddings import Embedder, load_embedder, quiet_model_loading
from sextant.kb.indexing import DEFAULT_POLICY
from sextant.kb.knowledge_base import EMBED_BATCH, KnowledgeBase
from sextant.settings import KbSettings

REPO = Path(__file__).resolve().parent.parent
SIDES = ("embedded", "server")
K = 5


class PrimedEmbedder:
    """The embedder, serving vectors computed up front for the texts ingest will embed.

    A call whose texts were all primed is answered from memory; any other call (a query) goes to the
    model. ``misses`` counts the texts that went to the model, so the ingest can prove it was served.
    """

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self._vectors: dict[str, npt.NDArray[np.float32]] = {}
        self.misses = 0

    def __getattr__(self, name: str) -> Any:  # name, dim, max_tokens, token_spans, count_tokens
        return getattr(self._inner, name)

    def prime(self, texts: list[str]) -> None:
        for text, vector in zip(texts, self._inner.embed(texts, batch_size=EMBED_BATCH), strict=True):
            self._vectors[text] = vector

    def embed(self, texts: Sequence[str], *, batch_size: int = 32) -> npt.NDArray[np.float32]:
        if texts and all(t in self._vectors for t in texts):
            return np.stack([self._vectors[t] for t in texts])
        self.misses += len(texts)
        return self._inner.embed(texts, batch_size=batch_size)


# --- processes ----------------------------------------------------------------------------------------


def rss_kib(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM (peak) of ``pid`` and its descendants, in KiB, from /proc."""
    pids = [pid]
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if ppid in pids:  # one level is enough for what chroma run starts; checked in the report
                pids.append(int(entry.name))
    out = {"VmRSS": 0, "VmHWM": 0, "processes": len(pids)}
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                key = line.split(":", 1)[0]
                if key in ("VmRSS", "VmHWM"):
                    out[key] += int(line.split()[1])
        except OSError:
            pass
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(data: Path, logfile: Path) -> tuple[subprocess.Popen[bytes], str]:
    """``chroma run`` on a free loopback port, polled until its heartbeat answers (as the test does)."""
    chroma = shutil.which("chroma", path=str(Path(sys.executable).parent))
    if not chroma:
        raise SystemExit("the chroma command ships with chromadb; reinstall the dev environment")
    port = free_port()
    with logfile.open("wb") as sink:
        proc = subprocess.Popen(
            [chroma, "run", "--path", str(data), "--host", "127.0.0.1", "--port", str(port)],
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1) as response:
                response.read()
            return proc, url
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.1)
    stop_server(proc)
    raise SystemExit(f"chroma server did not start; see {logfile}")


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    """By its PID only: SIGTERM, then SIGKILL if it has not exited within 15 s."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)


def settings_for(side: str, directory: Path, url: str) -> KbSettings:
    # chroma_url is explicit on both sides: a SEXTANT_CHROMA_URL in the environment must not leak in.
    return KbSettings(
        chroma_dir=directory,
        chroma_url=url if side == "server" else None,
        threads=THREADS,
        _env_file=None,  # type: ignore[call-arg]
    )


def du_kib(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) // 1024


def load() -> float:
    return round(os.getloadavg()[0], 2)


# --- 1. ingest ----------------------------------------------------------------------------------------


def bench_ingest(kbs: dict[str, KnowledgeBase], subsets: list[list[Any]]) -> dict[str, Any]:
    seconds: dict[str, list[float]] = {s: [] for s in SIDES}
    chunks: dict[str, list[int]] = {s: [] for s in SIDES}
    loads = []
    for i, docs in enumerate(subsets):
        for side in SIDES if i % 2 == 0 else SIDES[::-1]:
            n = 0

            def run(side: str = side, docs: list[Any] = docs) -> None:
                nonlocal n
                n = ingest_batch(kbs[side], docs)

            seconds[side].append(timed(run))
            chunks[side].append(n)
        loads.append(load())
        log(
            f"ingest rep {i + 1}/{len(subsets)}: {chunks['embedded'][-1]} chunks, "
            + ", ".join(f"{s} {seconds[s][-1]:.2f}s" for s in SIDES)
            + f", load {loads[-1]}"
        )
    if chunks["embedded"] != chunks["server"]:
        raise SystemExit("the two stores received different chunk counts")
    rates = {s: [c / t for c, t in zip(chunks[s], seconds[s], strict=True)] for s in SIDES}
    per_rep = [v / e for e, v in zip(rates["embedded"], rates["server"], strict=True)]
    return {
        "chunks": sum(chunks["embedded"]),
        "chunks_per_rep": chunks["embedded"],
        "seconds": seconds,
        "chunks_per_s_median": {s: statistics.median(r) for s, r in rates.items()},
        "chunks_per_s_overall": {s: sum(chunks[s]) / sum(seconds[s]) for s in SIDES},
        "server_over_embedded_per_rep": per_rep,
        "server_over_embedded_median": statistics.median(per_rep),
        "loadavg_per_rep": loads,
    }


# --- 2. search ----------------------------------------------------------------------------------------


def bench_search(kbs: dict[str, KnowledgeBase], queries: list[str], warmup: int) -> dict[str, Any]:
    for q in queries[:warmup]:
        for side in SIDES:
            kbs[side].search(q, K)
    timings: dict[str, dict[str, list[float]]] = {s: {st: [] for st in (*STAGES, "wall")} for s in SIDES}
    same_hits = 0
    for j, q in enumerate(queries[warmup:]):
        hits = {}
        for side in SIDES if j % 2 == 0 else SIDES[::-1]:
            t0 = time.perf_counter()
            result = kbs[side].search(q, K)
            timings[side]["wall"].append((time.perf_counter() - t0) * 1000.0)
            for stage in STAGES:
                timings[side][stage].append(result.timings_ms.get(stage, 0.0))
            hits[side] = [h.chunk_id for h in result.hits]
        same_hits += hits["embedded"] == hits["server"]
    stages: dict[str, Any] = {}
    for stage in (*STAGES, "wall"):
        row: dict[str, Any] = {}
        for side in SIDES:
            v = timings[side][stage]
            row[side] = {"p50": float(np.percentile(v, 50)), "p95": float(np.percentile(v, 95))}
        pairs = [(s, e) for s, e in zip(timings["server"][stage], timings["embedded"][stage], strict=True) if e > 0]
        row["server_over_embedded_paired_median"] = statistics.median(s / e for s, e in pairs) if pairs else None
        stages[stage] = row
    n = len(queries) - warmup
    return {"queries": n, "warmup": warmup, "identical_top_k": same_hits / n, "stages_ms": stages}


# --- 3. memory of a knowledge-base process alone --------------------------------------------------------


def probe(side: str, directory: Path, url: str, queries: list[str]) -> dict[str, Any]:
    """In a fresh process (``--probe``): RSS with the model loaded, then with the store open and searched."""
    quiet_model_loading()
    embedder = load_embedder(KbSettings(_env_file=None).embedder, THREADS)  # type: ignore[call-arg]
    embedder.embed(["warm"])
    model_only = rss_kib(os.getpid())
    kb = KnowledgeBase.open(settings_for(side, directory, url), embedder=embedder)
    for q in queries:
        kb.search(q, K)
    searched = rss_kib(os.getpid())
    chunks = kb.stats().chunks
    kb.close()
    return {"side": side, "chunks": chunks, "model_only": model_only, "after_open_and_search": searched}


def run_probe(side: str, directory: Path, url: str, queries_file: Path) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--probe", side, "--store", str(directory), "--url", url]
    cmd += ["--queries-file", str(queries_file)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"probe {side} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# --- report -------------------------------------------------------------------------------------------


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b > 0 else "n/a"


def markdown(r: dict[str, Any]) -> str:
    ing, se, mem = r["ingest"], r["search"], r["memory"]
    c = ing["chunks_per_s_median"]
    e2e = r["end_to_end_chunks_per_s"]
    lines = [
        f"### Embedded vs `chroma run` on 127.0.0.1: {ing['chunks']} chunks "
        f"({r['docs']} SciFact docs, {len(ing['chunks_per_rep'])} alternating reps), load {r['loadavg']}",
        "",
        "| ingest (inside `kb.batch()`) | embedded | server | server / embedded |",
        "|---|---:|---:|---:|",
        f"| store part (chunk, Chroma, BM25; vectors precomputed), chunks/s, median of reps "
        f"| {c['embedded']:.1f} | {c['server']:.1f} | {ing['server_over_embedded_median']:.2f}x |",
        f"| embedding alone (measured once, same for both), chunks/s | {r['embed_chunks_per_s']:.1f} "
        f"| {r['embed_chunks_per_s']:.1f} | |",
        f"| end to end = 1/(1/embed + 1/store), chunks/s | {e2e['embedded']:.1f} | {e2e['server']:.1f} "
        f"| {e2e['server'] / e2e['embedded']:.2f}x |",
        "",
        f"### Warm `kb.search` (hybrid, k={K}, no reranker): {se['queries']} SciFact queries, alternating; "
        f"identical top-{K} on {se['identical_top_k']:.1%}",
        "",
        "| stage | embedded p50 | server p50 | embedded p95 | server p95 | server/embedded p50 | p95 | paired median |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for stage, row in se["stages_ms"].items():
        e, s = row["embedded"], row["server"]
        if max(e["p95"], s["p95"]) < 0.005:
            continue  # a stage that does not run (rerank without a reranker)
        paired = row["server_over_embedded_paired_median"]
        lines.append(
            f"| {stage} | {e['p50']:.2f} | {s['p50']:.2f} | {e['p95']:.2f} | {s['p95']:.2f} "
            f"| {_ratio(s['p50'], e['p50'])} | {_ratio(s['p95'], e['p95'])} | "
            + (f"{paired:.2f}x |" if paired else " |")
        )
    mib = 1024.0
    srv = mem["server"]
    lines += [
        "",
        "### Memory (resident, MiB) and disk",
        "",
        "| process | RSS | peak (HWM) |",
        "|---|---:|---:|",
        f"| chroma server, empty | {srv['empty']['VmRSS'] / mib:.0f} | {srv['empty']['VmHWM'] / mib:.0f} |",
        f"| chroma server, after ingest | {srv['after_ingest']['VmRSS'] / mib:.0f} "
        f"| {srv['after_ingest']['VmHWM'] / mib:.0f} |",
        f"| chroma server, after search | {srv['after_search']['VmRSS'] / mib:.0f} "
        f"| {srv['after_search']['VmHWM'] / mib:.0f} |",
    ]
    for side in SIDES:
        p = mem["probe"][side]
        lines += [
            f"| kb process ({side}), model loaded only | {p['model_only']['VmRSS'] / mib:.0f} "
            f"| {p['model_only']['VmHWM'] / mib:.0f} |",
            f"| kb process ({side}), store open + {r['probe_queries']} searches | "
            f"{p['after_open_and_search']['VmRSS'] / mib:.0f} | {p['after_open_and_search']['VmHWM'] / mib:.0f} |",
        ]
    lines += [
        f"| this bench process (both kbs, embedded store in-process), end | {mem['bench']['VmRSS'] / mib:.0f} "
        f"| {mem['bench']['VmHWM'] / mib:.0f} |",
        "",
        f"Disk: embedded store {r['disk_kib']['embedded'] / 1024:.1f} MiB (with its BM25), server data "
        f"{r['disk_kib']['server'] / 1024:.1f} MiB, server-mode client BM25 cache "
        f"{r['disk_kib']['server_client'] / 1024:.1f} MiB.",
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    default_data = Path(os.environ.get("SEXTANT_DATA_DIR", REPO.parent / "shared" / "data"))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=default_data, help="shared data folder (holds beir/)")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "out", help="scratch folder")
    parser.add_argument("--docs", type=int, default=1000, help="SciFact documents to ingest (~2.5 chunks each)")
    parser.add_argument("--reps", type=int, default=10, help="ingest subsets, each timed on both sides")
    parser.add_argument("--queries", type=int, default=300, help="timed search queries per side")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--probe-queries", type=int, default=50, help="searches in each memory probe")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--keep", action="store_true", help="keep the scratch stores")
    parser.add_argument("--probe", choices=SIDES, help=argparse.SUPPRESS)
    parser.add_argument("--store", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--url", default="", help=argparse.SUPPRESS)
    parser.add_argument("--queries-file", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.probe:  # the memory probe's child process
        queries = json.loads(args.queries_file.read_text(encoding="utf-8"))
        print(json.dumps(probe(args.probe, args.store, args.url, queries)))
        return 0

    corpus = args.data / "beir" / "scifact" / "corpus.jsonl"
    if not corpus.exists():
        parser.error(f"no SciFact corpus at {corpus}: pass --data")
    args.out.mkdir(parents=True, exist_ok=True)
    quiet_model_loading()
    embedder = load_embedder(KbSettings(_env_file=None).embedder, THREADS)  # type: ignore[call-arg]
    docs = read_corpus(corpus, "scifact")[: args.docs]
    queries = read_queries(corpus.parent / "queries.jsonl")[: args.warmup + args.queries]
    if len(queries) < args.warmup + args.queries:
        parser.error(f"SciFact has only {len(queries)} queries")
    subsets = [docs[i :: args.reps] for i in range(args.reps)]
    results: dict[str, Any] = {"docs": len(docs), "loadavg": [load()], "probe_queries": args.probe_queries}

    # Embedding: once, timed; the same work for both sides, served from memory during the timed ingest.
    primed = PrimedEmbedder(embedder)
    texts = [t for d in index_texts(docs, embedder, ChunkingConfig(), DEFAULT_POLICY.dense_context) for t in d]
    log(f"embedding {len(texts)} chunk texts once ...")
    embed_s = timed(lambda: primed.prime(texts))
    results["embed_chunks_per_s"] = len(texts) / embed_s
    results["loadavg"].append(load())
    log(f"  {results['embed_chunks_per_s']:.1f} chunks/s, load {load()}")

    scratch = Path(tempfile.mkdtemp(prefix="chroma-server-", dir=args.out))
    proc, url = start_server(scratch / "server-data", scratch / "server.log")
    results["server"] = {"pid": proc.pid, "url": url}
    log(f"chroma run: pid {proc.pid} at {url}")
    dirs = {"embedded": scratch / "embedded", "server": scratch / "server-client"}
    try:
        mem_server = {"empty": rss_kib(proc.pid)}
        kbs = {s: KnowledgeBase.open(settings_for(s, dirs[s], url), embedder=primed) for s in SIDES}  # type: ignore[arg-type]
        results["ingest"] = bench_ingest(kbs, subsets)
        if primed.misses:
            raise SystemExit(f"{primed.misses} ingest texts were not primed: the timed ingest embedded")
        mem_server["after_ingest"] = rss_kib(proc.pid)
        results["loadavg"].append(load())
        for s in SIDES:
            results.setdefault("stored_chunks", {})[s] = kbs[s].stats().chunks
        log("search ...")
        results["search"] = bench_search(kbs, queries, args.warmup)
        mem_server["after_search"] = rss_kib(proc.pid)
        results["loadavg"].append(load())
        bench_rss = rss_kib(os.getpid())
        for kb in kbs.values():
            kb.close()
        log("memory probes ...")
        qfile = scratch / "probe-queries.json"
        qfile.write_text(json.dumps(queries[-args.probe_queries :]), encoding="utf-8")
        probes = {s: run_probe(s, dirs[s], url, qfile) for s in SIDES}
        results["memory"] = {"server": mem_server, "probe": probes, "bench": bench_rss}
        results["disk_kib"] = {
            "embedded": du_kib(dirs["embedded"]),
            "server": du_kib(scratch / "server-data"),
            "server_client": du_kib(dirs["server"]),
        }
    finally:
        stop_server(proc)
        log(f"chroma server pid {proc.pid} stopped (exit {proc.returncode})")
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    results["loadavg"].append(load())
    store = results["ingest"]["chunks_per_s_median"]
    results["end_to_end_chunks_per_s"] = {
        s: 1.0 / (1.0 / results["embed_chunks_per_s"] + 1.0 / store[s]) for s in SIDES
    }
    print(markdown(results))
    write_json(args.json, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
