"""One store, several processes (issue 51): what the store lock costs a search, how soon another process sees a
write, what a reopen costs as the store grows, and what each extra process on a store holds in memory.

Sections (each prints a Markdown table; ``--json`` keeps every figure):

- ``cost``: warm hybrid searches in one process on the evaluation corpus (golden questions), the search as
  shipped (it reads the store's change counter before each search, and catches up when it moved) against the
  same searcher with no check at all (cheaper than any earlier release, which also checked every 2 s),
  alternated question by question; the median per-question ratio. Then the same searches while another
  process writes a document to the store every ``--write-every`` seconds: what searches pay for following it.
- ``visibility``: a stdio ``sextant-kb`` on the corpus (started as Claude Desktop starts it) and a writer beside
  it: ``sextant-ingest FILE`` from the shell, or ``kb_ingest`` through a second server. Seconds from the
  write's return until the first server ranks the new document first for its words, with both a dense and a
  BM25 rank (searched as fast as it answers).
- ``reload``: on stores of growing size (random unit vectors, written through the store as a writer would),
  what one search pays to follow a one-document write by another process: reopening Chroma's segments and the
  BM25 catch-up.
- ``memory``: 1 to ``--servers`` stdio servers on one store, each after a warm search: resident, unique and
  proportional set sizes (psutil), for each ``--precision`` (the embedder's runtime: fp32 under torch, int8
  under onnxruntime as a plain install has it).

    python bench/shared_store.py --json bench/out/shared_store.json > bench/out/shared_store.md
    python bench/shared_store.py --only visibility --trials 40
"""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from sextant.evals.harness import ingest_corpus  # noqa: E402
from sextant.kb.embeddings import quiet_model_loading  # noqa: E402
from sextant.kb.knowledge_base import KnowledgeBase  # noqa: E402
from sextant.settings import KbSettings  # noqa: E402
from tests.kb.random_writes import write_random  # noqa: E402
from tests.kb.store_fleet import Fleet  # noqa: E402

CORPUS = REPO / "eval" / "corpus" / "documents"
GOLDEN = REPO / "eval" / "golden.jsonl"
SECTIONS = ("cost", "visibility", "reload", "memory")
WORDS = ["amber", "basil", "cobalt", "dune", "ember", "fjord", "garnet", "heather", "indigo", "juniper", "kelp"]


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def settings_for(store: Path) -> KbSettings:
    return KbSettings(chroma_dir=store, _env_file=None)  # type: ignore[call-arg]


def corpus_store(scratch: Path) -> Path:
    """The evaluation corpus in a store of its own (embedded once per run)."""
    store = scratch / "corpus" / "store"
    with KnowledgeBase.open(settings_for(store)) as kb:
        ingest_corpus(kb, CORPUS)
        log(f"corpus store: {kb.stats().chunks} chunks")
    return store


# --- cost ------------------------------------------------------------------------------------------------------


def writer_loop(store: Path, every_s: float) -> subprocess.Popen[bytes]:
    """Another process writing a document of 3 random chunks every ``every_s`` seconds until killed."""
    script = (
        "import sys, time\n"
        "from tests.kb.random_writes import main\n"
        "n = 0\n"
        "while True:\n"
        f"    main(sys.argv[1], f'writer-{{n % 5}}', '3'); n += 1; time.sleep({every_s})\n"
    )
    return subprocess.Popen([sys.executable, "-c", script, str(store)], cwd=REPO)


def bench_cost(store: Path, questions: list[str], passes: int, every_s: float) -> dict[str, Any]:
    with KnowledgeBase.open(settings_for(store)) as kb:
        checked = kb.searcher.refresh
        kb.search(questions[0], abstain=False)  # the model and the caches warm
        seconds: dict[str, list[float]] = {"shipped": [], "no check": []}
        for _ in range(passes):
            for i, question in enumerate(questions):
                for side in ("shipped", "no check") if i % 2 == 0 else ("no check", "shipped"):
                    kb.searcher.refresh = checked if side == "shipped" else None
                    started = time.perf_counter()
                    kb.search(question, abstain=False)
                    seconds[side].append(time.perf_counter() - started)
        kb.searcher.refresh = checked
        ratio = statistics.median(a / b for a, b in zip(seconds["shipped"], seconds["no check"], strict=True))
        log(f"cost, idle store: shipped / no check {ratio:.3f}x")
        writer = writer_loop(store, every_s)
        busy: list[float] = []
        refresh_ms: list[float] = []
        followed_before = kb.indexes.followed
        try:
            time.sleep(every_s)
            for _ in range(passes):
                for question in questions:
                    started = time.perf_counter()
                    result = kb.search(question, abstain=False)
                    busy.append(time.perf_counter() - started)
                    refresh_ms.append(result.timings_ms.get("refresh", 0.0))
        finally:
            writer.kill()
            writer.wait()
        followed = kb.indexes.followed - followed_before
        chunks = kb.stats().chunks
    following = sorted(ms for ms in refresh_ms if ms > 5)
    return {
        "chunks": chunks,
        "searches_per_side": len(seconds["shipped"]),
        "idle": {
            side: {"p50_ms": 1000 * percentile(v, 0.5), "p95_ms": 1000 * percentile(v, 0.95)}
            for side, v in seconds.items()
        },
        "idle_ratio_median": ratio,
        "with_writer": {
            "write_every_s": every_s,
            "searches": len(busy),
            "followed": followed,
            "p50_ms": 1000 * percentile(busy, 0.5),
            "p95_ms": 1000 * percentile(busy, 0.95),
            "following_refresh_ms_median": statistics.median(following) if following else 0.0,
            "following_refresh_ms_max": max(following, default=0.0),
        },
    }


