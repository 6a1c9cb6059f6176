"""Kill ``sextant-ingest`` (or ``sextant-ingest --sync``) at random moments and check that the store never shows a
partial document.

The machinery of ``bench/kill_ingest.py`` (the long run, whose docstring says what is checked) and of the
short run in ``tests/kb/cli/test_ingest_kill.py``.
"""

from __future__ import annotations

import collections
import json
import logging
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from sextant.kb.embeddings import Embedder
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.store import ChunkStore
from sextant.settings import KbSettings

WORDS = [
    "lighthouse",
    "keeper",
    "lamp",
    "lens",
    "tower",
    "harbour",
    "storm",
    "beacon",
    "signal",
    "coast",
    "chart",
    "compass",
    "tide",
    "reef",
    "rope",
    "anchor",
    "vessel",
    "mast",
    "sail",
    "hull",
    "cargo",
    "pilot",
    "channel",
    "buoy",
    "fog",
    "horn",
    "lantern",
    "oil",
    "wick",
    "glass",
    "brass",
    "stair",
    "gallery",
    "watch",
    "log",
    "entry",
    "night",
    "dawn",
    "wind",
    "gale",
    "swell",
    "wreck",
    "rescue",
    "crew",
    "boat",
    "shore",
    "cliff",
    "rock",
    "sand",
    "gull",
    "island",
]

log = logging.getLogger(__name__)


@dataclass
class State:
    """What a reader sees: document versions, chunk ids, BM25 ids."""

    documents: dict[str, str]
    chunks: list[str]
    bm25: list[str]


@dataclass
class Run:
    number: int
    start: str  # "empty" or "old": the store the killed ingest started from
    kill_at_s: float
    killed: bool
    committed_at_kill: int = 0  # documents whose new version was committed when the kill landed
    orphans_before_repair: int = 0
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0


