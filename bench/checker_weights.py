"""The answer check with a copy of the weights of its own, and reading with the writer's, side by side.

    python bench/checker_weights.py --rounds 2 --questions 16

Each round starts one fresh process per way, in rotating order. The process loads a writer as the product
does (``LlamaModel.from_settings``) and the answer check's model (``factory.CHECKER``, the 1.5B model):
``separate``, the 1.5B writer and the check loading the file again (the product until run 15); ``shared``,
the 1.5B writer and the check reading over its loaded weights; ``small-writer``, the 0.5B writer beside the
check (what ``SEXTANT_LOCAL_MODEL=auto`` chose under 8 GiB until run 15). It asks the check about the first
golden questions' labelled evidence (each against its own question and against the next one's), and the
writer one short completion. Reported per way, medians over the rounds: seconds to load the check, peak
resident memory (VmHWM, which counts a file mapped twice twice), proportional memory at the end (Pss, which
counts a shared page once), seconds per check (p50); and whether every process gave the same verdicts, and
every process of the same writer the same reply. Results: ``learning/agent.md``, run 15.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from sextant.llm.writer_choice import LARGE, SMALL

ROOT = Path(__file__).resolve().parent.parent
# way: (the writer, whether the check may share its weights)
WAYS = {"separate": (LARGE, False), "shared": (LARGE, True), "small-writer": (SMALL, False)}


def _status(field: str, path: str = "/proc/self/status") -> float:
    """A ``kB`` field of a /proc file, in GB."""
    for line in Path(path).read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1e6
    raise KeyError(field)


def measure(way: str, questions: int) -> dict[str, object]:
    """One process's figures: the writer and the check loaded, the checks asked, one completion written."""
    import asyncio

    from sextant.agent.answer_check import QUESTION, SYSTEM
    from sextant.evals.golden import load_golden
    from sextant.llm.factory import CHECKER
    from sextant.llm.llama_local import LlamaModel
    from sextant.llm.llama_yes_no import LlamaYesNo
    from sextant.llm.settings import ModelSettings

    model, may_share = WAYS[way]
    settings = ModelSettings(local_model=model)
    writer = LlamaModel.from_settings(settings)
    started = time.perf_counter()
    beside = writer.llama if may_share else None
    check = LlamaYesNo.load(CHECKER, settings.model_files_dir(), settings.threads, beside=beside)
    load_s = time.perf_counter() - started
    golden = [q for q in load_golden(ROOT / "eval" / "golden.jsonl") if q.answerable][: questions + 1]
    prompts = [
        QUESTION.format(text=q.targets[0].evidence, question=asked.text)
        for q, following in itertools.pairwise(golden)
        for asked in (q, following)
    ]

    async def ask() -> tuple[list[float], list[float]]:
        verdicts, seconds = [], []
        for prompt in prompts:
            began = time.perf_counter()
            verdicts.append(await check.yes_probability(SYSTEM, prompt))
            seconds.append(time.perf_counter() - began)
        return verdicts, seconds

    verdicts, seconds = asyncio.run(ask())
    written = writer.llama.create_chat_completion(
        messages=[{"role": "user", "content": golden[0].text}], max_tokens=16, temperature=0.0
    )
    figures = {
        "way": way,
        "writer": writer.name,
        "check": check.name,
        "shared": check.shared,
        "load_s": load_s,
        "check_p50_s": statistics.median(seconds),
        "peak_rss_gb": _status("VmHWM"),
        "pss_gb": _status("Pss", "/proc/self/smaps_rollup"),
        "verdicts": verdicts,
        "written": written["choices"][0]["message"]["content"],  # type: ignore[index]
    }
    asyncio.run(check.aclose())
    asyncio.run(writer.aclose())
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--questions", type=int, default=16, help="golden questions whose evidence is checked")
    parser.add_argument("--way", choices=WAYS, help=argparse.SUPPRESS)  # one process's measurement
    args = parser.parse_args()
    if args.way:
        print(json.dumps(measure(args.way, args.questions)))
        return
    runs: dict[str, list[dict[str, object]]] = {way: [] for way in WAYS}
    ways = list(WAYS)
    for round_ in range(args.rounds):
        for way in ways[round_ % len(ways) :] + ways[: round_ % len(ways)]:
            command = [sys.executable, __file__, "--way", way, "--questions", str(args.questions)]
            done = subprocess.run(command, check=True, capture_output=True, text=True, cwd=ROOT)
            runs[way].append(json.loads(done.stdout.splitlines()[-1]))
            print(f"round {round_ + 1}: {way} done", file=sys.stderr)
    every = [r for rs in runs.values() for r in rs]
    verdicts = len({json.dumps(r["verdicts"]) for r in every}) == 1
    replies = all(
        len({str(r["written"]) for r in every if r["writer"] == w}) == 1 for w in {r["writer"] for r in every}
    )
    print(f"check: {runs['shared'][0]['check']}; shared in the shared way: {runs['shared'][0]['shared']}")
    print(f"verdicts the same in all {len(every)} processes: {verdicts}; each writer's reply the same: {replies}")
    print(f"| measure | {' | '.join(WAYS)} | shared / separate | shared / small-writer |")
    print("|---" * (len(WAYS) + 3) + "|")
    for key in ("load_s", "check_p50_s", "peak_rss_gb", "pss_gb"):
        median = {way: statistics.median(float(r[key]) for r in runs[way]) for way in WAYS}  # type: ignore[arg-type]
        cells = " | ".join(f"{median[way]:.3f}" for way in WAYS)
        shared = median["shared"]
        print(f"| {key} | {cells} | {shared / median['separate']:.3f} | {shared / median['small-writer']:.3f} |")


if __name__ == "__main__":
    main()
