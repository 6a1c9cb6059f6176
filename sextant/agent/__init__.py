"""Sextant's agent server: hosts the knowledge base over MCP and answers with validated citations."""
