"""Reading the knowledge base: search, the list, statistics, a page as an image, the document, page and passage
resources, and the two prompts. Nothing here changes the store."""

from __future__ import annotations

import base64
import logging
from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, CallToolResult, ImageContent, ResourceLink, TextContent
from pydantic import Field

from sextant.contract.results import DetailLevel, DocumentList, PageImage, SearchResult, Stats
from sextant.contract.tools import KB_LIST, KB_PAGE_IMAGE, KB_SEARCH, KB_STATS
from sextant.kb.mcp import passage_app
from sextant.kb.mcp.context import READ_ONLY, Server, Tools, in_thread, kb_of, lifespan_of
from sextant.kb.page_image import RenderFailed, page_image

log = logging.getLogger(__name__)

DOCUMENT_URI = "kb://documents/{doc_id}"
PAGE_URI = "kb://documents/{doc_id}/pages/{number}"
CHUNK_URI = "kb://chunks/{chunk_id}"


def register(server: Server, tools: Tools) -> None:
    """Add the reading tools, resources and prompts to ``server``."""

    @tools.add(KB_SEARCH, "Search the knowledge base", READ_ONLY, retained=True, meta=passage_app.tool_meta())
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
        result = await in_thread(ToolError, kb_of(ctx).search, query, k, doc_ids=document_ids, detail=detail)
        log.info(
            "kb_search: %d hits%s in %.0f ms",
            len(result.hits),
            " (abstained)" if result.abstained else "",
            sum(result.timings_ms.values()),
        )
        return CallToolResult(
            content=[TextContent(type="text", text=result.model_dump_json()), *_page_links(result)],
            structured_content=result.model_dump(mode="json"),
        )

    @tools.add(KB_LIST, "List documents", READ_ONLY, retained=True)
    async def kb_list(ctx: Context) -> DocumentList:
        """List every document in the knowledge base: id, title, chunk count, size, pages, what it is about, and
        its overview where one was written."""
        return DocumentList(documents=await in_thread(ToolError, kb_of(ctx).documents))

    @tools.add(KB_PAGE_IMAGE, "Show a PDF page as an image", READ_ONLY, retained=True)
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
            png, info = await in_thread(ToolError, page_image, kb_of(ctx), document_id, page, quote)
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

    @tools.add(KB_STATS, "Knowledge-base statistics", READ_ONLY)
    async def kb_stats(ctx: Context) -> Stats:
        """Counts of documents and chunks, the embedder, whether a reranker is in use, where the store is, and how
        often this process followed other processes' writes to it; with --watch, the files left out by type."""
        kb = kb_of(ctx)
        stats = await in_thread(ToolError, kb.stats)
        watcher = lifespan_of(ctx).watcher
        if watcher is not None and watcher.kb is kb:
            stats = stats.model_copy(update={"unread_files": watcher.unreadable})
        return stats

    @server.resource(DOCUMENT_URI, mime_type="text/plain", title="Document text")
    async def document_resource(doc_id: str, ctx: Context) -> str:
        """The full text of a document."""
        return (await in_thread(ResourceNotFoundError, kb_of(ctx).document, doc_id)).text

    @server.resource(PAGE_URI, mime_type="text/plain", title="Page text")
    async def page_resource(doc_id: str, number: int, ctx: Context) -> str:
        """The text of one page (physical page number, 1-based) of a document."""
        return await in_thread(ResourceNotFoundError, kb_of(ctx).page_text, doc_id, number)

    @server.resource(CHUNK_URI, mime_type="text/plain", title="Passage")
    async def chunk_resource(chunk_id: str, ctx: Context) -> str:
        """One passage exactly as it was indexed."""
        return (await in_thread(ResourceNotFoundError, kb_of(ctx).chunk, chunk_id)).text

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


def _page_links(result: SearchResult) -> list[ResourceLink]:
    """One link per cited page (or document) among the hits, for a client that shows resources."""
    seen: dict[str, ResourceLink] = {}
    for hit in result.hits:
        if hit.uri not in seen:
            where = f"page {hit.page_label}" if hit.page_label else "document"
            seen[hit.uri] = ResourceLink(
                type="resource_link", uri=hit.uri, name=f"{hit.title}, {where}", mime_type="text/plain"
            )
    return list(seen.values())
