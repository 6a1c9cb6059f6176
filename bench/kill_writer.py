"""SIGKILL a writer in the middle of writes large enough that Chroma saves its vector index (every 1,000 records),
then check that a fresh process opens the store and reads every stored vector (learning/shared-store.md).

Each run starts a process that writes one document of 900-1,500 random unit vectors through the store and its
lock (``tests/kb/random_writes.py``) and kills it after a random 1.2-3.5 s, mostly while it writes; then a new
process opens the store as ``KnowledgeBase.open`` does (lock, ``repair``), reads every live chunk's vector and
queries with a sample of them (each must find itself, cosine > 0.999).

    python bench/kill_writer.py --runs 60 --seed 3
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

CHECK = """
import sys
from pathlib import Path
from sextant.kb.derived_indexes import lock_folder
from sextant.kb.store import ChunkStore
from sextant.kb.store_lock import StoreLock
from sextant.settings import KbSettings
settings = KbSettings(chroma_dir=Path(sys.argv[1]), _env_file=None)
with StoreLock.for_folder(lock_folder(settings)).exclusive():
    store = ChunkStore.for_settings(settings, "all-MiniLM-L6-v2", 384)
    store.repair()
live = [cid for r in store.list_documents() for cid in r.chunk_ids()]
got = [c for lo in range(0, len(live), 1000) for c in store.get_chunks(live[lo : lo + 1000], vectors=True)]
assert len(got) == len(live), f"{len(live) - len(got)} of {len(live)} vectors missing"
for chunk in got[:: max(1, len(got) // 20)]:
    found, cosine = store.query(chunk.vector, 1)[0]
    assert cosine > 0.999, f"{chunk.id} finds {found} at {cosine}"
print(len(live))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    killed = readable = 0
    with tempfile.TemporaryDirectory(prefix="sextant-kill-writer-") as tmp:
        store = Path(tmp) / "store"
        for run in range(args.runs):
            chunks = rng.choice([900, 1100, 1500])
            command = [sys.executable, "-m", "tests.kb.random_writes", str(store), f"doc-{run}", str(chunks)]
            writer = subprocess.Popen(command, cwd=REPO)
            time.sleep(rng.uniform(1.2, 3.5))
            writer.kill()
            killed += writer.wait() == -9
            check = subprocess.run([sys.executable, "-c", CHECK, str(store)], cwd=REPO, capture_output=True, text=True)
            readable += check.returncode == 0
            outcome = f"{check.stdout.strip()} chunks, all readable" if check.returncode == 0 else check.stderr[-300:]
            print(f"run {run}: {chunks} chunks, writer {'killed' if writer.returncode == -9 else 'done'}: {outcome}")
    print(f"{readable} of {args.runs} fresh opens read every vector ({killed} writers killed mid-write)")


if __name__ == "__main__":
    main()
