"""Turn a long, verbose build's output into one line of progress every few seconds.

Reads the build's output on stdin and keeps all of it in a log file (for when it fails). Prints
``<label>: n of N files compiled`` from ninja's ``[n/N]`` lines at most every ``--every`` seconds, and a
"still working" line when the build has said nothing that long, so that whoever watches a first setup never
waits a minute without a word. Standard library only: it runs before anything else is installed.
"""

from __future__ import annotations

import argparse
import queue
import re
import sys
import threading
import time
from typing import BinaryIO

NINJA_STEP = re.compile(rb"^\s*\[(\d+)/(\d+)\]")


def _clock(seconds: float) -> str:
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}:{rest:02d}"


def progress_line(label: str, done: int, total: int, elapsed: float, compiling_for: float) -> str:
    """What to say now: the count and, once a tenth is compiled, about how long is left at this pace."""
    if total == 0:
        return f"{label}: preparing the build ({_clock(elapsed)})"
    line = f"{label}: {done} of {total} files compiled ({_clock(elapsed)})"
    if done >= max(total // 10, 1) and done < total:
        left = compiling_for * (total - done) / done
        line += f", about {max(round(left / 60), 1)} min left"
    return line


def follow(stream: BinaryIO, log: BinaryIO, label: str, every: float) -> None:
    lines: queue.Queue[bytes | None] = queue.Queue()

    def read() -> None:
        for raw in stream:
            lines.put(raw)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    start = last_said = time.monotonic()
    first_step: float | None = None
    done = total = 0
    while True:
        try:
            raw = lines.get(timeout=1.0)
        except queue.Empty:
            raw = b""
        if raw is None:
            now = time.monotonic()
            if total == 0:  # pip found a wheel it had built before
                print(f"{label}: nothing to compile ({_clock(now - start)})", flush=True)
            else:
                print(progress_line(label, done, total, now - start, now - (first_step or now)), flush=True)
            break
        if raw:
            log.write(raw)
            step = NINJA_STEP.match(raw)
            if step:
                done, total = int(step[1]), int(step[2])
                first_step = first_step or time.monotonic()
        now = time.monotonic()
        if now - last_said >= every:
            compiling_for = now - first_step if first_step else 0.0
            print(progress_line(label, done, total, now - start, compiling_for), flush=True)
            last_said = now


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", required=True, help="what is being built, at the start of each line")
    parser.add_argument("--log", required=True, help="file that keeps the build's whole output")
    parser.add_argument("--every", type=float, default=20.0, help="seconds between progress lines")
    args = parser.parse_args(argv)
    with open(args.log, "wb") as log:
        follow(sys.stdin.buffer, log, args.label, args.every)


if __name__ == "__main__":
    main()
