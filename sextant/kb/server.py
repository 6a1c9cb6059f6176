"""``sextant-kb``: the knowledge base as an MCP server (stdio).

Thin by design: each tool validates its arguments, calls ``KnowledgeBase`` in a worker thread and
returns a typed result. Errors the model can fix are tool errors (``isError``) with a message that
says how; there is no delete tool (removal is ``sextant-forget``, run by a person) and no tool
reads paths from disk.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import dataclasses
import functools
import inspect
import logging
import sys
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Annotated, Any, TypeVar, cast

import anyio
import anyio.to_thread
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    CallToolResult,
    CompleteRequestParams,
    CompleteResult,
    Completion,
    ImageContent,
    ListResourcesResult,
    PaginatedRequestParams,
    PromptReference,
    Resource,
    ResourceLink,
    ResourceTemplateReference,
    TextContent,
    ToolAnnotations,
)
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import Field

from sextant.contract.ann import AnnBenchmark, AnnComparison
from sextant.contract.meta import REQUEST_ID_META, WORKSPACE_META
from sextant.contract.results import (
    DetailLevel,
    DocumentInfo,
    DocumentList,
    IngestOutcome,
    IngestReport,
    PageImage,
    SearchResult,
    Stats,
    WorkspaceDropped,
)
from sextant.contract.tools import IngestDocument
from sextant.kb.ann import Kind
from sextant.kb.ann import probe as ann_probe
from sextant.kb.completions import document_ids, page_numbers
from sextant.kb.documents import LoadedDocument, LoadError, join_pages
from sextant.kb.ingest_tasks import IngestReporter, IngestTasks
from sextant.kb.knowledge_base import KnowledgeBase, KnowledgeBaseError, document_id_for
from sextant.kb.loader_sandbox import BoundedParser, ParseLimits, check_file_size
from sextant.kb.loaders import markdown
from sextant.kb.page_image import RenderFailed, page_image
from sextant.kb.remote.access import http_principal, require_write
from sextant.kb.store import StoreError
from sextant.kb.sync import SyncError, check_roots
from sextant.kb.task_protocol import IngestTasksExtension
from sextant.kb.watch import watching
from sextant.kb.workspaces import Workspaces
from sextant.logs import request_id

log = logging.getLogger(__name__)
T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
# Re-using an id replaces that document: destructive, but the same call twice changes nothing more.
REPLACING = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False)
DROPPING = REPLACING  # the same hints: destructive, and a second call changes nothing more
# A client that supports tasks (either protocol era) gets these calls back as a task to poll.
TASK_TOOLS = frozenset({"kb_ingest", "kb_upload"})
# What a document can be refused for; anything else is the server's failure, not the document's.
REFUSALS = (LoadError, KnowledgeBaseError, StoreError)
DOCUMENT_URI = "kb://documents/{doc_id}"
PAGE_URI = "kb://documents/{doc_id}/pages/{number}"

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


def create_server(
    kb: KnowledgeBase, *, workspace_ttl_s: int | None = None, watch: Sequence[Path] = ()
) -> MCPServer[Workspaces]:
    """Build the MCP server over an opened knowledge base (opened first, so bad settings fail fast).

    ``workspace_ttl_s``: the host deletes each workspace this long after creating it; the instructions and
    the descriptions of the tools that store or show documents say so.
    """
    workspaces = Workspaces(kb)
    # One parsing worker for all workspaces; it starts at the first upload.
    parser = BoundedParser(ParseLimits.from_settings(kb.settings))
    retention = "" if workspace_ttl_s is None else _retention(workspace_ttl_s)
    bus = InMemorySubscriptionBus()  # the SDK's default bus, held here: the watcher publishes outside any request
    task_extension = IngestTasksExtension(IngestTasks(), TASK_TOOLS)

    @asynccontextmanager
    async def lifespan(_: MCPServer[Workspaces]) -> AsyncIterator[Workspaces]:
        try:
            async with task_extension.tasks.running(), watching(kb, parser, watch, bus):
                yield workspaces
        finally:
            workspaces.close()
            parser.close()

    server: MCPServer[Workspaces] = MCPServer(
        "sextant-kb",
        title="Sextant knowledge base",
        instructions=INSTRUCTIONS + (f" {retention}" if retention else ""),
        version=_version(),
        lifespan=lifespan,
        subscriptions=bus,
        extensions=[task_extension],
        middleware=[task_extension.legacy_middleware()],
    )

    def tool(title: str, annotations: ToolAnnotations, *, retained: bool = False) -> Callable[[F], F]:
        """Register a tool; its docstring, dedented, is the description the model reads (plus the retention
        rule for the tools that store or show documents)."""

        def register(fn: F) -> F:
            description = inspect.cleandoc(fn.__doc__ or "")
            if retained and retention:
                description += f"\n\n{retention}"
            server.add_tool(_failures_as_errors(fn), title=title, description=description, annotations=annotations)
            return fn

        return register

    def workspace_of(ctx: Context) -> str | None:
        return workspace_named(ctx.request_context.meta)

    def workspace_named(meta: Mapping[str, Any] | None) -> str | None:
        """The workspace the host named for this request; none names the default store.

        Only the trusted host over stdio names workspaces: an HTTP client's ``_meta`` is its own to write.
        """
        if http_principal() is not None:
            return None
        named = (meta or {}).get(WORKSPACE_META)
        return named if isinstance(named, str) and named else None

    def kb_of(ctx: Context) -> KnowledgeBase:
        """The calling workspace's knowledge base, with this call's log lines tagged by the caller's request id."""
        meta = ctx.request_context.meta or {}
        sent = meta.get(REQUEST_ID_META)
        if isinstance(sent, str) and sent:
            request_id.set(sent[:128])
        return store_named(meta, ToolError)

    async def announce_changes(ctx: Context, report: IngestReport) -> None:
        if any(r.status in ("added", "replaced") for r in report.results):
            await announce_documents_changed(ctx)

    async def announce_documents_changed(ctx: Context) -> None:
        """Tell clients that the documents (kb_list, the kb://documents resources) changed: every
        subscriptions/listen stream (2026-07-28), and on the handshake era the calling connection itself."""
        await ctx.notify_resources_changed()
        if ctx.request_context.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS:
            await ctx.request_context.session.send_resource_list_changed()

    def store_named(meta: Mapping[str, Any] | None, error: Callable[[str], Exception]) -> KnowledgeBase:
        """The knowledge base of the workspace ``meta`` names; an unusable name raises ``error`` with the reason."""
        try:
            return workspaces.get(workspace_named(meta))
        except KnowledgeBaseError as exc:
            raise error(str(exc)) from exc

    @tool("Search the knowledge base", READ_ONLY, retained=True)
    async def kb_search(
        query: Annotated[str, Field(description="The question or keywords.", min_length=1, max_length=2000)],
        ctx: Context,
        k: Annotated[int, Field(description="How many passages to return.", ge=1, le=20)] = 5,
        document_ids: Annotated[
            list[str] | None,
            Field(description="Only search these documents (ids from kb_list).", max_length=50),
        ] = None,
        detail: Annotated[
            DetailLevel,
            Field(description="'ids': citations only; 'snippets': ~300 characters around the match; 'full'."),
        ] = "snippets",
    ) -> Annotated[CallToolResult, SearchResult]:
        """Find the passages that answer a question, ranked, each with its page and section citation.

        Hybrid search: meaning (embeddings) and exact words (BM25), fused. Returns no hits and
        abstained=true when nothing in the knowledge base is relevant: then say the documents do not
        answer the question rather than guessing. Cite hits by title and page_label.
        """
        result = await _in_thread(ToolError, kb_of(ctx).search, query, k, doc_ids=document_ids, detail=detail)
        log.info(
            "kb_search: %d hits%s in %.0f ms",
            len(result.hits),
            " (abstained)" if result.abstained else "",
            sum(result.timings_ms.values()),
        )
        links = _page_links(result)
        return CallToolResult(
            content=[TextContent(type="text", text=result.model_dump_json()), *links],
            structured_content=result.model_dump(mode="json"),
        )

    @tool("List documents", READ_ONLY, retained=True)
    async def kb_list(ctx: Context) -> DocumentList:
        """List every document in the knowledge base: id, title, chunk count, size, pages, what it is about, and
        its overview where one was written."""
        return DocumentList(documents=await _in_thread(ToolError, kb_of(ctx).documents))

    @tool("Set a document's overview", REPLACING)
    async def kb_set_overview(
        document_id: Annotated[str, Field(description="The document's id.", min_length=1, max_length=128)],
        overview: Annotated[
            str, Field(description="A few sentences on what the whole document is.", min_length=1, max_length=2000)
        ],
        ctx: Context,
        version: Annotated[
            str | None,
            Field(
                description="The version from the ingest result; refused if the content has changed since.",
                max_length=64,
            ),
        ] = None,
    ) -> DocumentInfo:
        """Store a document's overview, replacing any earlier one. It is searched like a passage and cited to the
        document; re-ingesting changed content drops it. For the agent's ingestion, not for answering questions."""
        require_write("kb_set_overview")
        return await _in_thread(ToolError, kb_of(ctx).set_overview, document_id, overview, version=version)

    @tool("Add text documents", REPLACING, retained=True)
    async def kb_ingest(
        documents: Annotated[
            list[IngestDocument],
            Field(description="Documents to add; re-using an id replaces that document.", min_length=1, max_length=100),
        ],
        ctx: Context,
    ) -> IngestReport:
        """Add text documents to the knowledge base (or replace those with the same id).

        Items sharing an id with different `page` numbers are joined into one paged document.
        An unchanged document is skipped. Files (PDF, DOCX) are added with the sextant-ingest command.
        """
        require_write("kb_ingest")
        kb = kb_of(ctx)
        grouped = _group_pages(documents)
        reporter = IngestReporter(len(grouped), ctx.report_progress)
        results: list[IngestOutcome] = []
        try:
            # One BM25 save for the whole call, not one per document.
            with kb.batch():
                for n, (doc_id, parts) in enumerate(grouped.items()):
                    try:
                        loaded = _as_document(parts)
                        outcome = await anyio.to_thread.run_sync(
                            partial(
                                kb.ingest,
                                doc_id,
                                loaded,
                                source=parts[0].source,
                                progress=partial(reporter.embedding, n),
                            )
                        )
                    except REFUSALS as exc:
                        outcome = _refusal(doc_id, exc)
                    results.append(outcome)
                    await reporter.finished(n, outcome.chunks, f"{doc_id}: {outcome.status}")
        finally:
            # Also when a task is cancelled: the documents stored before it are news.
            report = IngestReport(results=results)
            await announce_changes(ctx, report)
        return report

    @tool("Add a file", REPLACING, retained=True)
    async def kb_upload(
        filename: Annotated[
            str,
            Field(description="The file's name; its suffix picks the parser (.pdf, .docx, .md, .txt).", max_length=255),
        ],
        content_base64: Annotated[
            str,
            Field(
                description="The file's bytes, base64-encoded (at most SEXTANT_MAX_FILE_BYTES of file).",
                min_length=1,
            ),
        ],
        ctx: Context,
        title: Annotated[str | None, Field(description="Title; default: from the file.", max_length=300)] = None,
    ) -> IngestReport:
        """Add one file (PDF, DOCX, Markdown or text), parsed here with page numbers kept.

        Its id comes from the file name; re-using a name replaces that document. A file that is too large, too
        long or too slow to parse is refused with the limit it hit. For a person's uploads through the agent's
        API, not for answering questions.
        """
        require_write("kb_upload")
        doc_id = document_id_for(Path(filename))
        # Before decoding, from the base64 length (exact for valid base64): the limit is a setting, and the
        # schema is built from annotations alone.
        decoded_size = len(content_base64) * 3 // 4 - content_base64[-2:].count("=")
        reporter = IngestReporter(1, ctx.report_progress)
        try:
            check_file_size(filename, decoded_size, parser.limits)
        except LoadError as exc:
            return IngestReport(results=[_refusal(doc_id, exc)])
        try:
            data = base64.b64decode(content_base64, validate=True)
        except binascii.Error as exc:
            raise ToolError(f"content_base64 is not valid base64: {exc}") from exc
        try:
            # In a worker process under time and memory limits: a hostile file costs the worker, not this server.
            loaded = await anyio.to_thread.run_sync(parser.parse, data, filename)
            if title:
                loaded = dataclasses.replace(loaded, title=title)
            original = data if Path(filename).suffix.lower() == ".pdf" else None  # kept for kb_page_image
            reporter.task_checkpoint()  # a task cancelled while the file was parsed stops before writing
            outcome = await anyio.to_thread.run_sync(
                partial(
                    kb_of(ctx).ingest,
                    doc_id,
                    loaded,
                    source=filename,
                    original=original,
                    progress=partial(reporter.embedding, 0),
                )
            )
        except REFUSALS as exc:
            outcome = _refusal(doc_id, exc)
        await reporter.finished(0, outcome.chunks, f"{doc_id}: {outcome.status}")
        report = IngestReport(results=[outcome])
        await announce_changes(ctx, report)
        return report

    @tool("Delete this workspace", DROPPING)
    async def kb_drop_workspace(ctx: Context) -> WorkspaceDropped:
        """Delete the calling workspace: every document, passage and index in it. For the host that created the
        workspace (on expiry or when its owner asks), never for answering questions. The default store cannot be
        dropped."""
        workspace = workspace_of(ctx)
        if workspace is None:
            raise ToolError("this call names no workspace; the default store is removed with sextant-forget")
        dropped = WorkspaceDropped(existed=await _in_thread(ToolError, workspaces.drop, workspace))
        if dropped.existed:
            await announce_documents_changed(ctx)
        return dropped

    @tool("Show a PDF page as an image", READ_ONLY, retained=True)
    async def kb_page_image(
        document_id: Annotated[str, Field(description="The document's id (a hit's document_id).", max_length=128)],
        page: Annotated[int, Field(description="Physical page number, 1-based (a hit's page).", ge=1, le=100_000)],
        ctx: Context,
        quote: Annotated[
            str | None,
            Field(description="Words of a passage to highlight where they stand on the page.", max_length=2000),
        ] = None,
    ) -> Annotated[CallToolResult, PageImage]:
        """Render one page of a stored PDF as a PNG, with the quoted words highlighted where they are found on it.

        For showing a person a cited page as it looks, not for answering questions: kb_search and the page text
        say what the page says. Only PDFs whose original file is kept have page images; for any other document
        (text, Markdown, DOCX, or a PDF ingested before originals were kept) the error starts 'no page image:'
        and says why. The result tells how many rectangles were highlighted (0: the quote is not on this page).
        """
        try:
            png, info = await _in_thread(ToolError, page_image, kb_of(ctx), document_id, page, quote)
        except RenderFailed as exc:
            # Not something a caller could have avoided: a protocol error, not a tool error to retry.
            raise MCPError(INTERNAL_ERROR, str(exc)) from exc
        log.info("kb_page_image: page %d of %s, %d highlights (%s)", page, document_id, info.highlights, info.matched)
        return CallToolResult(
            content=[
                ImageContent(type="image", data=base64.b64encode(png).decode("ascii"), mime_type="image/png"),
                TextContent(type="text", text=info.model_dump_json()),
            ],
            structured_content=info.model_dump(mode="json"),
        )

    @tool("Knowledge-base statistics", READ_ONLY)
    async def kb_stats(ctx: Context) -> Stats:
        """Counts of documents and chunks, the embedder, whether a reranker is in use, and where the store is."""
        return await _in_thread(ToolError, kb_of(ctx).stats)

    @tool("Benchmark an ANN index on the knowledge base", READ_ONLY)
    async def kb_ann_benchmark(
        ctx: Context,
        index: Annotated[Kind, Field(description="The index to build: flat (exact), hnsw, ivfpq or ivfpq_rerank.")],
        k: Annotated[int, Field(description="Neighbours per query for recall@k.", ge=1, le=100)] = 10,
        queries: Annotated[int, Field(description="Chunk vectors sampled as queries.", ge=1, le=2000)] = 100,
    ) -> AnnBenchmark:
        """Build one approximate-nearest-neighbour index over the knowledge base's chunk vectors and report its
        recall@k against exact search, build time, memory and per-query latency (with exact search's latency).

        For learning how the Index Lab's indexes trade accuracy for speed at this knowledge base's size;
        it changes nothing. The index is built with the SEXTANT_ANN_* knobs in force.
        """
        return await _in_thread(ToolError, ann_probe.benchmark, kb_of(ctx), index, k=k, queries=queries)

    @tool("Compare ANN indexes on one query", READ_ONLY)
    async def kb_ann_compare(
        query: Annotated[str, Field(description="The question or keywords.", min_length=1, max_length=2000)],
        ctx: Context,
        k: Annotated[int, Field(description="Passages per index.", ge=1, le=20)] = 5,
    ) -> AnnComparison:
        """Run the same query through Chroma's index and each Index Lab index (flat, hnsw, ivfpq, ivfpq_rerank),
        side by side: the chunks each returns with their exact cosine, its latency, and its overlap with exact search.

        Dense retrieval only (no BM25, fusion or cap): this shows what the index changes, not a final answer.
        """
        return await _in_thread(ToolError, ann_probe.compare, kb_of(ctx), query, k=k)

    @server.resource(DOCUMENT_URI, mime_type="text/plain", title="Document text")
    async def document_resource(doc_id: str, ctx: Context) -> str:
        """The full text of a document."""
        return (await _in_thread(ResourceNotFoundError, kb_of(ctx).document, doc_id)).text

    @server.resource(PAGE_URI, mime_type="text/plain", title="Page text")
    async def page_resource(doc_id: str, number: int, ctx: Context) -> str:
        """The text of one page (physical page number, 1-based) of a document."""
        return await _in_thread(ResourceNotFoundError, kb_of(ctx).page_text, doc_id, number)

    @server.resource("kb://chunks/{chunk_id}", mime_type="text/plain", title="Passage")
    async def chunk_resource(chunk_id: str, ctx: Context) -> str:
        """One passage exactly as it was indexed."""
        return (await _in_thread(ResourceNotFoundError, kb_of(ctx).chunk, chunk_id)).text

    @server.prompt(title="Answer from the knowledge base with citations")
    def answer_with_citations(question: str) -> str:
        """Answer a question using only the knowledge base, citing page and passage."""
        return (
            f"Answer this question using only Sextant's knowledge base: {question}\n\n"
            "First call kb_search with the question. Number the passages you use [1], [2], … and put the "
            "number after each claim it supports; end with a list: [n] title, page label, section. If "
            "kb_search abstains or the passages do not contain the answer, say that the documents do not "
            "answer it. Never add facts that are not in a passage."
        )

    @server.prompt(title="Summarise a document")
    def summarise_document(document_id: str) -> str:
        """Summarise one document of the knowledge base, with page citations."""
        return (
            f"Read kb://documents/{document_id} (or search it with kb_search and document_ids="
            f'["{document_id}"]) and write a summary of its main points, citing the page label of each.'
        )

    async def complete(ctx: ServerRequestContext[Workspaces, Any], params: CompleteRequestParams) -> CompleteResult:
        """Document ids for the document templates and the prompts' document_id; page numbers of the named
        document for the page template; nothing for any other argument."""
        ref, argument = params.ref, params.argument
        names_document = (isinstance(ref, PromptReference) and argument.name == "document_id") or (
            isinstance(ref, ResourceTemplateReference)
            and ref.uri in (DOCUMENT_URI, PAGE_URI)
            and argument.name == "doc_id"
        )
        names_page = isinstance(ref, ResourceTemplateReference) and ref.uri == PAGE_URI and argument.name == "number"
        if not (names_document or names_page):
            return CompleteResult(completion=Completion(values=[]))
        documents = await anyio.to_thread.run_sync(store_named(ctx.meta, partial(MCPError, INVALID_PARAMS)).documents)
        if names_document:
            return CompleteResult(completion=document_ids(documents, argument.value))
        chosen = ((params.context.arguments if params.context else None) or {}).get("doc_id")
        document = next((d for d in documents if d.id == chosen), None)
        return CompleteResult(completion=page_numbers(document, argument.value))

    async def list_documents(
        ctx: ServerRequestContext[Workspaces, Any], params: PaginatedRequestParams | None
    ) -> ListResourcesResult:
        """Every document as a resource, so a host can offer them; list_changed tells it when to list again."""
        documents = await anyio.to_thread.run_sync(store_named(ctx.meta, partial(MCPError, INVALID_PARAMS)).documents)
        return ListResourcesResult(
            resources=[
                Resource(uri=d.uri, name=d.id, title=d.title, description=d.about or None, mime_type="text/plain")
                for d in documents
            ]
        )

    # MCPServer's own handlers for these get no request context (completion) or list only fixed resources,
    # and the workspace is named in each request's _meta.
    server._lowlevel_server.add_request_handler("completion/complete", CompleteRequestParams, complete)
    server._lowlevel_server.add_request_handler("resources/list", PaginatedRequestParams, list_documents)
    return server


