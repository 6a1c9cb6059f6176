"""Tokens per second of the local model under OpenMP's wait settings, with and without competing load.

llama.cpp's CPU threads meet at an OpenMP barrier after every operation. libgomp's waiting threads spin first
(``GOMP_SPINCOUNT`` turns, 300,000 by default) and then sleep; when other processes hold the cores, the
spinning threads take them from the one thread with work left and generation collapses (MODELS.md saw 34 ->
0.9 tok/s). ``OMP_WAIT_POLICY=PASSIVE`` never spins, ``ACTIVE`` never sleeps, a smaller spin count spins less.
This bench measures each setting side by side in one run, each in a fresh process (libgomp reads them once,
when it loads), with nothing else started and with busy processes beside it; a run that makes no answer within
``--timeout`` seconds counts as at most ``tokens / timeout``.

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
# name -> the variables set for it (libgomp's defaults when empty)
SETTINGS: dict[str, dict[str, str]] = {
    "default": {},
    "PASSIVE": {"OMP_WAIT_POLICY": "PASSIVE"},
    "ACTIVE": {"OMP_WAIT_POLICY": "ACTIVE"},
    "spin 10k": {"GOMP_SPINCOUNT": "10000"},
    "spin 100k": {"GOMP_SPINCOUNT": "100000"},
}


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


def _run_once(setting: str, model: Path, threads: int, tokens: int, timeout: float) -> float:
    env = {key: value for key, value in os.environ.items() if key not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    env |= SETTINGS[setting]
    code = f"from bench.omp_wait import _generate; _generate({str(model)!r}, {threads}, {tokens})"
    try:
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return tokens / timeout
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return float(result["tokens"]) / float(result["seconds"])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen2.5-coder-0.5b-instruct", choices=sorted(KNOWN_MODELS))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--tokens", type=int, default=48)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--hogs", type=int, nargs="+", default=[0, 1, 3], help="busy processes beside the model")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds before a run counts as stalled")
    args = parser.parse_args(argv)
    spec = KNOWN_MODELS[args.model]
    model = load_model_settings("bench").model_files_dir() / spec.file_name

    print(f"{args.model}, {args.threads} threads, {args.tokens} tokens, median of {args.repeats}, tok/s")
    print(f"{'busy processes beside it':<26}" + "".join(f"{name:>12}" for name in SETTINGS) + "  load before")
    for hogs in args.hogs:
        workers = [multiprocessing.Process(target=_hog, daemon=True) for _ in range(hogs)]
        for worker in workers:
            worker.start()
        try:
            load = os.getloadavg()[0]
            rates: dict[str, list[float]] = {name: [] for name in SETTINGS}
            for _ in range(args.repeats):
                # Alternate the settings so that drift in the machine's load falls on all alike.
                for name in SETTINGS:
                    rates[name].append(_run_once(name, model, args.threads, args.tokens, args.timeout))
        finally:
            for worker in workers:
                worker.terminate()
        row = "".join(f"{statistics.median(rates[name]):>12.1f}" for name in SETTINGS)
        print(f"{hogs:<26}{row}  {load:.1f}", flush=True)


if __name__ == "__main__":
    main()
