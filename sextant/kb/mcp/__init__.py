"""The MCP surface of the knowledge base, by concern: what every tool needs (``context``), reading and searching
(``read``), adding documents (``ingest``), workspaces (``workspaces``), the Index Lab (``lab``), and the one shim
over the SDK's low-level server (``lowlevel``). ``sextant.kb.server`` puts them together."""
