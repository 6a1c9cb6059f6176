"""start_all_services.sh as a person runs it: it comes up, reports where, and stops cleanly.

The browser UI is built on first start when ``frontend/dist`` is absent (CI builds it before pytest).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "start_all_services.sh"

pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def environment(tmp_path: Path, port: int, ui_port: int | None = None) -> dict[str, str]:
    return {
        **os.environ,
        "PY": sys.executable,
        "PORT": str(port),
        "LOG_DIR": str(tmp_path / "logs"),
        "SEXTANT_PROVIDER": "none",
        "UI_PORT": str(ui_port or free_port()),
        "SEXTANT_CHROMA_DIR": str(tmp_path / "store"),
        "SEXTANT_MODELS_DIR": str(tmp_path / "models"),
        "HF_HUB_OFFLINE": "1",
    }


def start(env: dict[str, str]) -> tuple[subprocess.Popen[str], list[str]]:
    """The script started as a person starts it, read until it says it is running."""
    process = subprocess.Popen(
        ["bash", str(SCRIPT)], env=env, stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    assert process.stdout is not None
    lines = []
    for line in process.stdout:
        lines.append(line)
        if "Sextant is running" in line:
            break
    return process, lines


def stop(process: subprocess.Popen[str], port: int) -> None:
    process.terminate()  # the script alone: its trap must stop the agent it started
    try:
        assert process.wait(timeout=60) != 0
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.stdout is not None
    process.stdout.close()
    with pytest.raises(ConnectionRefusedError):  # nothing was left listening
        socket.create_connection(("127.0.0.1", port), timeout=5).close()


def test_it_starts_the_agent_prints_the_addresses_stops_on_a_signal_and_starts_again_at_once(tmp_path: Path) -> None:
    port = free_port()
    env = environment(tmp_path, port)
    process, lines = start(env)
    output = "".join(lines)
    assert f"http://127.0.0.1:{port}/docs" in output and "answers are excerpts" in output
    health = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/health"))
    assert health["kb_connected"] is True
    ui = next(line.split()[-1] for line in lines if line.startswith("browser UI"))
    page = urllib.request.urlopen(ui).read().decode()
    assert '<div id="root"' in page  # the built interface, served
    stop(process, port)
    # At once, on the same ports: the connections just served linger in TIME_WAIT, which the servers accept.
    process, lines = start(env)
    assert "Sextant is running" in lines[-1], "".join(lines)
    stop(process, port)


def test_a_part_that_cannot_start_fails_the_script(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = int(busy.getsockname()[1])
        done = subprocess.run(
            ["bash", str(SCRIPT)], env=environment(tmp_path, port), capture_output=True, text=True, timeout=120
        )
    assert done.returncode == 1
    assert f"port {port}" in done.stderr and "already in use" in done.stderr
