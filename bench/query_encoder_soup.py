"""Average query encoders' weights into one (weight-space ensembling, "model soups"), for a probe.

Could one question encoder, averaged from those trained on several collections (and, optionally, the packaged
MiniLM they all started from), serve every collection? Each part is ``FOLDER_OR_NAME:WEIGHT``; weights are
normalised to sum to one. All parts must share the architecture (they are copies of one embedder), and the
first query encoder's record of its document embedder (``sextant-query-encoder.json``) goes with the result, so a
knowledge base of another embedder refuses it as it refuses any query encoder (learning/query-encoder.md).

    python bench/query_encoder_soup.py --out /tmp/qe/soup2 /tmp/qe/scifact:1 /tmp/qe/nfcorpus:1
    SEXTANT_QUERY_ENCODER=/tmp/qe/soup2 sextant-eval --set all --modes rrf
"""

from __future__ import annotations

import argparse
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from sextant.kb.embeddings import QUERY_ENCODER_RECORD, quiet_model_loading, resolve_model_path


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True, help="the averaged sentence-transformers folder")
    parser.add_argument("parts", nargs="+", metavar="FOLDER:WEIGHT")
    args = parser.parse_args(argv)
    quiet_model_loading()
    from sentence_transformers import SentenceTransformer

    parts = [(resolve_model_path(name), float(weight)) for name, weight in (p.rsplit(":", 1) for p in args.parts)]
    records = [Path(folder) / QUERY_ENCODER_RECORD for folder, _ in parts]
    record = next((r for r in records if r.is_file()), None)
    if record is None:
        raise SystemExit(f"no part is a query encoder (none has {QUERY_ENCODER_RECORD})")
    total = sum(weight for _, weight in parts)
    models = [SentenceTransformer(folder, device="cpu") for folder, _ in parts]
    states = [model.state_dict() for model in models]
    averaged = {
        key: sum(state[key].float() * (weight / total) for state, (_, weight) in zip(states, parts, strict=True))
        if value.is_floating_point()
        else value  # integer buffers (position ids) are the same in every copy
        for key, value in states[0].items()
    }
    models[0].load_state_dict(averaged)
    models[0].save(str(args.out))
    shutil.copy(record, args.out / QUERY_ENCODER_RECORD)
    print(f"{args.out}: " + ", ".join(f"{folder} x {weight / total:.3f}" for folder, weight in parts))


if __name__ == "__main__":
    main()
