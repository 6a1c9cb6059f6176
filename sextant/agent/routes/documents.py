"""Documents: text ingested or files uploaded, the list, and each page as text or as an image."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, File, HTTPException, Query, Response, UploadFile
from fastapi import Path as PathParam

from sextant.agent.api import DocumentsResponse, IngestRequest, IngestResponse, IngestResult, PageText
from sextant.agent.deps import Answering, Kb, Limited, Scoped, State, ingest_allowed, kb_down, kb_errors, kb_failed
from sextant.agent.kb_client import KbFailed, KbNotFound, KbUnavailable, ToolRefused
from sextant.agent.uploads import MAX_UPLOAD_BYTES, MAX_UPLOAD_FILES, add_overview, upload_each
from sextant.contract.meta import NO_PAGE_IMAGE

router = APIRouter()

DocumentId = Annotated[str, PathParam(pattern=r"^[A-Za-z0-9._-]{1,128}$")]
PageNumber = Annotated[int, PathParam(ge=1, le=100_000)]


@router.post("/ingest", dependencies=[Limited, Answering])
async def ingest(body: IngestRequest, state: State, workspace: Scoped, kb: Kb) -> IngestResponse:
    """Add text documents (Markdown is understood); re-using an id replaces that document."""
    async with state.writer(workspace):
        await ingest_allowed(state, kb, len({d.id for d in body.documents}))
        with kb_errors():
            report = await kb.ingest(body.documents)
    if state.uploads_today is not None:
        state.uploads_today.add(len(body.documents))
    results = [IngestResult.of(outcome) for outcome in report.results]
    for result in results:
        result.overview = await add_overview(state, kb, result)
    return IngestResponse(request_id=kb.scope.request_id or "", results=results)


@router.post(
    "/upload", dependencies=[Limited, Answering], max_body_size=MAX_UPLOAD_FILES * MAX_UPLOAD_BYTES + 1024 * 1024
)
async def upload(
    files: Annotated[
        list[UploadFile],
        File(description="Documents, slides, sheets, web pages, e-mail or scans: any type the knowledge base reads"),
    ],
    state: State,
    workspace: Scoped,
    kb: Kb,
) -> IngestResponse:
    """Upload files; each is parsed on the server by the knowledge base's loaders, page numbers kept."""
    if len(files) > MAX_UPLOAD_FILES:
        raise HTTPException(413, f"at most {MAX_UPLOAD_FILES} files per upload")
    async with state.writer(workspace):
        await ingest_allowed(state, kb, len(files))
        if state.uploads_today is not None:
            state.uploads_today.add(len(files))
        results = await upload_each(state, kb, files)
    if all(r.status == "refused" for r in results):
        # Nothing was stored: a client that checks only the status must see the refusal and its reasons.
        status = 503 if not state.kb.connected else 422
        raise HTTPException(status, "; ".join(f"{r.name}: {r.reason}" for r in results))
    return IngestResponse(request_id=kb.scope.request_id or "", results=results)


@router.get("/documents")
async def documents(kb: Kb) -> DocumentsResponse:
    """Every document in the knowledge base."""
    with kb_errors():
        listed = await kb.list_documents()
    return DocumentsResponse.model_validate(listed.model_dump())


@router.get("/documents/{doc_id}/pages/{number}")
async def page(doc_id: DocumentId, number: PageNumber, kb: Kb) -> PageText:
    """The text of one page of a document, for reading around a cited passage."""
    try:
        text = await kb.read(f"kb://documents/{doc_id}/pages/{number}")
    except KbNotFound as exc:
        raise HTTPException(404, str(exc)) from exc
    except KbUnavailable as exc:
        raise kb_down(exc) from exc
    except KbFailed as exc:
        raise kb_failed(exc) from exc
    return PageText(document_id=doc_id, page=number, text=text)


@router.get(
    "/documents/{doc_id}/pages/{number}/image",
    response_class=Response,
    responses={
        200: {
            "content": {"image/png": {}},
            "description": "The page as a PNG.",
            "headers": {
                "X-Sextant-Highlights": {
                    "schema": {"type": "integer"},
                    "description": "Rectangles highlighted over the quote (0: not found on this page).",
                }
            },
        }
    },
)
async def page_image(
    doc_id: DocumentId,
    number: PageNumber,
    kb: Kb,
    quote: Annotated[str | None, Query(max_length=2000, description="Words to highlight on the page.")] = None,
) -> Response:
    """A page of a PDF as it looks (PNG), with the quoted words highlighted where they are found on it.

    404 when there is nothing to show: no such document or page, or no original PDF is kept for it (a text,
    Markdown or DOCX document, or a PDF ingested before originals were kept); 502 or 503 when the knowledge
    base could not render it.
    """
    try:
        drawn, png = await kb.page_image(doc_id, number, quote)
    except KbUnavailable as exc:
        raise kb_down(exc) from exc
    except KbFailed as exc:
        raise kb_failed(exc) from exc
    except ToolRefused as exc:
        at = exc.text.find(NO_PAGE_IMAGE)
        if at != -1:  # nothing to show; any other refusal is the knowledge base's failure
            raise HTTPException(404, exc.text[at:]) from exc
        raise HTTPException(502, str(exc)) from exc
    if png is None:
        raise HTTPException(502, "the knowledge base answered without an image")
    return Response(png, media_type="image/png", headers={"X-Sextant-Highlights": str(drawn.highlights)})
