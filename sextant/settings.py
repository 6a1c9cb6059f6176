"""Every ``SEXTANT_*`` setting of the knowledge base, validated once at start-up, and the few every process reads.

``SharedSettings`` holds threads and logging; ``KbSettings`` here, ``ModelSettings`` (``sextant.llm.settings``)
and ``AgentSettings`` (``sextant.agent.settings``) extend it, so a variable is declared in one place only.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Literal, TypeVar

import platformdirs
from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from sextant.contract.results import Fusion

# Renamed when the project became Sextant; a leftover old name must not silently do nothing.
LEGACY_PREFIX = "AGENTICRAG_"


# The weights an embedder runs in (``Embedder``, ``SEXTANT_EMBED_PRECISION``): int8 is the ONNX copy of the
# packaged MiniLM, auto is fp32 where torch is installed and int8 where it is not.
EmbedPrecision = Literal["auto", "fp32", "bf16", "int8"]


def default_threads() -> int:
    """The machine's cores, at most 4: one thread where two are free made the local model's answer slower."""
    return min(os.cpu_count() or 1, 4)


PREFIX = "SEXTANT_"

# The dense list's weight, BM25's being 1, where SEXTANT_DENSE_WEIGHT is unset: each fusion's own; score fusion's
# chosen on the SciFact and NFCorpus training questions within the golden sets' bar (learning/fusion.md).
DENSE_WEIGHT: dict[Fusion, float] = {"rrf": 1.0, "scores": 1.5}


def http_url(value: str | None, message: str) -> str | None:
    """An http(s) URL as given, None for a blank one; raises ``ValueError(message)`` for any other."""
    if value and not value.startswith(("http://", "https://")):
        raise ValueError(message)
    return value or None


class SharedSettings(BaseSettings):
    """The settings every Sextant process reads: CPU threads and logging."""

    model_config = SettingsConfigDict(env_prefix=PREFIX, env_file=".env", extra="ignore")

    threads: int = Field(
        default_factory=default_threads,
        ge=1,
        le=64,
        description="CPU threads for embedding, reranking and llama.cpp. Default: the cores, at most 4.",
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        default="INFO", description="Log level of messages on stderr."
    )
    log_format: Literal["text", "json"] = Field(default="text", description="Log line format on stderr.")


class KbSettings(SharedSettings):
    """Settings of the knowledge base (the ``sextant-kb`` MCP server and its shell commands)."""

    chroma_dir: Path | None = Field(
        default=None,
        description="Folder of the persistent Chroma store. Default (also when blank): <repo>/chroma_db in a "
        "checkout, else the platform's user-data folder.",
    )
    chroma_url: str | None = Field(
        default=None,
        description="URL of a running Chroma server (e.g. http://localhost:8001); replaces the local store.",
    )
    chroma_database: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{1,510}[A-Za-z0-9]$",
        description="Database on the Chroma server (created when missing); default: the server's default_database. "
        "Each private workspace gets its own, sextant-ws-<id>.",
    )
    lexical_refresh_s: float = Field(
        default=2.0,
        ge=0,
        le=3600,
        description="Seconds between a search's checks that the BM25 (and ANN) cache still matches the store, "
        "which clients on other machines may have written; 0 = check before every search. Processes on this "
        "machine move the store's change counter and are followed at the next search.",
    )
    chunk_tokens: int = Field(
        default=200, ge=32, le=8192, description="Target chunk size in the embedder's own tokens."
    )
    embedder: str = Field(
        default="all-MiniLM-L6-v2",
        description="Sentence-transformers model name or local folder. all-MiniLM-L6-v2 resolves to the "
        "packaged offline copy when installed. openai:<model> embeds through an OpenAI-compatible /v1/embeddings "
        "endpoint at SEXTANT_EMBEDDER_URL (Ollama, llama.cpp's server, Text Embeddings Inference, vLLM), "
        "gemini:<model> through Gemini's API (google-genai, the app extra).",
    )
    embedder_url: str | None = Field(
        default=None,
        description="Remote embedders: base URL of the API, e.g. http://127.0.0.1:11434/v1 (Ollama); needed by "
        "openai:, optional for gemini: (a proxy or a local server speaking its protocol).",
    )
    embedder_api_key: SecretStr | None = Field(
        default=None,
        description="Remote embedders: the API key (a bearer token for openai:, the Gemini API key for gemini:); "
        "never logged or stored.",
    )
    embedder_batch: int = Field(default=32, ge=1, le=2048, description="Remote embedders: texts per request.")
    embedder_rpm: float = Field(
        default=0,
        ge=0,
        description="Remote embedders: at most this many requests per minute, spaced evenly; 0 = no limit.",
    )
    embedder_tpm: float = Field(
        default=0,
        ge=0,
        description="Remote embedders: at most this many tokens per minute (counted with the packaged MiniLM "
        "tokenizer, an estimate of the model's own); 0 = no limit.",
    )
    embedder_timeout_s: float = Field(
        default=60.0, gt=0, le=3600, description="Remote embedders: seconds one request may take before it is retried."
    )
    embedder_retries: int = Field(
        default=5,
        ge=0,
        le=20,
        description="Remote embedders: retries of a request answered 429 or 5xx, or not at all, with exponential "
        "backoff (a Retry-After header is honoured).",
    )
    embedder_dimensions: int | None = Field(
        default=None,
        ge=1,
        le=65536,
        description="Remote embedders: ask the model for this many dimensions (OpenAI's dimensions, Gemini's "
        "output_dimensionality); unset: the model's own.",
    )
    embedder_window: int = Field(
        default=512,
        ge=34,
        le=131072,
        description="Remote embedders: tokens the model reads; SEXTANT_CHUNK_TOKENS must fit within it less 2.",
    )
    embedder_query_prefix: str = Field(
        default="",
        description="Remote embedders: text put before each question, e.g. 'search_query: ' for nomic-embed-text.",
    )
    embedder_document_prefix: str = Field(
        default="",
        description="Remote embedders: text put before each passage, e.g. 'search_document: ' for nomic-embed-text.",
    )
    embed_precision: EmbedPrecision = Field(
        default="auto",
        description="Weights of the embedder (and query encoder): fp32 under torch; bf16 where the CPU computes it "
        "natively (avx512_bf16 or AMX): EmbeddingGemma ingests 2.3x faster, vectors within cosine 0.998 of fp32 "
        "(learning/embedding-gemma.md); int8, the packaged all-MiniLM-L6-v2 under onnxruntime without torch "
        "(learning/light-install.md). auto: fp32 where torch is installed, else int8. A store may be queried in "
        "any precision of its embedder.",
    )
    query_encoder: str | None = Field(
        default=None,
        description="Folder of a query encoder from sextant-train-query-encoder or sextant-adapt: questions are "
        "embedded with it, stored chunks keep the embedder's vectors (learning/query-encoder.md); unset means the "
        "embedder.",
    )
    reranker: str | None = Field(
        default=None,
        description="Cross-encoder model name or local folder; unset means results are ordered by fusion.",
    )
    rerank_precision: Literal["fp32", "int8"] = Field(
        default="fp32",
        description="Which ONNX copy of the reranker runs when its folder has one: int8 is faster, fp32 "
        "scores like the torch weights (learning/reranker.md).",
    )
    rerank_candidates: int = Field(
        default=20, ge=1, le=200, description="The reranker re-scores this many of the best fused candidates."
    )
    rerank_fusion: Literal["rrf", "replace"] = Field(
        default="rrf",
        description="How a reranker orders results: 'rrf' fuses its rank with the dense and BM25 ranks "
        "(learning/reranker.md), 'replace' orders by its score alone.",
    )
    fusion: Fusion = Field(
        default="rrf",
        description="How the dense and BM25 lists are fused: 'rrf' by rank; 'scores' by each candidate's cosine and "
        "BM25 score, each divided by its list's best, which ranks better (SciFact held out 0.758 -> 0.769, NFCorpus "
        "dev 0.330 -> 0.337) but made the local model's answers worse (learning/fusion.md).",
    )
    dense_weight: float | None = Field(
        default=None,
        gt=0,
        le=100,
        description="Weight of the dense list in the fusion, BM25's being 1. Default: 1 under rrf, 1.5 under "
        "score fusion (learning/fusion.md); 5 with rrf for EmbeddingGemma over abstract-length documents with "
        "512-token chunks (learning/embedding-gemma.md).",
    )
    max_per_document: int = Field(
        default=2, ge=1, le=20, description="At most this many chunks of one document in a result list."
    )
    dense_feedback: int = Field(
        default=0,
        ge=0,
        le=20,
        description="Pseudo-relevance feedback: the dense list is searched again from the question's vector moved "
        "toward this many of the best fused passages, and fused again; 3 lifts keyword questions over topical "
        "collections (NFCorpus dev +0.009) but not SciFact's claims, so 0, off, is the default (learning/feedback.md).",
    )
    parse_timeout_s: float = Field(
        default=20.0, gt=0, le=3600, description="Seconds one file may take to parse (in a worker process)."
    )
    parse_memory_mb: int = Field(
        default=768,
        ge=512,
        le=1 << 20,
        description="Address space of the parsing worker, in MiB (Linux); a file that needs more is refused.",
    )
    max_file_bytes: int = Field(
        default=10 * 1024 * 1024, ge=1, le=1 << 32, description="Largest file that is parsed, in bytes."
    )
    max_pdf_pages: int = Field(default=2000, ge=1, le=1_000_000, description="Most pages of a PDF.")
    max_document_chars: int = Field(
        default=5_000_000, ge=1, le=1 << 31, description="Most characters of text in one document."
    )
    max_chunks_per_document: int = Field(default=10_000, ge=1, le=1_000_000, description="Most chunks of one document.")
    max_fetch_bytes: int = Field(
        default=10 * 1024 * 1024,
        ge=1,
        le=1 << 32,
        description="Largest web page or file fetched from an http(s) address, in bytes (after decompression).",
    )
    fetch_timeout_s: float = Field(
        default=30.0, gt=0, le=3600, description="Seconds one fetch of a web address may take, redirects included."
    )
    fetch_max_redirects: int = Field(default=5, ge=0, le=30, description="Most redirects followed by one fetch.")
    crawl_delay_s: float = Field(
        default=0.5,
        ge=0,
        le=600,
        description="Seconds between two requests of a crawl; a site's robots.txt Crawl-delay, when longer, wins.",
    )
    ocr: Literal["auto", "off"] = Field(
        default="auto",
        description="OCR of scanned pages (a PDF page without a text layer, PNG, JPEG and TIFF files) with Tesseract: "
        "auto reads them when Tesseract is installed (apt install tesseract-ocr tesseract-ocr-eng) and refuses them, "
        "saying so, when it is not; off refuses them (learning/ocr.md).",
    )
    ocr_lang: str = Field(
        default="eng",
        pattern=r"^[A-Za-z_]{3,16}(\+[A-Za-z_]{3,16})*$",
        description="Tesseract language(s) of scanned pages, e.g. eng or eng+deu; each needs its tesseract-ocr-<lang> "
        "package.",
    )
    ocr_timeout_s: float = Field(
        default=30.0,
        gt=0,
        le=3600,
        description="Seconds Tesseract may take on one page; a slower page is skipped and named. Each OCR'd page also "
        "adds this much to SEXTANT_PARSE_TIMEOUT_S for its file.",
    )
    ann_index: Literal["chroma", "flat", "hnsw", "ivfpq", "ivfpq_rerank"] = Field(
        default="chroma",
        description="Which index serves dense retrieval: Chroma's own, or one of the Index Lab's (kept beside "
        "the store, rebuilt from it when behind).",
    )
    ann_m: int = Field(default=16, ge=2, le=128, description="HNSW: links per node (2M on layer 0).")
    ann_ef_search: int = Field(default=64, ge=1, le=4096, description="HNSW: candidates kept while searching.")
    ann_nlist: int = Field(
        default=0, ge=0, le=65536, description="IVF-PQ: coarse cells; 0 = about 4 sqrt(chunks), at most 1024."
    )
    ann_nprobe: int = Field(default=16, ge=1, le=65536, description="IVF-PQ: cells scanned per query.")
    ann_pq_m: int = Field(
        default=48, ge=1, le=1024, description="IVF-PQ: bytes per vector (must divide the embedder's dimension)."
    )
    ann_oversample: int = Field(
        default=8, ge=1, le=100, description="ivfpq_rerank: candidates re-scored exactly, as a multiple of k."
    )
    kb_http_host: str = Field(default="127.0.0.1", description="sextant-kb --http: address to bind.")
    kb_http_port: int = Field(default=8765, ge=0, le=65535, description="sextant-kb --http: port; 0 picks a free one.")
    kb_http_origins: str = Field(
        default="", description="sextant-kb --http: comma-separated browser origins allowed; others get 403."
    )
    kb_tokens_file: Path | None = Field(
        default=None,
        description="Bearer tokens of sextant-kb --http (hashes). Default: kb-tokens.json beside the store.",
    )
    kb_public_url: str | None = Field(
        default=None,
        description="sextant-kb --http: the /mcp endpoint's URL as clients reach it (behind a proxy); "
        "default: from each request.",
    )
    kb_authorization_servers: str = Field(
        default="", description="sextant-kb --http: comma-separated OAuth issuers named in the resource metadata."
    )

    def fusion_weights(self) -> tuple[float, float]:
        """(dense, BM25) weights of the fusion: SEXTANT_DENSE_WEIGHT's, or the fusion's own default, and 1."""
        return (self.dense_weight if self.dense_weight is not None else DENSE_WEIGHT[self.fusion]), 1.0

    def ann_params(self) -> dict[str, int]:
        """The Index Lab knobs, as ``sextant.kb.ann.live`` reads them."""
        return {
            "M": self.ann_m,
            "ef_search": self.ann_ef_search,
            "nlist": self.ann_nlist,
            "nprobe": self.ann_nprobe,
            "pq_m": self.ann_pq_m,
            "oversample": self.ann_oversample,
        }

    @field_validator("chroma_url")
    @classmethod
    def _url_has_scheme(cls, value: str | None) -> str | None:
        return http_url(value, "SEXTANT_CHROMA_URL must start with http:// or https://")

    @field_validator("embedder_url")
    @classmethod
    def _embedder_url_has_scheme(cls, value: str | None) -> str | None:
        return http_url(
            value, "SEXTANT_EMBEDDER_URL must start with http:// or https://, e.g. http://127.0.0.1:11434/v1"
        )

    @field_validator("embedder_api_key", mode="before")
    @classmethod
    def _blank_key_is_no_key(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("kb_public_url")
    @classmethod
    def _public_url_has_scheme(cls, value: str | None) -> str | None:
        return http_url(value, "SEXTANT_KB_PUBLIC_URL must start with http:// or https://, e.g. https://kb.example/mcp")

    @field_validator("reranker", mode="before")
    @classmethod
    def _blank_is_none(cls, value: object) -> object:
        return None if isinstance(value, str) and value.strip().lower() in ("", "none", "off") else value

    @field_validator("chroma_dir", mode="before")
    @classmethod
    def _blank_is_the_default(cls, value: object) -> object:
        """A blank folder (an MCP bundle's store left empty) is the default one, not the working directory."""
        return None if isinstance(value, str) and not value.strip() else value

    def store_dir(self) -> Path:
        """Where the store and its BM25 index live on this machine."""
        if self.chroma_dir is not None:
            return self.chroma_dir.expanduser()
        return default_data_path("chroma_db")


def default_data_path(name: str) -> Path:
    """``<repo>/<name>`` when running from a source checkout, else under the platform's user-data folder."""
    root = _checkout_root()
    if root is not None:
        return root / name
    return Path(platformdirs.user_data_dir("sextant", appauthor=False)) / name


def _checkout_root() -> Path | None:
    root = Path(__file__).resolve().parent.parent
    return root if (root / "pyproject.toml").is_file() and (root / ".git").exists() else None


def report_legacy_variables(environ: dict[str, str] | None = None) -> list[str]:
    """Warn on stderr about each ``AGENTICRAG_*`` variable still set, naming its replacement."""
    env = os.environ if environ is None else environ
    messages = [
        f"{name} is no longer read; rename it to {PREFIX}{name[len(LEGACY_PREFIX) :]}"
        for name in sorted(env)
        if name.startswith(LEGACY_PREFIX)
    ]
    for message in messages:
        print(f"sextant: {message}", file=sys.stderr)  # noqa: T201 - before logging is configured
    return messages


S = TypeVar("S", bound=BaseSettings)


def load_from_environment(cls: type[S], program: str = "sextant") -> S:
    """Settings from the environment, or exit 2 with a message that names each bad variable."""
    report_legacy_variables()
    try:
        return cls()
    except ValidationError as exc:
        for err in exc.errors():
            name = PREFIX + "_".join(str(p) for p in err["loc"]).upper()
            print(f"{program}: {name}: {err['msg']}", file=sys.stderr)  # noqa: T201 - logging is not set up yet
        raise SystemExit(2) from exc


def load_settings() -> KbSettings:
    return load_from_environment(KbSettings)
