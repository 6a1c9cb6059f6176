"""The same questions through a real ``sextant-kb`` stdio process: what an MCP client gets.

Unlike the in-process rows, abstention is on here (an abstained question returns no hits), because
that is what a client sees.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

from sextant.contract.results import SearchResult
from sextant.evals.golden import Question
from sextant.evals.harness import K, ModeReport, grade
from sextant.settings import KbSettings


async def _ask_all(questions: Sequence[Question], settings: KbSettings) -> dict[str, SearchResult]:
    command = shutil.which("sextant-kb", path=str(Path(sys.executable).parent)) or "sextant-kb"
    env = {
        **os.environ,
        "SEXTANT_CHROMA_DIR": str(settings.store_dir()),
        "SEXTANT_LOG_LEVEL": "WARNING",
        "HF_HUB_OFFLINE": "1",
    }
    answers: dict[str, SearchResult] = {}
    async with Client(StdioServerParameters(command=command, env=env), read_timeout_seconds=600) as client:
        for q in questions:
            result = await client.call_tool("kb_search", {"query": q.text, "k": K, "detail": "full"})
            if result.is_error or result.structured_content is None:
                raise RuntimeError(f"kb_search failed for {q.id}: {result.content}")
            answers[q.text] = SearchResult.model_validate(result.structured_content)
    return answers


def grade_via_mcp(questions: Sequence[Question], settings: KbSettings) -> ModeReport:
    """Grade the default search as served over MCP stdio."""
    answers = anyio.run(_ask_all, questions, settings)
    return grade("hybrid via MCP", questions, answers.__getitem__)
