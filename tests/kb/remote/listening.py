"""A server process started for a test: its address once it says where it listens, always stopped after."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def listening(argv: list[str], ready: str, *, env: dict[str, str], cwd: Path) -> Iterator[tuple[str, list[str]]]:
    """Run ``argv``; once a stderr line starts with ``ready``, yield the rest of that line and the stderr so far."""
    lines: list[str] = []
    with subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd
    ) as proc:
        assert proc.stderr is not None
        stderr = proc.stderr
        # Keeps reading once the server is up, so a chatty server never blocks on a full pipe.
        drain = threading.Thread(target=lambda: lines.extend(stderr), daemon=True)
        try:
            address = None
            while address is None:  # stderr closes if the server dies: bounded
                line = stderr.readline()
                assert line, f"{Path(argv[0]).name} exited before serving: {''.join(lines)}"
                lines.append(line)
                if line.startswith(ready):
                    address = line[len(ready) :].strip()
            drain.start()
            yield address, lines
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            if drain.is_alive():
                drain.join()  # the pipe is at its end: the process is gone
