"""SIGKILL a real ``sextant-kb --watch`` in the middle of its first pass: the store it leaves shows no partial
document once opened, and the next start's first pass converges to what a clean sync stores."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from sextant.kb.embeddings import Embedder
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.loader_sandbox import BoundedParser
from sextant.kb.sync import apply, plan_for
from sextant.kb.watch import Watcher
from sextant.settings import KbSettings
from tests.kb.cli.killing import Harness, write_files

pytestmark = pytest.mark.slow  # a real sextant-kb process, loading the embedder
BOUND_S = 300.0
KILL_AFTER = 2  # documents the killed pass stores first


def _settings(store: Path) -> KbSettings:
    return KbSettings(chroma_dir=store, _env_file=None)


def _kill_after_stores(store: Path, docs: Path, count: int) -> int:
    """Start ``sextant-kb --watch docs`` on ``store``; SIGKILL it once its log shows ``count`` documents stored.
    Returns how many it had logged."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SEXTANT_")}
    env |= {"SEXTANT_CHROMA_DIR": str(store), "SEXTANT_LOG_LEVEL": "INFO", "HF_HUB_OFFLINE": "1"}
    script = Path(sys.executable).with_name("sextant-kb")
    # stdin stays open and silent: a stdio server with a client that has not spoken yet, watching meanwhile.
    stored = 0
    with subprocess.Popen(
        [str(script), "--watch", str(docs)],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    ) as proc:
        timer = threading.Timer(BOUND_S, proc.kill)  # only a hung server gets here
        timer.start()
        try:
            assert proc.stderr is not None
            for line in proc.stderr:
                if b"watch: add " in line:
                    stored += 1
                    if stored == count:
                        break
        finally:
            proc.send_signal(signal.SIGKILL)
            timer.cancel()
    return stored


def test_a_watch_killed_mid_pass_leaves_a_store_the_next_start_repairs(embedder: Embedder, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    write_files(docs, 1, 6, random.Random(0), None)
    with BoundedParser() as parser:
        with KnowledgeBase.open(_settings(tmp_path / "reference"), embedder=embedder) as kb:
            apply(kb, parser, plan_for(kb, [docs.resolve()]))
        harness = Harness(tmp_path, embedder, [], [])
        reference = harness.visible_state(tmp_path / "reference", [])
        allowed = {doc_id: {content_hash} for doc_id, content_hash in reference.documents.items()}

        assert _kill_after_stores(tmp_path / "store", docs, KILL_AFTER) == KILL_AFTER
        problems, _, versions = harness.raw_check(tmp_path / "store", allowed)
        assert KILL_AFTER <= len(versions) < len(reference.documents)  # killed mid-pass
        harness.visible_state(tmp_path / "store", problems)  # opened as the next start opens it: repaired

        with KnowledgeBase.open(_settings(tmp_path / "store"), embedder=embedder) as kb:
            first_pass = threading.Event()
            with Watcher(kb, parser, [docs], on_pass=lambda _: first_pass.set()):
                assert first_pass.wait(BOUND_S)
        assert harness.visible_state(tmp_path / "store", problems) == reference
    assert problems == []
