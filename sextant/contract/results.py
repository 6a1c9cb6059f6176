"""What the knowledge base's tools return: the server's output schemas, and what the agent validates into."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

DetailLevel = Literal["ids", "snippets", "full"]
SearchMode = Literal["hybrid", "dense", "lexical", "rrf", "rerank"]
ScoredBy = Literal["rerank", "scores", "rrf", "dense", "lexical"]  # "scores", "rrf": the fusion that placed it
Fusion = Literal["rrf", "scores"]
IngestStatus = Literal["added", "replaced", "unchanged", "refused"]


class Scores(BaseModel):
    """Each score that placed a hit; None where that stage did not see it."""

    dense: float | None = Field(None, description="Cosine similarity of query and chunk vectors.")
    bm25: float | None = Field(None, description="BM25 score (Lucene variant).")
    bm25_rank: int | None = Field(None, description="1-based rank in the BM25 list.")
    dense_rank: int | None = Field(None, description="1-based rank in the dense list.")
    fused: float | None = Field(None, description="Fusion score of the dense and BM25 lists (SEXTANT_FUSION's).")
    rerank: float | None = Field(None, description="Cross-encoder relevance probability.")


class Hit(BaseModel):
    """One retrieved passage with everything needed to cite it."""

    rank: int
    chunk_id: str
    document_id: str
    title: str
    source: str
    page: int | None = Field(None, description="Physical page number (1-based) where the passage starts.")
    page_label: str | None = Field(None, description="The page label printed on that page (e.g. 'iv', '12').")
    page_unit: Literal["page", "slide"] = Field("page", description="What the page is called: a deck's are slides.")
    pages: list[int] = Field(default_factory=list, description="Every physical page the passage touches.")
    section: str | None = None
    kind: Literal["text", "table", "overview"] = Field(
        "text", description="'overview': a summary of the whole document, cited to the document (no page, no span)."
    )
    table_rows: list[int] = Field(default_factory=list, description="Table body rows (0-based) in the passage.")
    start: int = Field(description="Start of the passage in the document text (characters).")
    end: int = Field(description="End of the passage in the document text (exclusive).")
    text: str | None = Field(None, description="The passage (or a snippet of it), per the detail level.")
    scored_by: ScoredBy
    scores: Scores
    matched_terms: list[str] = Field(default_factory=list, description="Query words found in the passage.")
    uri: str = Field(description="kb:// resource of the cited page (or document) for reading more.")
    link: str | None = Field(
        None,
        description="The web address of the cited place, for a page fetched from the web: its URL with the "
        "section's #fragment when the section has one.",
    )


class SearchResult(BaseModel):
    """Ranked passages for a query, or an abstention when nothing in the corpus answers it."""

    query: str
    hits: list[Hit]
    abstained: bool = Field(description="True when no passage is relevant enough to cite.")
    reason: str = Field(description="Why these hits, or why none.")
    empty: bool = Field(
        False, description="True when the knowledge base holds no documents at all; `reason` says where the store is."
    )
    best_dense: float = Field(description="Highest cosine between the query and any candidate passage.")
    matched_terms: int = Field(description="Distinct query words found in the top passages.")
    mode: str
    timings_ms: dict[str, float] = Field(default_factory=dict)


class DocumentInfo(BaseModel):
    """One document in the knowledge base."""

    id: str
    title: str
    source: str
    category: str
    chunks: int
    chars: int
    pages: int
    about: str = Field(description="The opening of the document and its first headings.")
    overview: str = Field("", description="A model-written overview of the document; empty when none was written.")
    ingested_at: str
    uri: str


class DocumentList(BaseModel):
    documents: list[DocumentInfo]


class SkippedPageInfo(BaseModel):
    """A page left out of a stored document because it could not be read."""

    number: int = Field(description="Physical page number (1-based).")
    label: str = Field(description="The page label printed on that page (e.g. 'iv', '12').")
    reason: str


class OcrPageInfo(BaseModel):
    """A page read by OCR (it had no text layer, or was an image)."""

    number: int = Field(description="Physical page number (1-based).")
    label: str = Field(description="The page label printed on that page.")
    confidence: float = Field(description="Tesseract's mean word confidence on the page, 0-100.")
    words: int = Field(description="Words read.")


class IngestOutcome(BaseModel):
    """What happened to one document."""

    id: str
    status: IngestStatus
    chunks: int = 0
    pages: int = 0
    reason: str = ""
    title: str = ""
    version: str = Field("", description="This version of the content; kb_set_overview refuses an older one.")
    skipped_pages: list[SkippedPageInfo] = Field(
        default_factory=list,
        description="Pages left out because they could not be read, each with the reason; the rest is stored. "
        "Repair or re-export the file and add it again to include them.",
    )
    ocr_pages: list[OcrPageInfo] = Field(
        default_factory=list, description="The pages read by OCR, each with how sure the OCR was of it."
    )
    embedded: int = Field(
        0, description="Chunks embedded by this call; the others kept the vectors stored for the same text."
    )
    parts: list[IngestOutcome] = Field(
        default_factory=list,
        description="The documents stored from the files this one holds (a mailbox's messages, a message's "
        "attachments), each with its own outcome; a part left out (unreadable, or a type no loader reads) is "
        "'refused' with its reason.",
    )


class IngestReport(BaseModel):
    results: list[IngestOutcome]


class RerankerInfo(BaseModel):
    name: str | None
    active: bool
    detail: str


class Stats(BaseModel):
    """Counts and configuration of the knowledge base."""

    documents: int
    chunks: int
    embedder: str
    embedder_runtime: str = Field(
        default="torch fp32",
        description="What runs the embedder: 'torch fp32' or 'torch bf16', or 'onnxruntime int8' where torch is not "
        "installed (SEXTANT_EMBED_PRECISION).",
    )
    query_encoder: str | None = Field(
        default=None, description="The model that embeds questions, when not the embedder (SEXTANT_QUERY_ENCODER)."
    )
    dimension: int
    chunk_tokens: int
    fusion: Fusion = Field(
        default="rrf", description="How the dense and BM25 lists are fused: by rank or by score (SEXTANT_FUSION)."
    )
    dense_weight: float = Field(
        default=1.0, description="The dense list's weight in the fusion, BM25's being 1 (SEXTANT_DENSE_WEIGHT)."
    )
    dense_feedback: int = Field(
        default=0,
        description="Best passages whose vectors the dense list is searched again with; 0: none "
        "(SEXTANT_DENSE_FEEDBACK).",
    )
    max_per_document: int
    reranker: RerankerInfo
    store: str = Field(description="Store folder, or the Chroma server URL.")
    lexical_chunks: int = Field(description="Chunks in the BM25 index (equals `chunks` when in sync).")
    followed_writes: int = Field(
        default=0,
        description="Times this process followed writes another process made to the store (each also a log line).",
    )
    store_reloads: int = Field(
        default=0, description="Times this process reopened the embedded store's segments to see those writes."
    )
    unread_files: dict[str, int] = Field(
        default_factory=dict,
        description="Files in the folders this server watches (--watch) of types Sextant cannot read, counted by "
        "type ('.ppt': 3); they are left out of the knowledge base.",
    )


class WorkspaceDropped(BaseModel):
    existed: bool = Field(description="Whether the workspace held a store (false: it was never used).")


Match = Literal["quote", "sentence", "opening", "not_found", "no_quote"]


class PageImage(BaseModel):
    """What was drawn: the page's size and where the quote was highlighted."""

    document_id: str
    page: int = Field(description="Physical page number, 1-based.")
    width_pt: float = Field(description="The page's width in PDF points (1/72 inch).")
    height_pt: float
    width_px: int = Field(description="The image's width in pixels.")
    height_px: int
    highlights: int = Field(description="Rectangles highlighted over the quote (0: not found on this page).")
    rects_px: list[tuple[float, float, float, float]] = Field(
        default_factory=list, description="Each highlight as (x0, y0, x1, y1) in image pixels."
    )
    matched: Match = Field(
        description="What of the quote was found: all of it, its longest sentence, its opening, nothing, "
        "or no quote was given."
    )
