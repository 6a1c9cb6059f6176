"""Kill ``sextant-ingest`` at random moments and check that the store never shows a partial document.

Per run: a fresh store (half the runs start from a store holding an older version of the files, so the kill
can land in a replacement), ``sextant-ingest`` on a fixed small set of files, SIGKILL at a seeded random
moment, then three checks:

1. Commit point, on the raw store as the kill left it (before any repair): every document record names
   chunks that are all present, and its content is one of the two versions ingested (old or new), never
   a mix. Chunks that no record names may exist here: they were written before the record, the commit
   point, and are not a document.
2. Visible state, through ``KnowledgeBase.open`` as every reader opens it (it runs ``repair()`` and rebuilds
   a BM25 index that is behind): the chunks are exactly those the records name, BM25 holds exactly those
   ids, and every document is found by a search restricted to it.
3. Convergence: ``sextant-ingest`` run again to the end leaves the document ids and versions, chunk ids and
   BM25 ids of a clean reference ingest.

Kill moments: a fifth are uniform over the whole reference run, the rest uniform over its ingest phase
(after start-up, which is mostly loading the embedder and would otherwise take most kills).

    python bench/kill_ingest.py --runs 100 --json bench/out/kill_ingest.json   # ~40 min on a 2-core box

Results and what they mean: ``learning/reliability.md``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from sextant.kb.embeddings import load_embedder, quiet_model_loading  # noqa: E402
from tests.kb.cli.killing import run  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--data",
        type=Path,
        default=Path(os.environ.get("SEXTANT_DATA_DIR", REPO.parent / "shared" / "data")),
        help="the shared data folder; its pdfs/elstest-5p.pdf joins the files when present",
    )
    parser.add_argument("--files", type=int, default=20, help="Markdown files ingested (default 20)")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    parser.add_argument("--sync", action="store_true", help="kill `sextant-ingest --sync` of a folder that changed")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    quiet_model_loading()
    pdf = args.data / "pdfs" / "elstest-5p.pdf"
    embedder = load_embedder("all-MiniLM-L6-v2")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
    shared_pdf = pdf if pdf.exists() else None
    report = run(
        args.runs,
        args.seed,
        embedder,
        files=args.files,
        pdf=shared_pdf,
        keep=args.keep,
        json_path=args.json,
        sync=args.sync,
    )
    print(json.dumps(report, indent=2))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    if report["runs_with_problems"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
