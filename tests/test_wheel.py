"""The distribution as a user gets it: ``python -m build``'s wheel, installed by pip or run by ``uvx`` in a clean place.

Each reaches a first search over MCP with nothing but the wheel's own dependencies, fetched from the package index:
no torch, no checkout. Slow (minutes: the index is asked for every dependency) and it needs the package index.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import REPO
from tests.kb.kb_process import server_environment
from tests.npm_tools import npm_tool

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

# What a plain install must never bring: torch's builds are gigabytes, and the rest are the extras' own.
EXTRAS_ONLY = ("torch", "sentence-transformers", "transformers", "numba", "faiss-cpu", "hnswlib", "nvidia-")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(REPO)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    (built,) = out.glob("sextant_kb-*.whl")
    return built


async def _first_search(command: str, args: list[str], env: dict[str, str], cwd: Path) -> None:
    params = StdioServerParameters(command=command, args=args, env=env, cwd=str(cwd))
    async with Client(params, read_timeout_seconds=180) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert {"kb_search", "kb_ingest", "kb_stats"} <= tools
        document = {"id": "cat", "title": "Cat", "content": "Our tabby cat sleeps on the warm windowsill at noon."}
        assert not (await client.call_tool("kb_ingest", {"documents": [document]})).is_error
        found = await client.call_tool("kb_search", {"query": "where does the kitty nap?", "k": 1})
        assert not found.is_error and found.structured_content is not None
        assert found.structured_content["hits"][0]["document_id"] == "cat"
        stats = await client.call_tool("kb_stats", {})
        assert stats.structured_content is not None
        assert stats.structured_content["embedder_runtime"] == "onnxruntime int8"
        # The package's data files came with it: the MCP App's page (the tokenizer already embedded the query).
        (view,) = (await client.read_resource("ui://sextant-kb/passage")).contents
        assert view.mime_type == "text/html;profile=mcp-app" and "<!DOCTYPE html>" in view.text  # type: ignore[union-attr]


def _network_environment(home: Path) -> dict[str, str]:
    """The server's clean environment plus what reaching the package index needs (proxies, certificates)."""
    env = server_environment(home)
    for name, value in os.environ.items():
        if name.upper().endswith(("_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR")) or name.startswith(("PIP_", "UV_")):
            env[name] = value
    return env


async def test_pip_install_of_the_wheel_in_a_clean_venv_answers_a_search(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    env = _network_environment(tmp_path)
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(wheel)],
        check=True,
        env=env,
        timeout=900,
    )
    listed = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "list", "--format=freeze"],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    ).stdout.lower()
    installed = {line.split("==")[0] for line in listed.splitlines()}
    assert not [name for name in installed if name.startswith(EXTRAS_ONLY)], installed
    await _first_search(str(venv / "bin" / "sextant-kb"), [], server_environment(tmp_path), tmp_path)


async def test_uvx_runs_the_wheel_and_answers_a_search(wheel: Path, tmp_path: Path) -> None:
    uvx = Path(sys.executable).parent / "uvx"
    env = _network_environment(tmp_path) | {"UV_CACHE_DIR": str(tmp_path / "uv-cache")}
    # uvx builds its environment on the first run (minutes); the server's own start is then quick.
    subprocess.run([str(uvx), "--from", str(wheel), "sextant-kb", "--help"], check=True, env=env, timeout=900)
    await _first_search(str(uvx), ["--from", str(wheel), "sextant-kb"], env, tmp_path)


def test_claude_code_adds_the_wheel_with_its_own_command_and_connects(wheel: Path, tmp_path: Path) -> None:
    """The line docs/mcp-server.md gives for Claude Code, with the wheel in place of the PyPI name."""
    claude = npm_tool(Path(__file__).with_name("clients"), "claude")
    home = tmp_path / "home"
    home.mkdir()
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    env = _network_environment(home) | {"HOME": str(home), "PATH": path, "UV_CACHE_DIR": str(tmp_path / "uv-cache")}
    store = f"SEXTANT_CHROMA_DIR={tmp_path / 'store'}"
    added = [str(claude), "mcp", "add", "sextant", "-e", store, "--", "uvx", "--from", str(wheel), "sextant-kb"]
    subprocess.run(added, env=env, cwd=home, check=True, capture_output=True, timeout=120)
    # `claude mcp list` starts every configured server and says whether it connected.
    listed = subprocess.run(
        [str(claude), "mcp", "list"], env=env, cwd=home, check=True, capture_output=True, text=True, timeout=600
    )
    (line,) = [row for row in listed.stdout.splitlines() if row.startswith("sextant:")]
    assert "Connected" in line and "Failed" not in line, listed.stdout
