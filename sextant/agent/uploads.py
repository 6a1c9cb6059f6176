"""Documents in: uploaded files read within their limits and sent to the knowledge base to parse, and an
overview written by the model for each document added or replaced."""

from __future__ import annotations

import logging

from fastapi import HTTPException, UploadFile

from sextant.agent.api import IngestResult
from sextant.agent.deps import kb_errors
from sextant.agent.kb_client import ScopedKb
from sextant.agent.state import AgentState
from sextant.llm.overviews import write_overview

log = logging.getLogger(__name__)

MAX_UPLOAD_BYTES = 10 * 1024 * 1024
MAX_UPLOAD_FILES = 20


async def upload_each(state: AgentState, kb: ScopedKb, files: list[UploadFile]) -> list[IngestResult]:
    """Send each file to the knowledge base's loaders; one result per document stored, or per file refused."""
    results: list[IngestResult] = []
    for upload in files:
        name = upload.filename or "upload"
        data = await upload.read(MAX_UPLOAD_BYTES + 1)
        if len(data) > MAX_UPLOAD_BYTES:
            limit_mb = MAX_UPLOAD_BYTES // (1024 * 1024)
            results.append(_refused(name, f"larger than the agent's upload limit of {limit_mb} MB per file"))
            continue
        if not data:
            results.append(_refused(name, "the file is empty"))
            continue
        try:
            with kb_errors():
                report = await kb.upload(name, data)
        except HTTPException as exc:
            results.append(_refused(name, str(exc.detail)))
            continue
        for outcome in report.results:
            result = IngestResult.of(outcome, name)
            result.overview = await add_overview(state, kb, result)
            results.append(result)
    return results


async def add_overview(state: AgentState, kb: ScopedKb, result: IngestResult) -> bool:
    """Have the model write and store an overview of a document just added or replaced; whether one was stored.

    Best effort: the document is stored either way, so a failure is logged, not raised. The model reads the
    text as the knowledge base stored it, and the store refuses the overview if that version has since changed.
    """
    model = state.model
    if (
        model is None
        or state.settings.overviews == "off"
        or result.status not in ("added", "replaced")
        or (state.budget_applies and state.budget.exhausted())
    ):
        return False
    try:
        text = await kb.read(f"kb://documents/{result.id}")
        overview, usage = await write_overview(model, result.title or result.id, text)
        state.budget.add(usage.cost_usd)
        await kb.set_overview(result.id, overview, result.version or None)
    except Exception as exc:  # a missing overview must not turn a stored document into a failed request
        log.warning("no overview for %s: %s", result.id, exc)
        return False
    return True


def _refused(name: str, reason: str) -> IngestResult:
    return IngestResult(id=name, name=name, status="refused", reason=reason)