def write_files(folder: Path, version: int, count: int, rng: random.Random, pdf: Path | None) -> list[Path]:
    """``count`` Markdown files of 1-5 parts each (and a shared PDF, if given); version 2 changes every third
    file and adds one."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for n in range(count):
        changed = version == 2 and n % 3 == 0
        local = random.Random(n * 1000 + (7 if changed else 0))
        paragraphs = [
            " ".join(local.choice(WORDS) for _ in range(local.randint(60, 140))) for _ in range(local.randint(1, 5))
        ]
        body = "\n\n".join(f"## Part {i + 1}\n\n{p}." for i, p in enumerate(paragraphs))
        path = folder / f"note-{n:02d}.md"
        path.write_text(f"# Note {n} (v{2 if changed else 1})\n\n{body}\n", encoding="utf-8")
        paths.append(path)
    if version == 2:
        extra = folder / "note-new.md"
        words = " ".join(rng.choice(WORDS) for _ in range(120))
        extra.write_text(f"# A note only version 2 has\n\n{words}.\n", encoding="utf-8")
        paths.append(extra)
    if pdf is not None:
        shutil.copy(pdf, folder / pdf.name)
        paths.append(folder / pdf.name)
    return paths


def to_version_2_by_sync(folder: Path, count: int, rng: random.Random, pdf: Path | None) -> None:
    """Rewrite ``folder`` from version 1 to version 2 as a person would before a sync: every third file changed,
    one added, the second renamed, the third deleted."""
    write_files(folder, 2, count, rng, pdf)
    (folder / "note-01.md").rename(folder / "renamed-01.md")
    (folder / "note-02.md").unlink()


class Harness:
    def __init__(
        self, work: Path, embedder: Embedder, files_old: list[Path], files_new: list[Path], *, sync: bool = False
    ) -> None:
        """With ``sync``, each run is ``sextant-ingest --sync`` of the folders given as files."""
        self.work = work
        self.embedder = embedder
        self.files_old = files_old
        self.files_new = files_new
        self.command = [*_ingest_command(), *(["--sync"] if sync else [])]

    def ingest(
        self, store: Path, files: list[Path], kill_at: float | None = None, *, check: bool = True
    ) -> tuple[bool, float]:
        """Run sextant-ingest into ``store``; SIGKILL it ``kill_at`` seconds in. Returns (killed, seconds).

        Raises:
            RuntimeError: with ``check``, it exited with an error.
        """
        env = {k: v for k, v in os.environ.items() if not k.startswith("SEXTANT_")}
        env |= {"SEXTANT_CHROMA_DIR": str(store), "SEXTANT_LOG_LEVEL": "WARNING", "SEXTANT_OVERVIEWS": "off"}
        started = time.perf_counter()
        proc = subprocess.Popen(
            [*self.command, "--no-summaries", *map(str, files)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            _, err = proc.communicate(timeout=kill_at)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.communicate()
            return True, time.perf_counter() - started
        if check and proc.returncode != 0:
            raise RuntimeError(f"sextant-ingest exited {proc.returncode}: {err.decode(errors='replace')[-2000:]}")
        return False, time.perf_counter() - started

    def raw_check(self, store: Path, allowed: dict[str, set[str]]) -> tuple[list[str], int, dict[str, str]]:
        """Commit-point invariants on the store as left (no repair). Returns (problems, orphans, versions)."""
        problems = []
        raw = ChunkStore.open(path=store, url=None, embedder=self.embedder.name, dim=self.embedder.dim)
        try:
            records = raw.list_documents()
            named: set[str] = set()
            for record in records:
                ids = record.chunk_ids()
                named.update(ids)
                present = {c.id for c in raw.get_chunks(ids)}
                if len(present) != len(ids):
                    problems.append(f"{record.id}: record names {len(ids)} chunks, {len(present)} present")
                if record.content_hash not in allowed.get(record.id, set()):
                    problems.append(f"{record.id}: a version that was never ingested ({record.content_hash[:12]})")
            all_chunks = {c.id for batch in raw.iter_chunks() for c in batch}
            return problems, len(all_chunks - named), {r.id: r.content_hash for r in records}
        finally:
            raw.close()

    def visible_state(self, store: Path, problems: list[str]) -> State:
        """Open as a reader does (repair, BM25 sync) and check what it shows."""
        settings = KbSettings(chroma_dir=store, _env_file=None)  # type: ignore[call-arg]
        with KnowledgeBase.open(settings, embedder=self.embedder) as kb:
            records = kb.store.list_documents()
            named = sorted(cid for r in records for cid in r.chunk_ids())
            chunks = sorted(c.id for batch in kb.store.iter_chunks() for c in batch)
            bm25 = sorted(kb.lexical.ids())
            if chunks != named:
                problems.append(f"after repair: {len(chunks)} chunks, records name {len(named)}")
            if bm25 != chunks:
                problems.append(f"BM25 holds {len(bm25)} ids, the store {len(chunks)} chunks")
            for record in records:
                first = kb.store.get_chunks(record.chunk_ids()[:1])
                query = " ".join(first[0].text.split()[:12]) if first else record.title
                if not kb.search(query, 3, doc_ids=[record.id]).hits:
                    problems.append(f"{record.id}: not found by a search restricted to it")
            return State({r.id: r.content_hash for r in records}, chunks, bm25)


def run(
    runs: int,
    seed: int,
    embedder: Embedder,
    *,
    files: int = 20,
    pdf: Path | None = None,
    keep: bool = False,
    json_path: Path | None = None,
    sync: bool = False,
) -> dict[str, Any]:
    """The whole experiment; returns the report (``runs_with_problems`` is 0 when every check held).

    With ``sync``, the old store is a sync of one folder at version 1; the folder then moves to version 2
    (``to_version_2_by_sync``) and each killed run is a sync of it. With ``json_path``, the report so far is
    rewritten there after every run, so a stopped run keeps its results.
    """
    rng = random.Random(seed)
    work = Path(tempfile.mkdtemp(prefix="sextant-kill-"))
    started = time.perf_counter()
    try:
        if sync:
            docs = work / "docs"
            write_files(docs, 1, files, random.Random(seed), pdf)
            harness = Harness(work, embedder, [docs], [docs], sync=True)
        else:
            harness = Harness(
                work,
                embedder,
                write_files(work / "v1", 1, files, random.Random(seed), pdf),
                write_files(work / "v2", 2, files, random.Random(seed), pdf),
            )
        # The reference: a clean ingest of the new files, and a store holding the old ones.
        harness.ingest(work / "old", harness.files_old)
        old = harness.visible_state(work / "old", [])
        if sync:
            to_version_2_by_sync(docs, files, random.Random(seed), pdf)
        _, reference_s = harness.ingest(work / "reference", harness.files_new)
        reference = harness.visible_state(work / "reference", [])
        # Start-up alone: the command opens the knowledge base, then has nothing to ingest.
        (work / "empty").mkdir()
        nothing = work / "empty" if sync else work / "v2" / "missing.md"
        _, startup_s = harness.ingest(work / "startup", [nothing], check=False)
        # How long each kind of run takes to the end: an old store re-ingests only what changed.
        shutil.copytree(work / "old", work / "old-timing")
        _, replace_s = harness.ingest(work / "old-timing", harness.files_new)
        expected = {"empty": reference_s, "old": replace_s}
        allowed = {d: {h} for d, h in reference.documents.items()}
        for d, h in old.documents.items():
            allowed.setdefault(d, set()).add(h)
        log.info("reference ingest %.1f s (start-up %.1f s)", reference_s, startup_s)

        results: list[Run] = []
        for number in range(runs):
            t0 = time.perf_counter()
            start = "old" if number % 2 else "empty"
            store = work / f"run-{number}"
            if start == "old":
                shutil.copytree(work / "old", store)
            # A kill after the end tests nothing, and a shared box's speed drifts: the window ends where
            # the last run of this kind that outran its kill ended, so kills keep landing mid-ingest.
            end = expected[start]
            window = (0.0, end) if rng.random() < 0.2 else (min(startup_s * 0.9, end / 2), end)
            kill_at = rng.uniform(*window)
            killed, took = harness.ingest(store, harness.files_new, kill_at=kill_at)
            if not killed:
                expected[start] = took
            result = Run(number, start, round(kill_at, 2), killed)
            problems, result.orphans_before_repair, versions = harness.raw_check(store, allowed)
            result.committed_at_kill = sum(
                1 for d, h in versions.items() if h == reference.documents.get(d) and h != old.documents.get(d)
            )
            harness.visible_state(store, problems)
            harness.ingest(store, harness.files_new)
            final = harness.visible_state(store, problems)
            if final != reference:
                problems.append("the re-run did not converge to the reference state")
            result.problems = problems
            result.seconds = round(time.perf_counter() - t0, 1)
            results.append(result)
            if json_path is not None:
                partial = _report(results, reference, reference_s, startup_s, seed, time.perf_counter() - started)
                json_path.write_text(json.dumps(partial, indent=2) + "\n", encoding="utf-8")
            shutil.rmtree(store, ignore_errors=True)
            log.info(
                "run %d: %s store, kill at %.1f s, %s, %d committed, %d orphans, %d problems",
                number,
                start,
                kill_at,
                "killed" if killed else "finished first",
                result.committed_at_kill,
                result.orphans_before_repair,
                len(problems),
            )
        return _report(results, reference, reference_s, startup_s, seed, time.perf_counter() - started)
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)


def _report(
    results: list[Run], reference: State, reference_s: float, startup_s: float, seed: int, elapsed: float
) -> dict[str, Any]:
    committed = collections.Counter(r.committed_at_kill for r in results if r.killed)
    return {
        "runs": len(results),
        "killed": sum(r.killed for r in results),
        "finished_before_the_kill": sum(not r.killed for r in results),
        "runs_with_problems": sum(bool(r.problems) for r in results),
        "runs_with_orphan_chunks_before_repair": sum(r.orphans_before_repair > 0 for r in results),
        "killed_runs_by_documents_committed": dict(sorted(committed.items())),
        "reference": {
            "documents": len(reference.documents),
            "chunks": len(reference.chunks),
            "ingest_seconds": round(reference_s, 1),
            "startup_seconds": round(startup_s, 1),
        },
        "seed": seed,
        "seconds": round(elapsed, 1),
        "results": [asdict(r) for r in results],
    }


def _ingest_command() -> list[str]:
    script = Path(sys.executable).with_name("sextant-ingest")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from sextant.kb.cli.ingest import main; main()"]
