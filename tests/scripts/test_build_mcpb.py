"""``scripts/build_mcpb.sh``: the bundle Claude Desktop installs, started exactly as its manifest tells a host to.

The host's side is the mcpb library's own ``getMcpConfigForManifest`` (``packaging/mcpb/host_config.mjs``): the
manifest plus the folders a user picked become a command, arguments and environment, which are run as given.
Slow: the wheel is built, and uvx fetches the server's dependencies from the package index on its first start.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import REPO

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _host_config(bundle: Path, user_config: dict[str, Any]) -> dict[str, Any]:
    done = subprocess.run(
        ["node", str(REPO / "packaging" / "mcpb" / "host_config.mjs"), str(bundle), json.dumps(user_config)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    config: dict[str, Any] = json.loads(done.stdout)
    return config


def _host_environment(home: Path, config_env: dict[str, str]) -> dict[str, str]:
    """What a desktop host passes: its PATH (with uv on it), HOME, and the manifest's environment."""
    env = {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}", "HOME": str(home)}
    for name, value in os.environ.items():  # reaching the package index from this machine
        if name.upper().endswith(("_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR")) or name.startswith(("PIP_", "UV_")):
            env[name] = value
    return env | {"UV_CACHE_DIR": str(home / "uv-cache")} | config_env


async def test_the_bundle_s_server_watches_the_chosen_folders_and_answers_a_search(tmp_path: Path) -> None:
    built = subprocess.run(
        ["bash", str(REPO / "scripts" / "build_mcpb.sh"), str(tmp_path / "dist")],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    bundle = tmp_path / "bundle"
    with zipfile.ZipFile(tmp_path / "dist" / "sextant-kb.mcpb") as packed:
        packed.extractall(bundle)
    manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    documents = manifest["user_config"]["documents"]
    assert (documents["type"], documents["multiple"], documents["required"]) == ("directory", True, True)

    notes, papers, home = tmp_path / "notes", tmp_path / "papers", tmp_path / "home"
    for folder in (notes, papers, home):
        folder.mkdir()
    (notes / "cat.md").write_text("# Cat\nOur tabby cat sleeps on the warm windowsill every afternoon.\n")
    (papers / "tax.md").write_text("# Tax\nFile the quarterly VAT return before the end of the month.\n")
    # Two folders picked, the store left empty: the default folder, under the user's home.
    config = _host_config(bundle, {"documents": [str(notes), str(papers)], "store": ""})
    assert config["args"][-3:] == ["--watch", str(notes), str(papers)]

    env = _host_environment(home, config["env"])
    params = StdioServerParameters(command=config["command"], args=config["args"], env=env, cwd=str(home))
    async with Client(params, read_timeout_seconds=600) as client:
        assert {"kb_search", "kb_list", "kb_stats"} <= {t.name for t in (await client.list_tools()).tools}
        found: list[str] = []
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(found) < 2:  # the watcher's first pass runs in the background
            found = []
            for query in ("where does the kitty nap?", "when is the VAT return due?"):
                result = await client.call_tool("kb_search", {"query": query, "k": 1})
                assert not result.is_error and result.structured_content is not None
                hits = result.structured_content["hits"]
                found += [hits[0]["document_id"]] if hits and not result.structured_content["abstained"] else []
            if len(found) < 2:
                await anyio.sleep(1)
        assert sorted(found) == ["cat", "tax"]
        stats = await client.call_tool("kb_stats", {})
        assert stats.structured_content is not None
        assert str(home) in stats.structured_content["store"]  # the default folder, not the working directory