# --- visibility ------------------------------------------------------------------------------------------------


def found_first(fleet: Fleet, server: int, text: str, doc_id: str) -> bool:
    result = fleet.call(server, "kb_search", {"query": text, "k": 5})
    assert not result.is_error, result.content
    hits = (result.structured_content or {})["hits"]
    if not hits or hits[0]["document_id"] != doc_id:
        return False
    return hits[0]["scores"]["dense_rank"] is not None and hits[0]["scores"]["bm25_rank"] is not None


def seconds_until_found(fleet: Fleet, text: str, doc_id: str, write: Callable[[], None], limit_s: float) -> float:
    write()
    returned = time.monotonic()
    while not found_first(fleet, 0, text, doc_id):
        if time.monotonic() - returned > limit_s:
            return float("inf")
    return time.monotonic() - returned


def bench_visibility(store: Path, trials: int) -> dict[str, Any]:
    home = store.parent
    (home / "shell").mkdir(exist_ok=True)
    rng = random.Random(51)
    fleet = Fleet(home)
    results: dict[str, list[float]] = {"sextant-ingest from the shell": [], "kb_ingest through another server": []}
    try:
        fleet.start(0)
        fleet.start(1)
        for trial in range(trials):
            text = " ".join(rng.sample(WORDS, 8)) + f" trial {trial} " + " ".join(rng.sample(WORDS, 4))
            if trial % 2 == 0:
                doc_id = f"shell-{trial}"
                (home / "shell" / f"{doc_id}.md").write_text(text, encoding="utf-8")

                def shell_write(doc_id: str = doc_id) -> None:
                    done = fleet.shell("sextant-ingest", f"shell/{doc_id}.md")
                    assert done.returncode == 0, done.stderr

                kind, write = "sextant-ingest from the shell", shell_write
            else:
                doc_id = f"served-{trial}"
                doc = {"id": doc_id, "title": doc_id, "content": text}

                def served_write(doc: dict[str, str] = doc) -> None:
                    assert not fleet.call(1, "kb_ingest", {"documents": [doc]}).is_error

                kind, write = "kb_ingest through another server", served_write
            results[kind].append(seconds_until_found(fleet, text, doc_id, write, limit_s=30))
            log(f"visibility {trial + 1}/{trials}: {kind}: {results[kind][-1]:.3f} s")
    finally:
        fleet.close()
    return {
        kind: {
            "trials": len(v),
            "p50_s": percentile(v, 0.5),
            "p95_s": percentile(v, 0.95),
            "max_s": max(v),
            "over_2s": sum(s > 2 for s in v),
        }
        for kind, v in results.items()
    }


# --- reload ----------------------------------------------------------------------------------------------------


def bench_reload(scratch: Path, sizes: list[int], reps: int) -> list[dict[str, Any]]:
    rows = []
    for size in sizes:
        store = scratch / f"reload-{size}" / "store"
        with KnowledgeBase.open(settings_for(store)) as kb:
            for lo in range(0, size, 5000):
                write_random(kb.store, kb.indexes, f"bulk-{lo}", min(5000, size - lo))
            kb.search("bulk chunk 1", abstain=False)
            refresh_ms, reopen_ms = [], []
            for rep in range(reps):
                command = [sys.executable, "-m", "tests.kb.random_writes", str(store), f"other-{rep}", "3"]
                subprocess.run(command, cwd=REPO, check=True)
                reloads = kb.store.reloads
                result = kb.search("bulk chunk 1", abstain=False)  # follows the write: reopen and BM25 catch-up
                assert kb.store.reloads == reloads + 1
                refresh_ms.append(result.timings_ms["refresh"])
                started = time.perf_counter()
                kb.store.reload()  # the reopen alone, nothing having changed
                reopen_ms.append(1000 * (time.perf_counter() - started))
            rows.append(
                {
                    "chunks": kb.stats().chunks,
                    "reopen_ms_median": statistics.median(reopen_ms),
                    "follow_refresh_ms_median": statistics.median(refresh_ms),
                }
            )
        log(f"reload at {rows[-1]['chunks']} chunks: {rows[-1]}")
        shutil.rmtree(store.parent, ignore_errors=True)
    return rows


# --- memory ----------------------------------------------------------------------------------------------------


