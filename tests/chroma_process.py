"""A real ``chroma run`` server on a free loopback port, for the tests that point the knowledge base at one."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def running_chroma(data: Path) -> Iterator[str]:
    """Start ``chroma run`` on ``data``, yield its URL once its heartbeat answers, stop it after."""
    chroma = shutil.which("chroma", path=str(Path(sys.executable).parent))
    assert chroma, "the chroma command ships with chromadb; reinstall the dev environment"
    port = _free_port()
    proc = subprocess.Popen(
        [chroma, "run", "--path", str(data), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):  # the server needs a moment to bind (8 s on a loaded box); poll, bounded
            try:
                with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1) as response:
                    response.read()
                break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("chroma server did not start")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)
