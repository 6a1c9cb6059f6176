"""Ask the knowledge base one question through a real `sextant-kb` process, as any MCP client would.

Usage: .venv/bin/python scripts/ask.py "How often should the espresso machine be descaled?"
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from pathlib import Path

from mcp import Client, StdioServerParameters


async def ask(question: str) -> int:
    server = shutil.which("sextant-kb", path=str(Path(sys.executable).parent)) or "sextant-kb"
    env = {**os.environ, "SEXTANT_LOG_LEVEL": os.environ.get("SEXTANT_LOG_LEVEL", "WARNING")}
    async with Client(StdioServerParameters(command=server, env=env), read_timeout_seconds=300) as client:
        result = await client.call_tool("kb_search", {"query": question, "k": 5})
    data = result.structured_content or {}
    if result.is_error or not data:
        print(f"error: {result.content}")
        return 1
    print(data["reason"])
    for hit in data["hits"]:
        where = f"p. {hit['page_label']}" if hit["page_label"] else hit["section"] or "document"
        print(f"[{hit['rank']}] {hit['title']} ({where}) — {hit['text']}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(asyncio.run(ask(sys.argv[1])))
