"""The contract against the server that publishes it, and the contract's own weight."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from mcp import Client

from sextant.contract.tools import RESULTS
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.server import create_server

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_every_tool_publishes_its_contract_model_as_output_schema(kb: KnowledgeBase) -> None:
    async with Client(create_server(kb)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == set(RESULTS)
    for name, model in RESULTS.items():
        assert tools[name].output_schema == model.model_json_schema(mode="serialization"), name


def test_the_contract_imports_only_pydantic_and_the_standard_library() -> None:
    # A fresh interpreter: this test process has long since imported the knowledge base.
    code = (
        "import json, sys; import sextant.contract.ann, sextant.contract.meta, sextant.contract.results, "
        "sextant.contract.tools; print(json.dumps(sorted(sys.modules)))"
    )
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, check=True).stdout)
    heavy = ("numpy", "chromadb", "torch", "onnxruntime", "mcp", "fastapi", "sextant.kb", "sextant.agent")
    assert [m for m in loaded if m.split(".")[0] in heavy or m.startswith(heavy)] == []
