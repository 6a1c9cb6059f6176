"""Adding to the knowledge base: text documents, a file, a document's overview. Each checks the caller may write
(``require_write``), leaves the work to ``sextant.kb.ingest_service`` in a worker thread, reports progress (or
runs as a task) and tells clients when the documents changed."""

from __future__ import annotations

import base64
import binascii
from functools import partial
from pathlib import Path
from typing import Annotated

import anyio.to_thread
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from sextant.contract.results import DocumentInfo, IngestOutcome, IngestReport
from sextant.contract.tools import KB_INGEST, KB_SET_OVERVIEW, KB_UPLOAD, IngestDocument
from sextant.kb.document_ids import document_id_for
from sextant.kb.documents import LoadError
from sextant.kb.ingest_service import group_pages, ingest_file, ingest_text
from sextant.kb.ingest_tasks import IngestReporter
from sextant.kb.loader_sandbox import check_file_size
from sextant.kb.mcp.context import REPLACING, Server, Tools, announce_documents_changed, in_thread, kb_of, lifespan_of
from sextant.kb.refusal import refused
from sextant.kb.remote.access import require_write

# A client that supports tasks (either protocol era) gets these calls back as a task to poll.
TASK_TOOLS = frozenset({KB_INGEST, KB_UPLOAD})


def register(server: Server, tools: Tools) -> None:
    """Add the tools that store documents to ``server``."""

    @tools.add(KB_SET_OVERVIEW, "Set a document's overview", REPLACING)
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
        require_write(KB_SET_OVERVIEW)
        return await in_thread(ToolError, kb_of(ctx).set_overview, document_id, overview, version=version)

    @tools.add(KB_INGEST, "Add text documents", REPLACING, retained=True)
    async def kb_ingest(
        documents: Annotated[
            list[IngestDocument],
            Field(description="Documents to add; re-using an id replaces that document.", min_length=1, max_length=100),
        ],
        ctx: Context,
    ) -> IngestReport:
        """Add text documents to the knowledge base (or replace those with the same id).

        Items sharing an id with different `page` numbers are joined into one paged document.
        An unchanged document is skipped. Files are added with kb_upload or the sextant-ingest command.
        """
        require_write(KB_INGEST)
        kb = kb_of(ctx)
        grouped = group_pages(documents)
        reporter = IngestReporter(len(grouped), ctx.report_progress)
        results: list[IngestOutcome] = []
        try:
            with kb.batch():  # one BM25 save for the whole call, not one per document
                for n, (doc_id, parts) in enumerate(grouped.items()):
                    progress = partial(reporter.embedding, n)
                    outcome = await anyio.to_thread.run_sync(ingest_text, kb, doc_id, parts, progress)
                    results.append(outcome)
                    await reporter.finished(n, outcome.chunks, f"{doc_id}: {outcome.status}")
        finally:
            # Also when a task is cancelled: the documents stored before it are news.
            report = IngestReport(results=results)
            await _announce(ctx, report)
        return report

    @tools.add(KB_UPLOAD, "Add a file", REPLACING, retained=True)
    async def kb_upload(
        filename: Annotated[
            str,
            Field(
                description="The file's name; its suffix picks the parser (.pdf, .docx, .pptx, .xlsx, .csv, .html, "
                ".epub, .eml, .mbox, .odt, .png, .md, .txt, …).",
                max_length=255,
            ),
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
        """Add one file (a document, slides, a spreadsheet, a web page, e-mail or a scan), parsed here, places kept.

        Its id comes from the file name; re-using a name replaces that document. A file that is too large, too
        long or too slow to parse is refused with the limit it hit. For a person's uploads through the agent's
        API, not for answering questions.
        """
        require_write(KB_UPLOAD)
        parser = lifespan_of(ctx).parser
        # Before decoding, from the base64 length (exact for valid base64): the limit is a setting, and the
        # schema is built from annotations alone.
        decoded_size = len(content_base64) * 3 // 4 - content_base64[-2:].count("=")
        try:
            check_file_size(filename, decoded_size, parser.limits)
        except LoadError as exc:
            return IngestReport(results=[refused(document_id_for(Path(filename)), exc)])
        try:
            data = base64.b64decode(content_base64, validate=True)
        except binascii.Error as exc:
            raise ToolError(f"content_base64 is not valid base64: {exc}") from exc
        reporter = IngestReporter(1, ctx.report_progress)
        upload = partial(
            ingest_file,
            kb_of(ctx),
            parser,
            filename,
            data,
            title=title,
            progress=partial(reporter.embedding, 0),
            before_writing=reporter.task_checkpoint,  # a task cancelled while the file was parsed stops here
        )
        outcome = await anyio.to_thread.run_sync(upload)
        await reporter.finished(0, outcome.chunks, f"{outcome.id}: {outcome.status}")
        report = IngestReport(results=[outcome])
        await _announce(ctx, report)
        return report


async def _announce(ctx: Context, report: IngestReport) -> None:
    if any(r.status in ("added", "replaced") for r in report.results):
        await announce_documents_changed(ctx)
