"""The MCP contract between ``sextant-kb`` and its clients: tool names, ``_meta`` keys, argument and result models.

The server returns these models as its tools' output schemas; the agent validates ``structuredContent`` into
the same models, so a renamed field fails type checking on both sides instead of reading as ``None``. Only
pydantic and the standard library: the agent imports this without numpy, Chroma or torch.
"""
