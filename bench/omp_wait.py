"""Tokens per second of the local model under OpenMP's two wait policies, with and without a competing load.

llama.cpp's CPU threads meet at an OpenMP barrier after every operation. By default libgomp's waiting threads
spin; when another process holds a core, the spinning threads take the core from the one thread with work
left, and generation collapses (MODELS.md saw 34 -> 0.9 tok/s). ``OMP_WAIT_POLICY=PASSIVE`` makes them sleep
instead. This bench measures both policies side by side in one run, each in a fresh process (libgomp reads
the variable once, when it loads), with nothing else started and with ``--hogs`` busy processes beside it.

    .venv/bin/python -m bench.omp_wait --repeats 3            # from the repo root
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, cast

from sextant.llm.model_files import KNOWN_MODELS
from sextant.llm.settings import load_model_settings

PROMPT = "Write three sentences about descaling an espresso machine."
POLICIES = ("default", "PASSIVE")


def _generate(model: Path, threads: int, tokens: int) -> None:
    from llama_cpp import Llama

    llm = Llama(model_path=str(model), n_ctx=1024, n_threads=threads, n_threads_batch=threads, verbose=False)
    messages: Any = [{"role": "user", "content": PROMPT}]
    start = time.perf_counter()
    reply = cast(dict[str, Any], llm.create_chat_completion(messages=messages, max_tokens=tokens, temperature=0))
    seconds = time.perf_counter() - start
    print(json.dumps({"tokens": reply["usage"]["completion_tokens"], "seconds": seconds}))


def _hog() -> None:
    while True:
        pass


def _run_once(policy: str, model: Path, threads: int, tokens: int) -> float:
    env = dict(os.environ)
    env.pop("OMP_WAIT_POLICY", None)
    if policy != "default":
        env["OMP_WAIT_POLICY"] = policy
    code = f"from bench.omp_wait import _generate; _generate({str(model)!r}, {threads}, {tokens})"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return float(result["tokens"]) / float(result["seconds"])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen2.5-coder-0.5b-instruct", choices=sorted(KNOWN_MODELS))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--tokens", type=int, default=48)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--hogs", type=int, default=1, help="busy processes beside the model in the loaded runs")
    args = parser.parse_args(argv)
    spec = KNOWN_MODELS[args.model]
    model = load_model_settings("bench").model_files_dir() / spec.file_name

    print(f"{args.model}, {args.threads} threads, {args.tokens} tokens, median of {args.repeats}")
    print(f"{'condition':<26} {'default tok/s':>14} {'PASSIVE tok/s':>14} {'PASSIVE/default':>16}  load before")
    for hogs in (0, args.hogs):
        workers = [multiprocessing.Process(target=_hog, daemon=True) for _ in range(hogs)]
        for worker in workers:
            worker.start()
        try:
            load = os.getloadavg()[0]
            rates: dict[str, list[float]] = {policy: [] for policy in POLICIES}
            for _ in range(args.repeats):
                # Alternate the policies so that drift in the machine's load falls on both alike.
                for policy in POLICIES:
                    rates[policy].append(_run_once(policy, model, args.threads, args.tokens))
        finally:
            for worker in workers:
                worker.terminate()
        spin, passive = (statistics.median(rates[policy]) for policy in POLICIES)
        condition = "nothing started beside it" if hogs == 0 else f"{hogs} busy process(es) beside it"
        print(f"{condition:<26} {spin:>14.1f} {passive:>14.1f} {passive / spin:>16.2f}  {load:.1f}")


if __name__ == "__main__":
    main()
