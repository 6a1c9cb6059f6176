"""``sextant-kb``: the knowledge base as an MCP server (stdio, or Streamable HTTP with ``--http``).

Thin by design: this puts the server together (its lifespan, extensions, and the tools, resources and prompts
of each concern in ``sextant.kb.mcp``); each tool validates its arguments, calls ``KnowledgeBase`` in a worker
thread and returns a typed result. Errors the model can fix are tool errors (``isError``) with a message that
says how; there is no delete tool (removal is ``sextant-forget``, run by a person) and no tool reads paths
from disk.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.subscriptions import InMemorySubscriptionBus

from sextant.kb.ingest_tasks import IngestTasks
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.loader_sandbox import BoundedParser, ParseLimits
from sextant.kb.mcp import client_log, ingest, lab, lowlevel, passage_app, read, workspaces
from sextant.kb.mcp.context import KbContext, Server, Tools
from sextant.kb.mcp.ingest import TASK_TOOLS
from sextant.kb.mcp.read import DOCUMENT_URI, PAGE_URI
from sextant.kb.sync import SyncError, check_roots
from sextant.kb.task_protocol import IngestTasksExtension
from sextant.kb.watch import watching
from sextant.kb.workspaces import Workspaces

__all__ = ["DOCUMENT_URI", "PAGE_URI", "TASK_TOOLS", "create_server", "main"]

log = logging.getLogger(__name__)

INSTRUCTIONS = (
    "Sextant's knowledge base: the user's own documents, split into passages that carry page and "
    "section citations. Call kb_search before answering any question about the documents, cite each "
    "claim with the hit's title and page label, and say so when kb_search abstains. kb_list shows what "
    "is in the knowledge base; read kb://documents/{id}/pages/{n} to see a cited page in full."
)


def _retention(ttl_s: int) -> str:
    minutes = max(1, round(ttl_s / 60))
    return (
        f"Retention: this knowledge base is a private workspace; it and every document in it are deleted "
        f"{minutes} minute{'s' if minutes != 1 else ''} after it was created, or earlier when its owner deletes it."
    )


def create_server(kb: KnowledgeBase, *, workspace_ttl_s: int | None = None, watch: Sequence[Path] = ()) -> Server:
    """Build the MCP server over an opened knowledge base (opened first, so bad settings fail fast).

    ``workspace_ttl_s``: the host deletes each workspace this long after creating it; the instructions and
    the descriptions of the tools that store or show documents say so.
    """
    retention = "" if workspace_ttl_s is None else _retention(workspace_ttl_s)
    bus = InMemorySubscriptionBus()  # the SDK's default bus, held here: the watcher publishes outside any request
    task_extension = IngestTasksExtension(IngestTasks(), TASK_TOOLS)

    @asynccontextmanager
    async def lifespan(_: Server) -> AsyncIterator[KbContext]:
        context = KbContext(Workspaces(kb), BoundedParser(ParseLimits.from_settings(kb.settings)), bus)
        try:
            async with task_extension.tasks.running(), watching(kb, context.parser, watch, bus) as watcher:
                yield replace(context, watcher=watcher)
        finally:
            context.workspaces.close()
            context.parser.close()

    server: Server = MCPServer(
        "sextant-kb",
        title="Sextant knowledge base",
        instructions=INSTRUCTIONS + (f" {retention}" if retention else ""),
        version=_version(),
        lifespan=lifespan,
        subscriptions=bus,
        extensions=[task_extension],
        middleware=[task_extension.legacy_middleware()],
    )
    tools = Tools(server, retention)
    for concern in (read, ingest, workspaces, lab):
        concern.register(server, tools)
    passage_app.register(server)
    lowlevel.register(server)
    client_log.install()
    return server


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("sextant-kb")
    except PackageNotFoundError:
        return "0.0.0+checkout"


def main(argv: list[str] | None = None) -> None:
    """Run the MCP server on stdio, or with ``--http`` on Streamable HTTP for bearer-token holders."""
    parser = argparse.ArgumentParser(
        prog="sextant-kb",
        description="Sextant's knowledge base as an MCP server on stdio, or over HTTP with --http (see README).",
    )
    parser.add_argument("--version", action="version", version=f"sextant-kb {_version()}")
    parser.add_argument(
        "--workspace-ttl",
        type=int,
        metavar="SECONDS",
        help="the host deletes each workspace this long after creating it (the tool descriptions say so)",
    )
    parser.add_argument(
        "--http", action="store_true", help="serve Streamable HTTP at /mcp to holders of a sextant-kb-token token"
    )
    parser.add_argument("--host", help="with --http: address to bind (default SEXTANT_KB_HTTP_HOST, 127.0.0.1)")
    parser.add_argument("--port", type=int, help="with --http: port (default SEXTANT_KB_HTTP_PORT, 8765; 0: any free)")
    parser.add_argument(
        "--watch", nargs="+", type=Path, default=[], metavar="DIR", help="keep the store mirroring these folders"
    )
    args = parser.parse_args(argv)
    try:
        watch = check_roots(args.watch)
    except SyncError as exc:
        parser.error(str(exc))
    if not args.http and (args.host or args.port is not None):
        parser.error("--host and --port go with --http")
    if args.workspace_ttl is not None and args.http:
        parser.error("--workspace-ttl is for a host that manages workspaces over stdio, not for --http")
    from sextant.kb.cli.common import open_knowledge_base
    from sextant.kb.remote.http import HttpOptions, serve
    from sextant.settings import load_settings

    # Checked before any model loads: without a token --http does not start at all.
    http = HttpOptions.from_settings(load_settings(), host=args.host, port=args.port) if args.http else None
    kb = open_knowledge_base("sextant-kb")
    if http is None and sys.stdin.isatty():
        log.warning("sextant-kb speaks MCP on stdin/stdout: start it from an MCP client (see the README)")
    with kb:
        server = create_server(kb, workspace_ttl_s=args.workspace_ttl, watch=watch)
        if http is None:
            server.run()
        else:
            serve(server, http)