async def _in_thread(error: type[Exception], fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run blocking knowledge-base work off the event loop; a refusal (``KnowledgeBaseError``) becomes ``error``
    with its message, and anything else stays the server's own failure (``_failures_as_errors``)."""
    try:
        return await anyio.to_thread.run_sync(partial(fn, *args, **kwargs))
    except KnowledgeBaseError as exc:
        raise error(str(exc)) from exc


def _failures_as_errors(tool: F) -> F:
    """``tool``, its own failures answered as a protocol error (INTERNAL_ERROR) with a log line that names them.

    A refusal (``ToolError``) is a tool error the model can act on; the SDK would answer any other exception the
    same way ("Error executing tool"), telling a model, and the agent behind it, that it caused what is the
    server's failure (a store that cannot be read, a bug).
    """

    @functools.wraps(tool)
    async def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return await tool(*args, **kwargs)
        except (ToolError, ResourceError, MCPError):
            raise
        except StoreError as exc:
            log.error("%s failed: the store: %s", tool.__name__, exc)
            raise MCPError(INTERNAL_ERROR, f"{tool.__name__} failed: the knowledge base's store: {exc}") from exc
        except Exception as exc:
            log.exception("%s failed", tool.__name__)
            detail = f"{type(exc).__name__}: {exc}"[:300]
            raise MCPError(INTERNAL_ERROR, f"{tool.__name__} failed inside sextant-kb ({detail})") from exc

    return cast(F, call)


def _page_links(result: SearchResult) -> list[ResourceLink]:
    seen: dict[str, ResourceLink] = {}
    for hit in result.hits:
        if hit.uri not in seen:
            where = f"page {hit.page_label}" if hit.page_label else "document"
            seen[hit.uri] = ResourceLink(
                type="resource_link", uri=hit.uri, name=f"{hit.title}, {where}", mime_type="text/plain"
            )
    return list(seen.values())


def _refusal(doc_id: str, exc: Exception) -> IngestOutcome:
    """The outcome of a document not taken, with a reason a client can show its user."""
    reason = exc.reason if isinstance(exc, LoadError) else str(exc)
    return IngestOutcome(id=doc_id, status="refused", reason=reason)


def _group_pages(items: list[IngestDocument]) -> dict[str, list[IngestDocument]]:
    """The items of each id, in page order (an item without a page comes first)."""
    by_id: dict[str, list[IngestDocument]] = {}
    for item in items:
        by_id.setdefault(item.id, []).append(item)
    return {doc_id: sorted(parts, key=lambda p: p.page or 0) for doc_id, parts in by_id.items()}


def _as_document(parts: list[IngestDocument]) -> LoadedDocument:
    """Parse each part as Markdown (plain text is valid Markdown) and join them as pages.

    Raises:
        LoadError: a part has no text.
    """
    loaded = [(markdown.load(p.content.encode("utf-8"), f"{p.id}.md"), p.page) for p in parts]
    return join_pages(loaded, title=parts[0].title)


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
