"""The knowledge base's tools by name, the result model each returns, and ``kb_ingest``'s document argument."""

from __future__ import annotations

from pydantic import BaseModel, Field

from sextant.contract.ann import AnnBenchmark, AnnComparison
from sextant.contract.results import (
    DocumentInfo,
    DocumentList,
    IngestReport,
    PageImage,
    SearchResult,
    Stats,
    WorkspaceDropped,
)

KB_SEARCH = "kb_search"
KB_LIST = "kb_list"
KB_STATS = "kb_stats"
KB_INGEST = "kb_ingest"
KB_UPLOAD = "kb_upload"
KB_SET_OVERVIEW = "kb_set_overview"
KB_PAGE_IMAGE = "kb_page_image"
KB_DROP_WORKSPACE = "kb_drop_workspace"
KB_ANN_BENCHMARK = "kb_ann_benchmark"
KB_ANN_COMPARE = "kb_ann_compare"

# Every tool the server registers, with the model its structuredContent validates into.
RESULTS: dict[str, type[BaseModel]] = {
    KB_SEARCH: SearchResult,
    KB_LIST: DocumentList,
    KB_STATS: Stats,
    KB_INGEST: IngestReport,
    KB_UPLOAD: IngestReport,
    KB_SET_OVERVIEW: DocumentInfo,
    KB_PAGE_IMAGE: PageImage,
    KB_DROP_WORKSPACE: WorkspaceDropped,
    KB_ANN_BENCHMARK: AnnBenchmark,
    KB_ANN_COMPARE: AnnComparison,
}


class IngestDocument(BaseModel):
    """One text document (or one page of it) for ``kb_ingest``."""

    id: str = Field(
        description="Document id: 1-128 letters, digits, '.', '_' or '-'. Re-using an id replaces that document.",
        min_length=1,
        max_length=128,
    )
    title: str = Field(description="Human-readable title.", min_length=1, max_length=300)
    content: str = Field(description="The text (Markdown headings and tables are understood).", min_length=1)
    source: str = Field(default="", description="Where the text came from (URL, file name).", max_length=2000)
    page: int | None = Field(
        default=None,
        ge=1,
        description="Page number of this content. Items sharing an id with different pages form one document.",
    )
