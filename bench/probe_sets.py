"""The command-line arguments that name the sets a probe is scored on: golden sets, BEIR splits, their stores."""

from __future__ import annotations

import argparse
import os
from pathlib import Path


def add_set_arguments(parser: argparse.ArgumentParser) -> None:
    """``--eval-store``, ``--data``, ``--set`` (golden sets), ``--beir`` (``DATASET:SPLIT``, as ``read_split`` reads
    it) and ``--limit``."""
    parser.add_argument("--eval-store", type=Path, default=Path(".sextant-eval"))
    parser.add_argument("--data", type=Path, default=Path(os.environ.get("SEXTANT_DATA_DIR", "../shared/data")))
    parser.add_argument("--set", nargs="*", default=[], choices=["small", "large"], help="golden sets")
    parser.add_argument("--beir", nargs="*", default=[], metavar="DATASET:SPLIT", help="split: a name or a .tsv")
    parser.add_argument("--limit", type=int, default=600, help="a seeded sample of a larger BEIR split")
