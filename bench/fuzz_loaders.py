"""Fuzz the loaders through the bounded parser: damaged files of every supported format, N inputs in one run.

Each input is a seed (the shared PDFs and the files ``tests/kb/fuzzing.py`` makes) damaged by Hypothesis
(``tests.kb.fuzzing.mutated``), parsed by ``sextant.kb.loader_sandbox.BoundedParser`` with the production limits.
Every outcome must be a document or a refusal with a named reason, within the time limit plus the cost of
starting a worker; anything else is a crash. Each crashing input is saved under ``--corpus`` (named by its
hash) for ``tests/kb/test_loader_sandbox.py`` to replay; an exception in this process itself stops the run.

    python bench/fuzz_loaders.py --examples 10000 --json bench/out/fuzz_loaders.json   # ~1 h on one core
    python bench/fuzz_loaders.py --formats .png .jpg .tif --ocr-timeout 5 --examples 2000   # images: OCR per input

Results and what they mean: ``learning/reliability.md``.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402

from sextant.kb.loader_sandbox import BoundedParser, ParseLimits  # noqa: E402
from sextant.kb.loaders import image, ocr  # noqa: E402
from tests.kb.fuzzing import CRASH, Seed, made_seeds, mutated, outcome_detail, reason_group, shared_seeds  # noqa: E402

# Starting a replacement worker (imports) is not the file's parsing time, but it is in the measured time.
START_SLACK_S = 10.0
# The image seeds have at most this many frames, each of which may add SEXTANT_OCR_TIMEOUT_S to the time limit.
IMAGE_SEED_FRAMES = 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=10_000, help="inputs to generate (default 10,000)")
    parser.add_argument("--seed", type=int, default=0, help="Hypothesis seed (default 0)")
    parser.add_argument(
        "--data",
        type=Path,
        default=Path(os.environ.get("SEXTANT_DATA_DIR", REPO.parent / "shared" / "data")),
        help="the shared data folder holding pdfs/ (default $SEXTANT_DATA_DIR, else ../shared/data)",
    )
    parser.add_argument("--corpus", type=Path, default=REPO / "tests" / "kb" / "fuzz_corpus")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument(
        "--formats", nargs="+", metavar="SUFFIX", help="fuzz only seeds of these suffixes (.pptx .xlsx); default all"
    )
    defaults = ParseLimits()
    parser.add_argument("--timeout", type=float, default=defaults.timeout_s, help="SEXTANT_PARSE_TIMEOUT_S")
    parser.add_argument("--memory-mb", type=int, default=defaults.memory_mb, help="SEXTANT_PARSE_MEMORY_MB")
    parser.add_argument("--ocr-timeout", type=float, default=defaults.ocr.timeout_s, help="SEXTANT_OCR_TIMEOUT_S")
    args = parser.parse_args()

    seeds = made_seeds() + shared_seeds(args.data)
    if args.formats:
        seeds = [s for s in seeds if Path(s.name).suffix in set(args.formats)]
        if not seeds:
            parser.error(f"no seed has a suffix among {' '.join(args.formats)}")
    print(f"{len(seeds)} seeds: {', '.join(s.name for s in seeds)}", file=sys.stderr)
    limits = ParseLimits(
        timeout_s=args.timeout, memory_mb=args.memory_mb, ocr=ocr.OcrOptions(timeout_s=args.ocr_timeout)
    )
    stats = Stats(limits.timeout_s + START_SLACK_S, IMAGE_SEED_FRAMES * limits.ocr.timeout_s)
    started = time.perf_counter()
    with BoundedParser(limits) as bounded:

        @seed(args.seed)
        @settings(
            max_examples=args.examples,
            database=None,
            deadline=None,
            phases=[Phase.generate],  # a crash is recorded and the run goes on: nothing to shrink
            suppress_health_check=list(HealthCheck),
        )
        @given(mutated(seeds))
        def fuzz(case: Seed) -> None:
            t0 = time.perf_counter()
            kind, reason, skipped = outcome_detail(bounded, case)
            stats.add(case, kind, reason, time.perf_counter() - t0, args.corpus, skipped=skipped)
            if stats.inputs % 500 == 0:
                print(stats.progress(time.perf_counter() - started), file=sys.stderr)

        fuzz()
        stats.worker_starts = bounded.starts
    report = stats.report(time.perf_counter() - started, seeds, limits, args.seed)
    print(json.dumps(report, indent=2))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


class Stats:
    """Outcomes by kind and reason, timings, and the crashing inputs."""

    def __init__(self, allowed_s: float, ocr_allowed_s: float = 0.0) -> None:
        self.allowed_s = allowed_s
        self.ocr_allowed_s = ocr_allowed_s  # more for an image, whose pages are OCR'd
        self.inputs = 0
        self.unique: set[str] = set()
        self.kinds: collections.Counter[str] = collections.Counter()
        self.reasons: collections.Counter[str] = collections.Counter()
        self.by_format: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
        self.loaded_with_skips: collections.Counter[str] = collections.Counter()
        self.seconds: list[float] = []
        self.over_time: list[dict[str, Any]] = []
        self.crashes: list[dict[str, Any]] = []
        self.worker_starts = 0

    def add(self, case: Seed, kind: str, reason: str, elapsed: float, corpus: Path, *, skipped: int = 0) -> None:
        digest = hashlib.sha256(case.data).hexdigest()
        suffix = Path(case.name).suffix
        self.inputs += 1
        self.unique.add(digest)
        self.kinds[kind] += 1
        self.by_format[suffix][kind] += 1
        if reason:
            self.reasons[f"{suffix} {reason_group(reason)}"] += 1
        if skipped:
            self.loaded_with_skips[suffix] += 1
        self.seconds.append(elapsed)
        if elapsed > self.allowed_s + (self.ocr_allowed_s if suffix in image.SUFFIXES else 0.0):
            self.over_time.append({"seed": case.name, "sha256": digest, "seconds": round(elapsed, 2), "kind": kind})
        if kind == CRASH:
            corpus.mkdir(parents=True, exist_ok=True)
            path = corpus / f"{digest[:16]}{suffix}"
            path.write_bytes(case.data)
            self.crashes.append({"seed": case.name, "file": path.name, "reason": reason})
            print(f"crash: {path.name}: {reason}", file=sys.stderr)

    def progress(self, elapsed: float) -> str:
        return f"{self.inputs} inputs in {elapsed:.0f} s: {dict(self.kinds)}"

    def report(self, elapsed: float, seeds: list[Seed], limits: ParseLimits, seed_value: int) -> dict[str, Any]:
        ordered = sorted(self.seconds)

        def pct(q: float) -> float:
            return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3) if ordered else 0.0

        return {
            "inputs": self.inputs,
            "unique_inputs": len(self.unique),
            "seconds": round(elapsed, 1),
            "hypothesis_seed": seed_value,
            "seeds": {s.name: len(s.data) for s in seeds},
            "limits": {
                "timeout_s": limits.timeout_s,
                "memory_mb": limits.memory_mb,
                "ocr_timeout_s": limits.ocr.timeout_s,
            },
            "outcomes": dict(self.kinds),
            "outcomes_by_format": {k: dict(v) for k, v in sorted(self.by_format.items())},
            "loaded_naming_skipped_parts": dict(sorted(self.loaded_with_skips.items())),
            "reasons": dict(self.reasons.most_common()),
            "parse_seconds": {"p50": pct(0.5), "p99": pct(0.99), "max": pct(1.0)},
            "over_time_limit": self.over_time,
            "crashes": self.crashes,
            "worker_starts": self.worker_starts,
            "server_process_died": False,  # this process ran every input to the end
            "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        }


if __name__ == "__main__":
    main()