def bench_memory(store: Path, servers: int, precision: str) -> list[dict[str, Any]]:
    rows = []
    fleet = Fleet(store.parent, {"SEXTANT_EMBED_PRECISION": precision})
    try:
        for n in range(servers):
            fleet.start(n)
            for m in range(n + 1):
                assert not fleet.call(m, "kb_search", {"query": "descale the espresso machine"}).is_error
            infos = []
            for m in range(n + 1):
                server = fleet.servers[m]
                assert server is not None
                full = psutil.Process(server.pid).memory_full_info()
                infos.append({"rss_mb": full.rss / 2**20, "uss_mb": full.uss / 2**20, "pss_mb": full.pss / 2**20})
            total = sum(i["pss_mb"] for i in infos)
            rows.append({"precision": precision, "servers": n + 1, "each": infos, "total_pss_mb": total})
            log(f"memory with {n + 1} servers ({precision}): {total:.0f} MB proportional in all")
    finally:
        fleet.close()
    return rows


# --- output ----------------------------------------------------------------------------------------------------


def markdown(results: dict[str, Any]) -> str:
    out = []
    if "cost" in results:
        c = results["cost"]
        out += [
            f"## cost ({c['chunks']} chunks, {c['searches_per_side']} searches a side)",
            "",
            "| search | p50 ms | p95 ms |",
            "|---|---:|---:|",
            *(f"| {side} | {v['p50_ms']:.1f} | {v['p95_ms']:.1f} |" for side, v in c["idle"].items()),
            "",
            f"shipped / no check, median per question: **{c['idle_ratio_median']:.3f}x**",
            "",
        ]
        w = c["with_writer"]
        out += [
            f"With a writer every {w['write_every_s']} s: {w['searches']} searches, {w['followed']} followed, "
            f"p50 {w['p50_ms']:.1f} ms, p95 {w['p95_ms']:.1f} ms; a search that followed a write spent "
            f"{w['following_refresh_ms_median']:.1f} ms (median, max {w['following_refresh_ms_max']:.1f}) catching up.",
            "",
        ]
    if "visibility" in results:
        out += [
            "## visibility",
            "",
            "| writer | trials | p50 s | p95 s | max s | over 2 s |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for kind, v in results["visibility"].items():
            out.append(
                f"| {kind} | {v['trials']} | {v['p50_s']:.3f} | {v['p95_s']:.3f} | {v['max_s']:.3f} | {v['over_2s']} |"
            )
        out.append("")
    if "reload" in results:
        out += [
            "## reload",
            "",
            "| chunks | reopen alone, ms | a search following one write (reopen + BM25 catch-up), ms |",
            "|---:|---:|---:|",
        ]
        for row in results["reload"]:
            out.append(f"| {row['chunks']} | {row['reopen_ms_median']:.1f} | {row['follow_refresh_ms_median']:.1f} |")
        out.append("")
    if "memory" in results:
        out += [
            "## memory",
            "",
            "| embedder | servers | RSS MB each | USS MB each | PSS MB in all |",
            "|---|---:|---|---|---:|",
        ]
        for row in results["memory"]:
            rss = ", ".join(f"{i['rss_mb']:.0f}" for i in row["each"])
            uss = ", ".join(f"{i['uss_mb']:.0f}" for i in row["each"])
            out.append(f"| {row['precision']} | {row['servers']} | {rss} | {uss} | {row['total_pss_mb']:.0f} |")
        out.append("")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=SECTIONS, default=list(SECTIONS))
    parser.add_argument("--passes", type=int, default=2, help="cost: passes over the golden questions")
    parser.add_argument("--write-every", type=float, default=1.0, help="cost: seconds between the writer's writes")
    parser.add_argument("--trials", type=int, default=30, help="visibility: writes timed")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 50000], help="reload: store sizes")
    parser.add_argument("--reps", type=int, default=5, help="reload: writes followed per size")
    parser.add_argument("--servers", type=int, default=3, help="memory: most servers on one store")
    parser.add_argument(
        "--precision", nargs="+", choices=("fp32", "int8"), default=["fp32"], help="memory: the embedder's runtimes"
    )
    parser.add_argument("--json", type=Path, help="write every figure here")
    args = parser.parse_args()
    quiet_model_loading()
    questions = [json.loads(line)["question"] for line in GOLDEN.read_text(encoding="utf-8").splitlines()]
    results: dict[str, Any] = {"cpus": os.cpu_count(), "load_1min_at_start": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory(prefix="sextant-shared-store-") as tmp:
        scratch = Path(tmp)
        store = corpus_store(scratch) if {"cost", "visibility", "memory"} & set(args.only) else None
        for section in args.only:
            log(f"section {section}")
            if section == "cost" and store is not None:
                results["cost"] = bench_cost(store, questions, args.passes, args.write_every)
            elif section == "visibility" and store is not None:
                results["visibility"] = bench_visibility(store, args.trials)
            elif section == "reload":
                results["reload"] = bench_reload(scratch, args.sizes, args.reps)
            elif section == "memory" and store is not None:
                results["memory"] = [row for p in args.precision for row in bench_memory(store, args.servers, p)]
    results["load_1min_at_end"] = os.getloadavg()[0]
    print(markdown(results))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
